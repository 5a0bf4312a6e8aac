#!/usr/bin/env bash
# go test of a module with one dependency, through the module proxy (lib.bash).
. "${CW_SRC:?}/test/toolchain/lib.bash"
tc_need go /usr/local/go/bin/go /usr/lib/go/bin/go /usr/bin/go
tc_main go "CW_TC_GO=$TC_TOOL" proxy.golang.org

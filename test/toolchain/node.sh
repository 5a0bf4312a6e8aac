#!/usr/bin/env bash
# npm ci of a tiny package-lock (lib.bash).
. "${CW_SRC:?}/test/toolchain/lib.bash"
tc_need npm /usr/bin/npm /usr/local/bin/npm
tc_main node "CW_TC_NPM=$TC_TOOL" registry.npmjs.org

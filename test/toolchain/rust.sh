#!/usr/bin/env bash
# cargo build of a crate with one dependency from crates.io (lib.bash).
. "${CW_SRC:?}/test/toolchain/lib.bash"
# Debian's cargo: the one every user of the machine can run (rustup's lives in one
# user's home). Before 1.68 cargo reads crates.io's git index (github.com) unless the
# sparse index is switched on; Debian 12's 1.65 has it as an unstable feature.
tc_need cargo /usr/bin/cargo
# rustc beside it, not a rustup shim earlier on PATH (rustup reads its own HOME).
env="CW_TC_CARGO=$TC_TOOL RUSTC=/usr/bin/rustc"
case $("$TC_TOOL" --version | awk '{ print $2 }') in
1.6[0-7].*) env="$env CARGO_UNSTABLE_SPARSE_REGISTRY=true RUSTC_BOOTSTRAP=1" ;;
esac
# This machine reaches crates.io through a mirror whose index config.json sends
# downloads to index.crates.io itself; the real one names static.crates.io. Either
# way, a cached run downloads no crate.
tc_main rust "$env" "" "Downloaded itoa"

#!/usr/bin/env bash
# pip install of a small pure-Python package into a venv in the worktree (lib.bash).
. "${CW_SRC:?}/test/toolchain/lib.bash"
# Debian's python3 (with its venv module): the one every user of the machine can run.
tc_need python3 /usr/bin/python3
"$TC_TOOL" -c 'import venv, ensurepip' 2>/dev/null || { echo "SKIP: $TC_TOOL has no venv/ensurepip (python3-venv)"; exit 77; }
# The sdist is fetched again by every run here (this machine's registry answers carry
# no caching headers, so pip's HTTP cache keeps nothing); the wheel pip built from it
# is kept in the task's cache, and a cached run builds nothing.
tc_main python "CW_TC_PYTHON=$TC_TOOL" "" "Building wheel for docopt"

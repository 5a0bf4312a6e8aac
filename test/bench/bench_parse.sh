#!/usr/bin/env bash
# The cost of the parsing child (daemon/parsechild.c): per record in the daemon, per
# call to cw-parse, per record in a batch, and a child's start (docs/performance.md).
# Env: CW_BENCH (bench_parse), CW_BIN (cw-parse), CW_BENCH_RUNS (default 5).
set -euo pipefail
: "${CW_BENCH:?}" "${CW_BIN:?}"
B=$CW_BENCH/bench_parse
[ -x "$B" ] || { echo "bench_parse not built in $CW_BENCH" >&2; exit 1; }
echo "machine: $(uname -r), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$B" "$CW_BIN/cw-parse" "${CW_BENCH_RUNS:-5}"

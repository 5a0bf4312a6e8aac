#!/usr/bin/env bash
# Throughput of secret masking (common/mask.c): MB/s over a mixed agent log, a
# secret-dense log, plain prose, and inputs built to make a backtracking matcher
# quadratic. Linear time shows as worst-case figures of the same order as the others.
# Env: CW_BENCH (bench_mask), CW_BENCH_MASK_MIB (default 16), CW_BENCH_RUNS (default 5).
set -euo pipefail
: "${CW_BENCH:?}"
B=$CW_BENCH/bench_mask
[ -x "$B" ] || { echo "bench_mask not built in $CW_BENCH" >&2; exit 1; }
echo "machine: $(uname -r), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$B" "${CW_BENCH_MASK_MIB:-16}" "${CW_BENCH_RUNS:-5}"

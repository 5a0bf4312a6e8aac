#!/usr/bin/env bash
# Deny-list evaluations per second over the test corpus (run by scripts/bench floor),
# for SECONDS (argument, else CW_BENCH_SECONDS, else 3).
set -euo pipefail
"${CW_BENCH:?CW_BENCH not set}/bench_floor" "${1:-${CW_BENCH_SECONDS:-3}}"

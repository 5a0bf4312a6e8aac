#!/usr/bin/env bash
# Deny-list evaluations per second over the test corpus (run by scripts/bench floor).
set -euo pipefail
"${CW_BENCH:?CW_BENCH not set}/bench_floor" "${1:-3}"

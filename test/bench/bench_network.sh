#!/usr/bin/env bash
# The cost of a run's network namespace and egress proxy (issue 16): see bench_network.py.
# Env: CW_BIN (cw-runner), CW_BENCH_RUNS (rounds, default 100).
set -euo pipefail
: "${CW_BIN:?}"
exec python3 "$(dirname "$0")/bench_network.py" "$CW_BIN/cw-runner" "${CW_BENCH_RUNS:-100}"

#!/usr/bin/env bash
# One PreToolUse check, process start to exit, against a live bridge: cw-floor-hook
# next to the reference design's Node.js hook (run by scripts/bench hook).
#   usage: bench_hook.sh [CALLS]   (default CW_BENCH_CALLS, else 1000 of each)
set -euo pipefail
: "${CW_BIN:?CW_BIN not set}" "${CW_BENCH:?CW_BENCH not set}" "${CW_SRC:?CW_SRC not set}"
hook="$CW_BIN/cw-floor-hook"
echo "cw-floor-hook: $(stat -c %s "$hook") bytes on disk ($(file -b "$hook" | cut -d, -f1-2))"
"$CW_BENCH/bench_hook" "${1:-${CW_BENCH_CALLS:-1000}}" "$hook" "$(command -v node)" \
    "$CW_SRC/test/fixtures/node-hook.js"

#!/usr/bin/env bash
# An approved tool call, end to end (issue 24): the byok engine in the real sandbox
# against test/fixtures/provider-server.js (a scripted model on loopback) makes 50 bash
# calls, once with approvals.ask: none (nothing asks) and once with approvals.ask: all
# (every call is held for a person); an approver (bench_approver.py) listens on
# GET /api/events and answers each request at once. One call's time is the gap between
# two requests the model server sees (its answer streamed, the tool run in the sandbox,
# and, with approvals, the round trip through the daemon and the approver). Clockwork's
# share of an approval is the median with approvals minus the median without. Also:
# from the daemon publishing the request to the approver reading it, and the
# approver's POST round trip. Prints figures; asserts nothing about speed.
set -euo pipefail
: "${CW_BIN:?}" "${CW_SRC:?}"
command -v node >/dev/null || { echo "bench_approval: node is not installed (scripts/setup installs it)"; exit 1; }
N=${CW_BENCH_CALLS:-50}
# CW_BENCH_POLL_MS=N: the approver polls GET /api/approvals every N ms instead (the way
# approvers found requests before the event stream), for comparison.
approver_args=()
approver="listens on /api/events"
if [ -n "${CW_BENCH_POLL_MS:-}" ]; then
	approver_args=(--poll "$CW_BENCH_POLL_MS")
	approver="polls GET /api/approvals every $CW_BENCH_POLL_MS ms"
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/cwd-bench.XXXXXX")
export HOME="$T/home" CLOCKWORK_HOME="$T/cw"
mkdir -p "$HOME" "$CLOCKWORK_HOME"
chmod 700 "$CLOCKWORK_HOME"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -n "${DPID:-}" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT
until_file() { for _ in $(seq 300); do [ -s "$1" ] && return 0; sleep 0.05; done; echo "bench_approval: $2" >&2; exit 1; }

python3 - "$N" > "$T/scenarios.json" <<'PY'
import json, sys
n = int(sys.argv[1])
steps = [{"tool": "bash", "input": {"command": "echo call-%d" % i}} for i in range(n)]
print(json.dumps({s: steps + [{"text": s + " done"}] for s in ("warm", "plain", "asked")}))
PY
KEY="sk-ant-bench-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$KEY" > "$T/key"
node "$CW_SRC/test/fixtures/provider-server.js" "$T/scenarios.json" "$T/pport" \
    "$T/requests.jsonl" "$T/key" 2> "$T/provider.err" &
pids+=($!)
until_file "$T/pport" "the model server did not start"
# The approval rate limit (30 a minute by default, issue 26) would refuse calls 31..50.
printf '%s\n' 'api_port: 0' 'approvals: {per_minute: 1000, max_per_run: 1000}' 'prices:' \
    '  claude-bench: {input: 1, output: 1}' > "$CLOCKWORK_HOME/config.yaml"
"$CW_BIN/clockworkd" --foreground > "$T/daemon.out" 2>&1 &
DPID=$!
until_file "$CLOCKWORK_HOME/clockworkd.port" "clockworkd did not start"
cw() { "$CW_BIN/cwctl" "$@"; }
for _ in $(seq 100); do cw status >/dev/null 2>&1 && break; sleep 0.05; done
printf '%s\n' "$KEY" | cw key add main --provider anthropic --base-url "http://127.0.0.1:$(cat "$T/pport")" \
    --model claude-bench > /dev/null
repo="$T/repo"
mkdir -p "$repo" && git -C "$repo" init -q && echo base > "$repo/README" &&
    git -C "$repo" add README && git -C "$repo" -c user.name=b -c user.email=b@example.com commit -q -m base
for s in warm plain asked; do
	cw task add "$s" --repo "$repo" --engine byok --key main --mode acceptEdits --budget-wait 0 \
	    --seconds 600 --turns $((N + 10)) --dollars 100 --prompt "SCENARIO:$s Please do the scripted steps." > /dev/null
done
cw task ask warm none > /dev/null
cw task ask plain none > /dev/null
cw task ask asked all > /dev/null

python3 "$CW_SRC/test/bench/bench_approver.py" "$CLOCKWORK_HOME/clockworkd.sock" "$T/ready" "${approver_args[@]}" > "$T/answers.jsonl" 2> "$T/approver.err" &
pids+=($!)
until_file "$T/ready" "the approver did not subscribe: $(cat "$T/approver.err")"

for s in warm plain asked; do
	cw run start "$s" --wait > "$T/$s.out" 2>&1 || { echo "bench_approval: run $s: $(cat "$T/$s.out")" >&2; exit 1; }
done

for s in plain asked; do grep -q "^status: *completed" "$T/$s.out" || { echo "bench_approval: run $s did not complete: $(cat "$T/$s.out")" >&2; exit 1; }; done
id=$(sed -n "s/^run: *//p" "$T/asked.out")
cw run logs "$id" > "$T/asked.log"
[ "$(grep -c "call-" "$T/asked.log")" -ge "$N" ] || { echo "bench_approval: the asked run shows no tool output: $(head -c 2000 "$T/asked.log")" >&2; exit 1; }
if [ -n "${CW_BENCH_KEEP:-}" ]; then cp "$T/asked.log" "$T/plain.out" "$T/asked.out" "$CW_BENCH_KEEP/"; fi
echo "approval: clockworkd $("$CW_BIN/clockworkd" --version | cut -d' ' -f2), $(nproc) cores, $(uname -r), uid $(id -u), approver: $approver"
python3 - "$T/requests.jsonl" "$T/answers.jsonl" "$N" <<'PY'
import json, statistics, sys
reqs, answers, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
at = {}
for l in open(reqs):
    r = json.loads(l)
    at.setdefault(r["scenario"], []).append(r["at"] * 1000.0)
def calls(s):
    t = sorted(at.get(s, []))
    return [b - a for a, b in zip(t, t[1:])]
plain, asked = calls("plain"), calls("asked")
if len(plain) != n or len(asked) != n:
    sys.exit("bench_approval: %d and %d calls seen, not %d" % (len(plain), len(asked), n))
mp, ma = statistics.median(plain), statistics.median(asked)
q = lambda v, p: sorted(v)[min(len(v) - 1, int(len(v) * p))]
print("calls: %d without approvals, %d each approved" % (len(plain), len(asked)))
print("per call without approval: median %.1f ms, p90 %.1f ms" % (mp, q(plain, 0.9)))
print("per call with approval:    median %.1f ms, p90 %.1f ms" % (ma, q(asked, 0.9)))
print("clockwork's share of one approved call (median with - median without): %.1f ms" % (ma - mp))
a = [json.loads(l) for l in open(answers)]
if len(a) != n:
    sys.exit("bench_approval: the approver answered %d approvals, not %d" % (len(a), n))
if a:
    seen = [x["seen_ms"] - x["at_ms"] for x in a if x["at_ms"] is not None]
    post = [x["answered_ms"] - x["seen_ms"] for x in a]
    print("approvals answered: %d (HTTP %s)" % (len(a), sorted({x["status"] for x in a})))
    if seen:
        print("request published -> approver read it: median %.2f ms, p90 %.2f ms" % (statistics.median(seen), q(seen, 0.9)))
    print("approver's POST /api/approvals/ID round trip: median %.2f ms, p90 %.2f ms" % (statistics.median(post), q(post, 0.9)))
PY

#!/usr/bin/env bash
# The parsing child (issue 25): clockworkd parses untrusted bytes (run transcripts, job
# files, Telegram replies, bundle headers) in cw-parse, a re-executed child narrowed by
# seccomp and rlimits, with only its two pipes. Rows:
#  1. cw-parse links no store, git, event loop, keyring or TLS (readelf -d);
#  2. run by itself (the test mode: its probe request), opening or creating a file and
#     making a socket fail with EPERM; a non-empty environment or a descriptor 0 that is
#     not a pipe refuses to serve (exit 1); a message of another version ends it (2);
#  3. the daemon's child, once started: /proc/PID/fd holds only its two pipes and
#     /dev/null, its environment is empty, Seccomp is 2 (filter) and NoNewPrivs 1,
#     and its rlimits are set (/proc/PID/limits);
#  4. a transcript read through the API comes back from the child, rebuilt;
#  5. a crash of the child mid-parse (the test trigger: a transcript or a job file
#     holding "cw-parse-test-crash", with CLOCKWORK_TEST_PARSE=1) is the caller's error
#     and one log line; the daemon keeps serving (status answers) and the next parse
#     works in a new child;
#  6. a child killed while idle (SIGKILL) is replaced at the next call, which works;
#  7. a child SIGKILLed mid-parse (the test trigger "cw-parse-test-hang" makes it spin
#     in a job file's parse) is that import's error and a log line, and the next works;
#  8. a child that does not answer within the deadline (5 s) is killed by the daemon:
#     the call fails after about 5 s, not never, and the daemon answers again.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v python3 >/dev/null || fail "python3 is needed"
command -v readelf >/dev/null || { echo "readelf not installed"; exit 77; }
P="$CW_BIN/cw-parse"
[ -x "$P" ] || fail "$P not built"

# 1.
needed=$(readelf -d "$P" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
for lib in sqlite git2 curl ssl crypto event secret dbus glib; do
	case "$needed" in *"lib$lib"*) fail "cw-parse links lib$lib: $needed";; esac
done
pass "cw-parse links only: $needed"

# 2. The probe, and the refusals, with the real binary on pipes.
python3 - "$P" <<'PY' || fail "cw-parse narrowing (see above)"
import os, struct, subprocess, sys
P = sys.argv[1]
def msg(t, payload, seq, ver=1):
    return b'CP' + bytes([ver, t]) + struct.pack('<II', len(payload), seq) + payload
def start(env={}, stdin=subprocess.PIPE):
    return subprocess.Popen([P, 'serve'], stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
p = start()
p.stdin.write(msg(5, b'', 7)); p.stdin.flush()
h = p.stdout.read(12)
assert h[:3] == b'CP\x01' and h[3] == 69, h
n, seq = struct.unpack('<II', h[4:]); assert seq == 7
body = p.stdout.read(n); off = 0
cnt, = struct.unpack_from('<I', body, off); off += 4
assert cnt == 4, cnt
for _ in range(cnt):
    l, = struct.unpack_from('<I', body, off); off += 4
    what = body[off:off + l].decode(); off += l
    rc, err = struct.unpack_from('<iI', body, off); off += 8
    if rc != -1 or err != 1:
        sys.exit("inside cw-parse, %s: result %d errno %d (want -1, EPERM)" % (what, rc, err))
    print("  refused inside cw-parse: %s (EPERM)" % what)
p.stdin.close(); assert p.wait() == 0
q = start(env={'X': '1'}); q.stdin.close()
assert q.wait() == 1 and b'environment' in q.stderr.read()
with open('/dev/null') as nul:
    q = start(stdin=nul)
    assert q.wait() == 1 and b'pipes' in q.stderr.read()
q = start(); q.stdin.write(msg(5, b'', 1, ver=2)); q.stdin.close()
assert q.wait() == 2
PY
pass "inside cw-parse, open, create and socket fail with EPERM; a bad environment, descriptor or version is refused"

printf 'api_port: 0\nengines:\n  default: command\n' > "$CLOCKWORK_HOME/config.yaml"
CLOCKWORK_TEST_PARSE=1 start_daemon --runner "$FAKE_RUNNER" --stop-grace 0.5
child() { pgrep -P "$DPID" -x cw-parse; }

# 4. A run with a readable engine, and a transcript file of our own making.
cwctl task add tr --engine claude --seconds 60 --prompt 'echo hi' >/dev/null || fail "task add"
id=$(cwctl run start tr)
wait_until 30 "run ended" run_ended "$id" || fail "run did not end"
tf="$CLOCKWORK_HOME/runs/$id.transcript"
{
	printf '%s\n' '{"k":"text","text":"first words"}' 'not json at all' \
	    '{"k":"tool","tool":"Bash","command":"ls"}' '{"k":"nonsense"}' \
	    '{"k":"usage","dollars":0.25,"turns":3}'
} > "$tf"
r=$(api GET "/api/runs/$id/transcript")
python3 - "$r" <<'PY' || fail "transcript through the child: $r"
import json, sys
code, body = sys.argv[1].split(' ', 1)
assert code == '200', code
e = json.loads(body)['entries']
assert [x['k'] for x in e] == ['text', 'tool', 'usage'], e
assert e[0]['text'] == 'first words' and e[1]['command'] == 'ls' and e[2]['turns'] == 3, e
PY
wait_until 5 "cw-parse child" child || fail "no cw-parse child of the daemon"
c1=$(child)
pass "a transcript read through the API is parsed by cw-parse (pid $c1) and comes back rebuilt"

# 3. The daemon's own child.
fds=$(cd "/proc/$c1/fd" && for f in *; do printf '%s=%s ' "$f" "$(readlink "$f")"; done)
[[ $fds =~ ^0=pipe:\[[0-9]+\]\ 1=pipe:\[[0-9]+\]\ 2=/dev/null\ $ ]] || fail "cw-parse's descriptors: $fds"
[ "$(tr -d '\0' < "/proc/$c1/environ" | wc -c)" = 0 ] || fail "cw-parse has an environment"
grep -q '^Seccomp:[[:space:]]*2$' "/proc/$c1/status" || fail "cw-parse has no seccomp filter"
grep -q '^NoNewPrivs:[[:space:]]*1$' "/proc/$c1/status" || fail "cw-parse may gain privileges"
lim() { sed -n "s/^$1  *\([0-9a-z]*\)  *\([0-9a-z]*\).*/\1 \2/p" "/proc/$c1/limits"; }
[ "$(lim 'Max open files')" = "3 3" ] || fail "cw-parse's NOFILE: $(lim 'Max open files')"
[ "$(lim 'Max file size')" = "0 0" ] || fail "cw-parse's FSIZE: $(lim 'Max file size')"
[ "$(lim 'Max core file size')" = "0 0" ] || fail "cw-parse's CORE: $(lim 'Max core file size')"
[ "$(lim 'Max cpu time')" = "120 125" ] || fail "cw-parse's CPU: $(lim 'Max cpu time')"
pass "the daemon's cw-parse: only its pipes and /dev/null ($fds), no environment, seccomp on, rlimits NOFILE 3, FSIZE 0, CORE 0, CPU 120 s"

# 5. A crash mid-parse: the caller's error, a log line, and the daemon goes on.
printf '%s\n' '{"k":"text","text":"cw-parse-test-crash"}' >> "$tf"
r=$(api GET "/api/runs/$id/transcript")
[[ $r == 500* ]] || fail "a crashed parse was not an error: $r"
grep -q "cw-parse (pid $c1) died of signal .* while parsing a transcript" "$T/daemon.out" ||
    fail "no log line for the crash"
cwctl status >/dev/null || fail "the daemon stopped answering after the child crashed"
printf '{"jobs":[{"name":"after","prompt":"echo after"}]}' > "$T/after.json"
cwctl template import "$T/after.json" >/dev/null || fail "the next parse failed"
[ "$(sql "SELECT count(*) FROM tasks WHERE name = 'after'")" = 1 ] || fail "the next parse made no task"
c2=$(child); [ -n "$c2" ] && [ "$c2" != "$c1" ] || fail "no new child ($c1 -> $c2)"
printf '{"jobs":[{"name":"boom","prompt":"cw-parse-test-crash"}]}' > "$T/boom.json"
if cwctl template import "$T/boom.json" > "$T/boom.out" 2>&1; then fail "a crashed job-file parse was imported"; fi
grep -q "cw-parse" "$T/boom.out" || fail "the import's error does not name the parser: $(cat "$T/boom.out")"
[ "$(sql "SELECT count(*) FROM tasks WHERE name = 'boom'")" = 0 ] || fail "a crashed parse made a task"
grep -q "died of signal .* while parsing a job file" "$T/daemon.out" || fail "no log line for the job file"
cwctl status >/dev/null || fail "the daemon stopped answering"
pass "a crash in cw-parse is the call's error and a log line; the daemon answers and the next parse works (child $c1 -> $c2)"

# 6. Killed while idle: the next call starts another and works.
cwctl template import "$T/after.json" >/dev/null 2>&1 || true	# exists: a refusal, but parsed
c3=$(child); [ -n "$c3" ] || fail "no child"
kill -KILL "$c3"
wait_until 5 "child gone" not_alive "$c3" || fail "child did not die"
sed -i 's/"after"/"after2"/' "$T/after.json"
cwctl template import "$T/after.json" >/dev/null || fail "the parse after a SIGKILL failed"
c4=$(child); [ -n "$c4" ] && [ "$c4" != "$c3" ] || fail "no new child after SIGKILL ($c3 -> $c4)"
r=$(api GET "/api/runs/$id/transcript?offset=0")
[[ $r == 500* ]] || fail "the crash line does not crash the child any more?"
pass "a child killed by SIGKILL is replaced at the next call ($c3 -> $c4)"

# 7. SIGKILL mid-parse.
printf '{"jobs":[{"name":"spin","prompt":"cw-parse-test-hang"}]}' > "$T/spin.json"
cwctl template import "$T/spin.json" > "$T/spin.out" 2>&1 &
imp=$!
echo "$imp" > "$T/pids/imp" 2>/dev/null || { mkdir -p "$T/pids"; echo "$imp" > "$T/pids/imp"; }
spinning() { local c; c=$(child) && [ "$(ps -o stat= -p "$c" | cut -c1)" = R ]; }
wait_until 4 "the child spinning" spinning || fail "the child is not parsing"
c5=$(child)
kill -KILL "$c5"
if wait "$imp"; then fail "an import whose parser was killed succeeded"; fi
grep -q "cw-parse" "$T/spin.out" || fail "the import's error: $(cat "$T/spin.out")"
grep -q "cw-parse (pid $c5) died of signal 9 while parsing a job file" "$T/daemon.out" ||
    fail "no log line for the SIGKILL mid-parse"
cwctl status >/dev/null || fail "the daemon stopped answering"
sed -i 's/"after2"/"after3"/' "$T/after.json"
cwctl template import "$T/after.json" >/dev/null || fail "the parse after a SIGKILL mid-parse failed"
pass "a SIGKILL mid-parse is the call's error and a log line; the next parse works"

# 8. The deadline.
s0=$(date +%s%N)
if cwctl template import "$T/spin.json" > "$T/spin2.out" 2>&1; then fail "a hung parse succeeded"; fi
ms=$(( ($(date +%s%N) - s0) / 1000000 ))
[ "$ms" -ge 4500 ] && [ "$ms" -lt 20000 ] || fail "a hung parse took $ms ms (the deadline is 5 s)"
grep -q "no answer in time" "$T/spin2.out" || fail "the import's error: $(cat "$T/spin2.out")"
grep -q "(killed by the daemon) while parsing a job file: no answer in time" "$T/daemon.out" ||
    fail "no log line for the deadline"
cwctl status >/dev/null || fail "the daemon stopped answering after the deadline"
pass "a parse past the deadline is killed after $ms ms and reported; the daemon answers"
echo "all $PASSED passed"

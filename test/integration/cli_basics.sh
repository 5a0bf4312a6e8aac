#!/usr/bin/env bash
# Every program answers --help and --version, refuses an unknown flag with exit 2, and a
# bad config file gets one line naming the file, line and field, with exit 2.
set -u
fail=0
check() {	# check NAME WANT_RC GOT_RC
  if [ "$2" != "$3" ]; then echo "FAIL: $1: exit $3, want $2"; fail=1; else echo "ok: $1"; fi
}

for prog in clockworkd cwctl cw-runner cw-floor-hook; do
  out=$("$CW_BIN/$prog" --help 2>&1); check "$prog --help" 0 $?
  grep -qi usage <<<"$out" || { echo "FAIL: $prog --help prints no usage"; fail=1; }
  out=$("$CW_BIN/$prog" --version 2>&1); check "$prog --version" 0 $?
  grep -q "^$prog [0-9]" <<<"$out" || { echo "FAIL: $prog --version: '$out'"; fail=1; }
  err=$("$CW_BIN/$prog" --no-such-flag 2>&1 >/dev/null); check "$prog --no-such-flag" 2 $?
  grep -q -- '--no-such-flag' <<<"$err" || { echo "FAIL: $prog does not name the bad flag: '$err'"; fail=1; }
done

# The hook is static and small.
file "$CW_BIN/cw-floor-hook" | grep -q 'statically linked' || { echo "FAIL: cw-floor-hook is not static"; fail=1; }
size=$(stat -c %s "$CW_BIN/cw-floor-hook")
[ "$size" -lt $((200 * 1024)) ] || { echo "FAIL: cw-floor-hook is $size bytes (limit 200 KiB)"; fail=1; }
echo "cw-floor-hook: $size bytes, statically linked"

# The man page renders without a groff warning, and keeps what groff could eat ($2).
if command -v groff >/dev/null; then
  man_err=$(groff -man -Tutf8 -ww "$CW_SRC/docs/cwctl.1" 2>&1 >/dev/null)
  [ -z "$man_err" ] || { echo "FAIL: docs/cwctl.1: $man_err"; fail=1; }
  groff -man -Tutf8 "$CW_SRC/docs/cwctl.1" 2>/dev/null | grep -q '(\$2,' ||
    { echo "FAIL: docs/cwctl.1 lost the \$2 default budget"; fail=1; }
  echo "docs/cwctl.1 renders cleanly"
fi

# A bad config: one line, FILE:LINE: FIELD, exit 2, for each program that loads it.
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
mkdir -p "$t/cw" "$t/home"
printf 'budgets:\n  dollars: 2\n  turns: many\n' > "$t/cw/config.yaml"
want="$t/cw/config.yaml:3: budgets.turns:"
run_bad() {	# run_bad LABEL CMD...
  local label=$1; shift
  err=$(HOME="$t/home" CLOCKWORK_HOME="$t/cw" "$@" 2>&1 >/dev/null); rc=$?
  check "$label with a bad config" 2 $rc
  lines=$(printf '%s\n' "$err" | grep -c .)
  if ! grep -qF "$want" <<<"$err" || [ "$lines" != 1 ]; then
    echo "FAIL: $label: want one line containing '$want', got: $err"; fail=1
  fi
}
run_bad "clockworkd --foreground" "$CW_BIN/clockworkd" --foreground
run_bad "cwctl policy check" "$CW_BIN/cwctl" policy check -- ls
run_bad "cw-runner spec" "$CW_BIN/cw-runner" spec --json --workdir "$t/home"
# clockworkd --check-config: validates without starting; duplicate keys, unknown
# engines and a credential grant are refused when the file is loaded (exit 2).
cc() {	# cc WANT_RC WANT_TEXT YAML
  printf '%b' "$3" > "$t/cw/config.yaml"
  out=$(HOME="$t/home" CLOCKWORK_HOME="$t/cw" "$CW_BIN/clockworkd" --check-config 2>&1); rc=$?
  check "clockworkd --check-config: $2" "$1" $rc
  grep -qF -- "$2" <<<"$out" || { echo "FAIL: --check-config: want '$2', got: $out"; fail=1; }
}
mkdir -p "$t/home/.ssh"
cc 0 "config.yaml: ok" 'budgets:\n  dollars: 3\n'
cc 2 "config.yaml:3: budgets: given twice (first on line 1)" 'budgets:\n  dollars: 3\nbudgets:\n  turns: 5\n'
cc 2 "config.yaml:4: engines.claude.model: given twice (first on line 3)" 'engines:\n  claude:\n    model: a\n    model: b\n'
cc 2 "engines.nosuch" 'engines:\n  nosuch:\n    model: a\n'
cc 2 "config.yaml: sandbox: " 'sandbox:\n  read_dirs: [~/.ssh]\n'
cc 2 "with engines.claude.sandbox" 'engines:\n  claude:\n    sandbox:\n      read_dirs: ["~/.aws"]\n'
[ ! -e "$t/cw/clockworkd.port" ] && [ ! -e "$t/cw/clockwork.db" ] || { echo "FAIL: --check-config started something"; fail=1; }
# The daemon itself refuses the credential grant at start, not at the first run.
printf 'sandbox:\n  read_dirs: [~/.ssh]\n' > "$t/cw/config.yaml"
err=$(HOME="$t/home" CLOCKWORK_HOME="$t/cw" timeout 10 "$CW_BIN/clockworkd" --foreground 2>&1 >/dev/null); rc=$?
check "clockworkd with a credential grant" 2 $rc
grep -q "sandbox: .*credential location" <<<"$err" || { echo "FAIL: start with a credential grant: $err"; fail=1; }
# A busy API port: the message says how to choose another.
python3 -c 'import socket,sys,time
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(1)
open(sys.argv[1],"w").write(str(s.getsockname()[1])); time.sleep(30)' "$t/busy.port" &
busy=$!
for _ in $(seq 1 50); do [ -s "$t/busy.port" ] && break; sleep 0.1; done
printf 'api_port: %s\n' "$(cat "$t/busy.port")" > "$t/cw/config.yaml"
err=$(HOME="$t/home" CLOCKWORK_HOME="$t/cw" timeout 10 "$CW_BIN/clockworkd" --foreground 2>&1 >/dev/null); rc=$?
kill $busy 2>/dev/null
check "clockworkd on a busy port" 1 $rc
grep -q "Address already in use; .*api_port: 0 for any" <<<"$err" ||
  { echo "FAIL: busy port message: $err"; fail=1; }
exit $fail

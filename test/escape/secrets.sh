#!/usr/bin/env bash
# The secret store's file (common/secret.c: $CLOCKWORK_HOME/secrets/<name>, where the
# Telegram bot token lives when no Secret Service answers, as on this machine) is out
# of every run's reach (SPEC K2). A real clockworkd stores a token there through
# `cwctl telegram set-token`; from outside the file reads back (the control); from
# inside the real sandbox (`cw-runner exec`) reading it, listing its directory or
# finding the token anywhere under the Clockwork home must fail; and a policy that
# grants the file or its directory is refused when the spec is built, naming it.
# Env: CW_BIN (clockworkd, cwctl, cw-runner), CW_BUILD, CW_TEST_TMP.
set -u
: "${CW_BIN:?}" "${CW_BUILD:?}"
T=$(realpath "$(mktemp -d "${CW_TEST_TMP:-$CW_BUILD}/secrets.XXXXXX")")
export HOME=$T/home CLOCKWORK_HOME=$T/home/.clockwork
mkdir -p "$CLOCKWORK_HOME" "$T/wt"
chmod 700 "$CLOCKWORK_HOME"
printf 'api_port: 0\n' > "$CLOCKWORK_HOME/config.yaml"
TOKEN="7000000002:AAEescapeROWsecretTOKENabcdefghijk"
DPID=
fails=0
cleanup() {
	[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
row() { printf '%-58s %-28s %s\n' "$1" "$2" "$3"; [ "$3" = PASS ] || fails=$((fails + 1)); }

"$CW_BIN/clockworkd" --foreground > "$T/daemon.out" 2>&1 &
DPID=$!
end=$(( $(date +%s) + 15 ))
until [ -s "$CLOCKWORK_HOME/clockworkd.port" ]; do
	[ "$(date +%s)" -lt "$end" ] || { cat "$T/daemon.out"; echo "clockworkd did not start"; exit 1; }
	sleep 0.05
done
printf '%s\n' "$TOKEN" | "$CW_BIN/cwctl" telegram set-token >/dev/null || { echo "set-token failed"; exit 1; }
F=$CLOCKWORK_HOME/secrets/telegram.bot_token

# Control: the file is there, 0600, and holds the token.
if [ "$(cat "$F" 2>/dev/null)" = "$TOKEN" ] && [ "$(stat -c %a "$F")" = 600 ]; then
	row "control: the token file from outside" "0600, readable" PASS
else
	row "control: the token file from outside" "missing or wrong" FAIL
fi

run() {
	env -i HOME="$HOME" CLOCKWORK_HOME="$CLOCKWORK_HOME" PATH=/usr/local/bin:/usr/bin:/bin \
	    "$CW_BIN/cw-runner" exec --workdir "$T/wt" -- sh -c "$1" 2>"$T/runner.err"
}
out=$(run "cat '$F' 2>&1; echo rc=\$?")
if [[ $out != *"${TOKEN#*:}"* ]] && [[ $out == *"rc=1"* ]]; then
	row "cat \$CLOCKWORK_HOME/secrets/telegram.bot_token" "refused ($(printf '%s' "$out" | head -1 | sed 's/.*: //'))" PASS
else
	row "cat \$CLOCKWORK_HOME/secrets/telegram.bot_token" "$out $(cat "$T/runner.err")" FAIL
fi
out=$(run "ls -la '$CLOCKWORK_HOME/secrets' 2>&1; echo rc=\$?")
if [[ $out != *telegram.bot_token* ]] && [[ $out != *"rc=0"* ]]; then
	row "ls \$CLOCKWORK_HOME/secrets" "refused" PASS
else
	row "ls \$CLOCKWORK_HOME/secrets" "$out" FAIL
fi
out=$(run "grep -rsF '${TOKEN#*:}' '$HOME' /tmp '$T' 2>/dev/null | head -3; echo done")
if [[ $out == done ]]; then
	row "the token anywhere a run can read" "not found" PASS
else
	row "the token anywhere a run can read" "$out" FAIL
fi
out=$(run "cat /proc/1/environ /proc/self/environ 2>/dev/null | tr '\\0' '\\n' | grep -cF '${TOKEN#*:}'")
if [ "${out:-0}" = 0 ]; then
	row "the token in the run's environment" "absent" PASS
else
	row "the token in the run's environment" "$out" FAIL
fi
# A policy that grants the file or its directory is refused outright.
for grant in "read_files: [$F]" "read_dirs: [$CLOCKWORK_HOME/secrets]"; do
	printf 'api_port: 0\nsandbox:\n  %s\n' "$grant" > "$CLOCKWORK_HOME/config.yaml"
	out=$(env -i HOME="$HOME" CLOCKWORK_HOME="$CLOCKWORK_HOME" PATH=/usr/bin:/bin \
	    "$CW_BIN/cw-runner" spec --json --workdir "$T/wt" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [[ $out == *"Clockwork delivery credentials"* ]]; then
		row "grant ${grant%%:*} of the secrets" "refused (rc $rc)" PASS
	else
		row "grant ${grant%%:*} of the secrets" "rc $rc: $(printf '%s' "$out" | head -2)" FAIL
	fi
done
echo "secrets: $fails failed"
exit $((fails > 0))

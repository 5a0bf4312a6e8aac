#!/usr/bin/env bash
# Issue 24: clockworkd links only what every daemon uses. libcurl (Telegram), libsecret
# with GLib (the Secret Service) and libdbus (desktop notifications) are loaded the
# first time they are needed (common/dynlib.c), so a daemon that never needs them does
# not carry them; each still works once it is needed.
#  1. clockworkd's NEEDED list names none of them (readelf -d).
#  2. a daemon with no token, no session bus and notifications off has none mapped.
#  3. a Telegram token loads libcurl, and the daemon calls the Bot API (the stand-in).
#  4. with a session bus named (one that does not answer), libsecret is loaded and the
#     secret goes to the 0600 file, as before; desktop notifications load libdbus and
#     say why nothing is shown.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v readelf >/dev/null || fail "readelf (binutils) is needed"
command -v python3 >/dev/null || fail "python3 is needed for the Bot API stand-in"
mkdir -p "$T/pids"

needed=$(readelf -d "$CW_BIN/clockworkd" | awk '/NEEDED/ { print $NF }')
[ -n "$needed" ] || fail "readelf -d clockworkd shows no NEEDED entry"
for lib in libcurl libsecret libglib libgobject libgio libdbus libssl libgnutls; do
	! grep -q "$lib" <<<"$needed" || fail "clockworkd links $lib: $(tr '\n' ' ' <<<"$needed")"
done
pass "clockworkd's NEEDED list has no libcurl, libsecret/GLib, libdbus or TLS stack: $(tr -d '[]' <<<"$needed" | tr '\n' ' ')"

mapped() { grep -q "/$1" "/proc/$DPID/maps"; }
unset DBUS_SESSION_BUS_ADDRESS
start_daemon --runner "$FAKE_RUNNER" --stop-grace 0.5
cwctl status >/dev/null
for lib in libcurl.so libsecret-1.so libglib-2.0.so libdbus-1.so; do
	! mapped "$lib" || fail "an idle daemon has $lib mapped: $(grep "$lib" "/proc/$DPID/maps" | head -1)"
done
pass "an idle daemon (no token, no session bus, notifications off) maps none of them (rss $(awk '/^VmRSS/ { print $2 }' "/proc/$DPID/status") KiB)"

TG_TOKEN="7000000001:AAFtestTOKENabcdefghijklmnopqrstuvw"
python3 "$CW_SRC/test/fixtures/telegram-bot-api.py" "$TG_TOKEN" "$T/tgport" "$T/tg.log" &
echo $! > "$T/pids/standin"
wait_until 10 "stand-in" test -s "$T/tgport" || fail "the Bot API stand-in did not start"
TGB="http://127.0.0.1:$(cat "$T/tgport")"
stop_daemon
CW_TELEGRAM_API_BASE_FOR_TESTS="$TGB" start_daemon --runner "$FAKE_RUNNER" --stop-grace 0.5
! mapped libcurl.so || fail "libcurl mapped before a token was set"
printf '%s\n' "$TG_TOKEN" | cwctl telegram set-token | grep -q 'bot token stored' || fail "set-token"
wait_until 10 "polling" sh -c "curl -s --noproxy '*' '$TGB/_test/state' | grep -q '\"polls\": \[{'" ||
    fail "the daemon never called getUpdates"
cwctl telegram test 4242 | grep -q 'test message sent to chat 4242' || fail "telegram test: the Bot API call failed"
mapped libcurl.so || fail "the Bot API was called but libcurl is not mapped"
pass "a token loads libcurl: getUpdates polled and a test message reached the stand-in"
stop_daemon

# A session bus that is named but does not answer: libsecret and GLib load, the service
# does not answer, and the secret goes to the file as it would without a bus.
export DBUS_SESSION_BUS_ADDRESS="unix:path=$T/no-bus"
printf 'api_port: 0\ndesktop_notifications: true\n' > "$CLOCKWORK_HOME/config.yaml"
CW_TELEGRAM_API_BASE_FOR_TESTS="$TGB" start_daemon --runner "$FAKE_RUNNER" --stop-grace 0.5
printf '%s\n' "$TG_TOKEN" | cwctl telegram set-token | grep -q 'bot token stored' || fail "set-token with a dead bus"
cwctl telegram status --json | grep -q '"secret_backend":	"file"' || fail "backend: $(cwctl telegram status --json)"
[ "$(stat -c %a "$CLOCKWORK_HOME/secrets/telegram.bot_token")" = 600 ] || fail "secret file mode"
mapped libsecret-1.so || fail "a session bus was named but libsecret was never loaded"
wait_until 10 "notification state" sh -c "'$CW_BIN/cwctl' status --json | grep -q '\"desktop_notifications\":.*unavailable'" ||
    fail "desktop notifications: $("$CW_BIN/cwctl" status --json | grep desktop)"
mapped libdbus-1.so || fail "notifications are on with a bus named but libdbus was never loaded"
pass "a named session bus loads libsecret (no answer: the 0600 file) and libdbus (notifications: $("$CW_BIN/cwctl" status --json | sed -n 's/.*"desktop_notifications":[[:space:]]*"\([^"]*\)".*/\1/p'))"

#!/usr/bin/env bash
# The approvals relay: a runner's approval_request becomes a pending approval that
# cwctl lists; cwctl approve answers it through the one respond path, the decision
# reaches the runner, and the journal and audit log record it; a second answer is
# refused as already answered (exit 3); an approval of a run that has ended is refused.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
command -v perl >/dev/null || fail "perl is needed for the fake runner"

start_daemon --runner "$FAKE_RUNNER" --stop-grace 0.5

cwctl task add ask --engine command --prompt 'echo "decision=$DECISION" #approval' >/dev/null
id=$(cwctl run start ask)
pending() { cwctl approvals --json | grep -q '"state":	"pending"'; }
wait_until 10 "approval pending" pending || fail "no pending approval"
cwctl approvals > "$T/list"
grep -q "$id" "$T/list" && grep -q Bash "$T/list" && grep -q 'rm -rf build' "$T/list" ||
    fail "approvals listing: $(cat "$T/list")"
aid=$(awk 'NR == 2 { print $1 }' "$T/list")
[ -n "$aid" ] || fail "no approval id"
pass "an approval_request from the runner is listed by cwctl approvals"

cwctl approve "$aid" | grep -q "approval $aid allowed" || fail "approve"
wait_until 10 "run ended" run_ended "$id" || fail "run did not end"
grep -q 'decision=allow' "$(run_field "$id" log_path)" || fail "runner did not get the decision"
# Over the unix socket the actor is the kernel's word on the peer: cwctl, uid and pid.
[[ "$(sql "SELECT state || ' ' || answered_by FROM approvals WHERE id='$aid'")" == "allowed cwctl uid=$(id -u) pid="[0-9]* ]] ||
    fail "store: $(sql "SELECT * FROM approvals WHERE id='$aid'")"
sql "SELECT kind FROM journal WHERE run_id='$id'" | grep -q approval_request || fail "journal request"
sql "SELECT kind FROM journal WHERE run_id='$id'" | grep -q approval_answer || fail "journal answer"
[ "$(sql "SELECT count(*) FROM audit WHERE action='approval.answer' AND target='$aid'")" = 1 ] ||
    fail "audit"
pass "cwctl approve: decision forwarded to the runner, stored, journaled and audited"

set +e; out=$(cwctl deny "$aid" --message late 2>&1); rc=$?; set -e
[ $rc -eq 3 ] || fail "second answer exit $rc"
grep -q 'already answered' <<<"$out" || fail "second answer message: $out"
[ "$(sql "SELECT state FROM approvals WHERE id='$aid'")" = allowed ] || fail "second answer changed it"
pass "a second answer is refused as already answered (exit 3) and changes nothing"

# An approval left pending when its run ends cannot be answered.
id2=$(cwctl run start ask)
wait_until 10 "approval pending" sh -c "sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT id FROM approvals WHERE run_id='$id2'\" | grep -q ." ||
    fail "no second approval"
aid2=$(sql "SELECT id FROM approvals WHERE run_id='$id2'")
cwctl run stop "$id2" >/dev/null
wait_until 10 "run ended" run_ended "$id2" || fail "run 2 did not end"
set +e; out=$(cwctl deny "$aid2" 2>&1); rc=$?; set -e
[ $rc -eq 3 ] && grep -q 'has ended' <<<"$out" || fail "answer after the run ended: $rc $out"
[ "$(sql "SELECT state FROM approvals WHERE id='$aid2'")" = expired ] || fail "not expired"
set +e; cwctl approve nope-123 2>/dev/null; rc=$?; set -e
[ $rc -eq 1 ] || fail "unknown approval exit $rc"
pass "answering after the run ended is refused (exit 3); unknown id is exit 1"

# Two answerers racing: exactly one wins.
id3=$(cwctl run start ask)
wait_until 10 "approval pending" sh -c "sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT id FROM approvals WHERE run_id='$id3'\" | grep -q ." ||
    fail "no third approval"
aid3=$(sql "SELECT id FROM approvals WHERE run_id='$id3'")
( rc=0; cwctl approve "$aid3" >/dev/null 2>&1 || rc=$?; echo $rc > "$T/r1" ) &
w1=$!
( rc=0; cwctl deny "$aid3" >/dev/null 2>&1 || rc=$?; echo $rc > "$T/r2" ) &
w2=$!
wait $w1 $w2
codes=$(sort "$T/r1" "$T/r2" | tr '\n' ' ')
[ "$codes" = "0 3 " ] || fail "racing answers: exit codes $codes, want one 0 and one 3"
wait_until 10 "run ended" run_ended "$id3" || fail "run 3 did not end"
pass "two racing answers: exactly one wins, the other is refused"

# Issue 17: the approval's risk level is stored, listed first by cwctl and journaled;
# a configured rule's deny is journaled as rule_deny under its own id, a floor rule's
# as floor_deny.
cwctl task add risky --engine command --prompt 'echo "decision=$DECISION" #approval #risky' >/dev/null
id4=$(cwctl run start risky)
wait_until 10 "approval pending" sh -c "sqlite3 '$CLOCKWORK_HOME/clockwork.db' \"SELECT id FROM approvals WHERE run_id='$id4'\" | grep -q ." ||
    fail "no risky approval"
aid4=$(sql "SELECT id FROM approvals WHERE run_id='$id4'")
[ "$(sql "SELECT risk || ' ' || risk_rule FROM approvals WHERE id='$aid4'")" = "destructive config.rm_root" ] ||
    fail "stored risk: $(sql "SELECT risk, risk_rule FROM approvals WHERE id='$aid4'")"
cwctl approvals | grep "^$aid4 " | grep -q 'destructive (config.rm_root)' ||
    fail "cwctl approvals lacks the risk: $(cwctl approvals)"
[ "$(cwctl approvals show "$aid4" | head -n 1)" = "risk:     destructive (config.rm_root)" ] ||
    fail "approvals show: $(cwctl approvals show "$aid4")"
cwctl approvals --json | grep -q '"risk":	"destructive"' || fail "--json lacks the risk"
[ "$(sql "SELECT risk FROM approvals WHERE id='$aid'")" = ordinary ] || fail "a request without risk is not ordinary"
cwctl deny "$aid4" >/dev/null
wait_until 10 "run ended" run_ended "$id4" || fail "risky run did not end"
j=$(cwctl journal --run "$id4" --json)
grep -q '"kind":	"rule_deny"' <<<"$j" && grep -q '"rule":	"config.sudo"' <<<"$j" ||
    fail "rule_deny not journaled under its id: $j"
grep -q '"kind":	"floor_deny"' <<<"$j" && grep -q '"rule":	"floor.publish"' <<<"$j" ||
    fail "floor_deny not journaled: $j"
[ "$(sql "SELECT count(*) FROM journal WHERE run_id='$id4' AND kind='floor_deny' AND data LIKE '%config.sudo%'")" = 0 ] ||
    fail "a configured rule's deny was journaled as floor_deny"
sql "SELECT data FROM journal WHERE run_id='$id4' AND kind='approval_request'" | grep -q '"risk":"destructive"' ||
    fail "the journal's approval_request lacks the risk"
pass "approval risk stored, listed first by cwctl, journaled; rule_deny journaled apart from floor_deny"

# A run the runner refuses (sandbox not enforceable) is recorded as refused and journaled.
cwctl task add refused --engine command --prompt 'true #refuse' >/dev/null
rid=$(cwctl run start refused)
wait_until 10 "refused" run_ended "$rid" || fail "refused run did not end"
[ "$(run_status "$rid")" = refused ] || fail "status $(run_status "$rid")"
cwctl journal --run "$rid" | grep -q run_refused || fail "no run_refused journal entry"
cwctl journal --run "$rid" --json | grep -q 'landlock: not supported' || fail "journal lacks the reason"
pass "a refused run is recorded as refused and journaled with the reason"

echo "daemon_approvals: $PASSED passed"

#!/usr/bin/env bash
# cwctl's option table (cwctl/cwctl-opts.c, printed by the hidden "cwctl __options") is
# what the parser accepts; held here against what a person reads and types (issue 27):
#  1. every verb of the dispatch table has commands in the option table, and is in
#     cwctl --help;
#  2. every option of every command is in "cwctl VERB [SUB] --help" and in that
#     command's entry of docs/cwctl.1;
#  3. usage errors exit 2 for every command, before the daemon is asked anything (no
#     daemon runs here: a late check would exit 4): an unknown option, a missing
#     argument, an option without its value, an unknown subcommand;
#  4. the generated bash completion offers every verb, subcommand and option.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1
set +o pipefail

cwctl __options > "$T/opts" || fail "cwctl __options: exit $?"
cwctl __verbs > "$T/verbs" || fail "cwctl __verbs: exit $?"
[ "$(wc -l < "$T/opts")" -gt 40 ] || fail "the option table is short: $(cat "$T/opts")"
# The table's own sanity: the shape the checks below rely on.
grep -qP '^task\tadd\t1\t.*--telegram-allow=USER_ID' "$T/opts" || fail "task add row: $(grep '^task' "$T/opts")"

# 1. Verbs.
cwctl --help > "$T/help"
while read -r verb; do
	grep -q "^$verb	" "$T/opts" || fail "verb $verb has no row in the option table"
	grep -qE "^  $verb( |$)" "$T/help" || fail "verb $verb is not in cwctl --help"
done < "$T/verbs"
[ "$(wc -l < "$T/verbs")" -ge 15 ] || fail "cwctl __verbs: $(cat "$T/verbs")"
pass "every verb of the dispatch table ($(wc -l < "$T/verbs")) has an option table row and is in cwctl --help"

# 2. --help and the man page. The man page's entries are its .TP items; a command's
# entries are those whose heading starts with its verb and names its subcommand.
python3 - "$CW_SRC/docs/cwctl.1" "$T/opts" > "$T/man.out" <<'PY' || fail "docs/cwctl.1: $(cat "$T/man.out")"
import re, sys
src = open(sys.argv[1]).read()
def plain(s):
    s = re.sub(r'\\f[BIRP]', '', s)
    return s.replace('\\-', '-').replace('\\e', '\\').replace('\\(em', '-')
items, cur = [], None
for line in src.split('\n'):
    if line.startswith('.TP') or line.startswith('.SH'):
        cur = None
        if line.startswith('.TP'):
            cur = []
            items.append(cur)
        continue
    if cur is not None:
        cur.append(plain(line))
bad = 0
for row in open(sys.argv[2]):
    verb, sub, nargs, opts = row.rstrip('\n').split('\t')
    mine = []
    for it in items:
        if not it:
            continue
        words = re.split(r'[^a-z0-9-]+', it[0])
        words = [w for w in words if w]
        # "approve ID ..., deny ID ...": one entry for two verbs.
        if not words or (words[0] != verb and (sub != '-' or verb not in words)):
            continue
        if sub != '-' and sub not in words[1:]:
            continue
        mine.append('\n'.join(it))
    name = verb + ('' if sub == '-' else ' ' + sub)
    if not mine:
        print(f"{name}: no entry in docs/cwctl.1"); bad = 1; continue
    text = '\n'.join(mine)
    for o in opts.split():
        o = o.split('=')[0]
        if not re.search(r'(?<![\w-])' + re.escape(o) + r'(?![\w-])', text):
            print(f"{name}: {o} is not in its docs/cwctl.1 entry"); bad = 1
sys.exit(bad)
PY
n=0
while IFS=$'\t' read -r verb sub nargs opts; do
	[ "$sub" = - ] && sub=
	# shellcheck disable=SC2086
	cwctl $verb $sub --help > "$T/h" 2> "$T/err" || fail "cwctl $verb $sub --help: exit $?"
	[ ! -s "$T/err" ] || fail "cwctl $verb $sub --help wrote to stderr"
	for o in $opts; do
		o=${o%%=*}
		grep -qE -- "(^|[^-a-z])$o([^-a-z]|$)" "$T/h" || fail "cwctl $verb $sub --help does not list $o"
		n=$((n + 1))
	done
done < "$T/opts"
pass "each of $n options is in its command's --help and its docs/cwctl.1 entry"
# The known gap of issue 27.
cwctl task add --help > "$T/h"
for o in --key --telegram-chat --telegram-allow --budget-wait --max-dollars --base; do
	grep -q -- "$o" "$T/h" || fail "task add --help lacks $o"
done
pass "task add --help lists --key, --telegram-chat and --telegram-allow"

# 3. Usage errors, exit 2, with no daemon (CLOCKWORK_HOME has none).
want2() {	# want2 WHAT CWCTL-ARGS...
	local what=$1; shift
	set +e; cwctl "$@" > "$T/out" 2> "$T/err"; local rc=$?; set -e
	[ $rc = 2 ] || fail "cwctl $* ($what): exit $rc, want 2: $(cat "$T/err")"
	[ -s "$T/err" ] || fail "cwctl $* ($what): exit 2 without a word on stderr"
}
n=0
while IFS=$'\t' read -r verb sub nargs opts; do
	[ "$sub" = - ] && sub=
	args=()
	for ((i = 0; i < nargs; i++)); do args+=(x); done
	# shellcheck disable=SC2086
	want2 "unknown option" $verb $sub --no-such-option "${args[@]}"
	grep -q -- "--no-such-option" "$T/err" || fail "cwctl $verb $sub: the message does not name the option: $(cat "$T/err")"
	if [ "$nargs" -gt 0 ]; then
		# shellcheck disable=SC2086
		want2 "a missing argument" $verb $sub "${args[@]:1}"
	fi
	for o in $opts; do
		case $o in *=*) ;; *) continue ;; esac
		# shellcheck disable=SC2086
		want2 "an option without its value" $verb $sub "${args[@]}" "${o%%=*}"
		grep -q -- "needs a value" "$T/err" || fail "cwctl $verb $sub ${o%%=*}: $(cat "$T/err")"
	done
	n=$((n + 1))
done < "$T/opts"
for verb in $(cut -f1 "$T/opts" | sort -u); do
	grep -qP "^$verb\t[^-]" "$T/opts" || continue
	want2 "an unknown subcommand" "$verb" no-such-subcommand
	grep -q "unknown subcommand 'no-such-subcommand'" "$T/err" || fail "cwctl $verb no-such-subcommand: $(cat "$T/err")"
done
want2 "an unknown verb" no-such-verb
pass "an unknown option, a missing argument or value, an unknown subcommand exit 2 for each of $n commands, no daemon asked"
# And a runtime failure is not a usage error: no daemon is 4, not 2.
set +e; cwctl run show r-1 > /dev/null 2>&1; rc=$?; set -e
[ $rc = 4 ] || fail "cwctl run show with no daemon: exit $rc, want 4"
pass "the same commands well formed reach for the daemon (exit 4 without one)"

# 4. The completion, in a real bash.
cwctl completion bash > "$T/comp.bash" || fail "cwctl completion bash"
complete_words() {	# complete_words WORD...: what TAB offers after them (the last may be empty)
	PATH="$CW_BIN:$PATH" bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _cwctl; printf "%s\n" "${COMPREPLY[@]}"' \
	    _ "$T/comp.bash" "$@"
}
complete_words cwctl "" > "$T/c"
while read -r verb; do
	grep -qx "$verb" "$T/c" || fail "completion does not offer the verb $verb"
done < "$T/verbs"
n=0
while IFS=$'\t' read -r verb sub nargs opts; do
	if [ "$sub" = - ]; then
		complete_words cwctl "$verb" - > "$T/c"
	else
		complete_words cwctl "$verb" "" > "$T/c"
		grep -qx "$sub" "$T/c" || fail "completion does not offer $verb $sub"
		complete_words cwctl "$verb" "$sub" - > "$T/c"
	fi
	for o in $opts; do
		grep -qx -- "${o%%=*}" "$T/c" || fail "completion of $verb $sub does not offer ${o%%=*}: $(tr '\n' ' ' < "$T/c")"
		n=$((n + 1))
	done
done < "$T/opts"
complete_words cwctl completion "" | grep -qx zsh || fail "completion of completion lacks zsh"
pass "bash completion offers every verb, subcommand and each of $n options"

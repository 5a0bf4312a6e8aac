#!/usr/bin/env bash
# A run's shell has a private HOME with empty startup files (issue 27), with the real
# cw-runner in the real sandbox (command engine), laid out as a person's machine is:
# CLOCKWORK_HOME at ~/.clockwork, so that the user's HOME is in the run's view as a
# directory it cannot list. The user's ~/.bashrc and ~/.profile (which would print a
# marker) are never sourced by a login, interactive or sh login shell; the transcript
# has no "Permission denied"; HOME is the run's own (listable, its .bashrc an empty
# file) and is gone with the run's TMPDIR; ~/.gitconfig, granted, is still found
# through it; an ungranted entry of the user's home is not even named there.
. "${CW_SRC:?}/test/integration/daemon_lib.bash" || exit 1

export CLOCKWORK_HOME="$HOME/.clockwork"
mkdir -p -m 700 "$CLOCKWORK_HOME"
printf 'api_port: 0\n' > "$CLOCKWORK_HOME/config.yaml"
echo 'echo USER-BASHRC-SOURCED' > "$HOME/.bashrc"
echo 'echo USER-PROFILE-SOURCED' > "$HOME/.profile"
cp "$HOME/.profile" "$HOME/.bash_profile"
printf '[user]\n\tname = Home Person\n\temail = home@example.invalid\n' > "$HOME/.gitconfig"
mkdir -p "$HOME/secret-project-name"
start_daemon --stop-grace 1
new_repo "$T/repo"

cwctl task add home --engine command --repo "$T/repo" --mode acceptEdits --prompt '
echo "home=$HOME"
bash -lc "echo login-shell-ran" 2>&1
bash -ic "echo interactive-shell-ran" 2>&1 </dev/null
sh -lc "echo sh-login-ran" 2>&1
ls -a "$HOME" 2>&1
[ -f "$HOME/.bashrc" ] && [ -r "$HOME/.bashrc" ] && [ ! -s "$HOME/.bashrc" ] && echo rc-is-empty
echo "git-name=$(git config user.name)"
echo private > "$HOME/made-by-run" && echo home-writable' >/dev/null
cwctl run start home --wait > "$T/wait.out" || true
id=$(sed -n 's/^run: *//p' "$T/wait.out")
[ -n "$id" ] || fail "no run: $(cat "$T/wait.out")"
cwctl run log "$id" > "$T/log" 2>&1
for want in login-shell-ran interactive-shell-ran sh-login-ran rc-is-empty \
    "git-name=Home Person" home-writable; do
	grep -qF "$want" "$T/log" || fail "'$want' missing from the transcript: $(cat "$T/log")"
done
# (The runner's own note about the cgroup it could not make, as a normal user, is not
# the run's shell.)
denied=$(grep 'Permission denied' "$T/log" | grep -v '^limits: no cgroup' || true)
[ -z "$denied" ] || fail "Permission denied in the transcript: $denied"
! grep -q 'SOURCED' "$T/log" || fail "the user's startup file was sourced: $(grep SOURCED "$T/log")"
run_is "$id" completed || fail "the run $(run_status "$id"): $(cat "$T/log")"
pass "login, interactive and sh shells source no rc of the user's; no Permission denied; ~/.gitconfig still found"

home=$(sed -n 's/^ *home=//p' "$T/log" | head -n 1)
case "$home" in
"$CLOCKWORK_HOME/tmp/$id/home") ;;
*) fail "the run's HOME is $home, not its own under its TMPDIR" ;;
esac
! grep -q 'secret-project-name' "$T/log" || fail "an ungranted entry of the user's home is named in the run's HOME"
[ ! -e "$HOME/made-by-run" ] || fail "the run wrote into the user's home"
[ ! -e "$home" ] || fail "the run's private HOME outlived the run"
[ "$(cat "$HOME/.bashrc")" = 'echo USER-BASHRC-SOURCED' ] || fail "the user's .bashrc changed"
pass "HOME is the run's own (under its TMPDIR, gone with it); the user's home is untouched and its ungranted names unseen"

# A run's HOME is its to rearrange, and the runner's cleanup outside the sandbox must
# follow none of it: links to the user's home and to a directory of theirs beside the
# run's own files, then HOME itself swapped for a link to the user's home. Its TMPDIR
# goes; the user's files stay.
mkdir -p "$HOME/keep-dir" && echo kept > "$HOME/keep-dir/file" && echo kept > "$HOME/keep-file"
cwctl task add home2 --engine command --repo "$T/repo" --mode acceptEdits --prompt "
ln -s '$HOME/keep-dir' \"\$HOME/dir-link\" && ln -s '$HOME/keep-file' \"\$HOME/file-link\" &&
ln -s '$HOME' \"\$HOME/home-link\" && mkdir \"\$HOME/sub\" && ln -s '$HOME/keep-dir' \"\$HOME/sub/deep\" &&
echo links-made
h=\$HOME; cd / && rm -rf \"\$h\" && ln -s '$HOME' \"\$h\" && echo home-swapped" >/dev/null
cwctl run start home2 --wait > "$T/wait2.out" || true
id2=$(sed -n 's/^run: *//p' "$T/wait2.out")
[ -n "$id2" ] || fail "no run: $(cat "$T/wait2.out")"
cwctl run log "$id2" > "$T/log2" 2>&1
grep -q links-made "$T/log2" && grep -q home-swapped "$T/log2" || fail "the run could not plant its links: $(cat "$T/log2")"
[ ! -e "$CLOCKWORK_HOME/tmp/$id2" ] && [ ! -L "$CLOCKWORK_HOME/tmp/$id2" ] || fail "the run's TMPDIR outlived it: $(ls -la "$CLOCKWORK_HOME/tmp/$id2")"
[ "$(cat "$HOME/keep-dir/file")" = kept ] && [ "$(cat "$HOME/keep-file")" = kept ] &&
    [ "$(cat "$HOME/.bashrc")" = 'echo USER-BASHRC-SOURCED' ] && [ -d "$HOME/secret-project-name" ] ||
    fail "the cleanup of the run's HOME followed a link into the user's home: $(ls -la "$HOME")"
pass "links a run plants in its HOME, and HOME swapped for a link, are removed, never followed: the user's home stays whole"

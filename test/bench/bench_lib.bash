# Shared by the benches that measure the normal user (DEVELOPERS.md: a figure measured
# only as root is not a figure). Sourced, not run.

# bench_user_home: the home of the bench's normal user ($CW_BENCH_USER, default cwtest,
# made by scripts/test-user), printed; exit 1 with the reason when there is no such
# user or its home is not under /home.
bench_user_home() {
	local user=${CW_BENCH_USER:-cwtest} home
	id -u "$user" >/dev/null 2>&1 ||
		{ echo "no user $user (scripts/test-user creates it)" >&2; return 1; }
	home=$(getent passwd "$user" | cut -d: -f6)
	case $home in /home/?*) ;; *) echo "user $user has HOME $home, not under /home" >&2; return 1 ;; esac
	printf '%s\n' "$home"
}

/*
 * cwctl doctor [--json]: what this machine allows a run, check by check, each with a
 * status (ok, warn, fail), what it means for a run, and the exact command that fixes
 * it. Namespaces and seccomp are tried in a child, not read from sysctls: a container,
 * a seccomp filter or an LSM can refuse what every sysctl allows. The sysctls are read
 * afterwards, to name the cause and the fix. Exit 0 when nothing fails, 1 when
 * something does, 2 for a usage error.
 */
#define _GNU_SOURCE
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cwctl.h"
#include "engines.h"
#include "json.h"
#include "landlock.h"
#include "landlock_abi.h"
#include "paths.h"
#include "spawnchild.h"
#include "strlist.h"

enum doctor_status { DOCTOR_OK = 0, DOCTOR_WARN, DOCTOR_FAIL };

static const char *const doctor_status_names[] = { "ok", "warn", "fail" };

struct doctor {
	cJSON	*checks;	/* the report, printed at the end */
	int	 failed;
	int	 root;
	char	 bindir[PATH_MAX];
};

/* One check's line: status, name, what was found, what it means, and the fix. */
static void
doctor_add(struct doctor *dr, enum doctor_status st, const char *name, const char *found,
    const char *means, const char *fix)
{
	cJSON	*c = cJSON_CreateObject();

	if (c == NULL)
		return;
	json_add_string(c, "check", name);
	json_add_string(c, "status", doctor_status_names[st]);
	json_add_string(c, "found", found);
	json_add_string(c, "means", means);
	if (fix != NULL)
		json_add_string(c, "fix", fix);
	else
		cJSON_AddNullToObject(c, "fix");
	cJSON_AddItemToArray(dr->checks, c);
	if (st == DOCTOR_FAIL)
		dr->failed = 1;
}

/* A small /proc or /sys file's first line, or NULL when it cannot be read. */
static char *
doctor_read(const char *path, char *buf, size_t len)
{
	FILE	*f;

	if ((f = fopen(path, "re")) == NULL)
		return NULL;
	if (fgets(buf, (int)len, f) == NULL) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* A numeric sysctl under /proc/sys, or -1 when the kernel has none. */
static long
doctor_sysctl(const char *path)
{
	char	buf[64];

	if (doctor_read(path, buf, sizeof buf) == NULL)
		return -1;
	return strtol(buf, NULL, 10);
}

/* What this process's Seccomp: line says (0 none, 2 filtered), -1 unknown. */
static int
doctor_seccomp_mode(void)
{
	char	line[256];
	FILE	*f;
	int	mode = -1;

	if ((f = fopen("/proc/self/status", "re")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, "Seccomp:", 8) == 0)
			mode = atoi(line + 8);
	fclose(f);
	return mode;
}

/*
 * In a child: the namespaces a run needs (user, mount, PID, IPC; no user namespace as
 * root, as cw-runner does) and a tmpfs mounted in the new mount namespace, the first
 * thing the run's view needs. *stage is the step that failed (0 none), *err its errno.
 */
static void
doctor_try_ns(int with_user, int *stage, int *err)
{
	int	p[2], res[2] = { 0, 0 }, status;
	pid_t	pid;

	*stage = 0;
	*err = 0;
	if (pipe2(p, O_CLOEXEC) == -1 || (pid = fork()) == -1) {
		*stage = -1;
		*err = errno;
		return;
	}
	if (pid == 0) {
		close(p[0]);
		if (with_user && unshare(CLONE_NEWUSER) == -1)
			res[0] = 1;
		else if (unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC) == -1)
			res[0] = 2;
		else if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1 ||
		    mount("cw-doctor", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=4k") == -1)
			res[0] = 3;
		else if (unshare(CLONE_NEWNET) == -1)
			res[0] = 4;
		res[1] = res[0] != 0 ? errno : 0;
		if (write(p[1], res, sizeof res) != (ssize_t)sizeof res)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], res, sizeof res) != (ssize_t)sizeof res) {
		res[0] = -1;
		res[1] = EIO;
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	*stage = res[0];
	*err = res[1];
}

/* The AppArmor facts: LSM active, the userns restriction, our profile loaded. */
struct doctor_aa {
	int	active;
	long	restrict_userns;	/* -1: the kernel has no such sysctl */
	int	profile;		/* 1 loaded, 0 not, -1 cannot tell */
};

static void
doctor_apparmor_facts(struct doctor_aa *aa)
{
	char	line[512];
	FILE	*f;

	aa->active = access("/sys/kernel/security/apparmor", F_OK) == 0;
	aa->restrict_userns = doctor_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
	aa->profile = -1;
	if (!aa->active || (f = fopen("/sys/kernel/security/apparmor/profiles", "re")) == NULL)
		return;
	aa->profile = 0;
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, "cw-sandbox ", 11) == 0)
			aa->profile = 1;
	fclose(f);
}

static void
doctor_userns(struct doctor *dr, const struct doctor_aa *aa)
{
	char		 found[512], fix[PATH_MAX + 512];
	const char	*steps[] = { "", "unshare(CLONE_NEWUSER)",
			    "unshare(CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWIPC)",
			    "mounting a tmpfs in the new mount namespace",
			    "unshare(CLONE_NEWNET)" };
	long		 maxns = doctor_sysctl("/proc/sys/user/max_user_namespaces");
	long		 clone = doctor_sysctl("/proc/sys/kernel/unprivileged_userns_clone");
	int		 stage, err, sec = doctor_seccomp_mode();

	doctor_try_ns(!dr->root, &stage, &err);
	if (stage == 0) {
		snprintf(found, sizeof found, "%s can make %s namespaces and mount in them",
		    dr->root ? "root" : "this user", dr->root ? "mount, PID, IPC and network" :
		    "user, mount, PID, IPC and network");
		doctor_add(dr, DOCTOR_OK, "namespaces", found, "a run gets its own "
		    "filesystem view, process table and IPC (SPEC G3)", NULL);
		if (dr->root)
			goto root_userns;
		return;
	}
	snprintf(found, sizeof found, "%s failed: %s (user.max_user_namespaces %ld%s%s%s)",
	    stage > 0 && stage < 5 ? steps[stage] : "fork", strerror(err), maxns,
	    clone >= 0 ? ", kernel.unprivileged_userns_clone " : "",
	    clone >= 0 ? (clone ? "1" : "0") : "",
	    sec == 2 ? ", and this process already runs under a seccomp filter" : "");
	if (stage == 4) {
		doctor_add(dr, DOCTOR_FAIL, "namespaces", found, "runs with the default "
		    "network policy are refused (exit 3): each run's egress goes through its "
		    "own network namespace", "allow network namespaces where clockworkd runs "
		    "(a container refuses them: docker/podman --security-opt "
		    "seccomp=unconfined), or set network: open in config.yaml (no egress "
		    "policy at all; every run's report says so)");
		return;
	}
	if (!dr->root && stage == 1 && maxns == 0)
		snprintf(fix, sizeof fix, "sudo sysctl -w user.max_user_namespaces=15000 && "
		    "echo user.max_user_namespaces=15000 | sudo tee "
		    "/etc/sysctl.d/60-clockwork-userns.conf");
	else if (!dr->root && stage == 1 && clone == 0)
		snprintf(fix, sizeof fix, "sudo sysctl -w kernel.unprivileged_userns_clone=1 "
		    "&& echo kernel.unprivileged_userns_clone=1 | sudo tee "
		    "/etc/sysctl.d/60-clockwork-userns.conf");
	else if (!dr->root && aa->active && aa->restrict_userns == 1 && aa->profile != 1)
		snprintf(fix, sizeof fix, "sudo %s/cwctl service apparmor   (loads the "
		    "cw-sandbox profile that lets cw-sandbox make user namespaces; see the "
		    "apparmor line)", dr->bindir);
	else if (sec == 2)
		snprintf(fix, sizeof fix, "a seccomp filter around this session refuses "
		    "namespaces (a container or a wrapper): run clockworkd outside it, or "
		    "start the container with namespaces allowed (docker/podman: "
		    "--security-opt seccomp=unconfined, or a profile that allows clone and "
		    "unshare with CLONE_NEW*)");
	else
		snprintf(fix, sizeof fix, "no sysctl here forbids them: a container runtime or "
		    "an LSM refuses them; run clockworkd on the host, or allow user "
		    "namespaces in the container (docker/podman: --security-opt "
		    "seccomp=unconfined)");
	doctor_add(dr, DOCTOR_FAIL, "namespaces", found, dr->root ? "every run is refused "
	    "(exit 3): no sandbox can be built without mount and PID namespaces" :
	    "every run is refused (exit 3): a normal user's sandbox is built inside a user "
	    "namespace, and the kernel will not make one for cw-runner", fix);
	return;
root_userns:
	/* Root's runs make no user namespace; a normal user's on this machine would. */
	doctor_try_ns(1, &stage, &err);
	if (stage == 0)
		doctor_add(dr, DOCTOR_OK, "user namespaces", "they can be made (root's runs "
		    "do not use them)", "a normal user's runs on this machine get the same "
		    "sandbox", NULL);
	else {
		snprintf(found, sizeof found, "%s failed: %s; root's runs do not need them",
		    stage > 0 && stage < 5 ? steps[stage] : "fork", strerror(err));
		doctor_add(dr, DOCTOR_WARN, "user namespaces", found, "root's runs are "
		    "sandboxed; a normal user's runs on this machine would be refused (exit 3)",
		    maxns == 0 ? "sudo sysctl -w user.max_user_namespaces=15000" : clone == 0 ?
		    "sudo sysctl -w kernel.unprivileged_userns_clone=1" : "run cwctl doctor as "
		    "that user for the cause and its fix");
	}
}

static void
doctor_apparmor(struct doctor *dr, const struct doctor_aa *aa)
{
	char	found[256], fix[PATH_MAX + 64];

	snprintf(fix, sizeof fix, "sudo %s/cwctl service apparmor", dr->bindir);
	if (!aa->active) {
		doctor_add(dr, DOCTOR_OK, "apparmor", "AppArmor is not active on this kernel",
		    "nothing restricts user namespaces here; no profile is needed", NULL);
		return;
	}
	snprintf(found, sizeof found, "AppArmor active, "
	    "kernel.apparmor_restrict_unprivileged_userns %ld, cw-sandbox profile %s",
	    aa->restrict_userns, aa->profile == 1 ? "loaded" : aa->profile == 0 ?
	    "not loaded" : "unknown (cannot read the list of profiles)");
	if (aa->restrict_userns != 1 || aa->profile == 1)
		doctor_add(dr, DOCTOR_OK, "apparmor", found, aa->profile == 1 ? "cw-sandbox may "
		    "make user namespaces; what a run executes gets no capabilities from "
		    "them (the cw-sandbox-payload profile)" : "user namespaces are not "
		    "restricted by AppArmor here", NULL);
	else
		doctor_add(dr, dr->root ? DOCTOR_WARN : DOCTOR_FAIL, "apparmor", found,
		    dr->root ? "root's runs need no user namespace; a normal user's runs "
		    "would be refused (exit 3)" : "the kernel lets unconfined programs make "
		    "user namespaces but not use them (Ubuntu 23.10 and later): every run is "
		    "refused (exit 3) until the cw-sandbox profile is loaded", fix);
}

static void
doctor_landlock(struct doctor *dr)
{
	struct strlist	 ne = { 0 };
	char		 found[128], means[2048];
	int		 raw, abi;
	size_t		 off = 0;

	raw = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	abi = landlock_abi();
	if (raw < 0) {
		snprintf(found, sizeof found, "no Landlock (%s)", strerror(errno));
		doctor_add(dr, DOCTOR_FAIL, "landlock", found, "every run is refused (exit 3): "
		    "Landlock is the layer that limits what a run may open, write and connect "
		    "to", "boot a kernel with CONFIG_SECURITY_LANDLOCK=y and landlock in the "
		    "lsm= list (e.g. add lsm=landlock,lockdown,yama,integrity,apparmor to "
		    "GRUB_CMDLINE_LINUX, then sudo update-grub and reboot)");
		return;
	}
	snprintf(found, sizeof found, "Landlock ABI %d (cw-runner uses up to %d)", raw,
	    LANDLOCK_ABI_MAX);
	if (landlock_limits(abi, &ne) == -1 || ne.n == 0) {
		doctor_add(dr, DOCTOR_OK, "landlock", found, "every Landlock right a run's "
		    "rules use is enforced", NULL);
		strlist_free(&ne);
		return;
	}
	off = (size_t)snprintf(means, sizeof means, "runs go on; what this ABI cannot "
	    "enforce is in every run's report:");
	for (size_t i = 0; i < ne.n && off < sizeof means; i++)
		off += (size_t)snprintf(means + off, sizeof means - off, " %s%s", ne.v[i],
		    i + 1 < ne.n ? ";" : "");
	doctor_add(dr, DOCTOR_WARN, "landlock", found, means, "a newer kernel: ABI 6 "
	    "(Linux 6.12) scopes signals and abstract unix sockets, ABI 5 (6.10) device "
	    "ioctls, ABI 4 (6.7) TCP ports, ABI 3 (6.2) truncate");
	strlist_free(&ne);
}

/* In a child: can a seccomp filter be installed (the last step of every sandbox)? */
static void
doctor_seccomp(struct doctor *dr)
{
	struct sock_filter	 f[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog	 prog = { 1, f };
	char			 found[256];
	int			 status, mode = doctor_seccomp_mode();
	pid_t			 pid;

	if ((pid = fork()) == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1)
			_exit(10 + (errno & 0x7f) % 100);
		_exit(0);
	}
	if (pid == -1 || waitpid(pid, &status, 0) == -1 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		snprintf(found, sizeof found, "a seccomp filter cannot be installed (%s)",
		    pid != -1 && WIFEXITED(status) && WEXITSTATUS(status) >= 10 ?
		    strerror(WEXITSTATUS(status) - 10) : "the test child failed");
		doctor_add(dr, DOCTOR_FAIL, "seccomp", found, "every run is refused (exit 3): "
		    "the syscall filter keeps a run from mount, ptrace, new namespaces and "
		    "other kernel surfaces", "boot a kernel with CONFIG_SECCOMP_FILTER=y");
		return;
	}
	snprintf(found, sizeof found, "seccomp filters can be installed%s", mode == 2 ?
	    "; this session already runs under one (a container or wrapper)" : "");
	doctor_add(dr, DOCTOR_OK, "seccomp", found, "each run gets cw-runner's syscall "
	    "filter", NULL);
}

/* This process's cgroup path in hierarchy ctl ("" for the v2 one), into out. */
static int
doctor_cgroup_path(const char *ctl, char *out, size_t len)
{
	char	line[1024], *a, *b;
	FILE	*f;
	int	rc = -1;

	if ((f = fopen("/proc/self/cgroup", "re")) == NULL)
		return -1;
	while (rc == -1 && fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((a = strchr(line, ':')) == NULL || (b = strchr(a + 1, ':')) == NULL)
			continue;
		*b = '\0';
		if (*ctl == '\0' ? a[1] == '\0' : strstr(a + 1, ctl) != NULL) {
			snprintf(out, len, "%s", b + 1);
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}

static void
doctor_cgroup(struct doctor *dr)
{
	char		 rel[PATH_MAX], dir[PATH_MAX + 64], found[PATH_MAX + 128];
	char		 fix[PATH_MAX + 512];
	const char	*user = getenv("USER");
	struct stat	 st;

	if (user == NULL || strpbrk(user, "'\"$` ") != NULL)
		user = "$USER";
	if (stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0) {
		if (doctor_cgroup_path("", rel, sizeof rel) == 0) {
			snprintf(dir, sizeof dir, "/sys/fs/cgroup%s", rel);
			if (access(dir, W_OK) == 0) {
				snprintf(found, sizeof found, "cgroup v2, %s is writable by %s",
				    dir, dr->root ? "root" : "this user");
				doctor_add(dr, DOCTOR_OK, "cgroups", found, "each run gets its own "
				    "cgroup: pids.max and memory.max hold its limits", NULL);
				return;
			}
		}
		snprintf(found, sizeof found, "cgroup v2, but %s is not delegated to this "
		    "user", rel[0] != '\0' ? rel : "this process's cgroup");
		doctor_add(dr, DOCTOR_WARN, "cgroups", found, "runs' process and memory limits "
		    "fall back to rlimits inside the run (RLIMIT_NPROC, RLIMIT_AS), which say "
		    "less: a run whose limits can be held by neither is refused",
		    "cwctl service install && systemctl --user enable --now clockworkd   "
		    "(the unit has Delegate=yes); by hand: systemd-run --user --scope -p "
		    "Delegate=yes clockworkd");
		return;
	}
	if (doctor_cgroup_path("pids", rel, sizeof rel) == 0) {
		snprintf(dir, sizeof dir, "/sys/fs/cgroup/pids%s", rel);
		if (access(dir, W_OK) == 0) {
			snprintf(found, sizeof found, "cgroup v1, %s is writable", dir);
			doctor_add(dr, DOCTOR_OK, "cgroups", found, "each run gets its own "
			    "cgroup in the pids, memory and freezer hierarchies", NULL);
			return;
		}
		snprintf(found, sizeof found, "cgroup v1, %s is not writable by this user", dir);
		snprintf(fix, sizeof fix, "sudo sh -c 'for c in pids memory freezer; do mkdir "
		    "-p /sys/fs/cgroup/$c/clockwork-%s && chown -R %s /sys/fs/cgroup/$c/"
		    "clockwork-%s; done', then start clockworkd in them (echo $$ > each "
		    "cgroup.procs first); or boot with cgroup v2 (systemd.unified_cgroup_"
		    "hierarchy=1) and use cwctl service install", user, user, user);
		doctor_add(dr, DOCTOR_WARN, "cgroups", found, "runs' process and memory limits "
		    "fall back to rlimits inside the run (RLIMIT_NPROC, RLIMIT_AS): a run whose "
		    "limits can be held by neither is refused", fix);
		return;
	}
	doctor_add(dr, DOCTOR_WARN, "cgroups", "no cgroup hierarchy this process can use",
	    "runs' process and memory limits fall back to rlimits inside the run "
	    "(RLIMIT_NPROC, RLIMIT_AS): a run whose limits can be held by neither is refused",
	    "mount cgroup2 at /sys/fs/cgroup (a systemd system does) and use cwctl service "
	    "install");
}

/* The first line of "bin --version", bounded by a few seconds, into out. */
static int
doctor_version(const char *bin, char *out, size_t len)
{
	int		p[2], status, n = 0, rc;
	char		*argv[] = { (char *)bin, "--version", NULL };
	char		*env[SPAWNCHILD_ENV_MAX], err[512];
	struct spawnchild sp;
	pid_t		pid;
	struct pollfd	pfd;
	ssize_t		r;
	int64_t		end = clock_mono_ms() + 5000;

	out[0] = '\0';
	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	/* An engine's launcher script needs PATH and HOME; nothing else of ours. */
	spawnchild_env_tool(env, SPAWNCHILD_ENV_MAX, 0, NULL);
	memset(&sp, 0, sizeof sp);
	sp.path = bin;
	sp.argv = argv;
	sp.env = env;
	sp.fds[0] = -1;
	sp.fds[1] = p[1];
	sp.fds[2] = -1;
	sp.nfds = 3;
	sp.new_pgrp = 1;
	rc = spawnchild_start(&sp, &pid, err, sizeof err);
	close(p[1]);
	if (rc == -1) {
		close(p[0]);
		return -1;
	}
	pfd.fd = p[0];
	pfd.events = POLLIN;
	while ((size_t)n < len - 1 && clock_mono_ms() < end && poll(&pfd, 1, 1000) >= 0) {
		if (!(pfd.revents & (POLLIN | POLLHUP)))
			continue;
		if ((r = read(p[0], out + n, len - 1 - (size_t)n)) <= 0)
			break;
		n += (int)r;
	}
	out[n] = '\0';
	out[strcspn(out, "\r\n")] = '\0';
	close(p[0]);
	/* Its process group (an engine's helpers too), and the child itself in case it
	 * had not yet made that group. */
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return out[0] != '\0' ? 0 : -1;
}

/* bin looked up in PATH, the way the daemon's runs find it. */
static int
doctor_which(const char *bin, char *out, size_t len)
{
	const char	*path = getenv("PATH");
	char		*copy, *dir, *save = NULL;
	int		 rc = -1;

	if (path == NULL || (copy = strdup(path)) == NULL)
		return -1;
	for (dir = strtok_r(copy, ":", &save); dir != NULL && rc == -1;
	    dir = strtok_r(NULL, ":", &save))
		if (*dir == '/' && (size_t)snprintf(out, len, "%s/%s", dir, bin) < len &&
		    access(out, X_OK) == 0)
			rc = 0;
	free(copy);
	return rc;
}

static void
doctor_engines(struct doctor *dr)
{
	char	found[PATH_MAX + 512], path[PATH_MAX], ver[160];
	int	any = 0;

	for (size_t i = 0; i < engines_count(); i++) {
		const struct engine_info	*e = engines_at(i);
		char				 name[64];

		if (e->binary == NULL || !(e->caps & ENGINE_RUNNABLE))
			continue;
		snprintf(name, sizeof name, "engine %s", e->name);
		if (doctor_which(e->binary, path, sizeof path) == -1) {
			snprintf(found, sizeof found, "%s (%s) is not on PATH", e->binary, e->label);
			doctor_add(dr, DOCTOR_WARN, name, found, "tasks with this engine fail to "
			    "start", "install it so that clockworkd's PATH finds it (cwctl "
			    "service install writes this PATH into the unit)");
			continue;
		}
		any = 1;
		if (doctor_version(path, ver, sizeof ver) == -1)
			snprintf(ver, sizeof ver, "no answer to --version");
		snprintf(found, sizeof found, "%s: %s", path, ver);
		doctor_add(dr, DOCTOR_OK, name, found, "tasks can use this engine", NULL);
	}
	if (!any)
		doctor_add(dr, DOCTOR_WARN, "engines", "no agent engine on PATH", "only "
		    "command tasks (and byok, with a key) can run", "install one: npm install "
		    "-g @anthropic-ai/claude-code (claude), @openai/codex (codex) or "
		    "opencode-ai (opencode), or pip install hermes-agent in a venv (hermes)");
}

/* Connect to fd's address and send one GET /api/status; 1 when HTTP answers. */
static int
doctor_http(int fd, const struct sockaddr *sa, socklen_t sl, const char *host)
{
	char		req[256], buf[16];
	struct pollfd	pfd = { fd, POLLIN, 0 };

	if (connect(fd, sa, sl) == -1)
		return 0;
	snprintf(req, sizeof req, "GET /api/status HTTP/1.1\r\nHost: %s\r\nConnection: "
	    "close\r\n\r\n", host);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req) || poll(&pfd, 1, 5000) != 1)
		return 0;
	return read(fd, buf, 5) == 5 && memcmp(buf, "HTTP/", 5) == 0;
}

static void
doctor_daemon(struct doctor *dr)
{
	char			home[PATH_MAX], path[PATH_MAX + 32], found[PATH_MAX + 128];
	char			buf[32], host[48];
	struct sockaddr_un	sun = { .sun_family = AF_UNIX };
	struct sockaddr_in	sin = { .sin_family = AF_INET };
	int			fd, ok, port;

	if (paths_clockwork_home(home, sizeof home) == -1) {
		doctor_add(dr, DOCTOR_FAIL, "daemon socket", "no Clockwork home ($HOME or "
		    "$CLOCKWORK_HOME)", "cwctl cannot reach clockworkd", "export "
		    "CLOCKWORK_HOME=/an/absolute/path, or set HOME");
		return;
	}
	snprintf(path, sizeof path, "%s/clockworkd.sock", home);
	if (strlen(path) >= sizeof sun.sun_path) {
		snprintf(found, sizeof found, "%s is longer than a unix socket path may be", path);
		doctor_add(dr, DOCTOR_FAIL, "daemon socket", found, "clockworkd cannot "
		    "listen", "export CLOCKWORK_HOME=a shorter path");
		return;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	ok = (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) != -1 &&
	    doctor_http(fd, (struct sockaddr *)&sun, sizeof sun, "localhost");
	if (fd != -1)
		close(fd);
	snprintf(found, sizeof found, "%s %s", path, ok ? "answers" : access(path, F_OK) ==
	    0 ? "exists but does not answer" : "is not there");
	doctor_add(dr, ok ? DOCTOR_OK : DOCTOR_WARN, "daemon socket", found, ok ?
	    "cwctl reaches clockworkd" : "clockworkd is not running: no task runs until it "
	    "is", ok ? NULL : "systemctl --user start clockworkd (after cwctl service "
	    "install), or clockworkd & by hand");
	snprintf(path, sizeof path, "%s/clockworkd.port", home);
	if (doctor_read(path, buf, sizeof buf) == NULL || (port = atoi(buf)) <= 0 ||
	    port > 65535) {
		doctor_add(dr, DOCTOR_WARN, "inbox port", "no "
		    "clockworkd.port: the daemon has not published its port", "the Inbox page "
		    "and the runs' bridge are not reachable", "start clockworkd");
		return;
	}
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	snprintf(host, sizeof host, "127.0.0.1:%d", port);
	ok = (fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) != -1 &&
	    doctor_http(fd, (struct sockaddr *)&sin, sizeof sin, host);
	if (fd != -1)
		close(fd);
	snprintf(found, sizeof found, "http://%s %s", host, ok ? "answers" :
	    "does not answer");
	doctor_add(dr, ok ? DOCTOR_OK : DOCTOR_WARN, "inbox port", found, ok ? "the Inbox "
	    "(cwctl inbox) and the API are reachable on loopback" : "the Inbox page cannot "
	    "be opened", ok ? NULL : "restart clockworkd; api_port in config.yaml chooses "
	    "the port");
}

static void
doctor_print(const struct doctor *dr)
{
	const cJSON	*c;
	const char	*fix;

	cJSON_ArrayForEach(c, dr->checks) {
		printf("%-5s %-16s %s\n", json_get_string(c, "status"),
		    json_get_string(c, "check"), json_get_string(c, "found"));
		printf("      %-16s means: %s\n", "", json_get_string(c, "means"));
		if ((fix = json_get_string(c, "fix")) != NULL)
			printf("      %-16s fix:   %s\n", "", fix);
	}
	printf("%s\n", dr->failed ? "something fails: runs are refused until it is fixed" :
	    "nothing fails");
}

int
cwctl_doctor(int argc, char **argv)
{
	struct doctor	 dr;
	struct doctor_aa aa;
	char		 exe[PATH_MAX];
	ssize_t		 n;
	int		 json = 0;
	cJSON		*o;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else {
			fprintf(stderr, "usage: cwctl doctor [--json]\n");
			return CWCTL_EXIT_USAGE;
		}
	}
	memset(&dr, 0, sizeof dr);
	dr.root = geteuid() == 0;
	if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) > 0) {
		exe[n] = '\0';
		snprintf(dr.bindir, sizeof dr.bindir, "%s", dirname(exe));
	} else
		snprintf(dr.bindir, sizeof dr.bindir, "/usr/local/bin");
	if ((o = cJSON_CreateObject()) == NULL ||
	    (dr.checks = cJSON_AddArrayToObject(o, "checks")) == NULL) {
		fprintf(stderr, "cwctl: out of memory\n");
		cJSON_Delete(o);
		return CWCTL_EXIT_FAILURE;
	}
	doctor_apparmor_facts(&aa);
	doctor_userns(&dr, &aa);
	doctor_apparmor(&dr, &aa);
	doctor_landlock(&dr);
	doctor_seccomp(&dr);
	doctor_cgroup(&dr);
	doctor_engines(&dr);
	doctor_daemon(&dr);
	cJSON_AddBoolToObject(o, "ok", !dr.failed);
	cJSON_AddBoolToObject(o, "root", dr.root);
	if (json)
		cwctl_print_json(o);
	else
		doctor_print(&dr);
	cJSON_Delete(o);
	return dr.failed ? CWCTL_EXIT_FAILURE : CWCTL_EXIT_OK;
}

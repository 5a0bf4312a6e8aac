/*
 * cw-sandbox's steps: the sandbox of one run, built from the plan cw-runner wrote
 * (plan.h) in this order; each is mandatory, and a failure is written to the runner
 * (step, errno) on PLAN_MSGFD before we exit, so nothing unconfined ever runs. The
 * runner's own child has already joined the run's cgroup (so that its limits hold for
 * every process of the run from the first one), put stdio on 0-2, the message socket
 * on 3 and the plan on 4, closed everything else, and blocked every signal.
 *
 *   1. signals reset          a clean slate before anything else runs
 *   2. user namespace         (not root) unshare it and map our own ids: it gives us
 *                             the right to make the others. This is the one program
 *                             that makes a user namespace (the AppArmor profile,
 *                             sandbox-profiles/, names it)
 *   3. the run's PID 1        clone into new PID, IPC, mount (and network) namespaces
 *                             with CLONE_PARENT: the run's PID 1 is the runner's child,
 *                             which waits on it directly, and we (its sibling) tell
 *                             the runner its pid and exit. The rest is PID 1's
 *   4. limits, session        the run's rlimits (runlimits.h; inside the run's user
 *                             namespace, where RLIMIT_NPROC counts the run's processes
 *                             only; the memory rlimit waits for the command's exec);
 *                             then the run is one killable group, detached from a tty
 *   5. namespaces             the network namespace's loopback brought up and the
 *                             runner's listeners made there and handed back (SPEC N1);
 *                             then the mount view and a fresh /proc of the run's own
 *                             PID namespace: these need CAP_SYS_ADMIN / CAP_NET_ADMIN,
 *                             so they come before caps go
 *   6. working directory      chdir before Landlock narrows the view
 *   7. no_new_privs           required by Landlock and seccomp without privilege, and
 *                             makes setuid/file capabilities inert across exec
 *   8. Landlock               filesystem allowlist, signal and abstract-socket scoping;
 *                             an exec's /etc grant is carved by the runner meanwhile
 *                             (spec_carve_finish), which adds its rules to a ruleset
 *                             it made before the start and hands that over: we wait
 *                             for it, and run nothing if it never comes
 *   9. capabilities           bounding, ambient, securebits, then capset to zero: root
 *                             inside is an ordinary uid that Landlock still confines
 *  10. seccomp                last, so the steps above may still use what it denies
 *  11. init and exec          PID 1 forks, the grandchild execs argv[0] (resolved
 *                             through the plan's PATH, with the plan's env), and PID 1
 *                             stays as a minimal init (sandbox_init) that reaps,
 *                             forwards signals, and exits with the command's status,
 *                             which ends the namespace
 *
 * Namespaces that cannot be made refuse the run (fail closed, SPEC S6, G3): the
 * runner is told why (SANDBOX_MSG_CLONE) and explains. With CW_SANDBOX=off no
 * namespace is made and only 1, 4, 6 and the exec run, in this process.
 */
#define _GNU_SOURCE	/* CLONE_NEW*, dup3 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "landlock.h"
#include "mountns.h"
#include "plan.h"
#include "steps.h"
#include "syscallfilter.h"

#ifndef SECBIT_NOROOT
#define SECBIT_NOROOT				(1 << 0)
#define SECBIT_NOROOT_LOCKED			(1 << 1)
#define SECBIT_NO_SETUID_FIXUP			(1 << 2)
#define SECBIT_NO_SETUID_FIXUP_LOCKED		(1 << 3)
#define SECBIT_KEEP_CAPS_LOCKED			(1 << 5)
#define SECBIT_NO_CAP_AMBIENT_RAISE		(1 << 6)
#define SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED	(1 << 7)
#endif

#define SANDBOX_MSGFD	PLAN_MSGFD

/* One record to the runner: a datagram of a SOCK_SEQPACKET socket, whole or not at all. */
static void
sandbox_write(const struct sandbox_msg *m)
{
	ssize_t	 n;

	do
		n = write(SANDBOX_MSGFD, m, sizeof *m);
	while (n == -1 && errno == EINTR);
}

static void
sandbox_send(int kind, int err, const char *text)
{
	struct sandbox_msg	 m;

	memset(&m, 0, sizeof m);
	m.kind = kind;
	m.err = err;
	snprintf(m.text, sizeof m.text, "%s", text);
	sandbox_write(&m);
}

static void __attribute__((noreturn))
sandbox_die(int kind, const char *text)
{
	sandbox_send(kind, errno, text);
	_exit(127);
}

static void __attribute__((noreturn))
sandbox_die_step(const char *step)
{
	char	 buf[256];
	int	 save = errno;

	snprintf(buf, sizeof buf, "%s: %s", step, strerror(save));
	errno = save;
	sandbox_die(SANDBOX_MSG_FATAL, buf);
}

/*
 * Every disposition to its default (exec kept the runner's ignored ones); the mask,
 * every signal blocked as the runner left it, is lifted by sandbox_unblock in the
 * process that goes on (the run's PID 1, or the command): a signal to the group meant
 * for the run must not end the short-lived process that only makes it.
 */
static void
sandbox_reset_signals_but_mask(void)
{
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
}

static void
sandbox_unblock(void)
{
	sigset_t	 none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}



/*
 * Child: wait for the parent's deferred carve and take the ruleset it completed.
 * Landlock must not be applied without it (the run would read less than its spec
 * says), nor anything run before Landlock.
 */
static int
sandbox_carve_recv(void)
{
	struct msghdr	 mh;
	struct iovec	 iov;
	union plan_cmsg_fd	 cm;
	struct cmsghdr	*c;
	char		 text[sizeof SANDBOX_CARVED];
	ssize_t		 n;
	int		 fd = -1;

	plan_msghdr(&mh, &iov, text, sizeof text, cm.buf, sizeof cm.buf);
	do
		n = recvmsg(SANDBOX_MSGFD, &mh, MSG_CMSG_CLOEXEC);
	while (n == -1 && errno == EINTR);
	if (n <= 0) {
		if (n == 0)
			errno = EPIPE;
		sandbox_die_step("landlock: the runner's carve of the read grants never came");
	}
	if ((c = CMSG_FIRSTHDR(&mh)) != NULL && c->cmsg_level == SOL_SOCKET &&
	    c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(c), sizeof fd);
	if (fd == -1 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    n != (ssize_t)sizeof text || memcmp(text, SANDBOX_CARVED, sizeof text) != 0) {
		errno = EPROTO;
		sandbox_die_step("landlock: the runner's carve of the read grants");
	}
	return fd;
}

/* Empty the bounding, ambient, inheritable, permitted and effective sets, and lock root out. */
static int
sandbox_drop_caps(const char **step)
{
	struct __user_cap_header_struct	 h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct	 d[2];
	int				 setpcap;

	*step = "capabilities: capget";
	memset(d, 0, sizeof d);
	if (syscall(SYS_capget, &h, d) == -1)
		return -1;
	setpcap = (d[0].effective & (1U << CAP_SETPCAP)) != 0;
	if (setpcap) {
		*step = "capabilities: bounding set";
		for (int cap = 0; cap < 64; cap++)
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1) {
				if (errno == EINVAL)
					break;
				return -1;
			}
		/*
		 * uid 0 regains a full set at every exec unless told not to: NOROOT
		 * stops that, and the locks keep the process from undoing it.
		 */
		*step = "capabilities: securebits";
		if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
		    SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
		    SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
		    SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED, 0, 0, 0) == -1)
			return -1;
	}
	*step = "capabilities: ambient";
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 && errno != EINVAL)
		return -1;
	*step = "capabilities: capset";
	memset(d, 0, sizeof d);
	if (syscall(SYS_capset, &h, d) == -1)
		return -1;
	*step = "capabilities: verify";
	if (syscall(SYS_capget, &h, d) == -1)
		return -1;
	for (int i = 0; i < 2; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable) {
			errno = EPERM;
			return -1;
		}
	return 0;
}

/* The run's rlimits as step 1 found them; RLIMIT_DATA is set by sandbox_exec. */
static const struct runlimits *sandbox_exec_limits;

/* execve argv[0] as found through the spec's PATH, the way execvp would. */
static void
sandbox_exec(char *const argv[], char *const envp[], const char *path)
{
	char		 buf[PATH_MAX];
	const char	*p, *colon, *what;
	int		 saw_eacces = 0;

	/* Step 1's memory rlimit, in the command's process only (runlimits.h says why). */
	if (sandbox_exec_limits != NULL && runlimits_apply(sandbox_exec_limits,
	    RUNLIMITS_DATA, &what) == -1) {
		snprintf(buf, sizeof buf, "limits: setrlimit(%s): %s", what, strerror(errno));
		sandbox_die(SANDBOX_MSG_FATAL, buf);
	}

	if (strchr(argv[0], '/') != NULL) {
		execve(argv[0], argv, envp);
		return;
	}
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; ; p = colon + 1) {
		size_t	 len;

		colon = strchr(p, ':');
		len = colon ? (size_t)(colon - p) : strlen(p);
		if (len > 0 && len + 1 + strlen(argv[0]) < sizeof buf) {
			memcpy(buf, p, len);
			buf[len] = '/';
			strcpy(buf + len + 1, argv[0]);
			execve(buf, argv, envp);
			if (errno == EACCES)
				saw_eacces = 1;
			else if (errno != ENOENT && errno != ENOTDIR)
				return;
		}
		if (colon == NULL)
			break;
	}
	errno = saw_eacces ? EACCES : ENOENT;
}

/*
 * Step 10 with the sandbox on: we are PID 1 of the run's PID namespace, every layer is
 * applied, and whatever we fork inherits them. The command runs in a child, in a process
 * group of its own; we stay as a minimal init, because PID 1 is special: an orphan in
 * the namespace is re-parented to it (it reaps every one, so none lingers as a zombie),
 * and when it exits the kernel kills everything left in the namespace.
 *
 * SIGTERM, SIGINT, SIGHUP and SIGQUIT sent to us (the runner signals our group) are
 * passed on to the command's group: PID 1 ignores any signal it has no handler for, and
 * the command has a group of its own so that each process gets a signal once. When the
 * command ends we exit with its status, a death by signal N as 128 + N (PID 1 cannot
 * die of a signal it sends itself), the way a shell reports it. SIGKILL from outside
 * ends us at once, and with us the namespace.
 *
 * We hold the plan (the run's environment, which may hold a key the engine needs, and
 * every grant): we make ourselves non-dumpable, so no process of the run can read it
 * through ptrace or /proc/1/mem (capabilities are gone, so the kernel's check refuses). The exec
 * makes the command dumpable again, as any process is.
 */
/*
 * The command's process, for sandbox_init: by vfork, so that it borrows our memory until
 * it execs instead of copying our page tables. It touches nothing of ours on the way: this frame,
 * then execve or the report of why not, then _exit. A function of its own, so that no
 * variable of the init's loop lives across the vfork.
 */
static pid_t __attribute__((noinline))
sandbox_spawn(char *const argv[], char *const envp[], const char *path)
{
	sigset_t	 none;
	char		 err[512];
	pid_t		 cmd;

	if ((cmd = vfork()) == -1)
		sandbox_die_step("init: fork");
	if (cmd == 0) {
		sigemptyset(&none);
		if (sigprocmask(SIG_SETMASK, &none, NULL) == -1)
			sandbox_die_step("init: unblock signals");
		if (setpgid(0, 0) == -1)
			sandbox_die_step("init: setpgid");
		sandbox_exec(argv, envp, path);
		snprintf(err, sizeof err, "exec %s: %s", argv[0], strerror(errno));
		sandbox_die(SANDBOX_MSG_EXEC, err);
	}
	return cmd;
}

static void __attribute__((noreturn))
sandbox_init(char *const argv[], char *const envp[], const char *path)
{
	static const int	 fwd[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };
	sigset_t		 set;
	siginfo_t		 si;
	pid_t			 cmd, p;
	int			 sig, st, status = 0, done = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (size_t i = 0; i < sizeof fwd / sizeof fwd[0]; i++)
		sigaddset(&set, fwd[i]);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		sandbox_die_step("init: block signals");
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		sandbox_die_step("init: not dumpable");
	cmd = sandbox_spawn(argv, envp, path);
	/* Both sides set the group, so that no forwarded signal can miss it. */
	(void)setpgid(cmd, cmd);
	/*
	 * The command reports its own exec failure; once our copy of the channel is
	 * closed, the runner reads EOF as soon as the command has exec'd.
	 */
	close(SANDBOX_MSGFD);
	while (!done) {
		if ((sig = sigwaitinfo(&set, &si)) == -1)
			continue;	/* EINTR */
		if (sig != SIGCHLD) {
			if (kill(-cmd, sig) == -1)
				(void)kill(cmd, sig);
			continue;
		}
		while ((p = waitpid(-1, &st, WNOHANG)) > 0)
			if (p == cmd) {
				status = st;
				done = 1;
			}
	}
	if (WIFEXITED(status))
		_exit(WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		_exit(128 + WTERMSIG(status));
	_exit(127);
}

/*
 * Step 4, network: the run's namespace starts with only a loopback interface, down.
 * Bring it up (the engine talks to the bridge and the proxy there), make the listening
 * sockets the runner will serve, and hand them over with SCM_RIGHTS. Nothing else is
 * ever added: no route out exists, so a raw TCP or UDP packet has nowhere to go.
 */
static int
sandbox_net(const struct plan *l, char *err, size_t errlen)
{
	struct ifreq		 ifr;
	struct sandbox_msg	 m;
	struct msghdr		 mh;
	struct iovec		 iov;
	union {
		char		 buf[CMSG_SPACE(PLAN_MAX_LISTEN * sizeof(int))];
		struct cmsghdr	 align;
	} cm;
	struct cmsghdr		*c;
	int			 fd, one = 1, fds[PLAN_MAX_LISTEN];
	size_t			 i;

	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1) {
		snprintf(err, errlen, "network namespace: socket: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == -1 || (ifr.ifr_flags |= IFF_UP,
	    ioctl(fd, SIOCSIFFLAGS, &ifr) == -1)) {
		snprintf(err, errlen, "network namespace: bringing lo up: %s", strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (l->n_listen == 0)
		return 0;
	if (l->n_listen > PLAN_MAX_LISTEN) {
		snprintf(err, errlen, "network namespace: too many listeners");
		return -1;
	}
	for (i = 0; i < l->n_listen; i++) {
		if ((fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    0)) == -1 ||
		    setsockopt(fds[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == -1 ||
		    bind(fds[i], (const struct sockaddr *)&l->listen[i],
		    sizeof l->listen[i]) == -1 || listen(fds[i], 128) == -1) {
			snprintf(err, errlen, "network namespace: listen on port %d: %s",
			    ntohs(l->listen[i].sin_port), strerror(errno));
			return -1;
		}
	}
	memset(&m, 0, sizeof m);
	m.kind = SANDBOX_MSG_FDS;
	iov.iov_base = &m;
	iov.iov_len = sizeof m;
	memset(&mh, 0, sizeof mh);
	memset(&cm, 0, sizeof cm);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = CMSG_SPACE(l->n_listen * sizeof(int));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(l->n_listen * sizeof(int));
	memcpy(CMSG_DATA(c), fds, l->n_listen * sizeof(int));
	if (sendmsg(SANDBOX_MSGFD, &mh, MSG_NOSIGNAL) != (ssize_t)sizeof m) {
		snprintf(err, errlen, "network namespace: handing over listeners: %s",
		    strerror(errno));
		return -1;
	}
	/* The runner holds them now; the run must not inherit a listener of its own. */
	for (i = 0; i < l->n_listen; i++)
		close(fds[i]);
	return 0;
}


/* 4 to 11: we are the run's PID 1 (or, with the sandbox off, the command itself). */
static void __attribute__((noreturn))
sandbox_inner(const struct plan *p, char *const argv[], char **envp)
{
	const struct sandbox_spec	*s = &p->spec;
	struct mountns_result		 mr;
	struct landlock_extra		 lx;
	const char			*cwd = p->cwd ? p->cwd : s->workdir, *step;
	const char			*rlwhat = NULL;
	char				 err[512];
	const struct runlimits		*lim = p->lim.nproc || p->lim.data ? &p->lim : NULL;

	/* 4 */
	if (lim != NULL && runlimits_apply(lim, RUNLIMITS_NPROC, &rlwhat) == -1) {
		snprintf(err, sizeof err, "limits: setrlimit(%s): %s", rlwhat, strerror(errno));
		sandbox_die(SANDBOX_MSG_FATAL, err);
	}
	sandbox_exec_limits = lim;
	if (p->new_session ? setsid() == -1 : setpgid(0, 0) == -1)
		sandbox_die_step(p->new_session ? "setsid" : "setpgid");
	memset(&lx, 0, sizeof lx);
	if (s->enabled) {
		/* 5 */
		if (!s->net_open && sandbox_net(p, err, sizeof err) == -1)
			sandbox_die(SANDBOX_MSG_FATAL, err);
		const char	*names[] = { argv[0], cwd, NULL };

		if (mountns_apply(s, names, &mr, err, sizeof err) == -1)
			sandbox_die(SANDBOX_MSG_FATAL, err);
		lx.ptys = mr.ptys;
		if (!mr.ptys && strlist_contains(&s->write_dirs, "/dev/pts"))
			sandbox_send(SANDBOX_MSG_NOTE, 0, "mount namespace: no private devpts, "
			    "so no pseudo-terminals are available inside");
	}
	/* 6 */
	if (cwd != NULL && chdir(cwd) == -1)
		sandbox_die_step("chdir");
	if (s->enabled) {
		/* 7 */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
			sandbox_die_step("no_new_privs");
		/* 8 */
		if (p->carve) {
			lx.ruleset = sandbox_carve_recv();
			lx.has_ruleset = 1;
		}
		if (landlock_apply(p->abi, s, &lx, err, sizeof err) == -1)
			sandbox_die(SANDBOX_MSG_FATAL, err);
		/* 9 */
		if (sandbox_drop_caps(&step) == -1)
			sandbox_die_step(step);
		/* 10 */
		if (syscallfilter_apply(err, sizeof err) == -1)
			sandbox_die(SANDBOX_MSG_FATAL, err);
		/* 11 */
		sandbox_init(argv, envp, spec_getenv(s, "PATH"));
	}
	/* 11, sandbox off: no namespace, no init; the command is this process. */
	sandbox_exec(argv, envp, spec_getenv(s, "PATH"));
	snprintf(err, sizeof err, "exec %s: %s", argv[0], strerror(errno));
	sandbox_die(SANDBOX_MSG_EXEC, err);
}

void
steps_run(const struct plan *p, char *const argv[])
{
	const struct sandbox_spec	*s = &p->spec;
	struct sandbox_msg		 m;
	unsigned long			 flags;
	char				 err[512], **envp;
	uid_t				 uid = getuid();
	gid_t				 gid = getgid();
	pid_t				 pid;
	ssize_t				 n;

	if ((envp = calloc(s->env.n + 1, sizeof *envp)) == NULL)
		sandbox_die_step("environment");
	for (size_t i = 0; i < s->env.n; i++)
		envp[i] = s->env.v[i];
	/* 1 */
	sandbox_reset_signals_but_mask();
	if (!s->enabled) {
		sandbox_unblock();
		sandbox_inner(p, argv, envp);
	}
	/* 2 */
	if (uid != 0) {
		if (unshare(CLONE_NEWUSER) == -1) {
			memset(&m, 0, sizeof m);
			m.kind = SANDBOX_MSG_CLONE;
			m.err = errno;
			snprintf(m.text, sizeof m.text, "unshare(user): %s", strerror(errno));
			sandbox_write(&m);
			_exit(127);
		}
		if (mountns_idmap(uid, gid, err, sizeof err) == -1)
			sandbox_die(SANDBOX_MSG_FATAL, err);
	}
	/* 3 */
	flags = CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNS | CLONE_PARENT;
	if (!s->net_open)
		flags |= CLONE_NEWNET;
	if ((pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL)) == 0) {
		sandbox_unblock();
		sandbox_inner(p, argv, envp);
	}
	memset(&m, 0, sizeof m);
	if (pid == -1) {
		m.kind = SANDBOX_MSG_CLONE;
		m.err = errno;
		snprintf(m.text, sizeof m.text, "clone: %s", strerror(errno));
	} else {
		m.kind = SANDBOX_MSG_PID;
		m.pid = (int)pid;
	}
	do
		n = write(SANDBOX_MSGFD, &m, sizeof m);
	while (n == -1 && errno == EINTR);
	(void)n;
	_exit(pid == -1 ? 127 : 0);
}

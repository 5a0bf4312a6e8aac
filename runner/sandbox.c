/*
 * apply_sandbox(): the one place cw-runner starts a process (SPEC S1), and the one place
 * a process is narrowed. The runner clones a child into new PID, IPC and mount
 * namespaces (and a user namespace when it is not root); the child takes every step
 * below in this order; each is mandatory, and a failure is written to the parent
 * (step, errno) before the child exits, so nothing unconfined ever runs. The order
 * matters:
 *
 *   1. signals reset          a clean slate before anything else runs; then the run's
 *                             cgroup is joined (cgroup.h), so that its limits hold for
 *                             every process of the run from the first one, and the
 *                             run's rlimits are set where no cgroup holds a limit
 *                             (runlimits.h; inside the run's user namespace, where
 *                             RLIMIT_NPROC counts the run's processes only; the memory
 *                             rlimit waits for the command's exec): the report says
 *                             they hold, so a failure refuses the run
 *   2. session / group        the run is one killable group, detached from our tty
 *   3. stdio, other fds       nothing of the runner's leaks in (close_range)
 *   4. namespaces             id maps (user namespace); the network namespace's
 *                             loopback brought up and the runner's listeners made
 *                             there and handed back (SPEC N1); then the mount view and
 *                             a fresh /proc of the run's own PID namespace: these need
 *                             CAP_SYS_ADMIN / CAP_NET_ADMIN, so they come before caps go
 *   5. working directory      chdir before Landlock narrows the view
 *   6. no_new_privs           required by Landlock and seccomp without privilege, and
 *                             makes setuid/file capabilities inert across exec
 *   7. Landlock               filesystem allowlist, signal and abstract-socket scoping;
 *                             an exec's /etc grant is carved by the parent meanwhile
 *                             (spec_carve_finish), which adds its rules to a ruleset
 *                             made before the clone and hands that over: the child
 *                             waits for it, and runs nothing if it never comes
 *   8. capabilities           bounding, ambient, securebits, then capset to zero: root
 *                             inside is an ordinary uid that Landlock still confines
 *   9. seccomp                last, so the steps above may still use what it denies
 *  10. init and exec          the child is PID 1 of the run's namespace: it forks, the
 *                             grandchild execs argv[0] (resolved through the spec's
 *                             PATH, with the spec's env), and PID 1 stays as a minimal
 *                             init (sandbox_init) that reaps, forwards signals, and exits
 *                             with the command's status, which ends the namespace
 *
 * Namespaces that cannot be made refuse the run (fail closed, SPEC S6, G3). With
 * CW_SANDBOX=off no namespace is made and only 1-3, 5 and the exec run, in a plain
 * fork; the caller says so loudly (S7).
 *
 * The child is made by clone without CLONE_VM, so it has a copy of the runner's memory,
 * not the runner's memory itself: it may allocate (the mount plan, Landlock's list of
 * rules, libseccomp's filter) without touching the runner's heap, which the earlier
 * vfork child could not safely do.
 */
#define _GNU_SOURCE	/* O_PATH, pipe2, dup3, CLONE_NEW* */
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
#include "sandbox.h"
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

/* The child's messages to the parent: notes, or the one fatal error. */
enum sandbox_msgkind { SANDBOX_MSG_NOTE = 1, SANDBOX_MSG_FATAL, SANDBOX_MSG_EXEC,
    SANDBOX_MSG_FDS };

/* At most this many listening sockets are made in a run's network namespace. */
#define SANDBOX_MAX_LISTEN	4

struct sandbox_msg {
	int	kind;
	int	err;		/* errno of the failed step */
	char	text[500];	/* "step: detail" */
};

/* The child's descriptor for messages, after it has been moved to fd 3. */
#define SANDBOX_MSGFD	3

/*
 * A deferred carve's end, parent to child on the same socket: one message "carved"
 * with the Landlock ruleset (SCM_RIGHTS) that the parent made before the clone and has
 * added the carve's read grants to. A child that sees the socket end first, or any
 * other message, runs nothing.
 */
#define SANDBOX_CARVED		"carved"

static void
sandbox_send(int kind, int err, const char *text)
{
	struct sandbox_msg	 m;
	ssize_t			 n;

	memset(&m, 0, sizeof m);
	m.kind = kind;
	m.err = err;
	snprintf(m.text, sizeof m.text, "%s", text);
	/* One record is well under PIPE_BUF, so the write is atomic. */
	do
		n = write(SANDBOX_MSGFD, &m, sizeof m);
	while (n == -1 && errno == EINTR);
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

static void
sandbox_reset_signals(void)
{
	sigset_t	 all;

	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
}

/*
 * Put in, out and err on 0, 1, 2 and the message pipe on 3, then close everything
 * else. Each is first lifted above 3 so the dup2s cannot clobber one another.
 */
static int
sandbox_fds(int in, int out, int err, int msg)
{
	int	 fds[4] = { in, out, err, msg }, hi[4];

	for (int i = 0; i < 3; i++)
		if (fds[i] < 0 && (fds[i] = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
			return -1;
	for (int i = 0; i < 4; i++)
		if ((hi[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 10)) == -1)
			return -1;
	for (int i = 0; i < 3; i++)
		if (dup2(hi[i], i) == -1)
			return -1;
	if (dup3(hi[3], SANDBOX_MSGFD, O_CLOEXEC) == -1)
		return -1;
	if (syscall(SYS_close_range, SANDBOX_MSGFD + 1, ~0U, 0) == -1) {
		/* Pre-5.9 kernels: close them one by one. */
		for (int fd = SANDBOX_MSGFD + 1; fd < 65536; fd++)
			close(fd);
	}
	return 0;
}

/* Control data of one descriptor, aligned as a cmsghdr. */
union sandbox_cmsg_fd {
	char		 buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr	 align;
};

/* A message of one buffer, with room for control data, for sendmsg or recvmsg. */
static void
sandbox_msghdr(struct msghdr *mh, struct iovec *iov, void *base, size_t len, void *ctl,
    size_t ctllen)
{
	iov->iov_base = base;
	iov->iov_len = len;
	memset(mh, 0, sizeof *mh);
	mh->msg_iov = iov;
	mh->msg_iovlen = 1;
	mh->msg_control = ctl;
	mh->msg_controllen = ctllen;
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
	union sandbox_cmsg_fd	 cm;
	struct cmsghdr	*c;
	char		 text[sizeof SANDBOX_CARVED];
	ssize_t		 n;
	int		 fd = -1;

	sandbox_msghdr(&mh, &iov, text, sizeof text, cm.buf, sizeof cm.buf);
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

/* Parent: the ruleset, with the carve's grants in it, to the child. */
static int
sandbox_carve_send(int sock, int rfd)
{
	struct msghdr	 mh;
	struct iovec	 iov;
	union sandbox_cmsg_fd	 cm;
	struct cmsghdr	*c;
	ssize_t		 n;

	memset(&cm, 0, sizeof cm);
	sandbox_msghdr(&mh, &iov, (void *)SANDBOX_CARVED, sizeof SANDBOX_CARVED, cm.buf,
	    sizeof cm.buf);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &rfd, sizeof rfd);
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n == -1 && errno == EINTR);
	return n == (ssize_t)sizeof SANDBOX_CARVED ? 0 : -1;
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
 * We hold a copy of the runner's memory (environment, spec): we make ourselves
 * non-dumpable, so no process of the run can read it through ptrace, /proc/1/mem or
 * /proc/1/environ (capabilities are gone, so the kernel's check refuses). The exec
 * makes the command dumpable again, as any process is.
 */
/*
 * The command's process, for sandbox_init: by vfork, so that it borrows our memory until
 * it execs instead of copying the page tables of the whole runner image we hold (most
 * of what a plain fork cost here). It touches nothing of ours on the way: this frame,
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
sandbox_net(const struct sandbox_launch *l, char *err, size_t errlen)
{
	struct ifreq		 ifr;
	struct sandbox_msg	 m;
	struct msghdr		 mh;
	struct iovec		 iov;
	union {
		char		 buf[CMSG_SPACE(SANDBOX_MAX_LISTEN * sizeof(int))];
		struct cmsghdr	 align;
	} cm;
	struct cmsghdr		*c;
	int			 fd, one = 1, fds[SANDBOX_MAX_LISTEN];
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
	if (l->n_listen > SANDBOX_MAX_LISTEN) {
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

/*
 * The child, started by clone into its new namespaces (or by a plain fork with the
 * sandbox off). It has a copy of the runner's memory, not a share of it, so it may
 * allocate; it never returns. uid and gid are the runner's, for the id maps of a new
 * user namespace (newuser), where they can no longer be read.
 */
static void __attribute__((noreturn))
sandbox_child(const struct sandbox_spec *s, const struct sandbox_launch *l, int abi,
    int msgfd, char **envp, int newuser, uid_t uid, gid_t gid)
{
	struct mountns_result	 mr;
	struct landlock_extra	 lx;
	const char		*cwd = l->cwd ? l->cwd : s->workdir, *step;
	const char		*rlwhat = NULL;
	char			 err[512];
	int			 cgerr = 0, rlerr = 0;

	/* 1 */
	sandbox_reset_signals();
	if (l->cgroup != NULL && cgroup_run_join(l->cgroup) == -1)
		cgerr = errno;
	if (l->rlimits != NULL && runlimits_apply(l->rlimits, RUNLIMITS_NPROC,
	    &rlwhat) == -1)
		rlerr = errno;
	sandbox_exec_limits = l->rlimits;
	/* 2 */
	if (l->new_session ? setsid() == -1 : setpgid(0, 0) == -1) {
		/* sandbox_send needs fd 3: report through the pipe's own number. */
		char	 buf[128];
		struct sandbox_msg m = { SANDBOX_MSG_FATAL, errno, "" };

		snprintf(buf, sizeof buf, "%s: %s", l->new_session ? "setsid" : "setpgid",
		    strerror(errno));
		snprintf(m.text, sizeof m.text, "%s", buf);
		(void)!write(msgfd, &m, sizeof m);
		_exit(127);
	}
	/* 3 */
	if (sandbox_fds(l->fd_in, l->fd_out, l->fd_err, msgfd) == -1) {
		struct sandbox_msg m = { SANDBOX_MSG_FATAL, errno, "" };

		snprintf(m.text, sizeof m.text, "stdio: %s", strerror(errno));
		(void)!write(msgfd, &m, sizeof m);
		_exit(127);
	}
	/* The report would say the cgroup holds the limits: without it nothing runs. */
	if (cgerr != 0) {
		snprintf(err, sizeof err, "limits: joining the run's cgroup failed (%s): "
		    "its limits would not hold", strerror(cgerr));
		errno = cgerr;
		sandbox_die(SANDBOX_MSG_FATAL, err);
	}
	if (rlerr != 0) {
		snprintf(err, sizeof err, "limits: setrlimit(%s): %s", rlwhat, strerror(rlerr));
		errno = rlerr;
		sandbox_die(SANDBOX_MSG_FATAL, err);
	}
	memset(&lx, 0, sizeof lx);
	if (s->enabled) {
		/* 4 */
		if (newuser && mountns_idmap(uid, gid, err, sizeof err) == -1)
			sandbox_die(SANDBOX_MSG_FATAL, err);
		if (!s->net_open && sandbox_net(l, err, sizeof err) == -1)
			sandbox_die(SANDBOX_MSG_FATAL, err);
		const char	*names[] = { l->argv[0], cwd, NULL };

		if (mountns_apply(s, names, &mr, err, sizeof err) == -1)
			sandbox_die(SANDBOX_MSG_FATAL, err);
		lx.ptys = mr.ptys;
		if (!mr.ptys && strlist_contains(&s->write_dirs, "/dev/pts"))
			sandbox_send(SANDBOX_MSG_NOTE, 0, "mount namespace: no private devpts, "
			    "so no pseudo-terminals are available inside");
	}
	/* 5 */
	if (cwd != NULL && chdir(cwd) == -1)
		sandbox_die_step("chdir");
	if (s->enabled) {
		/* 6 */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
			sandbox_die_step("no_new_privs");
		/* 7 */
		if (s->carve != NULL) {
			lx.ruleset = sandbox_carve_recv();
			lx.has_ruleset = 1;
		}
		if (landlock_apply(abi, s, &lx, err, sizeof err) == -1)
			sandbox_die(SANDBOX_MSG_FATAL, err);
		/* 8 */
		if (sandbox_drop_caps(&step) == -1)
			sandbox_die_step(step);
		/* 9 */
		if (syscallfilter_apply(err, sizeof err) == -1)
			sandbox_die(SANDBOX_MSG_FATAL, err);
		/* 10 */
		sandbox_init(l->argv, envp, spec_getenv(s, "PATH"));
	}
	/* 10, sandbox off: no namespace, no init; the command is this process. */
	sandbox_exec(l->argv, envp, spec_getenv(s, "PATH"));
	snprintf(err, sizeof err, "exec %s: %s", l->argv[0], strerror(errno));
	sandbox_die(SANDBOX_MSG_EXEC, err);
}

/*
 * clone with fork semantics (no CLONE_VM, no new stack: the child runs on its copy of
 * ours), in a frame of its own; the child never returns here. The raw system call,
 * because the C library's clone wants a stack and its fork takes no flags.
 */
static pid_t __attribute__((noinline))
sandbox_clone(unsigned long flags, const struct sandbox_spec *s,
    const struct sandbox_launch *l, int abi, int msgfd, char **envp, uid_t uid, gid_t gid)
{
	pid_t	 pid;

	if ((pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL)) == 0)
		sandbox_child(s, l, abi, msgfd, envp, (flags & CLONE_NEWUSER) != 0, uid, gid);
	return pid;
}

/* One message from the child; the listeners it hands over go to l->listen_fds. */
static ssize_t
sandbox_recv(int fd, struct sandbox_msg *m, const struct sandbox_launch *l)
{
	struct msghdr	 mh;
	struct iovec	 iov;
	union {
		char		 buf[CMSG_SPACE(SANDBOX_MAX_LISTEN * sizeof(int))];
		struct cmsghdr	 align;
	} cm;
	struct cmsghdr	*c;
	ssize_t		 n;
	size_t		 nfd;
	int		 fds[SANDBOX_MAX_LISTEN];

	sandbox_msghdr(&mh, &iov, m, sizeof *m, cm.buf, sizeof cm.buf);
	if ((n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC)) <= 0)
		return n;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		memcpy(fds, CMSG_DATA(c), nfd * sizeof(int));
		for (size_t i = 0; i < nfd; i++) {
			if (m->kind == SANDBOX_MSG_FDS && i < l->n_listen &&
			    l->listen_fds != NULL && l->listen_fds[i] == -1)
				l->listen_fds[i] = fds[i];
			else
				close(fds[i]);
		}
	}
	return n;
}

pid_t
apply_sandbox(struct sandbox_spec *s, const struct sandbox_launch *l,
    struct sandbox_report *r, int *refused, char *err, size_t errlen)
{
	struct sandbox_msg	 m;
	sigset_t		 all, saved;
	char			**envp;
	int			 p[2], abi = 0, st, fatal = 0, saved_errno, rfd = -1;
	unsigned long		 flags = 0;
	uid_t			 uid = getuid();
	gid_t			 gid = getgid();
	pid_t			 pid;
	ssize_t			 n;

	*refused = 0;
	memset(r, 0, sizeof *r);
	if (l->argv == NULL || l->argv[0] == NULL) {
		snprintf(err, errlen, "nothing to run");
		errno = EINVAL;
		return -1;
	}
	r->sandboxed = s->enabled;
	if (!s->enabled) {
		if (strlist_add(&r->not_enforced, "sandbox disabled (CW_SANDBOX=off): no layer "
		    "is applied, the command runs with the runner's own rights") == -1)
			goto nomem;
	} else {
		/* Fail closed (S6): without Landlock there is no allowlist at all. */
		if ((abi = landlock_abi()) < 1) {
			*refused = 1;
			snprintf(err, errlen, "landlock: not available in this kernel; refusing "
			    "to run unconfined (CW_SANDBOX=off would run it without a sandbox)");
			errno = ENOSYS;
			return -1;
		}
		if (landlock_limits(abi, &r->not_enforced) == -1)
			goto nomem;
		/* The loud opt-out (SPEC N1): the run shares the host's network. */
		if (s->net_open && strlist_add(&r->not_enforced, "network: open (config "
		    "network: open): no network namespace and no egress proxy; the run "
		    "reaches every host, and every service on this machine's loopback "
		    "and LAN") == -1)
			goto nomem;
	}
	if ((envp = calloc(s->env.n + 1, sizeof *envp)) == NULL)
		goto nomem;
	for (size_t i = 0; i < s->env.n; i++)
		envp[i] = s->env.v[i];
	/*
	 * A deferred carve's rules go into a ruleset made here: the parent adds them
	 * while the child builds its view, and hands the ruleset over.
	 */
	if (s->carve != NULL && s->enabled && (rfd = landlock_ruleset(abi, err, errlen)) == -1) {
		*refused = 1;
		free(envp);
		return -1;
	}
	/* A socket, not a pipe: the listeners of a network namespace come back on it. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		free(envp);
		if (rfd != -1)
			close(rfd);
		return -1;
	}
	/*
	 * The run's own PID, IPC and mount namespaces (SPEC G3), and a user namespace
	 * when we are not root (it gives us the right to make the others). Signals stay
	 * blocked across the clone, so that none runs a runner handler in the child
	 * before it resets them all (step 1 then unblocks every signal).
	 */
	if (s->enabled) {
		flags = CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNS;
		if (!s->net_open)
			flags |= CLONE_NEWNET;
		if (uid != 0)
			flags |= CLONE_NEWUSER;
	}
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &saved);
	pid = sandbox_clone(flags, s, l, abi, p[1], envp, uid, gid);
	saved_errno = errno;
	sigprocmask(SIG_SETMASK, &saved, NULL);
	free(envp);
	if (pid == -1) {
		close(p[0]);
		close(p[1]);
		if (rfd != -1)
			close(rfd);
		if (s->enabled && saved_errno != EAGAIN && saved_errno != ENOMEM) {
			/*
			 * Fail closed: without them other runs and the host are in view.
			 * (EAGAIN and ENOMEM are a full process table or memory, not a
			 * kernel that refuses namespaces: an ordinary failure.)
			 */
			*refused = 1;
			snprintf(err, errlen, "namespaces: clone(%s%s): %s; refusing to run "
			    "without them%s (%sCW_SANDBOX=off would run it without a sandbox)",
			    uid != 0 ? "user, PID, IPC, mount" : "PID, IPC, mount",
			    s->net_open ? "" : ", network", strerror(saved_errno),
			    uid != 0 ? ". A normal user's run needs an unprivileged user "
			    "namespace, which this kernel may refuse (user.max_user_namespaces=0, "
			    "kernel.unprivileged_userns_clone=0, or AppArmor's "
			    "kernel.apparmor_restrict_unprivileged_userns=1 as on Ubuntu 24.04): "
			    "run `cwctl doctor` for what this machine allows and the command that "
			    "fixes it" : "",
			    s->net_open ? "" : "network: open in config.yaml would run it "
			    "without its own network namespace; ");
		} else
			snprintf(err, errlen, "clone: %s", strerror(saved_errno));
		errno = saved_errno;
		return -1;
	}
	close(p[1]);

	/*
	 * The carve left to this moment (spec.h: spec_carve_finish) is made while the
	 * child makes its namespaces and its view, on the other core; it waits for the
	 * grants before Landlock.
	 */
	if (rfd != -1) {
		size_t	 nd = s->read_dirs.n, nf = s->read_files.n;
		int	 failed = 0;

		if (spec_carve_finish(s, err, errlen) == -1 ||
		    landlock_add_reads(rfd, abi, &s->read_dirs, nd, &s->read_files, nf, err,
		    errlen) == -1)
			failed = 1;
		else if (sandbox_carve_send(p[0], rfd) == -1 && errno != EPIPE &&
		    errno != ECONNRESET) {
			/*
			 * A child that has ended already (EPIPE) waits on the socket with its
			 * refusal; one that did not get the ruleset would wait for it as long
			 * as we would wait for it.
			 */
			snprintf(err, errlen, "landlock: handing the carved ruleset to the run: "
			    "%s", strerror(errno));
			failed = 1;
		}
		if (failed) {
			saved_errno = errno;
			close(rfd);
			close(p[0]);
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
				;
			errno = saved_errno;
			return -1;
		}
		close(rfd);
	}

	for (size_t i = 0; i < l->n_listen && l->listen_fds != NULL; i++)
		l->listen_fds[i] = -1;
	/* EOF without a fatal record: the exec happened (the socket was close-on-exec). */
	for (;;) {
		n = sandbox_recv(p[0], &m, l);
		if (n == -1 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof m)
			break;
		m.text[sizeof m.text - 1] = '\0';
		if (m.kind == SANDBOX_MSG_FDS)
			continue;
		if (m.kind == SANDBOX_MSG_NOTE) {
			if (strlist_add(&r->not_enforced, m.text) == -1)
				goto nomem_child;
			continue;
		}
		snprintf(err, errlen, "%s", m.text);
		fatal = m.kind;
		if (m.kind == SANDBOX_MSG_EXEC)
			r->exec_errno = m.err;
		errno = m.err;
	}
	close(p[0]);
	if (fatal) {
		int	 save = errno;

		for (size_t i = 0; i < l->n_listen && l->listen_fds != NULL; i++)
			if (l->listen_fds[i] != -1) {
				close(l->listen_fds[i]);
				l->listen_fds[i] = -1;
			}

		while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
			;
		*refused = fatal == SANDBOX_MSG_FATAL && s->enabled;
		errno = save;
		return -1;
	}
	r->landlock_abi = s->enabled ? abi : 0;
	r->seccomp = s->enabled;
	r->namespaces = s->enabled;
	r->netns = s->enabled && !s->net_open;
	return pid;
nomem_child:
	close(p[0]);
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
nomem:
	snprintf(err, errlen, "%s", strerror(ENOMEM));
	errno = ENOMEM;
	return -1;
}

void
sandbox_report_free(struct sandbox_report *r)
{
	strlist_free(&r->not_enforced);
}

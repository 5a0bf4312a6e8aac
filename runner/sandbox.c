/*
 * apply_sandbox(): the one place cw-runner starts a process (SPEC S1). The runner
 * decides everything (the spec: view, grants, environment; the launch: limits,
 * listeners, session) and writes it as a plan (sandbox/plan.h) into a memfd; its child
 * joins the run's cgroup (so its limits hold for every process of the run from the
 * first one), puts stdio on 0-2, the message socket on 3 and the plan on 4, closes
 * everything else and execs cw-sandbox, a small program of its own (sandbox/), which
 * builds the sandbox in the order sandbox/steps.c gives and execs the command. Each
 * step is mandatory, and a failure comes back on the socket before anything of the
 * command runs.
 *
 * The child is made by vfork: it borrows the runner's memory for the few system calls
 * up to the exec, instead of copying the page tables of the whole runner, and touches
 * nothing of it on the way. cw-sandbox makes the run's PID 1 with CLONE_PARENT, so the
 * runner waits on that pid as on any child of its own; the cw-sandbox that made it
 * says which pid it is and exits.
 */
#define _GNU_SOURCE	/* memfd_create, dup3 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "landlock.h"
#include "plan.h"
#include "sandbox.h"




/* Parent: the ruleset, with the carve's grants in it, to the child. */
static int
sandbox_carve_send(int sock, int rfd)
{
	struct msghdr	 mh;
	struct iovec	 iov;
	union plan_cmsg_fd	 cm;
	struct cmsghdr	*c;
	ssize_t		 n;

	memset(&cm, 0, sizeof cm);
	plan_msghdr(&mh, &iov, (void *)SANDBOX_CARVED, sizeof SANDBOX_CARVED, cm.buf,
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

/* One message from the child; the listeners it hands over go to l->listen_fds. */
static ssize_t
sandbox_recv(int fd, struct sandbox_msg *m, const struct sandbox_launch *l)
{
	struct msghdr	 mh;
	struct iovec	 iov;
	union {
		char		 buf[CMSG_SPACE(PLAN_MAX_LISTEN * sizeof(int))];
		struct cmsghdr	 align;
	} cm;
	struct cmsghdr	*c;
	ssize_t		 n;
	size_t		 nfd;
	int		 fds[PLAN_MAX_LISTEN];

	plan_msghdr(&mh, &iov, m, sizeof *m, cm.buf, sizeof cm.buf);
	/*
	 * A sandbox that ended with a message of ours unread in its queue (the carve's
	 * ruleset, sent as it failed) leaves ECONNRESET on our socket, and the kernel
	 * reports that error once, before the messages queued here: its reason among
	 * them. Read past it; the error is cleared by being reported.
	 */
	if ((n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC)) == -1 && errno == ECONNRESET)
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	if (n <= 0)
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

/*
 * cw-sandbox, next to this cw-runner (both are installed in one directory, and a build
 * puts both in bin/): found once, through /proc/self/exe, so that no PATH or
 * environment of the caller can choose the program that builds the sandbox.
 */
static const char *
sandbox_program(char *err, size_t errlen)
{
	static char	 path[PATH_MAX];
	char		 exe[PATH_MAX];
	ssize_t		 n;

	if (path[0] != '\0')
		return path;
	if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) <= 0) {
		snprintf(err, errlen, "cw-sandbox: reading /proc/self/exe: %s", strerror(errno));
		return NULL;
	}
	exe[n] = '\0';
	if ((size_t)snprintf(path, sizeof path, "%s/cw-sandbox", dirname(exe)) >=
	    sizeof path || access(path, X_OK) == -1) {
		snprintf(err, errlen, "cw-sandbox: not found next to cw-runner (%s): %s", path,
		    strerror(errno ? errno : ENAMETOOLONG));
		path[0] = '\0';
		return NULL;
	}
	return path;
}

int
sandbox_plan(const struct sandbox_spec *s, const struct sandbox_launch *l, int abi,
    char **buf, size_t *len, char *err, size_t errlen)
{
	struct plan	 p;

	memset(&p, 0, sizeof p);
	p.spec = *s;
	p.abi = abi;
	p.carve = s->carve != NULL && s->enabled;
	if (l != NULL) {
		p.new_session = l->new_session;
		p.cwd = (char *)l->cwd;
		if (l->rlimits != NULL)
			p.lim = *l->rlimits;
		if (l->n_listen > PLAN_MAX_LISTEN) {
			snprintf(err, errlen, "network namespace: too many listeners");
			errno = EINVAL;
			return -1;
		}
		for (size_t i = 0; i < l->n_listen; i++)
			p.listen[i] = l->listen[i];
		p.n_listen = s->net_open ? 0 : l->n_listen;
	}
	return plan_build(&p, buf, len, err, errlen);
}

/* The plan of this launch in a memfd at offset 0: its descriptor, or -1 with err. */
static int
sandbox_plan_fd(const struct sandbox_spec *s, const struct sandbox_launch *l, int abi,
    char *err, size_t errlen)
{
	char		*buf;
	size_t		 len, off = 0;
	ssize_t		 n;
	int		 fd;

	if (sandbox_plan(s, l, abi, &buf, &len, err, errlen) == -1)
		return -1;
	if ((fd = memfd_create("cw-plan", MFD_CLOEXEC)) == -1) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		free(buf);
		return -1;
	}
	while (off < len) {
		if ((n = write(fd, buf + off, len - off)) == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "writing the plan: %s", strerror(errno));
			free(buf);
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	free(buf);
	return fd;
}

/*
 * The runner's child, by vfork: system calls only, on this frame, then the exec of
 * cw-sandbox or the report of why not and _exit. fds: stdin, stdout, stderr (all
 * valid), the message socket, the plan. A function of its own, so that no variable of
 * the caller lives across the vfork.
 */
static pid_t __attribute__((noinline))
sandbox_start(const char *prog, char *const argv[], const int fds[5],
    const struct cgroup_run *cg)
{
	static char *const	 noenv[] = { NULL };
	struct sandbox_msg	 m;
	int			 hi[5];
	pid_t			 pid;

	if ((pid = vfork()) != 0)
		return pid;
	memset(&m, 0, sizeof m);
	m.kind = SANDBOX_MSG_FATAL;
	if (cg != NULL && cgroup_run_join(cg) == -1) {
		m.err = errno;
		snprintf(m.text, sizeof m.text, "limits: joining the run's cgroup failed "
		    "(%s): its limits would not hold", strerror(m.err));
		goto fail;
	}
	/* Each is first lifted above 4, so the dups cannot clobber one another. */
	for (int i = 0; i < 5; i++)
		if ((hi[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 10)) == -1)
			goto fdfail;
	for (int i = 0; i < 5; i++)
		if (dup3(hi[i], i, 0) == -1)
			goto fdfail;
	if (syscall(SYS_close_range, 5, ~0U, 0) == -1) {
		/* Pre-5.9 kernels: close them one by one. */
		for (int fd = 5; fd < 65536; fd++)
			close(fd);
	}
	execve(prog, argv, noenv);
	m.err = errno;
	snprintf(m.text, sizeof m.text, "cw-sandbox: exec %s: %s", prog, strerror(m.err));
	(void)!write(PLAN_MSGFD, &m, sizeof m);
	_exit(127);
fdfail:
	m.err = errno;
	snprintf(m.text, sizeof m.text, "stdio: %s", strerror(m.err));
fail:
	(void)!write(fds[3], &m, sizeof m);
	_exit(127);
}

/* Why the namespaces could not be made, for the run's refusal (fail closed, S6, G3). */
static void
sandbox_clone_refusal(const struct sandbox_spec *s, uid_t uid, int e, char *err,
    size_t errlen)
{
	snprintf(err, errlen, "namespaces: clone(%s%s): %s; refusing to run "
	    "without them%s (%sCW_SANDBOX=off would run it without a sandbox)",
	    uid != 0 ? "user, PID, IPC, mount" : "PID, IPC, mount",
	    s->net_open ? "" : ", network", strerror(e),
	    uid != 0 ? ". A normal user's run needs an unprivileged user "
	    "namespace, which this kernel may refuse (user.max_user_namespaces=0, "
	    "kernel.unprivileged_userns_clone=0, or AppArmor's "
	    "kernel.apparmor_restrict_unprivileged_userns=1 as on Ubuntu 24.04, where the "
	    "profile sandbox-profiles/ installs must name cw-sandbox): "
	    "run `cwctl doctor` for what this machine allows and the command that "
	    "fixes it" : "",
	    s->net_open ? "" : "network: open in config.yaml would run it "
	    "without its own network namespace; ");
}

static void
sandbox_reap(pid_t pid)
{
	int	 st;

	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
}

pid_t
apply_sandbox(struct sandbox_spec *s, const struct sandbox_launch *l,
    struct sandbox_report *r, int *refused, char *err, size_t errlen)
{
	struct sandbox_msg	 m;
	sigset_t		 all, saved;
	const char		*prog;
	char			**argv = NULL;
	size_t			 argc;
	int			 p[2] = { -1, -1 }, fds[5], null = -1, planfd = -1;
	int			 abi = 0, fatal = 0, saved_errno, rfd = -1, clone_err = 0;
	uid_t			 uid = getuid();
	pid_t			 outer, pid = -1;
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
	if ((prog = sandbox_program(err, errlen)) == NULL) {
		*refused = 1;
		errno = ENOENT;
		return -1;
	}
	for (argc = 0; l->argv[argc] != NULL; argc++)
		;
	if ((argv = calloc(argc + 5, sizeof *argv)) == NULL)
		goto nomem;
	argv[0] = "cw-sandbox";
	argv[1] = "--plan-fd";
	argv[2] = "4";
	argv[3] = "--";
	for (size_t i = 0; i < argc; i++)
		argv[4 + i] = l->argv[i];
	if ((planfd = sandbox_plan_fd(s, l, abi, err, errlen)) == -1)
		goto fail;
	/*
	 * A deferred carve's rules go into a ruleset made here: the runner adds them
	 * while cw-sandbox builds the view, and hands the ruleset over.
	 */
	if (s->carve != NULL && s->enabled && (rfd = landlock_ruleset(abi, err, errlen)) == -1) {
		*refused = 1;
		goto fail;
	}
	/* A socket, not a pipe: the listeners of a network namespace come back on it. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		goto fail;
	}
	if ((l->fd_in < 0 || l->fd_out < 0 || l->fd_err < 0) &&
	    (null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "stdio: /dev/null: %s", strerror(errno));
		goto fail;
	}
	fds[0] = l->fd_in < 0 ? null : l->fd_in;
	fds[1] = l->fd_out < 0 ? null : l->fd_out;
	fds[2] = l->fd_err < 0 ? null : l->fd_err;
	fds[3] = p[1];
	fds[4] = planfd;
	/*
	 * Every signal stays blocked across the vfork and the exec, so that none runs a
	 * runner handler in the child; cw-sandbox resets them all and unblocks them in the
	 * process that goes on.
	 */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &saved);
	outer = sandbox_start(prog, argv, fds, l->cgroup);
	saved_errno = errno;
	sigprocmask(SIG_SETMASK, &saved, NULL);
	close(p[1]);
	p[1] = -1;
	close(planfd);
	planfd = -1;
	if (null != -1)
		close(null);
	null = -1;
	free(argv);
	argv = NULL;
	if (outer == -1) {
		snprintf(err, errlen, "vfork: %s", strerror(saved_errno));
		errno = saved_errno;
		goto fail;
	}
	if (!s->enabled)
		pid = outer;	/* no namespace: cw-sandbox becomes the command */

	/*
	 * The carve left to this moment (spec.h: spec_carve_finish) is made while
	 * cw-sandbox makes the namespaces and the view, on the other core; the run's PID 1
	 * waits for the grants before Landlock.
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
			 * A sandbox that has ended already (EPIPE) left its refusal on the
			 * socket; one that did not get the ruleset would wait for it as long
			 * as we would wait for it.
			 */
			snprintf(err, errlen, "landlock: handing the carved ruleset to the run: "
			    "%s", strerror(errno));
			failed = 1;
		}
		close(rfd);
		rfd = -1;
		if (failed) {
			saved_errno = errno;
			/* Its PID 1 may not have said its pid yet: the group ends with it. */
			kill(outer, SIGKILL);
			for (;;) {
				n = sandbox_recv(p[0], &m, l);
				if (n == -1 && errno == EINTR)
					continue;
				if (n != (ssize_t)sizeof m)
					break;
				if (m.kind == SANDBOX_MSG_PID && m.pid > 0) {
					kill(m.pid, SIGKILL);
					sandbox_reap(m.pid);
				}
			}
			sandbox_reap(outer);
			close(p[0]);
			errno = saved_errno;
			return -1;
		}
	}

	for (size_t i = 0; i < l->n_listen && l->listen_fds != NULL; i++)
		l->listen_fds[i] = -1;
	/*
	 * EOF without a fatal record: the exec happened (the socket was close-on-exec in
	 * the command, cw-sandbox's PID 1 closed its copy, the cw-sandbox that made it
	 * has exited).
	 */
	for (;;) {
		n = sandbox_recv(p[0], &m, l);
		if (n == -1 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof m)
			break;
		m.text[sizeof m.text - 1] = '\0';
		switch (m.kind) {
		case SANDBOX_MSG_FDS:
			continue;
		case SANDBOX_MSG_PID:
			if (s->enabled && pid == -1 && m.pid > 0)
				pid = m.pid;
			continue;
		case SANDBOX_MSG_NOTE:
			if (strlist_add(&r->not_enforced, m.text) == -1)
				goto nomem_child;
			continue;
		case SANDBOX_MSG_CLONE:
			clone_err = m.err ? m.err : EINVAL;
			fatal = SANDBOX_MSG_FATAL;
			errno = clone_err;
			continue;
		default:
			snprintf(err, errlen, "%s", m.text);
			fatal = m.kind == SANDBOX_MSG_EXEC ? SANDBOX_MSG_EXEC : SANDBOX_MSG_FATAL;
			if (m.kind == SANDBOX_MSG_EXEC)
				r->exec_errno = m.err;
			errno = m.err;
		}
	}
	close(p[0]);
	p[0] = -1;
	saved_errno = errno;
	/* The cw-sandbox that made the run's PID 1 has exited (or is the command). */
	if (s->enabled)
		sandbox_reap(outer);
	if (clone_err != 0) {
		if (clone_err != EAGAIN && clone_err != ENOMEM) {
			*refused = 1;
			sandbox_clone_refusal(s, uid, clone_err, err, errlen);
		} else
			snprintf(err, errlen, "clone: %s", strerror(clone_err));
		errno = clone_err;
		return -1;
	}
	if (!fatal && pid == -1) {
		fatal = SANDBOX_MSG_FATAL;
		snprintf(err, errlen, "cw-sandbox ended without starting the run");
		saved_errno = EPROTO;
	}
	if (fatal) {
		for (size_t i = 0; i < l->n_listen && l->listen_fds != NULL; i++)
			if (l->listen_fds[i] != -1) {
				close(l->listen_fds[i]);
				l->listen_fds[i] = -1;
			}
		if (pid != -1)
			sandbox_reap(pid);
		*refused = fatal == SANDBOX_MSG_FATAL && s->enabled;
		errno = saved_errno;
		return -1;
	}
	r->landlock_abi = s->enabled ? abi : 0;
	r->seccomp = s->enabled;
	r->namespaces = s->enabled;
	r->netns = s->enabled && !s->net_open;
	return pid;
nomem_child:
	close(p[0]);
	if (pid != -1) {
		kill(pid, SIGKILL);
		sandbox_reap(pid);
	}
	if (s->enabled) {
		kill(outer, SIGKILL);
		sandbox_reap(outer);
	}
	snprintf(err, errlen, "%s", strerror(ENOMEM));
	errno = ENOMEM;
	return -1;
fail:
	saved_errno = errno;
	free(argv);
	if (planfd != -1)
		close(planfd);
	if (rfd != -1)
		close(rfd);
	if (null != -1)
		close(null);
	for (int i = 0; i < 2; i++)
		if (p[i] != -1)
			close(p[i]);
	errno = saved_errno;
	return -1;
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

/*
 * cw-parse: clockworkd's parsing child (docs/architecture.md, "The parsing child").
 * The daemon execs it with a request pipe on fd 0, a reply pipe on fd 1, /dev/null on
 * fd 2 and an empty environment. It narrows itself once, in parse_narrow(), in a fixed
 * order, and refuses to serve if any step fails; then it answers requests
 * (common/parsemsg.h) until its input closes. It links no store, no keyring, no TLS,
 * no git and no event loop: only libc, cJSON, libyaml and libseccomp.
 *
 *   cw-parse serve [--test]
 *
 * Exit codes: 0 the daemon closed the pipe; 1 a setup step failed (named on stderr,
 * which is /dev/null under the daemon; run it by hand to read it); 2 a request out of
 * shape or a pipe error; 64 usage.
 */
#define _GNU_SOURCE	/* close_range */
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parsemsg.h"
#include "parsework.h"

#define PARSE_DATA_MAX	(512L * 1024 * 1024)	/* RLIMIT_DATA: heap and mappings */
#define PARSE_CPU_S	120			/* RLIMIT_CPU, over the child's life */

extern char **environ;

#if defined(CW_PARSE_SANITIZE)
/*
 * LeakSanitizer stops the world at exit with clone() and ptrace(), which the filter
 * refuses: off here. The handlers' leaks are found by their fuzz target instead
 * (fuzz_parsework, which runs them in one process with leak detection on).
 */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
	return "detect_leaks=0";
}
#endif

static int
parse_fail(const char *step)
{
	fprintf(stderr, "cw-parse: %s: %s\n", step, strerror(errno));
	return -1;
}

/*
 * The seccomp allowlist: what reading a pipe, parsing in memory and writing a pipe
 * need, and nothing that reaches anything else. open/openat/socket/exec and the
 * process-creating calls fail with EPERM (so a probe can see them refused, and a libc
 * path that tries one fails cleanly); anything else not listed kills the process.
 */
static int
parse_seccomp(void)
{
	static const int allow[] = {
		SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev),
		SCMP_SYS(close), SCMP_SYS(poll), SCMP_SYS(ppoll),
		SCMP_SYS(brk), SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap),
		SCMP_SYS(madvise), SCMP_SYS(mprotect),
		SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(rt_sigreturn),
		SCMP_SYS(rt_sigprocmask), SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday),
		SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(fstat), SCMP_SYS(newfstatat),
		SCMP_SYS(futex), SCMP_SYS(getrandom),
#if defined(__SANITIZE_ADDRESS__) || defined(CW_PARSE_SANITIZE)
		/* The sanitizers' runtime, reporting a finding before the process dies. */
		SCMP_SYS(sigaltstack), SCMP_SYS(rt_sigaction), SCMP_SYS(sched_yield),
		SCMP_SYS(prctl), SCMP_SYS(getrlimit), SCMP_SYS(prlimit64), SCMP_SYS(tgkill),
		SCMP_SYS(readlink), SCMP_SYS(readlinkat), SCMP_SYS(lseek), SCMP_SYS(pread64),
#endif
	};
	static const int refuse[] = {
		SCMP_SYS(open), SCMP_SYS(openat), SCMP_SYS(openat2), SCMP_SYS(creat),
		SCMP_SYS(socket), SCMP_SYS(socketpair), SCMP_SYS(connect), SCMP_SYS(bind),
		SCMP_SYS(execve), SCMP_SYS(execveat), SCMP_SYS(fork), SCMP_SYS(vfork),
		SCMP_SYS(clone), SCMP_SYS(clone3), SCMP_SYS(ptrace), SCMP_SYS(kill),
		SCMP_SYS(memfd_create), SCMP_SYS(unlink), SCMP_SYS(unlinkat),
		SCMP_SYS(mkdir), SCMP_SYS(mkdirat), SCMP_SYS(rename), SCMP_SYS(renameat),
		SCMP_SYS(renameat2), SCMP_SYS(chdir), SCMP_SYS(fchdir), SCMP_SYS(dup),
		SCMP_SYS(dup2), SCMP_SYS(dup3), SCMP_SYS(fcntl), SCMP_SYS(ioctl),
		SCMP_SYS(sendmsg), SCMP_SYS(recvmsg), SCMP_SYS(sendto), SCMP_SYS(recvfrom),
	};
	scmp_filter_ctx	ctx;
	int		rc = -1;

	if ((ctx = seccomp_init(SCMP_ACT_KILL_PROCESS)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < sizeof allow / sizeof allow[0]; i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allow[i], 0) < 0)
			goto out;
	for (size_t i = 0; i < sizeof refuse / sizeof refuse[0]; i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), refuse[i], 0) < 0)
			goto out;
	if ((rc = seccomp_load(ctx)) < 0) {
		errno = -rc;
		rc = -1;
	}
out:
	seccomp_release(ctx);
	return rc;
}

/* Lower a limit to at most cur/max; a limit inherited lower already stays lower. */
static int
parse_limit(int resource, rlim_t cur, rlim_t max)
{
	struct rlimit	now, rl = { cur, max };

	if (getrlimit(resource, &now) == -1)
		return -1;
	if (now.rlim_max != RLIM_INFINITY && now.rlim_max < rl.rlim_max)
		rl.rlim_max = now.rlim_max;
	if (rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	return setrlimit(resource, &rl);
}

/*
 * Narrow the process, in this order; any step that fails ends it (exit 1):
 *   1. descriptors: 0 and 1 must be pipes; every descriptor above 2 is closed;
 *   2. the environment must be empty (the daemon passes none);
 *   3. the working directory is /;
 *   4. rlimits: no core, no file growth, no new descriptor, bounded memory and CPU;
 *   5. no new privileges;
 *   6. the seccomp allowlist.
 */
static int
parse_narrow(void)
{
	struct stat	st;

	if (fstat(0, &st) == -1 || !S_ISFIFO(st.st_mode) ||
	    fstat(1, &st) == -1 || !S_ISFIFO(st.st_mode)) {
		errno = ENOTSUP;
		return parse_fail("descriptors 0 and 1 must be the daemon's pipes");
	}
	if (syscall(SYS_close_range, 3, ~0U, 0) == -1)
		for (int fd = 3; fd < 65536; fd++)
			close(fd);
	if (environ != NULL && environ[0] != NULL) {
		errno = EINVAL;
		return parse_fail("the environment must be empty");
	}
	if (chdir("/") == -1)
		return parse_fail("chdir /");
	if (parse_limit(RLIMIT_CORE, 0, 0) == -1 || parse_limit(RLIMIT_FSIZE, 0, 0) == -1 ||
	    parse_limit(RLIMIT_NOFILE, 3, 3) == -1 ||
	    parse_limit(RLIMIT_CPU, PARSE_CPU_S, PARSE_CPU_S + 5) == -1)
		return parse_fail("rlimits");
#if !defined(__SANITIZE_ADDRESS__) && !defined(CW_PARSE_SANITIZE)
	/* Not under AddressSanitizer, whose shadow memory no such bound leaves room for. */
	if (parse_limit(RLIMIT_DATA, PARSE_DATA_MAX, PARSE_DATA_MAX) == -1)
		return parse_fail("RLIMIT_DATA");
#endif
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return parse_fail("no_new_privs");
	if (parse_seccomp() == -1)
		return parse_fail("seccomp");
	return 0;
}

int
main(int argc, char **argv)
{
	struct parsemsg_buf	 out;
	const char		*why;
	uint8_t			*payload;
	size_t			 len;
	uint32_t		 seq;
	int			 type, rtype, test = 0;

	if (argc < 2 || strcmp(argv[1], "serve") != 0 ||
	    (argc == 3 && strcmp(argv[2], "--test") != 0) || argc > 3) {
		fprintf(stderr, "usage: cw-parse serve [--test]   (started by clockworkd)\n");
		return 64;
	}
	test = argc == 3;
	if (parse_narrow() == -1)
		return 1;
	for (;;) {
		if (parsemsg_read(0, -1, PARSEMSG_MAX, &type, &seq, &payload, &len,
		    &why) == -1)
			return errno == EPIPE ? 0 : 2;
		if (type > PARSEMSG_REQ_LAST) {
			free(payload);
			return 2;
		}
		memset(&out, 0, sizeof out);
		if (parsework_handle(type, payload, len, test, &rtype, &out) == -1) {
			free(payload);
			parsemsg_buf_free(&out);
			return 2;
		}
		free(payload);
		if (out.failed) {
			/* Too big to answer (or ENOMEM): say so instead. */
			parsemsg_buf_free(&out);
			parsemsg_put_str(&out, "the parsed records are over the reply limit",
			    (size_t)-1);
			rtype = PARSEMSG_ERROR;
		}
		if (parsemsg_write(1, rtype, seq, &out) == -1) {
			parsemsg_buf_free(&out);
			return 2;
		}
		parsemsg_buf_free(&out);
	}
}

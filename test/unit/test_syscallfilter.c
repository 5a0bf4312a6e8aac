/*
 * The seccomp layer (sandbox/syscallfilter.c): the program built into cw-sandbox at build
 * time is byte for byte the one libseccomp compiles from the rules now (so the two can
 * never drift apart), and once loaded it denies what it says and allows the rest.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "syscallfilter.h"

static void
test_builtin_is_what_libseccomp_compiles(void **state)
{
	const unsigned char	*prog;
	unsigned char		 buf[65536];
	char			 err[256];
	size_t			 len;
	ssize_t			 n;
	int			 fd;

	(void)state;
	if ((len = syscallfilter_builtin(&prog)) == 0)
		skip();		/* a cross build compiles it at every start */
	assert_true((fd = memfd_create("bpf", MFD_CLOEXEC)) >= 0);
	assert_int_equal(syscallfilter_export(fd, err, sizeof err), 0);
	n = pread(fd, buf, sizeof buf, 0);
	close(fd);
	assert_int_equal((size_t)n, len);
	assert_memory_equal(buf, prog, len);
}

static void
test_loaded_filter_denies_and_allows(void **state)
{
	char	 err[256];
	pid_t	 pid;
	int	 st;

	(void)state;
	if ((pid = fork()) == 0) {
		int	 bad = 0;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
		    syscallfilter_apply(err, sizeof err) == -1)
			_exit(10);
		if (!(unshare(CLONE_NEWUSER) == -1 && errno == EPERM))
			bad |= 1;
		if (!(ptrace(PTRACE_TRACEME, 0, NULL, NULL) == -1 && errno == EPERM))
			bad |= 2;
		if (!(personality(ADDR_NO_RANDOMIZE) == -1 && errno == EPERM))
			bad |= 4;
		if (personality(0xffffffff) == -1)	/* a query stays allowed */
			bad |= 8;
		if (getpid() <= 0 || access("/", F_OK) == -1)
			bad |= 16;
		_exit(bad);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_is_what_libseccomp_compiles),
		cmocka_unit_test(test_loaded_filter_denies_and_allows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

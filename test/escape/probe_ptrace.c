/*
 * probe_ptrace PID: tries to reach into another process: PTRACE_ATTACH, PTRACE_SEIZE,
 * process_vm_readv, pidfd_getfd (steal its stdin) and pidfd_send_signal(SIGTERM).
 * Inside the sandbox every one must be refused (seccomp and Landlock's ptrace and
 * signal scoping); outside, as root, they succeed, which is the matrix's control.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe_common.h"

int
main(int argc, char **argv)
{
	pid_t pid;
	long rc;
	int pidfd, fd;
	char buf[8];
	struct iovec local = { buf, sizeof(buf) }, remote;

	if (argc != 2 || (pid = (pid_t)atoi(argv[1])) <= 1) {
		fprintf(stderr, "usage: probe_ptrace PID\n");
		return 2;
	}

	rc = ptrace(PTRACE_ATTACH, pid, NULL, NULL);
	probe_result("ptrace_attach", rc, errno);
	if (rc == 0) {
		waitpid(pid, NULL, __WALL);
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
	}

	rc = ptrace(PTRACE_SEIZE, pid, NULL, NULL);
	probe_result("ptrace_seize", rc, errno);
	if (rc == 0)
		ptrace(PTRACE_DETACH, pid, NULL, NULL);

	/* Any address will do: a refusal comes before the address is looked at. */
	remote.iov_base = (void *)&local;
	remote.iov_len = sizeof(buf);
	rc = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (rc < 0 && errno == EFAULT)
		rc = 0;		/* permitted, only the address was wrong */
	probe_result("process_vm_readv", rc, errno);

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		probe_result("pidfd_getfd", -1, errno);
		probe_result("pidfd_send_signal", -1, errno);
	} else {
		fd = (int)syscall(SYS_pidfd_getfd, pidfd, 0, 0);
		probe_result("pidfd_getfd", fd, errno);
		rc = syscall(SYS_pidfd_send_signal, pidfd, SIGCONT, NULL, 0);
		probe_result("pidfd_send_signal", rc, errno);
	}
	return probe_escaped;
}

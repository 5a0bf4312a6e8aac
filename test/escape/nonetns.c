/*
 * nonetns [--user] CMD ARGS...: run CMD where no network namespace can be made, as on
 * a kernel or a container that refuses them: a seccomp filter makes clone(2) and
 * unshare(2) with CLONE_NEWNET fail with EPERM (clone3 with ENOSYS, so that callers
 * fall back to clone, whose flags a filter can see). For test/escape/network.sh: a run
 * must then be refused (exit 3), naming the opt-out, and run with network: open.
 *
 * With --user the flag refused is CLONE_NEWUSER instead: a kernel with no unprivileged
 * user namespaces (user.max_user_namespaces=0, Debian's unprivileged_userns_clone=0).
 * For test/integration/doctor.sh and test/escape/nouserns.sh: a normal user's run is
 * refused (exit 3) pointing at `cwctl doctor`, which reports the same.
 */
#define _GNU_SOURCE	/* CLONE_NEWNET */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NONETNS_ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NONETNS_ARCH	AUDIT_ARCH_AARCH64
#endif

int
main(int argc, char **argv)
{
#ifdef NONETNS_ARCH
	unsigned int	flag = CLONE_NEWNET;

	if (argc > 1 && strcmp(argv[1], "--user") == 0) {
		flag = CLONE_NEWUSER;
		argv++;
		argc--;
	}
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NONETNS_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, 0, 3),
		/* The flags: the low 32 bits of the first argument. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, flag, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof f / sizeof f[0], f };

	if (argc < 2) {
		fprintf(stderr, "usage: nonetns [--user] CMD ARGS...\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1) {
		perror("nonetns: seccomp");
		return 2;
	}
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
#else
	(void)argc;
	(void)argv;
	fprintf(stderr, "nonetns: not built for this architecture\n");
	return 2;
#endif
}

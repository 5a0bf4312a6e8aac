/*
 * probe_mount DIR SRC: the ways to reshape the filesystem view or leave the sandbox's
 * namespaces: mount a tmpfs on DIR, bind-mount SRC (a credential directory) onto DIR,
 * unshare a mount or user namespace, create a user namespace through clone() and
 * clone3() (a seccomp filter that only inspects unshare's flags misses clone3),
 * chroot and pivot_root. Each runs in its own child so
 * one success cannot change what the next one sees; a success is undone at once.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe_common.h"

static const char *dir, *src;

static long
op_mount_tmpfs(void)
{
	long rc = mount("cw-escape", dir, "tmpfs", 0, "size=64k");

	if (rc == 0)
		umount2(dir, MNT_DETACH);
	return rc;
}

static long
op_mount_bind(void)
{
	long rc = mount(src, dir, NULL, MS_BIND, NULL);

	if (rc == 0)
		umount2(dir, MNT_DETACH);
	return rc;
}

static long
op_unshare_mount(void)
{
	return unshare(CLONE_NEWNS);
}

static long
op_unshare_user(void)
{
	return unshare(CLONE_NEWUSER);
}

static long
op_unshare_net(void)
{
	return unshare(CLONE_NEWNET);
}

static long
op_clone_user(void)
{
	long pid = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), NULL,
	    NULL, NULL, 0);

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	return pid;
}

static long
op_clone3_user(void)
{
	struct clone_args ca;
	long pid;

	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_NEWUSER;
	ca.exit_signal = SIGCHLD;
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	return pid;
}

/*
 * unshare(CLONE_NEWUSER) through the 32-bit entry point (int 0x80, i386 number 310): a
 * filter that only lists x86_64 numbers would let it through. A kill by SIGSYS is a
 * refusal too (the parent reports the signal).
 */
static long
op_unshare_user_i386(void)
{
#if defined(__x86_64__)
	long rc;

	__asm__ volatile ("int $0x80" : "=a"(rc) : "a"(310L), "b"((long)CLONE_NEWUSER)
	    : "memory", "rcx", "r11", "r8", "r9", "r10");
	if (rc < 0 && rc > -4096) {
		errno = (int)-rc;
		return -1;
	}
	return rc;
#else
	errno = ENOSYS;
	return -1;
#endif
}

static long
op_chroot(void)
{
	return chroot(dir);
}

/*
 * pivot_root needs its new root to be a mount point in a mount namespace of the
 * caller's own: the child first makes one (private, DIR bound onto itself), so the
 * call is live outside the sandbox (the control) and never moves the host's root.
 * Inside the sandbox the unshare and the mount are refused too; pivot_root's own
 * refusal is what is reported.
 */
static long
op_pivot_root(void)
{
	if (unshare(CLONE_NEWNS) == 0) {
		mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
		mount(dir, dir, NULL, MS_BIND, NULL);
	}
	return syscall(SYS_pivot_root, dir, dir);
}

static const struct {
	const char	*name;
	long		(*fn)(void);
} ops[] = {
	{ "mount_tmpfs", op_mount_tmpfs },
	{ "mount_bind", op_mount_bind },
	{ "unshare_mount", op_unshare_mount },
	{ "unshare_user", op_unshare_user },
	{ "unshare_net", op_unshare_net },
	{ "clone_newuser", op_clone_user },
	{ "clone3_newuser", op_clone3_user },
	{ "unshare_user_i386", op_unshare_user_i386 },
	{ "chroot", op_chroot },
	{ "pivot_root", op_pivot_root },
};

int
main(int argc, char **argv)
{
	size_t i;
	pid_t pid;
	int status, escaped = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: probe_mount DIR SRC\n");
		return 2;
	}
	dir = argv[1];
	src = argv[2];
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		fflush(stdout);
		if ((pid = fork()) < 0) {
			perror("fork");
			return 2;
		}
		if (pid == 0) {
			long rc;

			errno = 0;
			rc = ops[i].fn();
			probe_result(ops[i].name, rc, errno);
			_exit(probe_escaped);
		}
		if (waitpid(pid, &status, 0) < 0) {
			perror("waitpid");
			return 2;
		}
		if (WIFSIGNALED(status)) {	/* killed before it could print: refused */
			const char *sig = sigabbrev_np(WTERMSIG(status));

			printf("%s SIG%s\n", ops[i].name, sig != NULL ? sig : "?");
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			escaped = 1;
	}
	return escaped;
}

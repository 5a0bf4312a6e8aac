#define _GNU_SOURCE	/* CLONE_NEW* */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>

#include "syscallfilter.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif

/*
 * Denied outright. Each is either a way around the other layers (ptrace and
 * process_vm_* reach other processes' memory; the mount family and chroot rearrange the
 * filesystem view Landlock checks; setns joins another namespace), kernel attack surface
 * a coding agent never needs (bpf, io_uring, userfaultfd, perf, keyrings, modules,
 * kexec), or host administration (reboot, swap, acct, quotas, syslog). handle-based
 * opens skip path checks entirely.
 */
static const char *const syscallfilter_denied[] = {
	"ptrace", "process_vm_readv", "process_vm_writev",
	"mount", "umount", "umount2", "pivot_root", "chroot",
	"move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick",
	"mount_setattr", "setns", "open_tree_attr",
	"bpf", "perf_event_open", "userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"keyctl", "add_key", "request_key",
	"init_module", "finit_module", "delete_module",
	"kexec_load", "kexec_file_load",
	"acct", "swapon", "swapoff", "reboot", "syslog", "quotactl", "quotactl_fd",
	"open_by_handle_at", "name_to_handle_at",
	"lookup_dcookie", "vhangup", "nfsservctl",
};

/* Namespace flags: creating a namespace is how one would get a fresh, unconfined view. */
static const unsigned long syscallfilter_nsflags[] = {
	CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWUTS,
	CLONE_NEWIPC, CLONE_NEWCGROUP, CLONE_NEWTIME,
};

static int
syscallfilter_rule(scmp_filter_ctx ctx, int err, const char *name, unsigned count,
    const struct scmp_arg_cmp *cmp)
{
	int	 nr;

	/*
	 * A syscall this architecture does not have needs no rule. One newer than this
	 * libseccomp still does: open_tree_attr (Linux 6.15) has number 467 in the table
	 * x86_64 and the generic architectures share for calls from 424 on.
	 */
	if ((nr = seccomp_syscall_resolve_name(name)) == __NR_SCMP_ERROR) {
#if defined(__x86_64__) || defined(__aarch64__)
		if (strcmp(name, "open_tree_attr") == 0)
			nr = 467;
		else
#endif
			return 0;
	}
	return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(err), nr, count, cmp);
}

/*
 * personality(2) may not switch ADDR_NO_RANDOMIZE on. The kernel reads the argument as
 * 32 bits and treats 0xffffffff as a query, so deny exactly "bit set and not all ones":
 * one rule per lower bit that, if clear, proves the value is not 0xffffffff.
 */
static int
syscallfilter_personality(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp	 c;
	unsigned long		 above = 0;

	for (int bit = 31; bit >= 0; bit--) {
		unsigned long	 b = 1UL << bit;

		if (b == ADDR_NO_RANDOMIZE)
			continue;
		c = SCMP_A0(SCMP_CMP_MASKED_EQ, above | b | ADDR_NO_RANDOMIZE,
		    above | ADDR_NO_RANDOMIZE);
		if (syscallfilter_rule(ctx, EPERM, "personality", 1, &c) < 0)
			return -1;
		above |= b;
	}
	return 0;
}

/* Every rule of the filter into ctx; *step names the one that failed. */
static int
syscallfilter_rules(scmp_filter_ctx ctx, const char **step)
{
	struct scmp_arg_cmp	 c;
	int			 rc;

	/*
	 * Only the native ABI: the 32-bit x86 entry (int 0x80) and x32 would otherwise be a
	 * second, unfiltered syscall table.
	 */
	*step = "bad-arch action";
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0)
		return rc;

	*step = "deny list";
	for (size_t i = 0; i < sizeof syscallfilter_denied / sizeof syscallfilter_denied[0];
	    i++)
		if ((rc = syscallfilter_rule(ctx, EPERM, syscallfilter_denied[i], 0,
		    NULL)) < 0)
			return rc;

	/* clone3 passes its flags in memory the filter cannot read: ENOSYS makes libc fall back to clone. */
	*step = "clone3";
	if ((rc = syscallfilter_rule(ctx, ENOSYS, "clone3", 0, NULL)) < 0)
		return rc;
	*step = "namespace flags";
	for (size_t i = 0; i < sizeof syscallfilter_nsflags / sizeof syscallfilter_nsflags[0];
	    i++) {
		c = SCMP_A0(SCMP_CMP_MASKED_EQ, syscallfilter_nsflags[i],
		    syscallfilter_nsflags[i]);
		if ((rc = syscallfilter_rule(ctx, EPERM, "clone", 1, &c)) < 0 ||
		    (rc = syscallfilter_rule(ctx, EPERM, "unshare", 1, &c)) < 0)
			return rc;
	}

	/*
	 * TIOCSTI pushes input into a terminal; TIOCLINUX can do the same on a VT. The command
	 * is an unsigned int in the kernel, so compare only the low 32 bits.
	 */
	*step = "ioctl";
	c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, TIOCSTI);
	if ((rc = syscallfilter_rule(ctx, EPERM, "ioctl", 1, &c)) < 0)
		return rc;
	c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, TIOCLINUX);
	if ((rc = syscallfilter_rule(ctx, EPERM, "ioctl", 1, &c)) < 0)
		return rc;

	*step = "personality";
	if ((rc = syscallfilter_personality(ctx)) < 0)
		return rc;
	return 0;
}

/* The filter built by libseccomp, in a context of its own (release it), or NULL. */
static scmp_filter_ctx
syscallfilter_build(const char **step, int *rc)
{
	scmp_filter_ctx	 ctx;

	/* Default allow: Landlock is the allowlist; this layer removes what it cannot see. */
	*step = "init";
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL) {
		*rc = -ENOMEM;
		return NULL;
	}
	if ((*rc = syscallfilter_rules(ctx, step)) < 0) {
		seccomp_release(ctx);
		return NULL;
	}
	return ctx;
}

/* Build the filter, then load it into this process or export it to fd as raw BPF. */
static int
syscallfilter_use(int load, int fd, char *err, size_t errlen)
{
	scmp_filter_ctx	 ctx;
	const char	*step;
	int		 rc;

	if ((ctx = syscallfilter_build(&step, &rc)) != NULL) {
		step = load ? "load" : "export";
		rc = load ? seccomp_load(ctx) : seccomp_export_bpf(ctx, fd);
		seccomp_release(ctx);
		if (rc == 0)
			return 0;
	}
	errno = rc < 0 ? -rc : EINVAL;
	snprintf(err, errlen, "seccomp: %s: %s", step, strerror(errno));
	return -1;
}

int
syscallfilter_export(int fd, char *err, size_t errlen)
{
	return syscallfilter_use(0, fd, err, errlen);
}

/*
 * Where no program was compiled at build time (a cross build), libseccomp builds the
 * filter at every start: cw-sandbox then links this file and libseccomp. Otherwise
 * it links syscallload.c, which loads the program built with it, and no libseccomp.
 */
#ifndef CW_SYSCALLFILTER_BPF
int
syscallfilter_apply(char *err, size_t errlen)
{
	return syscallfilter_use(1, -1, err, errlen);
}

size_t
syscallfilter_builtin(const unsigned char **prog)
{
	*prog = NULL;
	return 0;
}
#endif

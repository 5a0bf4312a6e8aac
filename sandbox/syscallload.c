/*
 * The seccomp filter as compiled when Clockwork was built (sandbox/gen/syscallfilter-gen.c
 * writes syscallfilter_bpf.h from syscallfilter_export()), loaded with seccomp(2): so
 * that cw-sandbox needs no libseccomp at run time, and builds nothing at every start.
 * test_syscallfilter checks it is the program libseccomp builds now.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "syscallfilter.h"
#include "syscallfilter_bpf.h"

/* Loaded as seccomp_load() loads it: no flags; no_new_privs is set already (step 6). */

int
syscallfilter_apply(char *err, size_t errlen)
{
	struct sock_fprog	 prog = {
		.len = (unsigned short)(sizeof syscallfilter_bpf / sizeof syscallfilter_bpf[0]),
		.filter = (struct sock_filter *)syscallfilter_bpf,
	};

	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == -1) {
		snprintf(err, errlen, "seccomp: load: %s", strerror(errno));
		return -1;
	}
	return 0;
}

size_t
syscallfilter_builtin(const unsigned char **prog)
{
	*prog = (const unsigned char *)syscallfilter_bpf;
	return sizeof syscallfilter_bpf;
}

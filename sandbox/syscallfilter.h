/*
 * The seccomp layer (SPEC S5): denies, with EPERM, the syscalls Landlock does not
 * cover and a sandboxed program has no business making. Named syscallfilter so that
 * it never shadows libseccomp's <seccomp.h>.
 */
#ifndef CW_SYSCALLFILTER_H
#define CW_SYSCALLFILTER_H
#include <stddef.h>

/*
 * Load the filter into the calling process (no_new_privs must be set). Returns 0, or -1
 * with err naming what failed and errno set.
 */
int	syscallfilter_apply(char *err, size_t errlen);
/* Write the filter, as libseccomp builds it now, to fd as raw BPF: 0, or -1 with err. */
int	syscallfilter_export(int fd, char *err, size_t errlen);
/*
 * The program built into cw-sandbox (syscallfilter_apply loads it): its length in bytes
 * and *prog, or 0 where the filter is built at every start (a cross build).
 */
size_t	syscallfilter_builtin(const unsigned char **prog);

#endif

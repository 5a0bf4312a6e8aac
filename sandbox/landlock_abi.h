/*
 * Landlock constants newer than the system's <linux/landlock.h> (Debian 12 ships the
 * ABI 1-2 header; the kernels we run on speak up to ABI 7). Each is guarded, so a newer
 * header wins. The attribute structs are declared under our own names: the kernel reads
 * them by size, and the old header's struct landlock_ruleset_attr is too short.
 */
#ifndef CW_LANDLOCK_ABI_H
#define CW_LANDLOCK_ABI_H

#include <linux/landlock.h>
#include <linux/types.h>

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION		(1U << 0)
#endif

/* ABI 2 */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER		(1ULL << 13)
#endif
/* ABI 3 */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE		(1ULL << 14)
#endif
/* ABI 4: TCP bind and connect, and the rule type for ports. */
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP		(1ULL << 0)
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP		(1ULL << 1)
#endif
#define CW_LANDLOCK_RULE_NET_PORT		2
/* ABI 5 */
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV		(1ULL << 15)
#endif
/* ABI 6: IPC scoping. */
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET	(1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL			(1ULL << 1)
#endif
/* ABI 7: audit logging switches for landlock_restrict_self(). */
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF	(1U << 0)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON
#define LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON		(1U << 1)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF	(1U << 2)
#endif

/* The ABI 6+ ruleset attribute; the kernel accepts any prefix of it by size. */
struct cw_landlock_ruleset_attr {
	__u64	handled_access_fs;
	__u64	handled_access_net;
	__u64	scoped;
};

struct cw_landlock_path_beneath_attr {
	__u64	allowed_access;
	__s32	parent_fd;
} __attribute__((packed));

#endif

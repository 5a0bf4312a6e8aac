/*
 * probe_syscalls: the kernel interfaces the seccomp filter closes because Landlock does
 * not cover them: bpf (map create), keyctl and add_key (session keyring), io_uring_setup,
 * userfaultfd, perf_event_open (a software counter on itself), finit_module, kexec_load,
 * open_by_handle_at (the classic container breakout: open a file by handle, bypassing
 * path checks) and syslog (read the kernel log). Every call is made with arguments that
 * work for root outside the sandbox, so a refusal inside is the sandbox's doing.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/kexec.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <sys/klog.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe_common.h"

/* Close a descriptor a call returned, so nothing outlives the probe. */
static void
done(long rc)
{
	if (rc >= 0)
		close((int)rc);
}

int
main(int argc, char **argv)
{
	union bpf_attr battr;
	struct io_uring_params up;
	struct perf_event_attr pe;
	struct {
		struct file_handle	fh;
		unsigned char		space[128];
	} h;
	int mount_id, fd;
	long rc;

	if (argc != 2) {
		fprintf(stderr, "usage: probe_syscalls FILE\n");
		return 2;
	}

	memset(&battr, 0, sizeof(battr));
	battr.map_type = BPF_MAP_TYPE_ARRAY;
	battr.key_size = 4;
	battr.value_size = 4;
	battr.max_entries = 1;
	rc = syscall(SYS_bpf, BPF_MAP_CREATE, &battr, sizeof(battr));
	probe_result("bpf", rc, errno);
	done(rc);

	/*
	 * open_tree_attr (Linux 6.15, number 467 on x86_64 and arm64): without
	 * OPEN_TREE_CLONE it only opens a path, which any process may; so a refusal is
	 * the filter's. A kernel without it answers ENOSYS: the attempt is not live there.
	 */
	rc = syscall(467, AT_FDCWD, "/", 0, NULL, 0);
	probe_result("open_tree_attr", rc, errno);
	done(rc);

	rc = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 1);
	probe_result("keyctl", rc, errno);

	rc = syscall(SYS_add_key, "user", "cw-escape", "x", 1, KEY_SPEC_PROCESS_KEYRING);
	probe_result("add_key", rc, errno);

	memset(&up, 0, sizeof(up));
	rc = syscall(SYS_io_uring_setup, 1, &up);
	probe_result("io_uring_setup", rc, errno);
	done(rc);

	rc = syscall(SYS_userfaultfd, O_CLOEXEC);
	probe_result("userfaultfd", rc, errno);
	done(rc);

	memset(&pe, 0, sizeof(pe));
	pe.type = PERF_TYPE_SOFTWARE;
	pe.size = sizeof(pe);
	pe.config = PERF_COUNT_SW_TASK_CLOCK;
	pe.disabled = 1;
	pe.exclude_kernel = 1;
	pe.exclude_hv = 1;
	rc = syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0);
	probe_result("perf_event_open", rc, errno);
	done(rc);

	/* An empty image: root outside gets ENOEXEC/EINVAL, i.e. the loader was reached. */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	rc = syscall(SYS_finit_module, fd, "", 0);
	if (rc < 0 && (errno == ENOEXEC || errno == EINVAL || errno == EBADF))
		rc = 0;
	probe_result("finit_module", rc, errno);
	if (fd >= 0)
		close(fd);

	/* No segments: root outside gets 0 (unload) or EINVAL past the capability check. */
	rc = syscall(SYS_kexec_load, 0UL, 0UL, NULL, (unsigned long)KEXEC_ARCH_DEFAULT);
	if (rc < 0 && (errno == EINVAL || errno == EBUSY))
		rc = 0;
	probe_result("kexec_load", rc, errno);

	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = sizeof(h.space);
	rc = name_to_handle_at(AT_FDCWD, argv[1], &h.fh, &mount_id, 0);
	if (rc < 0) {
		probe_result("name_to_handle_at", rc, errno);
	} else {
		probe_result("name_to_handle_at", rc, errno);
		/* Any directory fd on the same mount does as mount_fd. */
		int mfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		rc = open_by_handle_at(mfd, &h.fh, O_RDONLY);
		if (rc < 0 && errno == ESTALE)
			rc = 0;		/* not the same mount, but the call went through */
		probe_result("open_by_handle_at", rc, errno);
		done(rc);
		if (mfd >= 0)
			close(mfd);
	}

	rc = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	probe_result("syslog", rc, errno);
	return probe_escaped;
}

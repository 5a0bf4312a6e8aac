/*
 * Build-time tool: writes syscallfilter_bpf.h, the seccomp filter of sandbox/
 * syscallfilter.c as libseccomp compiles it for this machine's architecture, so that
 * cw-sandbox loads a finished program (syscallload.c) instead of compiling the same
 * one at every start, and links no libseccomp.
 * Usage: syscallfilter-gen OUT.h
 */
#define _GNU_SOURCE	/* memfd_create */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "syscallfilter.h"

int
main(int argc, char **argv)
{
	unsigned char	 buf[65536];
	char		 err[256], tmp[4096];
	ssize_t		 n;
	FILE		*f;
	int		 fd;

	if (argc != 2) {
		fprintf(stderr, "usage: syscallfilter-gen OUT.h\n");
		return 2;
	}
	if ((fd = memfd_create("bpf", MFD_CLOEXEC)) == -1) {
		fprintf(stderr, "syscallfilter-gen: memfd_create: %s\n", strerror(errno));
		return 1;
	}
	if (syscallfilter_export(fd, err, sizeof err) == -1) {
		fprintf(stderr, "syscallfilter-gen: %s\n", err);
		return 1;
	}
	if ((n = pread(fd, buf, sizeof buf, 0)) <= 0 || n % 8 != 0 ||
	    (size_t)n == sizeof buf) {
		fprintf(stderr, "syscallfilter-gen: exported program of %zd bytes\n", n);
		return 1;
	}
	snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
	if ((f = fopen(tmp, "w")) == NULL) {
		fprintf(stderr, "syscallfilter-gen: %s: %s\n", tmp, strerror(errno));
		return 1;
	}
	fprintf(f, "/* Written by sandbox/gen/syscallfilter-gen.c at build time: do not edit. */\n"
	    "static const struct sock_filter syscallfilter_bpf[] = {\n");
	for (ssize_t i = 0; i < n; i += 8) {
		unsigned short	 code;
		unsigned int	 k;

		memcpy(&code, buf + i, 2);
		memcpy(&k, buf + i + 4, 4);
		fprintf(f, "\t{ 0x%04x, %u, %u, 0x%08x },\n", code, buf[i + 2], buf[i + 3], k);
	}
	fprintf(f, "};\n");
	if (fclose(f) != 0 || rename(tmp, argv[1]) == -1) {
		fprintf(stderr, "syscallfilter-gen: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	return 0;
}

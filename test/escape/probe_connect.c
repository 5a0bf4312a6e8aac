/*
 * probe_connect PATH | @NAME: connect(2) to a named unix socket (PATH) or an abstract
 * one (@NAME) and, if that works, send one line. Landlock's file rules do not cover
 * connect() on a named socket, so the sandbox has to hide it (mount namespace); the
 * abstract namespace is closed by Landlock's abstract-socket scoping (ABI 6).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "probe_common.h"

int
main(int argc, char **argv)
{
	struct sockaddr_un sun;
	socklen_t len;
	size_t n;
	int fd, rc;

	if (argc != 2 || (n = strlen(argv[1])) < 2 || n >= sizeof(sun.sun_path)) {
		fprintf(stderr, "usage: probe_connect PATH|@NAME\n");
		return 2;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, argv[1], n);
	if (argv[1][0] == '@') {
		sun.sun_path[0] = '\0';		/* abstract: no trailing NUL */
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	} else
		len = (socklen_t)sizeof(sun);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		probe_result("socket", -1, errno);
		return 0;
	}
	rc = connect(fd, (struct sockaddr *)&sun, len);
	probe_result(argv[1][0] == '@' ? "connect_abstract" : "connect_named", rc, errno);
	if (rc == 0 && write(fd, "escaped\n", 8) < 0)
		perror("write");
	close(fd);
	return probe_escaped;
}

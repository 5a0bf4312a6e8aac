/*
 * The API bearer token. It is made once, at the first start, from getrandom(2) and
 * kept in $CLOCKWORK_HOME/api.token with mode 0600: anyone who can read it can drive
 * the daemon, so a token file that group or others can read is refused, not fixed
 * silently (the user should learn that it leaked).
 */
#define _GNU_SOURCE
#include <sys/random.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "token.h"

int
token_random_hex(char *out, size_t outlen)
{
	unsigned char	 raw[DAEMON_TOKEN_BYTES];
	size_t		 got = 0;
	ssize_t		 n;

	if (outlen < sizeof raw * 2 + 1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	while (got < sizeof raw) {
		n = getrandom(raw + got, sizeof raw - got, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(out + i * 2, 3, "%02x", raw[i]);
	return 0;
}

/*
 * Read the token, creating it when missing. Refused: a token file that is not a
 * regular file we own, one readable or writable by group or others, and one whose
 * content is not a hex token of the expected length.
 */
int
token_load_or_create(const char *home, char *out, size_t outlen, char *err,
    size_t errlen)
{
	char		 path[PATH_MAX], buf[DAEMON_TOKEN_BYTES * 2 + 2];
	struct stat	 st;
	ssize_t		 n;
	int		 fd;

	if ((size_t)snprintf(path, sizeof path, "%s/api.token", home) >= sizeof path) {
		snprintf(err, errlen, "%s/api.token: path too long", home);
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd == -1 && errno == ENOENT) {
		if (token_random_hex(out, outlen) == -1) {
			snprintf(err, errlen, "cannot generate a token: %s", strerror(errno));
			return -1;
		}
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd == -1) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
		/* The umask cannot widen 0600, but a fchmod makes the intent explicit. */
		if (fchmod(fd, 0600) == -1 || write(fd, out, strlen(out)) != (ssize_t)strlen(out) ||
		    write(fd, "\n", 1) != 1 || fsync(fd) == -1) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			close(fd);
			unlink(path);
			return -1;
		}
		close(fd);
		return 0;
	}
	if (fd == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s is not a regular file owned by this user", path);
		close(fd);
		return -1;
	}
	if ((st.st_mode & 077) != 0) {
		snprintf(err, errlen, "%s is accessible by group or others (mode %04o); "
		    "refusing to start: run 'chmod 600 %s' if it has not leaked, or remove it "
		    "to make a new one", path, (unsigned)(st.st_mode & 07777), path);
		close(fd);
		return -1;
	}
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (strlen(buf) != DAEMON_TOKEN_BYTES * 2 ||
	    strspn(buf, "0123456789abcdef") != DAEMON_TOKEN_BYTES * 2) {
		snprintf(err, errlen, "%s does not hold a token; remove it to make a new one",
		    path);
		return -1;
	}
	if (strlen(buf) >= outlen) {
		snprintf(err, errlen, "%s: token too long", path);
		return -1;
	}
	strcpy(out, buf);
	return 0;
}

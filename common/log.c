#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "mask.h"

static const char	*log_prog = "clockwork";
static enum log_level	 log_threshold = LOG_INFO;
static int		 log_stderr = 1;
static FILE		*log_file;

static const char *const log_names[] = { "error", "warn", "info", "debug" };

void
log_init(const char *progname, enum log_level level, int to_stderr)
{
	log_prog = progname;
	log_threshold = level;
	log_stderr = to_stderr;
}

int
log_open_file(const char *path)
{
	int	 fd;
	FILE	*f;

	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd == -1)
		return -1;
	if ((f = fdopen(fd, "a")) == NULL) {
		close(fd);
		return -1;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	if (log_file != NULL)
		fclose(log_file);
	log_file = f;
	return 0;
}

int
log_attach_fd(int fd)
{
	struct stat	 st;
	FILE		*f;

	/* Only a regular file: a child handed /dev/null there keeps logging to stderr. */
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || (f = fdopen(fd, "a")) == NULL)
		return -1;
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	setvbuf(f, NULL, _IOLBF, 0);
	if (log_file != NULL)
		fclose(log_file);
	log_file = f;
	log_stderr = 0;
	return 0;
}

int
log_file_fd(void)
{
	return log_file != NULL ? fileno(log_file) : -1;
}

enum log_level
log_get_level(void)
{
	return log_threshold;
}

void
log_close(void)
{
	if (log_file != NULL)
		fclose(log_file);
	log_file = NULL;
}

void
log_set_level(enum log_level level)
{
	log_threshold = level;
}

int
log_level_parse(const char *s)
{
	for (size_t i = 0; i < sizeof log_names / sizeof log_names[0]; i++)
		if (strcmp(s, log_names[i]) == 0)
			return (int)i;
	return -1;
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
	char		 msg[2048], stamp[32];
	struct timeval	 tv;
	struct tm	 tm;
	va_list		 ap;

	if (level > log_threshold)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* A secret this process holds never reaches a log, whatever printed it. */
	mask_literals_inplace(msg);

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
	if (log_stderr)
		fprintf(stderr, "%s: %s: %s\n", log_prog, log_names[level], msg);
	if (log_file != NULL)
		fprintf(log_file, "%s.%03ldZ %s[%ld] %s: %s\n", stamp,
		    (long)(tv.tv_usec / 1000), log_prog, (long)getpid(),
		    log_names[level], msg);
}

/*
 * Named secrets outside the store (common/secret.h).
 *
 * The file backend writes <cwhome>/secrets/<name>.tmp with O_EXCL|O_NOFOLLOW, mode
 * 0600, then renames it over the old one, so a reader sees the old value or the new
 * one, never half of either. Reading refuses a file that is a link, is not a regular
 * file, is not ours or can be read by anyone else: a secret someone could have swapped
 * or read is reported, not used.
 *
 * The Secret Service backend (libsecret, when built with it) is used only when a
 * session bus is named in the environment and the service answers; CW_SECRET_BACKEND=file
 * forces the file. Values stored there carry the attributes application=clockwork and
 * name=<name>.
 */
#define _GNU_SOURCE
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef CW_HAVE_LIBSECRET
#include <libsecret/secret.h>
#include "dynlib.h"
#include "log.h"
#endif

#include "secret.h"

int
secret_name_valid(const char *name)
{
	size_t	 n;

	if (name == NULL || name[0] == '\0' || name[0] == '.')
		return 0;
	for (n = 0; name[n] != '\0'; n++) {
		if (n >= SECRET_NAME_MAX)
			return 0;
		if (!((name[n] >= 'a' && name[n] <= 'z') || (name[n] >= '0' &&
		    name[n] <= '9') || name[n] == '.' || name[n] == '_' || name[n] == '-'))
			return 0;
	}
	return 1;
}

const char *
secret_backend_name(enum secret_backend b)
{
	return b == SECRET_BACKEND_SERVICE ? "secret-service" : "file";
}

#ifdef CW_HAVE_LIBSECRET
static const SecretSchema secret_schema = {
	"org.clockwork.Secret", SECRET_SCHEMA_NONE,
	{
		{ "application", SECRET_SCHEMA_ATTRIBUTE_STRING },
		{ "name", SECRET_SCHEMA_ATTRIBUTE_STRING },
		{ NULL, 0 },
	},
	0, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
};

/*
 * libsecret (and GLib under it) is loaded the first time a session bus is there to
 * ask, not linked (dynlib.h: about 2.4 MiB of a daemon's resident memory otherwise).
 * Its functions, typed as its header declares them.
 */
static struct {
	__typeof__(secret_service_get_sync)	*service_get_sync;
	__typeof__(secret_password_store_sync)	*password_store_sync;
	__typeof__(secret_password_lookup_sync)	*password_lookup_sync;
	__typeof__(secret_password_clear_sync)	*password_clear_sync;
	__typeof__(secret_password_free)	*password_free;
	__typeof__(g_error_free)		*error_free;
	__typeof__(g_object_unref)		*object_unref;
} secret_lib;

static int
secret_lib_open(void)
{
	const struct dynlib_sym	 syms[] = {
		{ "secret_service_get_sync", &secret_lib.service_get_sync },
		{ "secret_password_store_sync", &secret_lib.password_store_sync },
		{ "secret_password_lookup_sync", &secret_lib.password_lookup_sync },
		{ "secret_password_clear_sync", &secret_lib.password_clear_sync },
		{ "secret_password_free", &secret_lib.password_free },
		{ "g_error_free", &secret_lib.error_free },
		{ "g_object_unref", &secret_lib.object_unref },
	};
	char			 err[256];

	if (dynlib_open("libsecret-1.so.0", syms, sizeof syms / sizeof syms[0], err,
	    sizeof err) == NULL) {
		/* As if the service did not answer: secrets go to the 0600 files. */
		log_warn("secret: the Secret Service cannot be used: %s", err);
		return -1;
	}
	return 0;
}

/* The service is asked once per process; its answer does not change under us. */
static int
secret_service_up(void)
{
	static int	 up = -1;
	SecretService	*svc;
	GError		*gerr = NULL;
	const char	*force = getenv("CW_SECRET_BACKEND");

	if (force != NULL && strcmp(force, "file") == 0)
		return 0;
	if (up != -1)
		return up;
	up = 0;
	if (getenv("DBUS_SESSION_BUS_ADDRESS") == NULL)
		return 0;
	if (secret_lib_open() == -1)
		return 0;
	if ((svc = secret_lib.service_get_sync(SECRET_SERVICE_OPEN_SESSION, NULL,
	    &gerr)) != NULL) {
		up = 1;
		secret_lib.object_unref(svc);
	}
	if (gerr != NULL)
		secret_lib.error_free(gerr);
	return up;
}
#else
static int
secret_service_up(void)
{
	return 0;
}
#endif

enum secret_backend
secret_backend(void)
{
	return secret_service_up() ? SECRET_BACKEND_SERVICE : SECRET_BACKEND_FILE;
}

static int
secret_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
secret_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	errno = saved;
	return -1;
}

static int
secret_path(const char *cwhome, const char *name, const char *suffix, char *out,
    size_t outlen)
{
	int	 n = snprintf(out, outlen, "%s/" SECRET_DIR "/%s%s", cwhome, name, suffix);

	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

/* The directory, 0700, ours, not a link; made when missing. */
static int
secret_dir(const char *cwhome, char *err, size_t errlen)
{
	char		 dir[PATH_MAX];
	struct stat	 sb;
	int		 n;

	n = snprintf(dir, sizeof dir, "%s/" SECRET_DIR, cwhome);
	if (n < 0 || (size_t)n >= sizeof dir)
		return secret_fail(err, errlen, "%s/%s: path too long", cwhome, SECRET_DIR);
	if (mkdir(dir, 0700) == -1 && errno != EEXIST)
		return secret_fail(err, errlen, "%s: %s", dir, strerror(errno));
	if (lstat(dir, &sb) == -1)
		return secret_fail(err, errlen, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(sb.st_mode) || sb.st_uid != geteuid())
		return secret_fail(err, errlen, "%s: not a directory of ours", dir);
	if ((sb.st_mode & 077) != 0 && chmod(dir, 0700) == -1)
		return secret_fail(err, errlen, "%s: %s", dir, strerror(errno));
	return 0;
}

static int
secret_check_args(const char *name, const char *value, char *err, size_t errlen)
{
	if (!secret_name_valid(name))
		return secret_fail(err, errlen, "secret name '%.64s': use 1 to %d of "
		    "a-z, 0-9, '.', '_', '-'", name != NULL ? name : "", SECRET_NAME_MAX);
	if (value != NULL && strlen(value) > SECRET_VALUE_MAX)
		return secret_fail(err, errlen, "secret %s: longer than %d bytes", name,
		    SECRET_VALUE_MAX);
	return 0;
}

static int
secret_file_set(const char *cwhome, const char *name, const char *value, char *err,
    size_t errlen)
{
	char	 path[PATH_MAX], tmp[PATH_MAX];
	size_t	 len = strlen(value), off = 0;
	ssize_t	 w;
	int	 fd;

	if (secret_dir(cwhome, err, errlen) == -1)
		return -1;
	if (secret_path(cwhome, name, "", path, sizeof path) == -1 ||
	    secret_path(cwhome, name, ".tmp", tmp, sizeof tmp) == -1)
		return secret_fail(err, errlen, "secret %s: path too long", name);
	(void)unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600)) == -1)
		return secret_fail(err, errlen, "%s: %s", tmp, strerror(errno));
	while (off < len) {
		if ((w = write(fd, value + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		off += (size_t)w;
	}
	if (off < len || fsync(fd) == -1) {
		secret_fail(err, errlen, "%s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	close(fd);
	if (rename(tmp, path) == -1) {
		secret_fail(err, errlen, "%s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

static int
secret_file_get(const char *cwhome, const char *name, char **value, char *err,
    size_t errlen)
{
	char		 path[PATH_MAX], *buf;
	struct stat	 sb;
	ssize_t		 r;
	size_t		 off = 0;
	int		 fd;

	if (secret_path(cwhome, name, "", path, sizeof path) == -1)
		return secret_fail(err, errlen, "secret %s: path too long", name);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)) == -1) {
		if (errno == ENOENT)
			return 0;
		return secret_fail(err, errlen, "%s: %s", path, strerror(errno));
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() ||
	    (sb.st_mode & 077) != 0 || sb.st_size > SECRET_VALUE_MAX) {
		close(fd);
		return secret_fail(err, errlen, "%s: refused: it must be a regular file of "
		    "ours, mode 0600, at most %d bytes", path, SECRET_VALUE_MAX);
	}
	if ((buf = calloc(1, (size_t)sb.st_size + 1)) == NULL) {
		close(fd);
		return secret_fail(err, errlen, "secret %s: out of memory", name);
	}
	while (off < (size_t)sb.st_size) {
		if ((r = read(fd, buf + off, (size_t)sb.st_size - off)) == -1 &&
		    errno == EINTR)
			continue;
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	close(fd);
	buf[off] = '\0';
	if (memchr(buf, '\0', off) != NULL) {
		secret_free(buf);
		return secret_fail(err, errlen, "%s: holds a NUL byte", path);
	}
	*value = buf;
	return 1;
}

static int
secret_file_remove(const char *cwhome, const char *name, char *err, size_t errlen)
{
	char	 path[PATH_MAX];

	if (secret_path(cwhome, name, "", path, sizeof path) == -1)
		return secret_fail(err, errlen, "secret %s: path too long", name);
	if (unlink(path) == -1) {
		if (errno == ENOENT)
			return 0;
		return secret_fail(err, errlen, "%s: %s", path, strerror(errno));
	}
	return 1;
}

int
secret_set(const char *cwhome, const char *name, const char *value,
    enum secret_backend *where, char *err, size_t errlen)
{
	if (secret_check_args(name, value, err, errlen) == -1)
		return -1;
	if (value == NULL)
		return secret_fail(err, errlen, "secret %s: no value", name);
#ifdef CW_HAVE_LIBSECRET
	if (secret_service_up()) {
		GError	*gerr = NULL;
		char	 label[128];

		snprintf(label, sizeof label, "Clockwork: %s", name);
		if (secret_lib.password_store_sync(&secret_schema,
		    SECRET_COLLECTION_DEFAULT, label, value, NULL, &gerr, "application",
		    "clockwork", "name", name, NULL)) {
			/* A stale file copy must not outlive the new value. */
			(void)secret_file_remove(cwhome, name, err, errlen);
			if (where != NULL)
				*where = SECRET_BACKEND_SERVICE;
			return 0;
		}
		secret_fail(err, errlen, "secret %s: the Secret Service refused it: %s",
		    name, gerr != NULL ? gerr->message : "?");
		if (gerr != NULL)
			secret_lib.error_free(gerr);
		return -1;
	}
#endif
	if (where != NULL)
		*where = SECRET_BACKEND_FILE;
	return secret_file_set(cwhome, name, value, err, errlen);
}

int
secret_get(const char *cwhome, const char *name, char **value, char *err,
    size_t errlen)
{
	*value = NULL;
	if (secret_check_args(name, NULL, err, errlen) == -1)
		return -1;
#ifdef CW_HAVE_LIBSECRET
	if (secret_service_up()) {
		GError	*gerr = NULL;
		gchar	*pw;

		pw = secret_lib.password_lookup_sync(&secret_schema, NULL, &gerr,
		    "application", "clockwork", "name", name, NULL);
		if (gerr != NULL) {
			secret_fail(err, errlen, "secret %s: the Secret Service: %s", name,
			    gerr->message);
			secret_lib.error_free(gerr);
			return -1;
		}
		if (pw != NULL) {
			*value = strdup(pw);
			secret_lib.password_free(pw);
			if (*value == NULL)
				return secret_fail(err, errlen, "secret %s: out of memory",
				    name);
			return 1;
		}
	}
#endif
	return secret_file_get(cwhome, name, value, err, errlen);
}

int
secret_remove(const char *cwhome, const char *name, char *err, size_t errlen)
{
	int	 rc, any = 0;

	if (secret_check_args(name, NULL, err, errlen) == -1)
		return -1;
#ifdef CW_HAVE_LIBSECRET
	if (secret_service_up()) {
		GError	*gerr = NULL;

		if (secret_lib.password_clear_sync(&secret_schema, NULL, &gerr,
		    "application", "clockwork", "name", name, NULL))
			any = 1;
		if (gerr != NULL) {
			secret_fail(err, errlen, "secret %s: the Secret Service: %s", name,
			    gerr->message);
			secret_lib.error_free(gerr);
			return -1;
		}
	}
#endif
	if ((rc = secret_file_remove(cwhome, name, err, errlen)) == -1)
		return -1;
	return rc || any;
}

void
secret_free(char *value)
{
	if (value == NULL)
		return;
	explicit_bzero(value, strlen(value));
	free(value);
}

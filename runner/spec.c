/*
 * The sandbox spec: from the merged policy and the run context, the exact lists of
 * paths and the environment apply_sandbox() enforces (SPEC S2-S4, K3). Everything here
 * runs before any sandbox exists, in the runner, so it may create directories (the
 * private TMPDIR, the tool caches, the engine's state dirs) and read the filesystem to
 * canonicalise and carve.
 *
 * What each engine keeps in its private home is the engine's business (runner/engine.h,
 * home()); spec_engine_state() makes the directory and applies what home() sets.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "credpaths.h"
#include "engine.h"
#include "json.h"
#include "paths.h"
#include "rmtree.h"
#include "policy.h"
#include "spec.h"
#include "unreadable.h"

/* How deep carving follows a directory tree around credential locations. */
#define SPEC_CARVE_DEPTH	8

struct spec_build {
	const struct spec_context	*ctx;
	struct sandbox_spec		*s;
	const char			*home, *cwhome;
	struct credpaths_set		 cred;	/* the credential table for home, cwhome */
	char				*err;
	size_t				 errlen;
	struct strlist			 unreadable;	/* set only inside spec_system */
};

/* What spec_carve_finish() needs of the build, kept past spec_build(). */
struct spec_carve {
	char			*home, *cwhome;
	struct credpaths_set	 cred;
};

/* Device files a shell and the common tools need. */
static const char *const spec_dev_write[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx",
};
static const char *const spec_dev_read[] = { "/dev/random", "/dev/urandom" };

/*
 * Git's global configuration, read-only: git refuses to run at all when it exists but
 * cannot be read ("unknown error occurred while reading the configuration files"), and
 * commits need the user's identity. ~/.config/git is not granted whole: its
 * credentials file is a credential location.
 */
static const char *const spec_home_read_files[] = {
	".gitconfig", ".config/git/config", ".config/git/ignore", ".config/git/attributes",
};

/* Environment variables passed through from the runner when set. */
static const char *const spec_env_pass[] = {
	"PATH", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "TZ", "USER",
	"LOGNAME", "SHELL", "COLORTERM", "NO_COLOR",
};

/*
 * Tool caches, and the variables that send each tool there (SPEC U2). Several of these
 * homes hold configuration that runs code (CARGO_HOME/config.toml's rustc-wrapper and
 * target runners, GRADLE_USER_HOME/init.d, BUNDLE_USER_HOME, COMPOSER_HOME, GEM_HOME
 * plugins, GOPATH/GOMODCACHE sources, XDG data and state), so the root they live in
 * belongs to one task: <cwhome>/caches/tasks/<task id>, or a private one-off root in
 * the run's TMPDIR. docs/SECURITY.md lists them with the reasons.
 */
static const struct spec_cache {
	const char	*var;
	const char	*dir;		/* relative to the cache root */
} spec_caches[] = {
	{ "npm_config_cache", "npm" },
	{ "PNPM_HOME", "pnpm" },
	{ "npm_config_store_dir", "pnpm/store" },
	{ "YARN_CACHE_FOLDER", "yarn" },
	{ "PIP_CACHE_DIR", "pip" },
	{ "XDG_CACHE_HOME", "xdg/cache" },
	{ "XDG_DATA_HOME", "xdg/data" },
	{ "XDG_STATE_HOME", "xdg/state" },
	/*
	 * XDG_CONFIG_HOME is left alone on purpose: a writable config home would let one
	 * run plant configuration (git aliases, hooks paths) that later runs load.
	 */
	{ "CARGO_HOME", "cargo" },
	{ "GOPATH", "go" },
	{ "GOMODCACHE", "go/pkg/mod" },
	{ "GOCACHE", "go-build" },
	{ "GEM_HOME", "gem" },
	{ "BUNDLE_PATH", "bundle" },
	{ "BUNDLE_USER_HOME", "bundle/home" },
	{ "UV_CACHE_DIR", "uv" },
	{ "POETRY_CACHE_DIR", "poetry" },
	{ "GRADLE_USER_HOME", "gradle" },
	{ "COMPOSER_HOME", "composer" },
	{ "NUGET_PACKAGES", "nuget" },
};

/* Version managers whose whole root a PATH entry beneath it needs (shims exec into it). */
static const char *const spec_toolchain_roots[] = {
	".pyenv", ".rbenv", ".nodenv", ".nvm", ".volta", ".fnm", ".bun", ".deno", ".asdf",
	".cargo", ".rustup", ".sdkman", ".local/share/mise", ".local/share/pnpm", "go",
};

static int
spec_fail(struct spec_build *b, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
spec_fail(struct spec_build *b, int e, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(b->err, b->errlen, fmt, ap);
	va_end(ap);
	errno = e;
	return -1;
}

static int
spec_nomem(struct spec_build *b)
{
	return spec_fail(b, ENOMEM, "spec: out of memory");
}

static int
spec_note(struct spec_build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
spec_note(struct spec_build *b, const char *fmt, ...)
{
	char	 buf[PATH_MAX + 256];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return strlist_add_unique(&b->s->notes, buf) == -1 ? spec_nomem(b) : 0;
}

static int
spec_is_dir(const char *path)
{
	struct stat	 st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Is path already readable through one of the read or write dirs? */
static int
spec_covered(const struct sandbox_spec *s, const char *path)
{
	for (size_t i = 0; i < s->read_dirs.n; i++)
		if (paths_within(path, s->read_dirs.v[i]))
			return 1;
	for (size_t i = 0; i < s->write_dirs.n; i++)
		if (paths_within(path, s->write_dirs.v[i]))
			return 1;
	return 0;
}

/* Does path lie inside one of the write grants (where Landlock lets a run change it)? */
static int
spec_covered_writable(const struct sandbox_spec *s, const char *path)
{
	for (size_t i = 0; i < s->write_dirs.n; i++)
		if (paths_within(path, s->write_dirs.v[i]))
			return 1;
	return strlist_contains(&s->write_files, path);
}

/*
 * policy_under_writable_prefix() for a canonical path, with the run's TMPDIR: the
 * spec's tmpdir is canonical already, so this skips the realpath that function makes
 * of it on every call (one per carved child).
 */
static int
spec_under_writable(const struct spec_build *b, const char *canon)
{
	return policy_under_writable_prefix(canon, NULL) ||
	    (b->s->tmpdir != NULL && paths_within(canon, b->s->tmpdir));
}

/*
 * Is canon (inside: something beneath canon) one of the system entries that are not
 * world-readable (spec_system_unreadable)? Always no outside spec_system.
 */
static int
spec_unreadable(const struct spec_build *b, const char *canon, int inside)
{
	for (size_t i = 0; i < b->unreadable.n; i++) {
		const char	*u = b->unreadable.v[i];

		if (inside ? (strcmp(u, canon) != 0 && paths_within(u, canon)) :
		    paths_within(canon, u))
			return 1;
	}
	return 0;
}

/*
 * Grant canon for reading. Landlock cannot deny beneath an allowed directory, so a
 * directory with a credential location somewhere inside is carved: each child is
 * granted on its own, credential entries are skipped, and the walk goes deeper where
 * the credential lies deeper. A credential location itself is never added here.
 */
static int
spec_read_carved_type(struct spec_build *b, const char *canon, int depth,
    unsigned char dtype)
{
	char		 child[PATH_MAX], target[PATH_MAX];
	DIR		*d;
	struct dirent	*de;
	struct stat	 st;
	int		 rc = 0;

	if (credpaths_set_classify(&b->cred, canon) != NULL || spec_unreadable(b, canon, 0))
		return 0;
	/*
	 * A carved child that is not a symlink comes with its type from readdir, which
	 * is what stat would say of it; anything else is asked.
	 */
	if (dtype == DT_UNKNOWN) {
		if (stat(canon, &st) == -1)
			return 0;
		dtype = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
	}
	if (dtype != DT_DIR)
		return strlist_add_unique(&b->s->read_files, canon) == -1 ? spec_nomem(b) : 0;
	if (!credpaths_set_inside(&b->cred, canon) && !spec_unreadable(b, canon, 1))
		return strlist_add_unique(&b->s->read_dirs, canon) == -1 ? spec_nomem(b) : 0;
	if (depth >= SPEC_CARVE_DEPTH)
		return spec_note(b, "read grant %s not carved below depth %d: skipped", canon,
		    SPEC_CARVE_DEPTH);
	if ((d = opendir(canon)) == NULL)
		return spec_note(b, "read grant %s could not be listed for carving (%s): "
		    "skipped", canon, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(child, sizeof child, "%s%s%s", canon,
		    strcmp(canon, "/") == 0 ? "" : "/", de->d_name) >= sizeof child)
			continue;
		/*
		 * A symlink child is granted only when it points back inside the directory
		 * being carved; one that leads elsewhere grants nothing (its target is
		 * readable only if the allowlist grants it on its own). Any other child of
		 * a canonical directory is canonical as it stands (readdir's names hold no
		 * slash, and "." and ".." are skipped above), so only symlinks, and entries
		 * whose type the filesystem does not report, are resolved: realpath's
		 * readlink on every component was most of the syscalls of a start.
		 */
		if (de->d_type != DT_LNK && de->d_type != DT_UNKNOWN) {
			memcpy(target, child, strlen(child) + 1);
			dtype = de->d_type;
		} else {
			if (paths_canonical(child, target, sizeof target) == -1 ||
			    !paths_within(target, canon))
				continue;
			dtype = DT_UNKNOWN;	/* the target's type: stat will say */
		}
		if (credpaths_set_classify(&b->cred, target) != NULL ||
		    spec_unreadable(b, target, 0) ||
		    (strcmp(target, child) != 0 &&
		    credpaths_set_classify(&b->cred, child) != NULL))
			continue;
		if (spec_under_writable(b, target))
			continue;
		if ((rc = spec_read_carved_type(b, target, depth + 1, dtype)) == -1)
			break;
	}
	closedir(d);
	if (rc == 0)
		rc = spec_note(b, "read grant %s holds credential locations%s: granted child "
		    "by child without them", canon, b->unreadable.n > 0 ?
		    " or entries that are not world-readable" : "");
	return rc;
}

static int
spec_read_carved(struct spec_build *b, const char *canon, int depth)
{
	return spec_read_carved_type(b, canon, depth, DT_UNKNOWN);
}

/* Append "key value" to l. */
static int
spec_kv(struct spec_build *b, struct strlist *l, const char *key, const char *value)
{
	char	*kv;
	int	 rc;

	if (asprintf(&kv, "%s %s", key, value) == -1)
		return spec_nomem(b);
	rc = strlist_add(l, kv);
	free(kv);
	return rc == -1 ? spec_nomem(b) : 0;
}

static int
spec_setenv(struct spec_build *b, const char *name, const char *value)
{
	char	*kv;
	size_t	 len = strlen(name), kvlen;
	int	 rc;

	/* Later values replace earlier ones: one entry per name. */
	for (size_t i = 0; i < b->s->env.n; i++)
		if (strncmp(b->s->env.v[i], name, len) == 0 && b->s->env.v[i][len] == '=') {
			free(b->s->env.v[i]);
			b->s->env.v[i] = b->s->env.v[--b->s->env.n];
			break;
		}
	kvlen = len + strlen(value) + 2;
	if ((kv = malloc(kvlen)) == NULL)
		return spec_nomem(b);
	snprintf(kv, kvlen, "%s=%s", name, value);
	rc = strlist_add(&b->s->env, kv);
	free(kv);
	return rc == -1 ? spec_nomem(b) : 0;
}

/*
 * An exec's TMPDIR in its view (Linux, sandbox on, an engine with no private home to
 * fill, as "command"): the path it would have on the host,
 * <cwhome>/tmp/exec-<random>, named but not made; the mount namespace mounts a tmpfs of
 * the run's own there (mountns.c) and the TMPDIR goes with the namespace. Making and
 * removing a directory on the host's disk was a tenth of an exec's start (and on ext4
 * mounted with discard, the removal waits for the device).
 */
static int
spec_tmpdir_view(struct spec_build *b)
{
	static const char	 digits[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char		 rnd[6];
	char			 cw[PATH_MAX], dir[PATH_MAX], name[sizeof rnd + 1];

	if (getentropy(rnd, sizeof rnd) == -1)
		return spec_fail(b, errno, "spec: getentropy: %s", strerror(errno));
	for (size_t i = 0; i < sizeof rnd; i++)
		name[i] = digits[rnd[i] % (sizeof digits - 1)];
	name[sizeof rnd] = '\0';
	if (paths_canonical(b->cwhome, cw, sizeof cw) == -1)
		return spec_fail(b, errno, "spec: the Clockwork home %s: %s", b->cwhome,
		    strerror(errno));
	if ((size_t)snprintf(dir, sizeof dir, "%s/tmp/exec-%s", cw, name) >= sizeof dir)
		return spec_fail(b, ENAMETOOLONG, "spec: TMPDIR path too long");
	if ((b->s->tmpdir = strdup(dir)) == NULL)
		return spec_nomem(b);
	b->s->tmpdir_view = 1;
	if (strlist_add_unique(&b->s->write_dirs, dir) == -1)
		return spec_nomem(b);
	return spec_setenv(b, "TMPDIR", dir);
}

/*
 * Once every grant is known: a TMPDIR of the view alone cannot lie inside a grant (its
 * mount point would have to be made in the host directory the grant shows), so there
 * it is made on the host after all, at the same path, as it was before the view had
 * its own (a policy granting ~ for writing, a context root enclosing CLOCKWORK_HOME).
 */
static int
spec_tmpdir_settle(struct spec_build *b)
{
	const struct strlist	*lists[] = { &b->s->read_dirs, &b->s->write_dirs,
	    &b->s->read_files, &b->s->write_files };
	char			 root[PATH_MAX], parent[PATH_MAX];
	const char		*by = NULL, *g;

	if (!b->s->tmpdir_view)
		return 0;
	if (b->s->workdir != NULL && paths_within(b->s->tmpdir, b->s->workdir))
		by = b->s->workdir;
	for (size_t i = 0; by == NULL && i < sizeof lists / sizeof lists[0]; i++)
		for (size_t j = 0; by == NULL && j < lists[i]->n; j++) {
			g = lists[i]->v[j];
			if (strcmp(g, b->s->tmpdir) == 0)
				continue;
			if (spec_system_root(g, root, sizeof root))
				g = root;
			if (paths_within(b->s->tmpdir, g))
				by = lists[i]->v[j];
		}
	if (by == NULL)
		return 0;
	if ((size_t)snprintf(parent, sizeof parent, "%s/tmp", b->cwhome) >= sizeof parent)
		return spec_fail(b, ENAMETOOLONG, "spec: TMPDIR path too long");
	if (paths_mkdir_p(parent, 0700) == -1)
		return spec_fail(b, errno, "spec: create %s: %s", parent, strerror(errno));
	if (mkdir(b->s->tmpdir, 0700) == -1)
		return spec_fail(b, errno, "spec: create TMPDIR %s: %s", b->s->tmpdir,
		    strerror(errno));
	b->s->tmpdir_view = 0;
	return spec_note(b, "TMPDIR %s made on the host: the grant %s encloses it",
	    b->s->tmpdir, by);
}

/*
 * The private per-run TMPDIR: <cwhome>/tmp/<run-id> (exec: exec-XXXXXX from mkdtemp,
 * or only in its view: spec_tmpdir_view), mode 0700, always new: a directory left by an
 * earlier run is never handed to another one (spec_remove_tmpdir() removes it when its
 * run ends).
 */
static int
spec_tmpdir(struct spec_build *b)
{
	char	 parent[PATH_MAX], dir[PATH_MAX], canon[PATH_MAX];
	int	 n;

	if (b->ctx->run_id != NULL && (strchr(b->ctx->run_id, '/') != NULL ||
	    b->ctx->run_id[0] == '.' || b->ctx->run_id[0] == '\0'))
		return spec_fail(b, EINVAL, "spec: bad run id '%s'", b->ctx->run_id);
#if defined(__linux__)
	/*
	 * Only where nothing must be put in it before the run: an engine's private home
	 * (spec_engine_state) is filled from the host, before the namespace exists.
	 */
	{
		const struct engine_ops	*ops = engine_find(b->ctx->engine != NULL ?
		    b->ctx->engine : "command");

		if (b->ctx->run_id == NULL && b->s->enabled &&
		    (ops == NULL || ops->home == NULL))
			return spec_tmpdir_view(b);
	}
#endif
	n = snprintf(parent, sizeof parent, "%s/tmp", b->cwhome);
	if (n < 0 || (size_t)n >= sizeof parent)
		return spec_fail(b, ENAMETOOLONG, "spec: TMPDIR path too long");
	if (paths_mkdir_p(parent, 0700) == -1)
		return spec_fail(b, errno, "spec: create %s: %s", parent, strerror(errno));
	if (b->ctx->run_id != NULL)
		n = snprintf(dir, sizeof dir, "%s/%s", parent, b->ctx->run_id);
	else
		n = snprintf(dir, sizeof dir, "%s/exec-XXXXXX", parent);
	if (n < 0 || (size_t)n >= sizeof dir)
		return spec_fail(b, ENAMETOOLONG, "spec: TMPDIR path too long");
	if (b->ctx->run_id != NULL) {
		if (mkdir(dir, 0700) == -1)
			return spec_fail(b, errno, "spec: create TMPDIR %s: %s%s", dir,
			    strerror(errno), errno == EEXIST ? " (left by an earlier run "
			    "with this id; a run never inherits one)" : "");
	} else if (mkdtemp(dir) == NULL)
		return spec_fail(b, errno, "spec: create TMPDIR %s: %s", dir, strerror(errno));
	if (paths_canonical(dir, canon, sizeof canon) == -1 ||
	    (b->s->tmpdir = strdup(canon)) == NULL)
		return spec_nomem(b);
	if (strlist_add_unique(&b->s->write_dirs, canon) == -1)
		return spec_nomem(b);
	return spec_setenv(b, "TMPDIR", canon);
}

int
spec_remove_tmpdir(const char *tmpdir, const char *cwhome, size_t survivors, char *err,
    size_t errlen)
{
	char	 parent[PATH_MAX], canon[PATH_MAX], *slash;
	int	 fd, rc, save;

	if (tmpdir == NULL || tmpdir[0] == '\0')
		return 0;
	/* Only a directory directly under <cwhome>/tmp is ever removed. */
	snprintf(parent, sizeof parent, "%s/tmp", cwhome);
	if (paths_canonical(parent, canon, sizeof canon) == -1 ||
	    (slash = strrchr(tmpdir, '/')) == NULL ||
	    (size_t)(slash - tmpdir) != strlen(canon) ||
	    strncmp(tmpdir, canon, strlen(canon)) != 0 || slash[1] == '\0') {
		snprintf(err, errlen, "refusing to remove %s: not a run TMPDIR under %s",
		    tmpdir, canon);
		errno = EINVAL;
		return -1;
	}
	/*
	 * A surviving process of the run could swap a subdirectory for a symlink between
	 * our look and our unlink: while one lives, the directory stays.
	 */
	if (survivors > 0) {
		snprintf(err, errlen, "%s kept: %zu process%s of the run survived the kill",
		    tmpdir, survivors, survivors == 1 ? "" : "es");
		errno = EBUSY;
		return -1;
	}
	/*
	 * From the directory's descriptor down (rmtree.h): openat/unlinkat, O_NOFOLLOW,
	 * a symlink removed as a link, never followed, never leaving the filesystem.
	 */
	if ((fd = open(canon, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "open %s: %s", canon, strerror(errno));
		return -1;
	}
	rc = rmtree_at(fd, slash + 1);
	save = errno;
	close(fd);
	if (rc == -1) {
		snprintf(err, errlen, "remove %s: %s", tmpdir, strerror(save));
		errno = save;
		return -1;
	}
	return 0;
}

/* A cache scope is "tasks/<id>" or "scopes/<name>": two plain names, no dot first. */
static int
spec_cache_scope_ok(const char *scope)
{
	const char	*p = scope;
	size_t		 len;

	if (strncmp(p, "tasks/", 6) == 0)
		p += 6;
	else if (strncmp(p, "scopes/", 7) == 0)
		p += 7;
	else
		return 0;
	if ((len = strlen(p)) == 0 || len > 64 || p[0] == '.')
		return 0;
	return strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") == len;
}

/*
 * The cache root is one read-write grant: <cwhome>/caches/<scope> for a task (or a
 * named exec scope), <TMPDIR>/cache for anything else, so no writable cache is ever
 * shared between tasks (SPEC U2). <cwhome>/caches itself and its tasks/ and scopes/
 * levels are granted to no run; each tool's variable names its own subdirectory.
 */
static int
spec_caches_add(struct spec_build *b)
{
	char		 base[PATH_MAX], dir[PATH_MAX], root[PATH_MAX];
	const char	*scope = b->ctx->cache_scope;

	if (scope == NULL) {
		/*
		 * The TMPDIR is new and already granted: nothing else reaches it. Like
		 * the tools' own directories beneath it, the root is made by whichever
		 * tool writes first.
		 */
		if ((size_t)snprintf(root, sizeof root, "%s/cache", b->s->tmpdir) >=
		    sizeof root)
			return spec_fail(b, ENAMETOOLONG, "spec: cache path too long");
	} else {
		if (!spec_cache_scope_ok(scope))
			return spec_fail(b, EINVAL, "spec: bad cache scope '%s' (tasks/ID or "
			    "scopes/NAME, NAME of [A-Za-z0-9._-], at most 64, no leading dot)",
			    scope);
		if ((size_t)snprintf(base, sizeof base, "%s/caches", b->cwhome) >=
		    sizeof base)
			return spec_fail(b, ENAMETOOLONG, "spec: cache path too long");
		if (paths_mkdir_p(base, 0700) == -1)
			return spec_fail(b, errno, "spec: create %s: %s", base,
			    strerror(errno));
		/* Runs write beneath <scope>, never above it; still, follow no link. */
		if (paths_mkdir_beneath(base, scope, 0700) == -1)
			return spec_fail(b, errno, "spec: create %s/%s: %s", base, scope,
			    strerror(errno));
		if ((size_t)snprintf(dir, sizeof dir, "%s/%s", base, scope) >= sizeof dir)
			return spec_fail(b, ENAMETOOLONG, "spec: cache path too long");
		if (paths_canonical(dir, root, sizeof root) == -1)
			return spec_fail(b, errno, "spec: %s: %s", dir, strerror(errno));
		if (strlist_add_unique(&b->s->write_dirs, root) == -1)
			return spec_nomem(b);
	}
	for (size_t i = 0; i < sizeof spec_caches / sizeof spec_caches[0]; i++) {
		if ((size_t)snprintf(dir, sizeof dir, "%s/%s", root,
		    spec_caches[i].dir) >= sizeof dir)
			return spec_fail(b, ENAMETOOLONG, "spec: cache path too long");
		/*
		 * Named, not made: each tool makes its own directory when it first writes
		 * (the XDG base-directory rule; npm, pip, cargo, go and the rest do), inside
		 * the sandbox, under the root's grant. Making all of them here cost 22
		 * mkdirs and, for an exec's one-off root, 22 removals at every start (an
		 * eighth of it on ext4 with discard), and was an unsandboxed mkdir into
		 * trees that earlier runs wrote.
		 */
		if (spec_setenv(b, spec_caches[i].var, dir) == -1)
			return -1;
	}
	/*
	 * Maven has no variable for its local repository, only a property: MAVEN_OPTS
	 * carries it to mvn's JVM alone. ~/.m2 itself is the user's and out of reach.
	 */
	if ((size_t)snprintf(dir, sizeof dir, "-Dmaven.repo.local=%s/m2/repository", root) >=
	    sizeof dir)
		return spec_fail(b, ENAMETOOLONG, "spec: cache path too long");
	return spec_setenv(b, "MAVEN_OPTS", dir);
}

/* Find name through PATH the way execvp would; the real path of what it finds. */
static int
spec_which(const char *name, const char *path, char out[PATH_MAX])
{
	char		 buf[PATH_MAX];
	const char	*p, *colon;

	if (strchr(name, '/') != NULL)
		return realpath(name, out) != NULL ? 0 : -1;
	for (p = path; p != NULL; p = colon ? colon + 1 : NULL) {
		size_t	 len;

		colon = strchr(p, ':');
		len = colon ? (size_t)(colon - p) : strlen(p);
		if (len == 0 || len + 2 + strlen(name) >= sizeof buf)
			continue;
		memcpy(buf, p, len);
		buf[len] = '/';
		strcpy(buf + len + 1, name);
		if (access(buf, X_OK) == 0 && realpath(buf, out) != NULL)
			return 0;
	}
	return -1;
}

#if defined(__APPLE__)
#define SPEC_NPM_OS	"darwin"
#else
#define SPEC_NPM_OS	"linux"
#endif

/*
 * An npm engine whose launcher runs a native binary from a platform package next to
 * its own (@openai/codex runs @openai/codex-linux-x64/vendor/.../codex): the siblings
 * named <package>-<os>-*, read-only, carved like the package.
 */
static int
spec_engine_platform(struct spec_build *b, const char *pkg)
{
	char		 parent[PATH_MAX], prefix[NAME_MAX + 16], path[PATH_MAX * 2];
	char		 canon[PATH_MAX];
	const char	*base;
	struct dirent	*de;
	DIR		*d;
	int		 rc = 0;

	snprintf(parent, sizeof parent, "%s", pkg);
	if ((base = strrchr(pkg, '/')) == NULL || strrchr(parent, '/') == parent)
		return 0;
	*strrchr(parent, '/') = '\0';
	snprintf(prefix, sizeof prefix, "%s-" SPEC_NPM_OS "-", base + 1);
	if ((d = opendir(parent)) == NULL)
		return 0;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", parent, de->d_name);
		if (paths_canonical(path, canon, sizeof canon) == -1 || !spec_is_dir(canon) ||
		    spec_covered(b->s, canon) || spec_under_writable(b, canon) ||
		    credpaths_set_classify(&b->cred, canon) != NULL)
			continue;
		rc = spec_read_carved(b, canon, 0);
	}
	closedir(d);
	return rc;
}

int
spec_sandbox_enabled(const struct config *cfg, const char *engine, int sandbox_off)
{
	struct policy	merged;
	int		on;

	if (policy_merge(&cfg->sandbox, config_engine_policy(cfg, engine), &merged) == -1)
		return -1;
	on = !sandbox_off && policy_enabled(&merged);
	policy_free(&merged);
	return on;
}

/*
 * The engine's install: its binary's real path, and the package directory around it
 * (the nearest ancestor with a package.json, for npm-installed engines) with its
 * platform packages (spec_engine_platform()), read-only. A Python engine installed in
 * a virtual environment (Hermes: <venv>/bin/hermes, a script whose interpreter is
 * <venv>/bin/python3 and whose code is in <venv>/lib/.../site-packages) gets the whole
 * venv, the directory above its bin/ that holds pyvenv.cfg; the interpreter the venv
 * links to is the system's, under /usr, granted already.
 */
static int
spec_engine_install(struct spec_build *b, const char *engine)
{
	char	 bin[PATH_MAX], dir[PATH_MAX], cur[PATH_MAX], probe[PATH_MAX + 16], *slash;
	int	 venv = 0;

	if (strcmp(engine, "command") == 0)
		return 0;
	if (spec_which(engine, getenv("PATH"), bin) == -1)
		return spec_note(b, "engine '%s' not found in PATH: its install is not "
		    "granted", engine);
	snprintf(dir, sizeof dir, "%s", bin);
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	/* A venv first: the engines' cache above it has a package.json of its own. */
	snprintf(cur, sizeof cur, "%s", dir);
	if ((slash = strrchr(cur, '/')) != NULL && slash != cur &&
	    strcmp(slash, "/bin") == 0) {
		*slash = '\0';
		snprintf(probe, sizeof probe, "%s/pyvenv.cfg", cur);
		if (access(probe, F_OK) == 0)
			venv = 1;
	}
	/* An npm package keeps its binary a level or two below its package.json. */
	if (venv)
		snprintf(dir, sizeof dir, "%s", cur);
	else
		snprintf(cur, sizeof cur, "%s", dir);
	for (int up = 0; !venv && up < 4; up++) {
		snprintf(probe, sizeof probe, "%s/package.json", cur);
		if (access(probe, F_OK) == 0) {
			snprintf(dir, sizeof dir, "%s", cur);
			break;
		}
		if ((slash = strrchr(cur, '/')) == NULL || slash == cur ||
		    strcmp(slash, "/node_modules") == 0)
			break;
		*slash = '\0';
	}
	if (credpaths_set_classify(&b->cred, dir) != NULL)
		return spec_fail(b, EPERM, "spec: engine '%s' is installed in %s, a "
		    "credential location: refused", engine, dir);
	if (spec_covered(b->s, dir) || spec_under_writable(b, dir))
		return spec_engine_platform(b, dir);
	if (spec_read_carved(b, dir, 0) == -1)
		return -1;
	return spec_engine_platform(b, dir);
}

/*
 * The engine's own state: a private home D = <TMPDIR>/engine-home, made new with the
 * run's TMPDIR a moment ago and so removed with it (spec_remove_tmpdir(): depth first,
 * never following a link). The engine's home() (runner/engine.h) fills it and names
 * the variables that point the engine there; nothing of the user's own engine home is
 * granted. Engines without state (and "command") get none.
 */
static int
spec_engine_state(struct spec_build *b, const char *engine)
{
	const struct engine_ops	*ops = engine_find(engine);
	struct engine_home	 h;
	struct strlist		 env = { 0 };
	char			 dir[PATH_MAX], *eq;
	int			 rc = 0;

	if (ops == NULL || ops->home == NULL)
		return 0;
	if (b->s->tmpdir == NULL)
		return spec_fail(b, EINVAL, "spec: no private TMPDIR for the engine's home");
	if ((size_t)snprintf(dir, sizeof dir, "%s/" ENGINE_HOME_NAME, b->s->tmpdir) >=
	    sizeof dir)
		return spec_fail(b, ENAMETOOLONG, "spec: engine home path too long");
	if (mkdir(dir, 0700) == -1)
		return spec_fail(b, errno, "spec: create the engine home %s: %s", dir,
		    strerror(errno));
	h.dir = dir;
	h.user_home = b->home;
	h.env = &env;
	h.notes = &b->s->notes;
	h.resume_id = b->ctx->resume_id;
	h.resume_fd = b->ctx->resume_id != NULL ? b->ctx->resume_fd : -1;
	if (ops->home(&h, b->err, b->errlen) == -1) {
		strlist_free(&env);
		errno = EPERM;
		return -1;
	}
	/* A key among them: wiped from this copy once set. */
	for (size_t i = 0; i < env.n; i++) {
		size_t	 len = strlen(env.v[i]);

		if (rc == 0 && (eq = strchr(env.v[i], '=')) != NULL) {
			*eq = '\0';
			rc = spec_setenv(b, env.v[i], eq + 1);
		}
		explicit_bzero(env.v[i], len);
	}
	strlist_free(&env);
	return rc;
}

/*
 * If dir lies in a version manager's tree (a component named like root, e.g.
 * /home/u/.pyenv/shims), the directory that component names, in out.
 */
static int
spec_toolchain_root(const char *dir, const char *root, char *out, size_t outlen)
{
	char		 pat[64];
	const char	*p;
	size_t		 n;

	snprintf(pat, sizeof pat, "/%s", root);
	n = strlen(pat);
	for (p = strstr(dir, pat); p != NULL; p = strstr(p + 1, pat)) {
		if (p[n] != '/' && p[n] != '\0')
			continue;
		if ((size_t)(p - dir) + n >= outlen)
			return -1;
		memcpy(out, dir, (size_t)(p - dir) + n);
		out[(p - dir) + n] = '\0';
		return spec_is_dir(out) ? 0 : -1;
	}
	return -1;
}

static int
spec_home_files(struct spec_build *b)
{
	char	 path[PATH_MAX], canon[PATH_MAX];

	for (size_t i = 0; i < sizeof spec_home_read_files / sizeof spec_home_read_files[0];
	    i++) {
		snprintf(path, sizeof path, "%s/%s", b->home, spec_home_read_files[i]);
		if (paths_canonical(path, canon, sizeof canon) == -1 ||
		    access(canon, F_OK) == -1 || spec_is_dir(canon) ||
		    credpaths_set_classify(&b->cred, canon) != NULL ||
		    spec_covered(b->s, canon))
			continue;
		if (strlist_add_unique(&b->s->read_files, canon) == -1)
			return spec_nomem(b);
	}
	return 0;
}

/*
 * PATH entries outside the system directories (version managers, ~/.local/bin, the
 * engines' .bin dir) are granted read-only, carved, and so is the root of a known
 * version manager above one, since its shims exec into it.
 */
static int
spec_path_dirs(struct spec_build *b)
{
	const char	*path = getenv("PATH");
	char		*copy, *save = NULL, *e, canon[PATH_MAX], root[PATH_MAX];
	int		 rc = 0;

	if (path == NULL || (copy = strdup(path)) == NULL)
		return path == NULL ? 0 : spec_nomem(b);
	for (e = strtok_r(copy, ":", &save); e != NULL && rc == 0;
	    e = strtok_r(NULL, ":", &save)) {
		if (e[0] != '/' || paths_canonical(e, canon, sizeof canon) == -1 ||
		    !spec_is_dir(canon) || spec_covered(b->s, canon) ||
		    spec_under_writable(b, canon) ||
		    credpaths_set_classify(&b->cred, canon) != NULL)
			continue;
		for (size_t i = 0; i < sizeof spec_toolchain_roots /
		    sizeof spec_toolchain_roots[0] && rc == 0; i++) {
			if (spec_toolchain_root(canon, spec_toolchain_roots[i], root,
			    sizeof root) == -1 || spec_covered(b->s, root))
				continue;
			rc = spec_read_carved(b, root, 0);
			/* rustup's proxies live in ~/.cargo/bin but run ~/.rustup. */
			if (rc == 0 && strcmp(spec_toolchain_roots[i], ".cargo") == 0) {
				char	 rustup[PATH_MAX + 16], rcanon[PATH_MAX];

				snprintf(rustup, sizeof rustup, "%s/../.rustup", root);
				if (paths_canonical(rustup, rcanon, sizeof rcanon) == 0 &&
				    spec_is_dir(rcanon) && !spec_covered(b->s, rcanon))
					rc = spec_read_carved(b, rcanon, 0);
			}
		}
		if (rc == 0 && !spec_covered(b->s, canon))
			rc = spec_read_carved(b, canon, 0);
	}
	free(copy);
	return rc;
}

/*
 * System directories whose read grant gives world-readable entries only (issue 9, item
 * 10). Landlock grants a directory whole, so a root run (the owner of every root-owned
 * 0600 file, capabilities or not) could read /etc/security/opasswd, /etc/shadow-like
 * files, a daemon's 0600 config. These trees are judged at every spawn (unreadable.h:
 * walked, or their kept outline checked entry by entry) and carved around
 * every entry that is not world-readable, as around credential locations: they are
 * small (/etc is about 1,300 entries). The other system directories are left whole:
 * /usr (and /bin, /sbin, /lib*, which lead into it) is about 160,000 entries, too many
 * to walk at every start, and holds no secrets by convention (on the machine this was
 * written on, its only such entry is /usr/share/polkit-1/rules.d, polkit's rules);
 * /opt is third-party software of any size; /proc is the run's own proc instance, and
 * /sys's root-only files are guarded by capabilities, which the run has none of.
 */
static const char *const spec_system_world_only[] = {
	"/etc", "/run/systemd/resolve", "/var/lib/ca-certificates",
};

/*
 * Where the outline of a walked system directory is kept between starts
 * (unreadable.h): <cwhome>/unreadable/<the path, its slashes as underscores>. No run is
 * granted any of it.
 */
static void
spec_outline_path(const struct spec_build *b, const char *root, char *out, size_t outlen)
{
	char	*c;
	int	 n;

	n = snprintf(out, outlen, "%s/unreadable/%s", b->cwhome, root + 1);
	if (n < 0 || (size_t)n >= outlen) {
		out[0] = '\0';
		return;
	}
	for (c = out + strlen(b->cwhome) + strlen("/unreadable/"); *c != '\0'; c++)
		if (*c == '/')
			*c = '_';
}

/*
 * The read grant of the system directory sys, carved around credential locations and,
 * where world_only, around what is not world-readable (found by a walk, or by the
 * outline a walk kept).
 */
static int
spec_system_carve(struct spec_build *b, const char *sys, int world_only)
{
	char			 outline[PATH_MAX];
	enum unreadable_how	 how;
	int			 rc;

	/* With the sandbox off no grant is enforced: skip the walk's cost. */
	if (world_only && b->s->enabled && strlen(sys) < PATH_MAX) {
		spec_outline_path(b, sys, outline, sizeof outline);
		if (unreadable_scan(sys, outline[0] != '\0' ? outline : NULL,
		    &b->unreadable, &how) == -1) {
			strlist_free(&b->unreadable);
			if (errno == ENOMEM)
				return spec_nomem(b);
			/* not listable: granted as before */
		} else if (spec_kv(b, &b->s->system_scan, sys,
		    how == UNREADABLE_KEPT ? "kept" : "walked") == -1)
			return -1;
	}
	rc = spec_read_carved(b, sys, 0);
	strlist_free(&b->unreadable);
	return rc;
}

static int
spec_system(struct spec_build *b)
{
	char			 canon[PATH_MAX];
	const char		*sys;
	int			 world_only;

	for (size_t i = 0; i < spec_system_ndirs(); i++) {
		sys = spec_system_canon(i);
		if (sys[0] == '\0' || !spec_is_dir(sys) || spec_covered(b->s, sys))
			continue;
		world_only = 0;
		for (size_t j = 0; j < sizeof spec_system_world_only /
		    sizeof spec_system_world_only[0]; j++)
			if (strcmp(spec_system_dir(i), spec_system_world_only[j]) == 0)
				world_only = 1;
		/*
		 * Left to spec_carve_finish(): no later step of the spec reads the
		 * grants under a world-only directory (spec_covered() asks about the
		 * engine's, PATH's, HOME's and git's directories, none of them in /etc),
		 * and the view binds the directory whole either way.
		 */
		if (world_only && b->ctx->defer_carve && b->s->enabled) {
			if (strlist_add_unique(&b->s->carve_pending, sys) == -1)
				return spec_nomem(b);
			continue;
		}
		if (spec_system_carve(b, sys, world_only) == -1)
			return -1;
	}
	/* /etc/resolv.conf is often a link into /run; grant where it really is. */
	if (paths_canonical("/etc/resolv.conf", canon, sizeof canon) == 0 &&
	    access(canon, F_OK) == 0 && !spec_covered(b->s, canon) &&
	    !policy_under_writable_prefix(canon, NULL) &&
	    strlist_add_unique(&b->s->read_files, canon) == -1)
		return spec_nomem(b);
	for (size_t i = 0; i < sizeof spec_dev_write / sizeof spec_dev_write[0]; i++)
		if (access(spec_dev_write[i], F_OK) == 0 &&
		    strlist_add_unique(&b->s->write_files, spec_dev_write[i]) == -1)
			return spec_nomem(b);
	for (size_t i = 0; i < sizeof spec_dev_read / sizeof spec_dev_read[0]; i++)
		if (access(spec_dev_read[i], F_OK) == 0 &&
		    strlist_add_unique(&b->s->read_files, spec_dev_read[i]) == -1)
			return spec_nomem(b);
	/* A private devpts is mounted over it by the mount namespace (mountns.c). */
	if (spec_is_dir("/dev/pts") &&
	    strlist_add_unique(&b->s->write_dirs, "/dev/pts") == -1)
		return spec_nomem(b);
	return 0;
}

/*
 * A read-only root must not resolve into a credential location, nor sit under a
 * prefix the sandbox leaves writable, where a read-only grant means nothing (S6).
 */
static int
spec_check_ro(struct spec_build *b, const char *kind, const char *entry, const char *canon)
{
	const char	*what;

	if ((what = credpaths_set_classify(&b->cred, canon)) != NULL)
		return spec_fail(b, EPERM, "%s '%s' resolves to %s, a credential location "
		    "(%s): refused", kind, entry, canon, what);
	if (spec_under_writable(b, canon) ||
	    (b->s->tmpdir != NULL && paths_within(canon, b->s->tmpdir)))
		return spec_fail(b, EINVAL, "%s '%s' resolves to %s, under a prefix the "
		    "sandbox must leave writable (/tmp, /var/tmp, /dev/shm, the run's TMPDIR): "
		    "a read-only grant there cannot be enforced: refused", kind, entry, canon);
	return 0;
}

static int
spec_context_roots(struct spec_build *b)
{
	const struct strlist	*l = &b->ctx->context_ro;
	char			 exp[PATH_MAX], canon[PATH_MAX];

	for (size_t i = 0; i < l->n; i++) {
		if (paths_expand_home(l->v[i], b->home, exp, sizeof exp) == -1 ||
		    exp[0] != '/')
			return spec_fail(b, EINVAL, "context root '%s' is not an absolute or ~ "
			    "path", l->v[i]);
		if (paths_canonical(exp, canon, sizeof canon) == -1)
			return spec_fail(b, errno, "context root '%s': %s", l->v[i],
			    strerror(errno));
		if (spec_check_ro(b, "context root", l->v[i], canon) == -1)
			return -1;
		if (!spec_is_dir(canon))
			return spec_fail(b, ENOENT, "context root '%s' (%s) is not a directory",
			    l->v[i], canon);
		if (spec_read_carved(b, canon, 0) == -1)
			return -1;
	}
	return 0;
}

static int
spec_workdir(struct spec_build *b)
{
	char		 canon[PATH_MAX];
	const char	*what;

	if (b->ctx->workdir == NULL || b->ctx->workdir[0] != '/')
		return spec_fail(b, EINVAL, "workdir must be an absolute path");
	if (paths_canonical(b->ctx->workdir, canon, sizeof canon) == -1 || !spec_is_dir(canon))
		return spec_fail(b, ENOENT, "workdir %s is not a directory", b->ctx->workdir);
	if ((what = credpaths_set_classify(&b->cred, canon)) != NULL)
		return spec_fail(b, EPERM, "workdir %s resolves to %s, a credential location "
		    "(%s): refused", b->ctx->workdir, canon, what);
	/* A writable root that holds credentials (HOME itself, /) would expose them. */
	if (credpaths_set_inside(&b->cred, canon))
		return spec_fail(b, EPERM, "workdir %s (%s) contains credential locations "
		    "(it would make them writable): refused", b->ctx->workdir, canon);
	if (paths_within(b->home, canon) || paths_within(b->cwhome, canon))
		return spec_fail(b, EPERM, "workdir %s (%s) contains the home or Clockwork "
		    "directory: refused", b->ctx->workdir, canon);
	if ((b->s->workdir = strdup(canon)) == NULL)
		return spec_nomem(b);
	return strlist_add_unique(&b->s->write_dirs, canon) == -1 ? spec_nomem(b) : 0;
}

/*
 * Read a small regular file's first line into out (newline stripped). The file may
 * have been shaped by an earlier run: a FIFO or device there is refused, not opened
 * for a blocking read.
 */
static int
spec_read_line(const char *path, char *out, size_t outlen)
{
	FILE		*f;
	char		*nl;
	struct stat	 st;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)) == -1)
		return -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || (f = fdopen(fd, "r")) == NULL) {
		close(fd);
		return -1;
	}
	if (fgets(out, (int)outlen, f) == NULL) {
		fclose(f);
		return -1;
	}
	fclose(f);
	if ((nl = strchr(out, '\n')) != NULL)
		*nl = '\0';
	return 0;
}

/*
 * A run's repository (SPEC G1) is its own: <workdir>/.git, read-write like the rest of
 * the workdir. It borrows the user's object store through alternates; the daemon names
 * that store in the run message (never read from the run-writable alternates file, so a
 * run cannot widen its own grants at a later spawn) and it is granted read-only, and
 * made a read-only mount too, so that neither writes nor what Landlock does not check
 * (chmod, utimes, xattrs) reach the user's objects. Nothing else of the user's
 * repository (config with its credentials, refs, hooks, index) is granted.
 */
static int
spec_git_run(struct spec_build *b)
{
	char	 canon[PATH_MAX];

	if (paths_canonical(b->ctx->git_objects, canon, sizeof canon) == -1 ||
	    !spec_is_dir(canon))
		return spec_fail(b, ENOENT, "spec: the repository's object store %s is "
		    "missing: refused", b->ctx->git_objects);
	if (credpaths_set_classify(&b->cred, canon) != NULL ||
	    credpaths_set_inside(&b->cred, canon))
		return spec_fail(b, EPERM, "spec: the repository's object store %s is or "
		    "holds a credential location: refused", canon);
	/*
	 * No refusal under /tmp-like prefixes here: the store is a read-only mount as
	 * well as a read grant, which holds wherever it lies.
	 */
	for (size_t i = 0; i < b->s->write_dirs.n; i++)
		if (paths_within(canon, b->s->write_dirs.v[i]) ||
		    paths_within(b->s->write_dirs.v[i], canon))
			return spec_fail(b, EPERM, "spec: the repository's object store %s "
			    "overlaps the writable %s: refused", canon, b->s->write_dirs.v[i]);
	if ((!spec_covered(b->s, canon) &&
	    strlist_add_unique(&b->s->read_dirs, canon) == -1) ||
	    strlist_add_unique(&b->s->ro_binds, canon) == -1)
		return spec_nomem(b);
	return 0;
}

/*
 * Outside a run (cw-runner exec, cwctl sandbox exec), the workdir may be inside, or be,
 * a repository of the user's. Its git directory is read later by the user's own git,
 * outside any sandbox: a planted hook, core.fsmonitor or crafted index there would run
 * or write as the user. So the git directory found from the workdir upwards (a .git
 * directory, or the directory a .git file points to, and that one's common dir) is
 * made a read-only mount wherever it lies inside a writable grant, and so is a .git
 * pointer file. They are granted for reading, so git inside can read the repository
 * (status, log, diff), and never change it. Work that should be committed belongs in a
 * daemon run, whose repository is its own.
 */
/*
 * Does the git directory gitdir, named by the pointer file dotgit in dir, point back?
 * A linked worktree's has a "gitdir" file naming dotgit; a submodule's config has a
 * core.worktree naming dir. 1 yes, 0 no. Both files are the user's repository's, which
 * no run can write: only the pointer in the checkout can be planted.
 */
static int
spec_git_points_back(const char *gitdir, const char *dotgit, const char *dir)
{
	char	 p[2 * PATH_MAX + 16], line[PATH_MAX], a[PATH_MAX], c[PATH_MAX];
	char	 buf[4096], *l, *save, *v;
	int	 fd, in_core = 0;
	ssize_t	 n;

	if (paths_canonical(dotgit, c, sizeof c) == -1)
		return 0;
	snprintf(p, sizeof p, "%s/gitdir", gitdir);
	if (spec_read_line(p, line, sizeof line) == 0 &&
	    paths_canonical(line, a, sizeof a) == 0 && strcmp(a, c) == 0)
		return 1;
	snprintf(p, sizeof p, "%s/config", gitdir);
	if ((fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (l = strtok_r(buf, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
		l += strspn(l, " \t");
		if (l[0] == '[') {
			in_core = strncmp(l, "[core]", 6) == 0;
			continue;
		}
		if (!in_core || strncmp(l, "worktree", 8) != 0 ||
		    (v = strchr(l, '=')) == NULL)
			continue;
		v += 1 + strspn(v + 1, " \t");
		v[strcspn(v, " \t\r")] = '\0';
		if (v[0] == '/')
			snprintf(p, sizeof p, "%s", v);
		else
			snprintf(p, sizeof p, "%s/%s", gitdir, v);
		if (paths_canonical(p, a, sizeof a) == 0 && paths_canonical(dir, c,
		    sizeof c) == 0 && strcmp(a, c) == 0)
			return 1;
	}
	return 0;
}

static int
spec_git_exec(struct spec_build *b)
{
	char		 dir[PATH_MAX], dotgit[PATH_MAX + 8], line[PATH_MAX];
	char		 gitdir[PATH_MAX], p[2 * PATH_MAX + 16], common[PATH_MAX];
	char		*slash;
	struct stat	 st;
	const char	*dirs[2];

	snprintf(dir, sizeof dir, "%s", b->s->workdir);
	for (;;) {
		snprintf(dotgit, sizeof dotgit, "%s%s.git", dir, strcmp(dir, "/") == 0 ?
		    "" : "/");
		if (lstat(dotgit, &st) == 0)
			break;
		if (strcmp(dir, "/") == 0)
			return 0;
		if ((slash = strrchr(dir, '/')) == dir)
			dir[1] = '\0';
		else
			*slash = '\0';
	}
	if (S_ISDIR(st.st_mode)) {
		if (paths_canonical(dotgit, gitdir, sizeof gitdir) == -1)
			return spec_fail(b, errno, "spec: %s: %s", dotgit, strerror(errno));
	} else if (S_ISREG(st.st_mode)) {
		if (spec_read_line(dotgit, line, sizeof line) == -1 ||
		    strncmp(line, "gitdir: ", 8) != 0)
			return spec_fail(b, EINVAL, "spec: %s is not a git pointer file: "
			    "refused (git would not know what it guards)", dotgit);
		if (line[8] == '/')
			snprintf(p, sizeof p, "%s", line + 8);
		else
			snprintf(p, sizeof p, "%s/%s", dir, line + 8);
		if (paths_canonical(p, gitdir, sizeof gitdir) == -1)
			return spec_fail(b, errno, "spec: %s: %s", p, strerror(errno));
		/*
		 * A pointer is only text: an earlier run could have planted it to name
		 * any directory, which this spec would then grant for reading. Follow it
		 * only where the directory points back at this checkout, as git's own
		 * linked worktrees and submodules do.
		 */
		if (spec_git_points_back(gitdir, dotgit, dir) != 1)
			return spec_fail(b, EPERM, "spec: %s points at %s, which does not point "
			    "back at %s (neither a linked worktree's gitdir file nor a "
			    "submodule's core.worktree names it): refused, since a run could "
			    "have planted it", dotgit, gitdir, dir);
		if (paths_within(gitdir, b->cwhome))
			return spec_fail(b, EPERM, "spec: %s points into the Clockwork home "
			    "(%s): refused", dotgit, gitdir);
		/* The pointer itself: repointed, it would send git elsewhere later. */
		if (spec_covered_writable(b->s, dotgit) &&
		    strlist_add_unique(&b->s->ro_binds, dotgit) == -1)
			return spec_nomem(b);
	} else
		return spec_fail(b, EINVAL, "spec: %s is neither a directory nor a file: "
		    "refused", dotgit);
	common[0] = '\0';
	snprintf(p, sizeof p, "%s/commondir", gitdir);
	/*
	 * A git directory inside the workdir (or any writable grant) is the run's to
	 * write: its commondir could name any directory, so it is not followed.
	 */
	if (!spec_covered_writable(b->s, gitdir) &&
	    spec_read_line(p, line, sizeof line) == 0) {
		if (line[0] == '/')
			snprintf(p, sizeof p, "%s", line);
		else
			snprintf(p, sizeof p, "%s/%s", gitdir, line);
		if (paths_canonical(p, common, sizeof common) == -1)
			common[0] = '\0';
	}
	dirs[0] = gitdir;
	dirs[1] = common[0] != '\0' ? common : NULL;
	for (size_t i = 0; i < 2; i++) {
		if (dirs[i] == NULL || !spec_is_dir(dirs[i]))
			continue;
		if (credpaths_set_classify(&b->cred, dirs[i]) != NULL ||
		    credpaths_set_inside(&b->cred, dirs[i]))
			return spec_fail(b, EPERM, "spec: git directory %s is or holds a "
			    "credential location: refused", dirs[i]);
		/* Readable, so git log/status/diff work; never writable. */
		if ((!spec_covered(b->s, dirs[i]) &&
		    strlist_add_unique(&b->s->read_dirs, dirs[i]) == -1) ||
		    strlist_add_unique(&b->s->ro_binds, dirs[i]) == -1)
			return spec_nomem(b);
	}
	return spec_note(b, "git directory %s is read-only inside the sandbox", gitdir);
}

static int
spec_git(struct spec_build *b)
{
	return b->ctx->git_objects != NULL ? spec_git_run(b) : spec_git_exec(b);
}

/* Resolved policy grants: writes as given; reads through the carving walk. */
static int
spec_policy_grants(struct spec_build *b, const struct policy_resolved *r)
{
	for (size_t i = 0; i < r->write_dirs.n; i++)
		if (strlist_add_unique(&b->s->write_dirs, r->write_dirs.v[i]) == -1)
			return spec_nomem(b);
	for (size_t i = 0; i < r->write_files.n; i++) {
		if (strlist_add_unique(&b->s->write_files, r->write_files.v[i]) == -1)
			return spec_nomem(b);
		if (access(r->write_files.v[i], F_OK) == -1 && spec_note(b, "write_files "
		    "grant %s does not exist: Landlock cannot grant a file that is not there, "
		    "so it stays unwritable until it exists at the start of a run",
		    r->write_files.v[i]) == -1)
			return -1;
	}
	for (size_t i = 0; i < r->read_files.n; i++) {
		if (spec_check_ro(b, "read_files entry", r->read_files.v[i],
		    r->read_files.v[i]) == -1)
			return -1;
		if (strlist_add_unique(&b->s->read_files, r->read_files.v[i]) == -1)
			return spec_nomem(b);
		if (access(r->read_files.v[i], F_OK) == -1 && spec_note(b, "read_files grant "
		    "%s does not exist yet: skipped at apply time until it does",
		    r->read_files.v[i]) == -1)
			return -1;
	}
	for (size_t i = 0; i < r->read_dirs.n; i++) {
		/* ssh-keys: policy_resolve added ~/.ssh on purpose; grant it as is. */
		if (r->ssh_keys && credpaths_set_classify(&b->cred, r->read_dirs.v[i]) != NULL) {
			if (strlist_add_unique(&b->s->read_dirs, r->read_dirs.v[i]) == -1)
				return spec_nomem(b);
			continue;
		}
		if (spec_check_ro(b, "read_dirs entry", r->read_dirs.v[i],
		    r->read_dirs.v[i]) == -1 ||
		    spec_read_carved(b, r->read_dirs.v[i], 0) == -1)
			return -1;
	}
	return 0;
}

/*
 * A run's shell starts in a HOME of its own (issue 27): <TMPDIR>/home, discarded with
 * the TMPDIR. Its shells' startup files are empty files, so that no shell a tool or an
 * engine starts (bash -l, bash -i, Claude Code's snapshot of the user's shell) sources
 * the user's, which the view does not show or shows unreadable: the agent saw
 * "bash: ~/.bashrc: Permission denied" on every command, and a user's rc is not a
 * run's to execute anyway. An entry of the user's home that a grant shows (or holds a
 * grant beneath it) is a symlink to it, so that what a tool finds through $HOME
 * (~/.gitconfig, ~/.rustup, ~/.cargo/bin, ...) is what it found before: a link grants
 * nothing, the view and Landlock decide. Entries no grant shows get no link, so that
 * their names stay as hidden as before (a link to them would resolve to nothing in
 * the view anyway). An exec (no run id) keeps the user's HOME: a person's command.
 */
static const char *const spec_home_empty[] = {
	".bashrc", ".bash_profile", ".bash_login", ".profile", ".bash_logout",
	".zshenv", ".zprofile", ".zshrc", ".zlogin", ".zlogout", ".kshrc", ".mkshrc",
};

#define SPEC_HOME_LINKS_MAX	4096

static int
spec_home_is_empty(const char *name)
{
	for (size_t i = 0; i < sizeof spec_home_empty / sizeof spec_home_empty[0]; i++)
		if (strcmp(name, spec_home_empty[i]) == 0)
			return 1;
	return 0;
}

/* 1 when some grant is path or lies beneath it. */
static int
spec_granted_within(const struct spec_build *b, const char *path)
{
	const struct strlist	*lists[] = { &b->s->read_dirs, &b->s->write_dirs,
	    &b->s->read_files, &b->s->write_files };

	for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
		for (size_t j = 0; j < lists[i]->n; j++)
			if (paths_within(lists[i]->v[j], path))
				return 1;
	return 0;
}

static int
spec_private_home(struct spec_build *b, char *out, size_t outlen)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[PATH_MAX], target[PATH_MAX], canon[PATH_MAX];
	char		 chome[PATH_MAX];
	size_t		 links = 0;
	int		 fd;

	if ((size_t)snprintf(out, outlen, "%s/home", b->s->tmpdir) >= outlen)
		return spec_fail(b, ENAMETOOLONG, "spec: private HOME path too long");
	if (mkdir(out, 0700) == -1)
		return spec_fail(b, errno, "spec: create the private HOME %s: %s", out,
		    strerror(errno));
	for (size_t i = 0; i < sizeof spec_home_empty / sizeof spec_home_empty[0]; i++) {
		if ((size_t)snprintf(path, sizeof path, "%s/%s", out, spec_home_empty[i]) >=
		    sizeof path)
			return spec_fail(b, ENAMETOOLONG, "spec: private HOME path too long");
		if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600)) == -1)
			return spec_fail(b, errno, "spec: create %s: %s", path,
			    strerror(errno));
		close(fd);
	}
	/* The user's home unreadable or gone: a home of empty startup files only. */
	if (paths_canonical(b->home, chome, sizeof chome) == -1 ||
	    (d = opendir(chome)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    spec_home_is_empty(de->d_name))
			continue;
		if (links >= SPEC_HOME_LINKS_MAX) {
			closedir(d);
			return spec_note(b, "private HOME: links to the first %d entries of "
			    "%s only", SPEC_HOME_LINKS_MAX, b->home);
		}
		if ((size_t)snprintf(canon, sizeof canon, "%s/%s", chome, de->d_name) >=
		    sizeof canon || !spec_granted_within(b, canon))
			continue;
		if ((size_t)snprintf(path, sizeof path, "%s/%s", out, de->d_name) >=
		    sizeof path || (size_t)snprintf(target, sizeof target, "%s/%s",
		    b->home, de->d_name) >= sizeof target)
			continue;
		if (symlink(target, path) == -1) {
			int	 save = errno;

			closedir(d);
			return spec_fail(b, save, "spec: link %s in the private HOME: %s",
			    de->d_name, strerror(save));
		}
		links++;
	}
	closedir(d);
	return 0;
}

static int
spec_environment(struct spec_build *b, const struct policy_resolved *r)
{
	char		 home[PATH_MAX];

	extern char	**environ;
	const char	 *v;

	if (b->ctx->run_id != NULL && b->s->tmpdir != NULL && !b->s->tmpdir_view) {
		if (spec_private_home(b, home, sizeof home) == -1 ||
		    spec_setenv(b, "HOME", home) == -1)
			return -1;
	} else if (spec_setenv(b, "HOME", b->home) == -1)
		return -1;
	for (size_t i = 0; i < sizeof spec_env_pass / sizeof spec_env_pass[0]; i++)
		if ((v = getenv(spec_env_pass[i])) != NULL &&
		    spec_setenv(b, spec_env_pass[i], v) == -1)
			return -1;
	if (getenv("PATH") == NULL && spec_setenv(b, "PATH",
	    "/usr/local/bin:/usr/bin:/bin") == -1)
		return -1;
	/* The configured keys: passed through, and masked whenever the spec is shown. */
	for (size_t i = 0; i < r->env.n; i++) {
		if (strchr(r->env.v[i], '=') != NULL)
			continue;
		if ((v = getenv(r->env.v[i])) != NULL &&
		    spec_setenv(b, r->env.v[i], v) == -1)
			return -1;
		if (strlist_add_unique(&b->s->env_secret, r->env.v[i]) == -1)
			return spec_nomem(b);
	}
	/* Clockwork's own CW_* (CW_SANDBOX included, so a child knows what it runs under). */
	for (char **e = environ; *e != NULL; e++) {
		char	 name[128];
		char	*eq = strchr(*e, '=');

		if (strncmp(*e, "CW_", 3) != 0 || eq == NULL ||
		    (size_t)(eq - *e) >= sizeof name)
			continue;
		memcpy(name, *e, (size_t)(eq - *e));
		name[eq - *e] = '\0';
		if (spec_setenv(b, name, eq + 1) == -1)
			return -1;
	}
	if (r->ssh && b->s->ssh_auth_sock != NULL &&
	    spec_setenv(b, "SSH_AUTH_SOCK", b->s->ssh_auth_sock) == -1)
		return -1;
	return 0;
}

/*
 * Named unix sockets reachable by connect() whatever Landlock says, outside the
 * directories mountns.c always covers: ssh-agent, gpg-agent, the runtime dir, docker.
 */
static int
spec_hide(struct spec_build *b, const struct policy_resolved *r)
{
	static const char *const home_hide[] = {
		".gnupg", ".ssh", ".1password", ".docker/run", ".docker",
	};
	const char	*sock = getenv("SSH_AUTH_SOCK"), *xdg = getenv("XDG_RUNTIME_DIR");
	char		 path[PATH_MAX], canon[PATH_MAX];

	/* Only the sockets: covering the directories would turn EACCES into ENOENT. */
	for (size_t i = 0; i < sizeof home_hide / sizeof home_hide[0]; i++) {
		DIR		*d;
		struct dirent	*de;
		struct stat	 st;

		snprintf(path, sizeof path, "%s/%s", b->home, home_hide[i]);
		if ((d = opendir(path)) == NULL)
			continue;
		while ((de = readdir(d)) != NULL) {
			if ((size_t)snprintf(canon, sizeof canon, "%s/%s", path,
			    de->d_name) >= sizeof canon)
				continue;
			if (lstat(canon, &st) == 0 && S_ISSOCK(st.st_mode) &&
			    strlist_add_unique(&b->s->hide, canon) == -1) {
				closedir(d);
				return spec_nomem(b);
			}
		}
		closedir(d);
	}
	/*
	 * clockworkd's own socket (SPEC D2): never in the view, since the Clockwork home
	 * is not granted; named here too, so that a policy granting the home (or HOME
	 * whole) still does not show it: the daemon would take the run for its user.
	 */
	if ((size_t)snprintf(path, sizeof path, "%s/clockworkd.sock", b->cwhome) <
	    sizeof path && paths_canonical(path, canon, sizeof canon) == 0) {
		struct stat	st;

		if (lstat(canon, &st) == 0 && S_ISSOCK(st.st_mode) &&
		    strlist_add_unique(&b->s->hide, canon) == -1)
			return spec_nomem(b);
	}
	/*
	 * Every runner's control socket lives in <cwhome>/runs (runner/uplink.c): a run
	 * that reached another's while no daemon is attached could attach as its daemon
	 * and answer its approvals. The whole directory is covered.
	 */
	if ((size_t)snprintf(path, sizeof path, "%s/runs", b->cwhome) < sizeof path &&
	    paths_canonical(path, canon, sizeof canon) == 0 && spec_is_dir(canon) &&
	    strlist_add_unique(&b->s->hide, canon) == -1)
		return spec_nomem(b);
	if (xdg != NULL && xdg[0] == '/' && paths_canonical(xdg, canon, sizeof canon) == 0 &&
	    spec_is_dir(canon) && strlist_add_unique(&b->s->hide, canon) == -1)
		return spec_nomem(b);
	if (sock != NULL && sock[0] == '/' &&
	    paths_canonical(sock, canon, sizeof canon) == 0) {
		if (r->ssh) {
			if ((b->s->ssh_auth_sock = strdup(canon)) == NULL)
				return spec_nomem(b);
		} else if (strlist_add_unique(&b->s->hide, canon) == -1)
			return spec_nomem(b);
	}
	return 0;
}

int
spec_build(const struct spec_context *ctx, const struct config *cfg,
    struct sandbox_spec *out, char *err, size_t errlen)
{
	struct spec_build	 b = { ctx, out, ctx->home, ctx->cwhome, { 0, NULL }, err,
				     errlen, { 0 } };
	struct policy		 merged;
	struct policy_resolved	 r;
	const char		*engine = ctx->engine ? ctx->engine : "command";
	int			 rc = -1;

	memset(out, 0, sizeof *out);
	memset(&r, 0, sizeof r);
	err[0] = '\0';
	if (ctx->home == NULL || ctx->home[0] != '/' || ctx->cwhome == NULL ||
	    ctx->cwhome[0] != '/') {
		snprintf(err, errlen, "spec: home and Clockwork home must be absolute");
		errno = EINVAL;
		return -1;
	}
	if (credpaths_set_init(&b.cred, ctx->home, ctx->cwhome) == -1) {
		snprintf(err, errlen, "spec: out of memory");
		return -1;
	}
	if (policy_merge(&cfg->sandbox, config_engine_policy(cfg, engine), &merged) == -1) {
		credpaths_set_free(&b.cred);
		snprintf(err, errlen, "spec: out of memory");
		return -1;
	}
	out->enabled = !ctx->sandbox_off && policy_enabled(&merged);
	out->net_open = cfg->network_open;
	if (!out->enabled && (out->disabled_by = strdup(ctx->sandbox_off ?
	    "CW_SANDBOX=off" : "config: sandbox.enabled is false")) == NULL)
		goto nomem;
	if ((out->engine = strdup(engine)) == NULL || (out->home = strdup(ctx->home)) == NULL)
		goto nomem;
	if (spec_workdir(&b) == -1 || spec_tmpdir(&b) == -1)
		goto out;
	if (policy_resolve(&merged, ctx->home, ctx->cwhome, &r, err, errlen) == -1)
		goto out;
	if (spec_system(&b) == -1 || spec_caches_add(&b) == -1 ||
	    spec_context_roots(&b) == -1 || spec_policy_grants(&b, &r) == -1 ||
	    spec_engine_install(&b, engine) == -1 || spec_engine_state(&b, engine) == -1 ||
	    spec_path_dirs(&b) == -1 || spec_home_files(&b) == -1 ||
	    spec_hide(&b, &r) == -1 || spec_git(&b) == -1 ||
	    spec_environment(&b, &r) == -1 || spec_tmpdir_settle(&b) == -1)
		goto out;
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "spec: out of memory");
	errno = ENOMEM;
out:
	/* A deferred carve keeps the credential table it is judged by. */
	if (rc == 0 && out->carve_pending.n > 0) {
		if ((out->carve = calloc(1, sizeof *out->carve)) == NULL ||
		    (out->carve->home = strdup(ctx->home)) == NULL ||
		    (out->carve->cwhome = strdup(ctx->cwhome)) == NULL) {
			snprintf(err, errlen, "spec: out of memory");
			errno = ENOMEM;
			rc = -1;
		} else {
			out->carve->cred = b.cred;
			memset(&b.cred, 0, sizeof b.cred);
		}
	}
	credpaths_set_free(&b.cred);
	policy_free(&merged);
	policy_resolved_free(&r);
	if (rc == -1) {
		int	 save = errno;
		char	 rmerr[256];

		/* A refused spec leaves no TMPDIR behind (it held nothing yet). */
		if (!out->tmpdir_view)
			(void)spec_remove_tmpdir(out->tmpdir, ctx->cwhome, 0, rmerr,
			    sizeof rmerr);
		spec_free(out);
		errno = save;
	}
	return rc;
}

static cJSON *
spec_json_list(const struct strlist *l)
{
	cJSON	*a = cJSON_CreateArray();

	for (size_t i = 0; a != NULL && i < l->n; i++)
		if (!cJSON_AddItemToArray(a, cJSON_CreateString(l->v[i]))) {
			cJSON_Delete(a);
			return NULL;
		}
	return a;
}

char *
spec_to_json(const struct sandbox_spec *s)
{
	cJSON	*o, *env;
	char	*text = NULL;

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddBoolToObject(o, "enabled", s->enabled);
	cJSON_AddStringToObject(o, "network", s->net_open ? "open" : "allowlist");
	if (s->disabled_by != NULL)
		cJSON_AddStringToObject(o, "disabled_by", s->disabled_by);
	cJSON_AddStringToObject(o, "engine", s->engine ? s->engine : "");
	cJSON_AddStringToObject(o, "workdir", s->workdir ? s->workdir : "");
	cJSON_AddStringToObject(o, "home", s->home ? s->home : "");
	cJSON_AddStringToObject(o, "tmpdir", s->tmpdir ? s->tmpdir : "");
	cJSON_AddItemToObject(o, "read_dirs", spec_json_list(&s->read_dirs));
	cJSON_AddItemToObject(o, "write_dirs", spec_json_list(&s->write_dirs));
	cJSON_AddItemToObject(o, "read_files", spec_json_list(&s->read_files));
	cJSON_AddItemToObject(o, "write_files", spec_json_list(&s->write_files));
	cJSON_AddItemToObject(o, "hide", spec_json_list(&s->hide));
	cJSON_AddItemToObject(o, "ro_binds", spec_json_list(&s->ro_binds));
	if (s->ssh_auth_sock != NULL)
		cJSON_AddStringToObject(o, "ssh_auth_sock", s->ssh_auth_sock);
	else
		cJSON_AddNullToObject(o, "ssh_auth_sock");
	if ((env = cJSON_AddObjectToObject(o, "env")) != NULL) {
		for (size_t i = 0; i < s->env.n; i++) {
			char	*eq = strchr(s->env.v[i], '='), *name;

			if (eq == NULL || (name = strndup(s->env.v[i],
			    (size_t)(eq - s->env.v[i]))) == NULL)
				continue;
			/* Configured keys are secrets by assumption: never printed. */
			cJSON_AddStringToObject(env, name, strlist_contains(&s->env_secret,
			    name) ? "***" : eq + 1);
			free(name);
		}
	}
	cJSON_AddItemToObject(o, "notes", spec_json_list(&s->notes));
	cJSON_AddBoolToObject(o, "tmpdir_in_view", s->tmpdir_view);
	cJSON_AddItemToObject(o, "system_scan", spec_json_list(&s->system_scan));
	text = cJSON_Print(o);
	cJSON_Delete(o);
	return text;
}

static void
spec_carve_free(struct spec_carve *c)
{
	if (c == NULL)
		return;
	free(c->home);
	free(c->cwhome);
	credpaths_set_free(&c->cred);
	free(c);
}

int
spec_carve_finish(struct sandbox_spec *s, char *err, size_t errlen)
{
	struct spec_build	 b;
	int			 rc = 0;

	if (s->carve == NULL) {
		strlist_free(&s->carve_pending);
		return 0;
	}
	memset(&b, 0, sizeof b);
	b.s = s;
	b.home = s->carve->home;
	b.cwhome = s->carve->cwhome;
	b.cred = s->carve->cred;
	b.err = err;
	b.errlen = errlen;
	for (size_t i = 0; i < s->carve_pending.n && rc == 0; i++)
		rc = spec_system_carve(&b, s->carve_pending.v[i], 1);
	strlist_free(&s->carve_pending);
	spec_carve_free(s->carve);
	s->carve = NULL;
	return rc;
}

void
spec_free(struct sandbox_spec *s)
{
	spec_carve_free(s->carve);
	strlist_free(&s->carve_pending);
	free(s->workdir);
	free(s->engine);
	free(s->home);
	free(s->tmpdir);
	free(s->ssh_auth_sock);
	free(s->disabled_by);
	strlist_free(&s->read_dirs);
	strlist_free(&s->write_dirs);
	strlist_free(&s->read_files);
	strlist_free(&s->write_files);
	strlist_free(&s->env);
	strlist_free(&s->hide);
	strlist_free(&s->ro_binds);
	strlist_free(&s->env_secret);
	strlist_free(&s->notes);
	strlist_free(&s->system_scan);
	memset(s, 0, sizeof *s);
}

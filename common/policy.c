/*
 * Sandbox policy: merge (global + engine) and resolve (expand, canonicalise, check).
 * Resolution is all or nothing: on any refused grant the caller gets an error naming
 * the grant and nothing of the partial result.
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "credpaths.h"
#include "paths.h"
#include "policy.h"

void
policy_init(struct policy *p)
{
	memset(p, 0, sizeof *p);
	p->enabled = POLICY_UNSET;
	p->ssh = POLICY_UNSET;
	p->ssh_keys = POLICY_UNSET;
}

void
policy_free(struct policy *p)
{
	strlist_free(&p->read_dirs);
	strlist_free(&p->write_dirs);
	strlist_free(&p->read_files);
	strlist_free(&p->write_files);
	strlist_free(&p->env);
	policy_init(p);
}

static int
policy_pick(int global, int engine)
{
	return engine != POLICY_UNSET ? engine : global;
}

int
policy_merge(const struct policy *global, const struct policy *engine, struct policy *out)
{
	static const struct policy	 empty = {
		.enabled = POLICY_UNSET, .ssh = POLICY_UNSET, .ssh_keys = POLICY_UNSET
	};

	if (engine == NULL)
		engine = &empty;
	policy_init(out);
	if (strlist_extend(&out->read_dirs, &global->read_dirs) == -1 ||
	    strlist_extend(&out->read_dirs, &engine->read_dirs) == -1 ||
	    strlist_extend(&out->write_dirs, &global->write_dirs) == -1 ||
	    strlist_extend(&out->write_dirs, &engine->write_dirs) == -1 ||
	    strlist_extend(&out->read_files, &global->read_files) == -1 ||
	    strlist_extend(&out->read_files, &engine->read_files) == -1 ||
	    strlist_extend(&out->write_files, &global->write_files) == -1 ||
	    strlist_extend(&out->write_files, &engine->write_files) == -1 ||
	    strlist_extend(&out->env, &global->env) == -1 ||
	    strlist_extend(&out->env, &engine->env) == -1) {
		policy_free(out);
		return -1;
	}
	out->enabled = policy_pick(global->enabled, engine->enabled);
	out->ssh = policy_pick(global->ssh, engine->ssh);
	out->ssh_keys = policy_pick(global->ssh_keys, engine->ssh_keys);
	if (out->ssh_keys == 1)
		out->ssh = 1;
	return 0;
}

int
policy_enabled(const struct policy *p)
{
	return p->enabled != 0;
}

void
policy_resolved_free(struct policy_resolved *r)
{
	strlist_free(&r->read_dirs);
	strlist_free(&r->write_dirs);
	strlist_free(&r->read_files);
	strlist_free(&r->write_files);
	strlist_free(&r->env);
	memset(r, 0, sizeof *r);
}

int
policy_under_writable_prefix(const char *canonical, const char *tmpdir)
{
	static const char *const prefixes[] = { "/tmp", "/var/tmp", "/dev/shm" };
	char	 canon[PATH_MAX];

	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (paths_within(canonical, prefixes[i]))
			return 1;
	if (tmpdir != NULL && tmpdir[0] == '/' &&
	    paths_canonical(tmpdir, canon, sizeof canon) == 0 &&
	    paths_within(canonical, canon))
		return 1;
	return 0;
}

enum policy_kind { POLICY_READ_DIR, POLICY_WRITE_DIR, POLICY_READ_FILE, POLICY_WRITE_FILE };

static const char *const policy_kind_names[] = {
	"read_dirs", "write_dirs", "read_files", "write_files"
};

struct policy_ctx {
	const char	*home;
	const char	*cwhome;
	int		 ssh_keys;
	char		*err;
	size_t		 errlen;
};

/* Check one canonical path of a grant and add it to out. */
static int
policy_add(struct policy_ctx *c, enum policy_kind kind, const char *entry,
    const char *canon, struct strlist *out)
{
	const char	*what;
	char		 ssh[PATH_MAX];
	struct stat	 st;
	int		 is_dir = (kind == POLICY_READ_DIR || kind == POLICY_WRITE_DIR);
	int		 writable = (kind == POLICY_WRITE_DIR || kind == POLICY_WRITE_FILE);

	if ((what = credpaths_classify(canon, c->home, c->cwhome)) != NULL) {
		/* ssh-keys is the one feature that opens a credential location, read-only. */
		snprintf(ssh, sizeof ssh, "%s/.ssh", c->home);
		if (!(c->ssh_keys && !writable && paths_within(canon, ssh))) {
			snprintf(c->err, c->errlen, "policy: %s entry '%s' resolves to %s, "
			    "a credential location (%s): refused", policy_kind_names[kind],
			    entry, canon, what);
			errno = EPERM;
			return -1;
		}
	}
	if (!writable && policy_under_writable_prefix(canon, getenv("TMPDIR"))) {
		snprintf(c->err, c->errlen, "policy: %s entry '%s' resolves to %s, under "
		    "a prefix the sandbox must leave writable (/tmp, /var/tmp, /dev/shm, "
		    "$TMPDIR); a read-only grant there cannot be enforced: refused "
		    "(grant it in write_dirs/write_files or move it)",
		    policy_kind_names[kind], entry, canon);
		errno = EINVAL;
		return -1;
	}
	if (stat(canon, &st) == -1) {
		if (is_dir)
			return 0;	/* missing directories are dropped */
		return strlist_add_unique(out, canon);	/* file grants are kept */
	}
	if (is_dir && !S_ISDIR(st.st_mode)) {
		snprintf(c->err, c->errlen, "policy: %s entry '%s' (%s) is not a "
		    "directory; grant single files in %s", policy_kind_names[kind], entry,
		    canon, kind == POLICY_READ_DIR ? "read_files" : "write_files");
		errno = ENOTDIR;
		return -1;
	}
	if (!is_dir && S_ISDIR(st.st_mode)) {
		snprintf(c->err, c->errlen, "policy: %s entry '%s' (%s) is a directory; "
		    "grant directories in %s", policy_kind_names[kind], entry, canon,
		    kind == POLICY_READ_FILE ? "read_dirs" : "write_dirs");
		errno = EISDIR;
		return -1;
	}
	return strlist_add_unique(out, canon);
}

static int
policy_resolve_list(struct policy_ctx *c, enum policy_kind kind,
    const struct strlist *in, struct strlist *out)
{
	char	 expanded[PATH_MAX], canon[PATH_MAX];
	glob_t	 g;
	int	 rc;

	for (size_t i = 0; i < in->n; i++) {
		if (paths_expand_home(in->v[i], c->home, expanded, sizeof expanded) == -1 ||
		    expanded[0] != '/') {
			snprintf(c->err, c->errlen, "policy: %s entry '%s' is not an "
			    "absolute or ~ path", policy_kind_names[kind], in->v[i]);
			errno = EINVAL;
			return -1;
		}
		if (strpbrk(expanded, "*?[") == NULL) {
			if (paths_canonical(expanded, canon, sizeof canon) == -1) {
				snprintf(c->err, c->errlen, "policy: %s entry '%s': %s",
				    policy_kind_names[kind], in->v[i], strerror(errno));
				return -1;
			}
			if (policy_add(c, kind, in->v[i], canon, out) == -1)
				return -1;
			continue;
		}
		/* A glob that matches nothing grants nothing. */
		rc = glob(expanded, GLOB_NOSORT | GLOB_BRACE, NULL, &g);
		if (rc == GLOB_NOMATCH)
			continue;
		if (rc != 0) {
			snprintf(c->err, c->errlen, "policy: %s entry '%s': glob failed",
			    policy_kind_names[kind], in->v[i]);
			errno = EINVAL;
			return -1;
		}
		for (size_t j = 0; j < g.gl_pathc; j++) {
			if (paths_canonical(g.gl_pathv[j], canon, sizeof canon) == -1 ||
			    policy_add(c, kind, in->v[i], canon, out) == -1) {
				if (c->err[0] == '\0')
					snprintf(c->err, c->errlen, "policy: %s entry '%s': %s",
					    policy_kind_names[kind], in->v[i], strerror(errno));
				globfree(&g);
				return -1;
			}
		}
		globfree(&g);
	}
	return 0;
}

int
policy_resolve(const struct policy *merged, const char *home, const char *cwhome,
    struct policy_resolved *out, char *err, size_t errlen)
{
	struct policy_ctx	 c = { home, cwhome, merged->ssh_keys == 1, err, errlen };
	struct policy_resolved	 r;
	char			 ssh[PATH_MAX];
	struct stat		 st;

	memset(&r, 0, sizeof r);
	err[0] = '\0';
	r.enabled = policy_enabled(merged);
	r.ssh = merged->ssh == 1;
	r.ssh_keys = merged->ssh_keys == 1;
	if (policy_resolve_list(&c, POLICY_READ_DIR, &merged->read_dirs, &r.read_dirs) == -1 ||
	    policy_resolve_list(&c, POLICY_WRITE_DIR, &merged->write_dirs, &r.write_dirs) == -1 ||
	    policy_resolve_list(&c, POLICY_READ_FILE, &merged->read_files, &r.read_files) == -1 ||
	    policy_resolve_list(&c, POLICY_WRITE_FILE, &merged->write_files, &r.write_files) == -1 ||
	    strlist_extend(&r.env, &merged->env) == -1)
		goto fail;
	/* ssh-keys: ~/.ssh readable (never writable) on top of the agent socket. */
	if (r.ssh_keys && (size_t)snprintf(ssh, sizeof ssh, "%s/.ssh", home) < sizeof ssh &&
	    stat(ssh, &st) == 0 && S_ISDIR(st.st_mode) &&
	    paths_canonical(ssh, ssh, sizeof ssh) == 0 &&
	    strlist_add_unique(&r.read_dirs, ssh) == -1)
		goto fail;
	*out = r;
	return 0;
fail:
	if (err[0] == '\0')
		snprintf(err, errlen, "policy: %s", strerror(errno));
	policy_resolved_free(&r);
	return -1;
}

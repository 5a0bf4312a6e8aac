#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "credpaths.h"
#include "paths.h"

/*
 * Everything here stays unreadable inside the sandbox whatever the policy grants, and a
 * grant or context root that resolves into one of these is refused outright. Engines'
 * own logins (~/.claude/.credentials.json and the like) are not listed: they are the
 * engine's state, granted to that engine alone by the spec builder.
 */
static const struct credpath credpaths[] = {
	{ CRED_HOME, ".ssh", "ssh keys" },
	{ CRED_HOME, ".aws", "AWS credentials" },
	{ CRED_HOME, ".gnupg", "GnuPG keyring" },
	{ CRED_HOME, ".config/gcloud", "Google Cloud credentials" },
	{ CRED_HOME, ".azure", "Azure credentials" },
	{ CRED_HOME, ".netrc", "netrc passwords" },
	{ CRED_HOME, ".docker/config.json", "docker registry logins" },
	{ CRED_HOME, ".kube", "kubernetes configs" },
	{ CRED_HOME, ".git-credentials", "git credential store" },
	{ CRED_HOME, ".config/git/credentials", "git credential store" },
	{ CRED_HOME, ".config/gh", "GitHub CLI tokens" },
	{ CRED_HOME, ".config/hub", "hub tokens" },
	{ CRED_HOME, ".npmrc", "npm tokens" },
	{ CRED_HOME, ".pypirc", "PyPI tokens" },
	{ CRED_HOME, ".cargo/credentials", "crates.io token" },
	{ CRED_HOME, ".cargo/credentials.toml", "crates.io token" },
	{ CRED_HOME, ".gem/credentials", "RubyGems key" },
	{ CRED_HOME, ".password-store", "pass store" },
	{ CRED_HOME, ".local/share/keyrings", "desktop keyring" },
	{ CRED_HOME, ".vault-token", "Vault token" },
	{ CRED_HOME, ".terraform.d/credentials.tfrc.json", "Terraform token" },
	{ CRED_HOME, ".pgpass", "PostgreSQL passwords" },
	{ CRED_HOME, ".my.cnf", "MySQL passwords" },
	/* Browser profiles hold cookies, saved passwords and session tokens. */
	{ CRED_HOME, ".mozilla", "browser profile" },
	{ CRED_HOME, ".config/google-chrome", "browser profile" },
	{ CRED_HOME, ".config/chromium", "browser profile" },
	{ CRED_HOME, ".config/BraveSoftware", "browser profile" },
	{ CRED_HOME, ".config/microsoft-edge", "browser profile" },
	{ CRED_HOME, ".config/vivaldi", "browser profile" },
	{ CRED_HOME, ".config/opera", "browser profile" },
	{ CRED_HOME, "snap/firefox", "browser profile" },
	{ CRED_HOME, "snap/chromium", "browser profile" },
	{ CRED_HOME, ".var/app/org.mozilla.firefox", "browser profile" },
	{ CRED_HOME, ".var/app/com.google.Chrome", "browser profile" },
	{ CRED_HOME, ".var/app/org.chromium.Chromium", "browser profile" },
	/* Shell and REPL histories: pasted tokens end up here. */
	{ CRED_HOME, ".bash_history", "shell history" },
	{ CRED_HOME, ".zsh_history", "shell history" },
	{ CRED_HOME, ".zhistory", "shell history" },
	{ CRED_HOME, ".histfile", "shell history" },
	{ CRED_HOME, ".history", "shell history" },
	{ CRED_HOME, ".sh_history", "shell history" },
	{ CRED_HOME, ".local/share/fish/fish_history", "shell history" },
	{ CRED_HOME, ".python_history", "REPL history" },
	{ CRED_HOME, ".node_repl_history", "REPL history" },
	{ CRED_HOME, ".psql_history", "REPL history" },
	{ CRED_HOME, ".mysql_history", "REPL history" },
	{ CRED_HOME, ".sqlite_history", "REPL history" },
	{ CRED_HOME, ".irb_history", "REPL history" },
	{ CRED_HOME, ".rediscli_history", "REPL history" },
	/* Clockwork's own secrets: the API token and delivery credentials (SPEC K2). */
	{ CRED_CWHOME, "api.token", "Clockwork API token" },
	{ CRED_CWHOME, "secrets", "Clockwork delivery credentials" },
	{ CRED_CWHOME, "inbox", "Clockwork Inbox sessions" },
	/*
	 * The kept outlines of /etc (runner/unreadable.h): a run that could rewrite one
	 * could drop an entry that is not world-readable from every later run's carving.
	 */
	{ CRED_CWHOME, "unreadable", "Clockwork's outline of what runs may not read in /etc" },
	/* System secrets a root-run engine could otherwise read. */
	{ CRED_ABS, "/etc/shadow", "system password hashes" },
	{ CRED_ABS, "/etc/shadow-", "system password hashes" },
	{ CRED_ABS, "/etc/gshadow", "system password hashes" },
	{ CRED_ABS, "/etc/gshadow-", "system password hashes" },
	{ CRED_ABS, "/etc/ssh/ssh_host_*", "ssh host keys" },
	{ CRED_ABS, "/etc/ssl/private", "TLS private keys" },
};

const struct credpath *
credpaths_table(size_t *count)
{
	*count = sizeof credpaths / sizeof credpaths[0];
	return credpaths;
}

int
credpaths_absolute(const struct credpath *c, const char *home, const char *cwhome,
    char *out, size_t outlen)
{
	int	 n;

	switch (c->base) {
	case CRED_HOME:
		n = snprintf(out, outlen, "%s/%s", home, c->path);
		break;
	case CRED_CWHOME:
		if (cwhome == NULL)
			return -1;
		n = snprintf(out, outlen, "%s/%s", cwhome, c->path);
		break;
	default:
		n = snprintf(out, outlen, "%s", c->path);
		break;
	}
	return (n < 0 || (size_t)n >= outlen) ? -1 : 0;
}

/* Does path equal, or lie inside, the location that pattern names? */
static int
credpaths_match(const char *pattern, const char *path)
{
	char	 prefix[PATH_MAX];
	size_t	 i, len;

	if (strpbrk(pattern, "*?[") == NULL)
		return paths_within(path, pattern);
	len = strlen(path);
	if (len >= sizeof prefix)
		return 0;
	/* Try the pattern against the path and each of its ancestors. */
	for (i = 1; i <= len; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		memcpy(prefix, path, i);
		prefix[i] = '\0';
		if (fnmatch(pattern, prefix, FNM_PATHNAME | FNM_PERIOD) == 0)
			return 1;
	}
	return 0;
}

const char *
credpaths_classify(const char *path, const char *home, const char *cwhome)
{
	char	 abs[PATH_MAX];

	for (size_t i = 0; i < sizeof credpaths / sizeof credpaths[0]; i++) {
		if (credpaths_absolute(&credpaths[i], home, cwhome, abs, sizeof abs) == -1)
			continue;
		if (credpaths_match(abs, path))
			return credpaths[i].what;
	}
	return NULL;
}

int
credpaths_inside(const char *dir, const char *home, const char *cwhome)
{
	char	 abs[PATH_MAX], *wild, *slash;

	for (size_t i = 0; i < sizeof credpaths / sizeof credpaths[0]; i++) {
		if (credpaths_absolute(&credpaths[i], home, cwhome, abs, sizeof abs) == -1)
			continue;
		/* For a pattern, its literal directory part stands for it. */
		if ((wild = strpbrk(abs, "*?[")) != NULL) {
			*wild = '\0';
			if ((slash = strrchr(abs, '/')) != NULL && slash != abs)
				*slash = '\0';
		}
		if (strcmp(abs, dir) != 0 && paths_within(abs, dir))
			return 1;
		if (wild != NULL && strcmp(abs, dir) == 0)
			return 1;
	}
	return 0;
}

/* One table entry, formatted for a set's homes. */
struct credpaths_entry {
	const char	*what;
	char		*abs;		/* absolute form, wildcards kept */
	size_t		 len;		/* strlen(abs) */
	char		*literal;	/* what credpaths_inside compares: abs, or a pattern's dir */
	int		 wild;		/* abs holds a wildcard */
	/*
	 * A pattern's text before its first wildcard, which fnmatch(3) matches literally,
	 * so a path that does not start with it cannot match (nor can any of its
	 * ancestors). Not used when the stem holds a backslash, fnmatch's escape.
	 */
	size_t		 stemlen;
	int		 stem_ok;
};

void
credpaths_set_free(struct credpaths_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		free(set->v[i].abs);
		free(set->v[i].literal);
	}
	free(set->v);
	set->v = NULL;
	set->n = 0;
}

int
credpaths_set_init(struct credpaths_set *set, const char *home, const char *cwhome)
{
	char			 abs[PATH_MAX], *wild, *slash;
	struct credpaths_entry	*e;

	set->n = 0;
	if ((set->v = calloc(sizeof credpaths / sizeof credpaths[0], sizeof *set->v)) ==
	    NULL)
		return -1;
	for (size_t i = 0; i < sizeof credpaths / sizeof credpaths[0]; i++) {
		/* Entries that do not fit are skipped, as credpaths_classify skips them. */
		if (credpaths_absolute(&credpaths[i], home, cwhome, abs, sizeof abs) == -1)
			continue;
		e = &set->v[set->n];
		e->what = credpaths[i].what;
		if ((e->abs = strdup(abs)) == NULL)
			goto nomem;
		e->len = strlen(abs);
		/* The same cut credpaths_inside makes. */
		if ((wild = strpbrk(abs, "*?[")) != NULL) {
			e->stemlen = (size_t)(wild - abs);
			e->stem_ok = memchr(abs, '\\', e->stemlen) == NULL;
			*wild = '\0';
			if ((slash = strrchr(abs, '/')) != NULL && slash != abs)
				*slash = '\0';
		}
		e->wild = wild != NULL;
		if ((e->literal = strdup(abs)) == NULL) {
			free(e->abs);
			goto nomem;
		}
		set->n++;
	}
	return 0;
nomem:
	credpaths_set_free(set);
	errno = ENOMEM;
	return -1;
}

const char *
credpaths_set_classify(const struct credpaths_set *set, const char *path)
{
	const struct credpaths_entry	*e;

	for (size_t i = 0; i < set->n; i++) {
		e = &set->v[i];
		if (!e->wild) {
			/* paths_within(path, e->abs), with the length known. */
			if (e->len == 1 && e->abs[0] == '/' ? path[0] == '/' :
			    strncmp(path, e->abs, e->len) == 0 &&
			    (path[e->len] == '\0' || path[e->len] == '/'))
				return e->what;
			continue;
		}
		if (e->stem_ok && strncmp(path, e->abs, e->stemlen) != 0)
			continue;
		if (credpaths_match(e->abs, path))
			return e->what;
	}
	return NULL;
}

int
credpaths_set_inside(const struct credpaths_set *set, const char *dir)
{
	const struct credpaths_entry	*e;

	for (size_t i = 0; i < set->n; i++) {
		e = &set->v[i];
		if (strcmp(e->literal, dir) != 0 && paths_within(e->literal, dir))
			return 1;
		if (e->wild && strcmp(e->literal, dir) == 0)
			return 1;
	}
	return 0;
}

/*
 * config.yaml: parsed with libyaml's document API so that every node keeps its line.
 * The schema is closed: an unknown key, a value of the wrong type or out of range is
 * an error "FILE:LINE: FIELD: what is wrong", and the caller's config is untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "autoallow.h"
#include "floor.h"

#include <yaml.h>

#include "config.h"
#include "netrule.h"
#include "netsets.h"
#include "engines.h"
#include "paths.h"

#define CONFIG_MAX_SIZE		(1024 * 1024)

struct config_parse {
	const char	*file;
	yaml_document_t	*doc;
	char		*err;
	size_t		 errlen;
};

static int config_fail(struct config_parse *, const yaml_node_t *, const char *,
    const char *, ...) __attribute__((format(printf, 4, 5)));

static int
config_fail(struct config_parse *p, const yaml_node_t *n, const char *field,
    const char *fmt, ...)
{
	char	 msg[512];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "%s:%lu: %s: %s", p->file,
	    n != NULL ? (unsigned long)n->start_mark.line + 1 : 1UL, field, msg);
	return -1;
}

/*
 * Field names for messages ("engines.claude.sandbox.read_dirs[2]"). A name cut short
 * by the buffer only shortens a message, so this goes through vsnprintf, where the
 * compiler's truncation warning has nothing to say.
 */
static void config_field(char *, size_t, const char *, ...)
    __attribute__((format(printf, 3, 4)));

static void
config_field(char *out, size_t outlen, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(out, outlen, fmt, ap);
	va_end(ap);
}

static const char *
config_scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static int
config_is_scalar(const yaml_node_t *n)
{
	return n != NULL && n->type == YAML_SCALAR_NODE;
}

/*
 * One pair of a mapping: its key, or NULL (the error filled in, as field: why) when
 * the key is not a string; *k and *v are the key and value nodes.
 */
static const char *
config_pair(struct config_parse *p, const yaml_node_pair_t *pair, const char *field,
    const char *why, const yaml_node_t **k, const yaml_node_t **v)
{
	*k = yaml_document_get_node(p->doc, pair->key);
	*v = yaml_document_get_node(p->doc, pair->value);
	if (!config_is_scalar(*k)) {
		config_fail(p, *k, field, "%s", why);
		return NULL;
	}
	return config_scalar(*k);
}

static int
config_get_string(struct config_parse *p, const yaml_node_t *n, const char *field,
    const char **out)
{
	if (!config_is_scalar(n))
		return config_fail(p, n, field, "expected a string");
	if (n->data.scalar.length != strlen(config_scalar(n)))
		return config_fail(p, n, field, "contains a NUL byte");
	*out = config_scalar(n);
	return 0;
}

static int
config_get_long(struct config_parse *p, const yaml_node_t *n, const char *field,
    long min, long max, long *out)
{
	const char	*s = NULL;
	char		*end;
	long		 v;

	if (!config_is_scalar(n) || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return config_fail(p, n, field, "expected an integer");
	s = config_scalar(n);
	errno = 0;
	v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno == ERANGE)
		return config_fail(p, n, field, "expected an integer, got '%s'", s);
	if (v < min || v > max)
		return config_fail(p, n, field, "%ld is out of range (%ld to %ld)",
		    v, min, max);
	*out = v;
	return 0;
}

static int
config_get_double(struct config_parse *p, const yaml_node_t *n, const char *field,
    double min, double max, double *out)
{
	const char	*s = NULL;
	char		*end;
	double		 v;

	if (!config_is_scalar(n) || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return config_fail(p, n, field, "expected a number");
	s = config_scalar(n);
	errno = 0;
	v = strtod(s, &end);
	if (*s == '\0' || *end != '\0' || errno == ERANGE || !isfinite(v))
		return config_fail(p, n, field, "expected a number, got '%s'", s);
	if (v < min || v > max)
		return config_fail(p, n, field, "%g is out of range (%g to %g)", v, min, max);
	*out = v;
	return 0;
}

static int
config_get_bool(struct config_parse *p, const yaml_node_t *n, const char *field,
    int *out)
{
	const char	*s = NULL;

	if (!config_is_scalar(n) || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return config_fail(p, n, field, "expected true or false");
	s = config_scalar(n);
	if (strcmp(s, "true") == 0)
		*out = 1;
	else if (strcmp(s, "false") == 0)
		*out = 0;
	else
		return config_fail(p, n, field, "expected true or false, got '%s'", s);
	return 0;
}

/* Valid word characters for names: engine names, rule ids, env variables, branches. */
static int
config_valid_name(const char *s, const char *extra, int digit_first)
{
	if (*s == '\0' || (!digit_first && s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (; *s != '\0'; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '_')
			continue;
		if (strchr(extra, *s) == NULL)
			return 0;
	}
	return 1;
}

/* Check each item of a sequence and add it; check(NULL) accepts any string. */
static int
config_get_list(struct config_parse *p, const yaml_node_t *n, const char *field,
    int (*check)(const char *), const char *what, struct strlist *out)
{
	yaml_node_item_t	*it;
	const yaml_node_t	*item;
	const char		*s = NULL;
	char			 sub[128];

	if (n == NULL || n->type != YAML_SEQUENCE_NODE)
		return config_fail(p, n, field, "expected a list");
	strlist_free(out);
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		item = yaml_document_get_node(p->doc, *it);
		config_field(sub, sizeof sub, "%s[%ld]", field,
		    (long)(it - n->data.sequence.items.start));
		if (config_get_string(p, item, sub, &s) == -1)
			return -1;
		if (check != NULL && !check(s))
			return config_fail(p, item, sub, "'%s' is not %s", s, what);
		if (strlist_add_unique(out, s) == -1)
			return config_fail(p, item, sub, "out of memory");
	}
	return 0;
}

static int
config_check_path(const char *s)
{
	return s[0] == '/' || (s[0] == '~' && (s[1] == '\0' || s[1] == '/'));
}

static int
config_check_env(const char *s)
{
	return config_valid_name(s, "", 0);
}

static int
config_check_branch(const char *s)
{
	return config_valid_name(s, "-./", 1) && strstr(s, "..") == NULL &&
	    s[0] != '-' && s[0] != '/';
}

static int
config_parse_policy(struct config_parse *p, const yaml_node_t *n, const char *field,
    struct policy *pol)
{
	yaml_node_pair_t	*pair;
	const yaml_node_t	*k, *v;
	const char		*key;
	char			 sub[128];
	struct strlist		 features = { 0 };

	if (n == NULL || n->type != YAML_MAPPING_NODE)
		return config_fail(p, n, field, "expected a mapping");
	for (pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
		if ((key = config_pair(p, pair, field, "keys must be strings",
		    &k, &v)) == NULL)
			return -1;
		config_field(sub, sizeof sub, "%s.%s", field, key);
		if (strcmp(key, "enabled") == 0) {
			if (config_get_bool(p, v, sub, &pol->enabled) == -1)
				return -1;
		} else if (strcmp(key, "read_dirs") == 0) {
			if (config_get_list(p, v, sub, config_check_path,
			    "an absolute or ~ path", &pol->read_dirs) == -1)
				return -1;
		} else if (strcmp(key, "write_dirs") == 0) {
			if (config_get_list(p, v, sub, config_check_path,
			    "an absolute or ~ path", &pol->write_dirs) == -1)
				return -1;
		} else if (strcmp(key, "read_files") == 0) {
			if (config_get_list(p, v, sub, config_check_path,
			    "an absolute or ~ path", &pol->read_files) == -1)
				return -1;
		} else if (strcmp(key, "write_files") == 0) {
			if (config_get_list(p, v, sub, config_check_path,
			    "an absolute or ~ path", &pol->write_files) == -1)
				return -1;
		} else if (strcmp(key, "env") == 0) {
			if (config_get_list(p, v, sub, config_check_env,
			    "an environment variable name", &pol->env) == -1)
				return -1;
		} else if (strcmp(key, "features") == 0) {
			if (config_get_list(p, v, sub, NULL, NULL, &features) == -1)
				goto fail;
			pol->ssh = pol->ssh_keys = 0;
			for (size_t i = 0; i < features.n; i++) {
				if (strcmp(features.v[i], "ssh") == 0)
					pol->ssh = 1;
				else if (strcmp(features.v[i], "ssh-keys") == 0)
					pol->ssh = pol->ssh_keys = 1;
				else {
					config_fail(p, v, sub, "unknown feature '%s' "
					    "(known: ssh, ssh-keys)", features.v[i]);
					goto fail;
				}
			}
			strlist_free(&features);
		} else
			return config_fail(p, k, sub, "unknown key");
	}
	return 0;
fail:
	strlist_free(&features);
	return -1;
}

static int
config_parse_budgets(struct config_parse *p, const yaml_node_t *n, struct config *cfg)
{
	yaml_node_pair_t	*pair;
	const yaml_node_t	*k, *v;
	const char		*key;
	char			 sub[128];
	long			 l;

	if (n == NULL || n->type != YAML_MAPPING_NODE)
		return config_fail(p, n, "budgets", "expected a mapping");
	for (pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
		if ((key = config_pair(p, pair, "budgets", "keys must be strings",
		    &k, &v)) == NULL)
			return -1;
		config_field(sub, sizeof sub, "budgets.%s", key);
		if (strcmp(key, "dollars") == 0) {
			if (config_get_double(p, v, sub, 0.01, 1000, &cfg->budget_dollars) == -1)
				return -1;
		} else if (strcmp(key, "turns") == 0) {
			if (config_get_long(p, v, sub, 1, 10000, &l) == -1)
				return -1;
			cfg->budget_turns = (int)l;
		} else if (strcmp(key, "seconds") == 0) {
			if (config_get_long(p, v, sub, 1, 7 * 86400, &l) == -1)
				return -1;
			cfg->budget_seconds = (int)l;
		} else if (strcmp(key, "wait") == 0) {
			/* 0 is "no pause"; otherwise a person needs some time to answer. */
			if (config_get_long(p, v, sub, 0, CONFIG_BUDGET_WAIT_MAX, &l) == -1)
				return -1;
			if (l != 0 && l < CONFIG_BUDGET_WAIT_MIN)
				return config_fail(p, v, sub, "must be 0 (a budget ends the run "
				    "at once) or from %d to %d seconds", CONFIG_BUDGET_WAIT_MIN,
				    CONFIG_BUDGET_WAIT_MAX);
			cfg->budget_wait = (int)l;
		} else if (strcmp(key, "max_dollars") == 0) {
			if (config_get_double(p, v, sub, 0, CONFIG_MAX_DOLLARS_MAX,
			    &cfg->max_dollars) == -1)
				return -1;
		} else
			return config_fail(p, k, sub, "unknown key");
	}
	if (cfg->max_dollars > 0 && cfg->budget_dollars > cfg->max_dollars)
		return config_fail(p, n, "budgets.max_dollars", "the hard ceiling ($%.2f) is "
		    "below budgets.dollars ($%.2f)", cfg->max_dollars, cfg->budget_dollars);
	return 0;
}

/*
 * limits: a run's cgroup or rlimits (SPEC R2, U1). 0 is "no limit"; anything else has
 * a floor below which a shell and an engine could not start at all. allow_unenforced
 * is the loud opt-in to run where no layer can hold them.
 */
static int
config_parse_limits(struct config_parse *p, const yaml_node_t *n, struct config *cfg)
{
	yaml_node_pair_t	*pair;
	const yaml_node_t	*k, *v;
	const char		*key;
	char			 sub[128];
	long			 l, floor;

	if (n == NULL || n->type != YAML_MAPPING_NODE)
		return config_fail(p, n, "limits", "expected a mapping");
	for (pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
		if ((key = config_pair(p, pair, "limits", "keys must be strings",
		    &k, &v)) == NULL)
			return -1;
		config_field(sub, sizeof sub, "limits.%s", key);
		if (strcmp(key, "processes") == 0) {
			floor = CONFIG_MIN_LIMIT_PROCESSES;
			if (config_get_long(p, v, sub, 0, 4194304, &l) == -1)
				return -1;
			cfg->limit_processes = (int)l;
		} else if (strcmp(key, "memory_mb") == 0) {
			floor = CONFIG_MIN_LIMIT_MEMORY_MB;
			if (config_get_long(p, v, sub, 0, 16777216, &l) == -1)
				return -1;
			cfg->limit_memory_mb = (int)l;
		} else if (strcmp(key, "allow_unenforced") == 0) {
			if (config_get_bool(p, v, sub, &cfg->limit_allow_unenforced) == -1)
				return -1;
			continue;
		} else
			return config_fail(p, k, sub, "unknown key");
		if (l > 0 && l < floor)
			return config_fail(p, v, sub, "%ld is too low (0 for no limit, or at "
			    "least %ld)", l, floor);
	}
	return 0;
}

/*
 * approvals.ask: the risks a person is asked about (autoallow.h): a list of risk
 * names, or all, or none. An empty list is refused: "ask about nothing" is spelt none.
 */
static int
config_parse_ask(struct config_parse *p, const yaml_node_t *v, struct config *cfg)
{
	const char	*words[8];
	char		 err[256], sub[64];
	size_t		 n = 0;
	yaml_node_item_t *it;

	if (config_is_scalar(v)) {
		words[n++] = config_scalar(v);
	} else if (v != NULL && v->type == YAML_SEQUENCE_NODE) {
		for (it = v->data.sequence.items.start; it < v->data.sequence.items.top;
		    it++) {
			const yaml_node_t *e = yaml_document_get_node(p->doc, *it);
			config_field(sub, sizeof sub, "approvals.ask[%zu]", n);
			if (!config_is_scalar(e))
				return config_fail(p, e, sub, "expected a risk name");
			if (n >= sizeof words / sizeof words[0])
				return config_fail(p, e, sub, "too many entries (at most %zu)",
				    sizeof words / sizeof words[0]);
			words[n++] = config_scalar(e);
		}
		if (n == 0)
			return config_fail(p, v, "approvals.ask", "an empty list: write none "
			    "to ask about nothing");
		for (size_t i = 0; i < n && n > 1; i++)
			if (strcmp(words[i], "all") == 0 || strcmp(words[i], "none") == 0)
				return config_fail(p, v, "approvals.ask", "'%s' stands alone, "
				    "not in a list", words[i]);
	} else
		return config_fail(p, v, "approvals.ask", "expected a list of risks "
		    "(outside_worktree, fetch_exec, destructive, ordinary), all or none");
	if (autoallow_ask_parse(words, n, &cfg->approvals_ask, err, sizeof err) == -1)
		return config_fail(p, v, "approvals.ask", "%s", err);
	return 0;
}

/*
 * approvals: max_per_run and per_minute, each 1 .. CONFIG_MAX_APPROVALS. No 0 for "no
 * limit": one run flooding approvals drowns the Inbox and every chat (issue 26). ask:
 * config_parse_ask.
 */
static int
config_parse_approvals(struct config_parse *p, const yaml_node_t *n, struct config *cfg)
{
	yaml_node_pair_t	*pair;
	const yaml_node_t	*k, *v;
	const char		*key;
	char			 sub[128];
	long			 l;

	if (n == NULL || n->type != YAML_MAPPING_NODE)
		return config_fail(p, n, "approvals", "expected a mapping");
	for (pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
		if ((key = config_pair(p, pair, "approvals", "keys must be strings",
		    &k, &v)) == NULL)
			return -1;
		config_field(sub, sizeof sub, "approvals.%s", key);
		if (strcmp(key, "ask") == 0) {
			if (config_parse_ask(p, v, cfg) == -1)
				return -1;
			continue;
		}
		if (strcmp(key, "max_per_run") != 0 && strcmp(key, "per_minute") != 0)
			return config_fail(p, k, sub, "unknown key (ask, max_per_run, "
			    "per_minute)");
		if (config_get_long(p, v, sub, 1, CONFIG_MAX_APPROVALS, &l) == -1)
			return -1;
		if (strcmp(key, "max_per_run") == 0)
			cfg->approvals_max_per_run = (int)l;
		else
			cfg->approvals_per_minute = (int)l;
	}
	return 0;
}

/*
 * engines.<name>.base_url | model | key_env. A base URL is http(s) with no space or
 * control character (it goes into an engine's configuration and environment); a
 * model is a plain name; key_env names a variable of the daemon's environment.
 */
static int
config_engine_string(struct config_parse *p, const yaml_node_t *v, const char *sub,
    const char *key, struct config_engine *e)
{
	char		 f[192];
	const char	*s = NULL;
	char		**slot;

	config_field(f, sizeof f, "%s.%s", sub, key);
	if (config_get_string(p, v, f, &s) == -1)
		return -1;
	if (strcmp(key, "base_url") == 0) {
		slot = &e->base_url;
		if ((strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0) ||
		    strlen(s) > 2048)
			return config_fail(p, v, f, "expected an http:// or https:// URL of "
			    "at most 2048 bytes");
		for (const char *c = s; *c != '\0'; c++)
			if ((unsigned char)*c <= ' ' || *c == 0x7f || *c == '"' ||
			    *c == '\\' || *c == '\'')
				return config_fail(p, v, f, "a URL may not hold spaces, "
				    "quotes, backslashes or control characters");
	} else if (strcmp(key, "model") == 0) {
		slot = &e->model;
		if (!config_valid_name(s, "-.:/@", 1) || strlen(s) > 256)
			return config_fail(p, v, f, "'%s' is not a model name (letters, "
			    "digits and _-.:/@, at most 256)", s);
	} else {
		slot = &e->key_env;
		if (!config_check_env(s))
			return config_fail(p, v, f, "'%s' is not an environment variable "
			    "name", s);
	}
	if (*slot != NULL)
		return config_fail(p, v, f, "given twice");
	if ((*slot = strdup(s)) == NULL)
		return config_fail(p, v, f, "out of memory");
	return 0;
}

static int
config_check_netrule(const char *s)
{
	struct netrule	 r;
	char		 err[32];

	return netsets_find(s) != NULL || netrule_parse(s, &r, err, sizeof err) == 0;
}

#define CONFIG_NETRULE_WHAT "host:port (a name, *.domain, * or an IP address; a " \
	"port or *) or a rule set (python, rust, go, java, node)"

/*
 * network: allowlist | open, a list of rules, or a mapping { mode: allowlist|open, allow: [host:port] }.
 * mode is NULL for engines.<name>.network, where only allow may be given.
 */
static int
config_parse_network(struct config_parse *p, const yaml_node_t *n, const char *field,
    int *mode, struct strlist *allow)
{
	yaml_node_pair_t	*pair;
	const yaml_node_t	*k, *v;
	const char		*key, *s;
	char			 sub[160];

	if (mode != NULL && config_is_scalar(n)) {
		s = config_scalar(n);
		if (strcmp(s, "allowlist") == 0)
			*mode = 0;
		else if (strcmp(s, "open") == 0)
			*mode = 1;
		else
			return config_fail(p, n, field, "'%s' is not allowlist or open", s);
		return 0;
	}
	/* network: [python, go, host:port]: the allowlist, with these rules. */
	if (allow != NULL && n != NULL && n->type == YAML_SEQUENCE_NODE) {
		if (mode != NULL)
			*mode = 0;
		return config_get_list(p, n, field, config_check_netrule,
		    CONFIG_NETRULE_WHAT, allow);
	}
	if (n == NULL || n->type != YAML_MAPPING_NODE)
		return config_fail(p, n, field, mode != NULL ? "expected allowlist, open, "
		    "a list of rules or a mapping (mode, allow)" : "expected a list of rules "
		    "or a mapping (allow)");
	for (pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
		if ((key = config_pair(p, pair, field, "keys must be strings",
		    &k, &v)) == NULL)
			return -1;
		config_field(sub, sizeof sub, "%s.%s", field, key);
		if (mode != NULL && strcmp(key, "mode") == 0) {
			/*
			 * Scalar first: a mapping here (mode: {allow: [...]}) must not reach
			 * the mapping branch with no allow list to fill (fuzz/config).
			 */
			if (!config_is_scalar(v))
				return config_fail(p, v, sub, "expected allowlist or open");
			if (config_parse_network(p, v, sub, mode, NULL) == -1)
				return -1;
		} else if (strcmp(key, "allow") == 0) {
			if (config_get_list(p, v, sub, config_check_netrule,
			    CONFIG_NETRULE_WHAT, allow) == -1)
				return -1;
		} else
			return config_fail(p, k, sub, "unknown key");
	}
	return 0;
}

/*
 * engines.default: the engine a task or an imported job gets when it names none. Any
 * runnable engine, "command" included: a person who writes it has asked for shell
 * lines; the installers only ever write an agent engine (docs/configuration.md).
 */
static int
config_parse_engine_default(struct config_parse *p, const yaml_node_t *v,
    struct config *cfg)
{
	const char	*s = NULL;

	if (config_get_string(p, v, "engines.default", &s) == -1)
		return -1;
	if (engines_runnable(s) == NULL)
		return config_fail(p, v, "engines.default", "'%.64s' is not an engine "
		    "Clockwork can run (one of: %s)", s, engines_names(1));
	if (cfg->engine_default != NULL)
		return config_fail(p, v, "engines.default", "given twice");
	if ((cfg->engine_default = strdup(s)) == NULL)
		return config_fail(p, v, "engines.default", "out of memory");
	return 0;
}

static int
config_parse_engines(struct config_parse *p, const yaml_node_t *n, struct config *cfg)
{
	yaml_node_pair_t	*pair, *ep;
	const yaml_node_t	*k, *v, *ek, *ev;
	const char		*name, *key;
	char			 sub[128];
	struct config_engine	*e, *ne;

	if (n == NULL || n->type != YAML_MAPPING_NODE)
		return config_fail(p, n, "engines", "expected a mapping of engine names");
	for (pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
		if ((name = config_pair(p, pair, "engines", "keys must be engine names",
		    &k, &v)) == NULL)
			return -1;
		config_field(sub, sizeof sub, "engines.%s", name);
		if (strcmp(name, "default") == 0) {
			if (config_parse_engine_default(p, v, cfg) == -1)
				return -1;
			continue;
		}
		if (engines_find(name) == NULL)
			return config_fail(p, k, sub, "unknown engine (known: %s)",
			    engines_names(0));
		if (config_engine_policy(cfg, name) != NULL)
			return config_fail(p, k, sub, "engine listed twice");
		if (v == NULL || v->type != YAML_MAPPING_NODE)
			return config_fail(p, v, sub, "expected a mapping");

		ne = realloc(cfg->engines, (cfg->n_engines + 1) * sizeof *ne);
		if (ne == NULL)
			return config_fail(p, k, sub, "out of memory");
		cfg->engines = ne;
		e = &cfg->engines[cfg->n_engines];
		memset(e, 0, sizeof *e);
		policy_init(&e->sandbox);
		if ((e->name = strdup(name)) == NULL)
			return config_fail(p, k, sub, "out of memory");
		cfg->n_engines++;

		for (ep = v->data.mapping.pairs.start; ep < v->data.mapping.pairs.top; ep++) {
			if ((key = config_pair(p, ep, sub, "keys must be strings",
			    &ek, &ev)) == NULL)
				return -1;
			if (strcmp(key, "sandbox") == 0) {
				char psub[160];
				config_field(psub, sizeof psub, "%s.sandbox", sub);
				if (config_parse_policy(p, ev, psub, &e->sandbox) == -1)
					return -1;
			} else if (strcmp(key, "network") == 0) {
				char psub[160];
				config_field(psub, sizeof psub, "%s.network", sub);
				if (config_parse_network(p, ev, psub, NULL,
				    &e->network_allow) == -1)
					return -1;
			} else if (strcmp(key, "base_url") == 0 || strcmp(key, "model") == 0 ||
			    strcmp(key, "key_env") == 0) {
				if (config_engine_string(p, ev, sub, key, e) == -1)
					return -1;
			} else {
				char psub[160];
				config_field(psub, sizeof psub, "%s.%s", sub, key);
				return config_fail(p, ek, psub, "unknown key");
			}
		}
	}
	return 0;
}

static void
config_rule_clear(struct config_rule *r)
{
	free(r->id);
	free(r->match);
	free(r->reason);
	free(r->builtin);
	memset(r, 0, sizeof *r);
}

static struct config_rule *
config_rule_find(struct config *cfg, const char *id)
{
	for (size_t i = 0; i < cfg->n_rules; i++)
		if (strcmp(cfg->rules[i].id, id) == 0)
			return &cfg->rules[i];
	return NULL;
}

/*
 * One entry of rules: a new rule (id and match), or a change to a starter rule named
 * by its id (enabled, reason, or a match that replaces its built-in matcher).
 */
static int
config_parse_rule(struct config_parse *p, const yaml_node_t *item, const char *sub,
    struct config *cfg)
{
	yaml_node_pair_t	*pair;
	const yaml_node_t	*k, *v, *idnode = item;
	const char		*key, *s = NULL;
	char			 fsub[160];
	struct config_rule	 t, *r, *nr;
	int			 enabled = -1;

	memset(&t, 0, sizeof t);
	for (pair = item->data.mapping.pairs.start; pair < item->data.mapping.pairs.top;
	    pair++) {
		k = yaml_document_get_node(p->doc, pair->key);
		v = yaml_document_get_node(p->doc, pair->value);
		if (!config_is_scalar(k))
			goto fail_keys;
		key = config_scalar(k);
		config_field(fsub, sizeof fsub, "%s.%s", sub, key);
		if (strcmp(key, "enabled") == 0) {
			if (config_get_bool(p, v, fsub, &enabled) == -1)
				goto fail;
			continue;
		}
		if (strcmp(key, "id") != 0 && strcmp(key, "match") != 0 &&
		    strcmp(key, "reason") != 0) {
			config_fail(p, k, fsub, "unknown key");
			goto fail;
		}
		if (config_get_string(p, v, fsub, &s) == -1)
			goto fail;
		if (*s == '\0') {
			config_fail(p, v, fsub, "must not be empty");
			goto fail;
		}
		if (strcmp(key, "id") == 0) {
			if (!config_valid_name(s, "-.", 1) || strlen(s) > 48) {
				config_fail(p, v, fsub, "'%s' is not a rule id (letters, "
				    "digits, - . _; at most 48)", s);
				goto fail;
			}
			idnode = v;
			free(t.id);
			t.id = strdup(s);
		} else if (strcmp(key, "match") == 0) {
			free(t.match);
			t.match = strdup(s);
		} else {
			free(t.reason);
			t.reason = strdup(s);
		}
	}
	config_field(fsub, sizeof fsub, "%s.id", sub);
	if (t.id == NULL) {
		config_fail(p, item, sub, "a rule needs an id");
		goto fail;
	}
	if ((r = config_rule_find(cfg, t.id)) != NULL) {
		if (r->from_file || r->builtin == NULL) {
			config_fail(p, idnode, fsub, "rule id '%s' used twice", t.id);
			goto fail;
		}
		/* A starter rule: what the entry names replaces the default. */
		r->from_file = 1;
		if (enabled != -1)
			r->enabled = enabled;
		if (t.reason != NULL) {
			free(r->reason);
			r->reason = t.reason;
			t.reason = NULL;
		}
		if (t.match != NULL) {
			free(r->builtin);
			r->builtin = NULL;
			r->match = t.match;
			t.match = NULL;
		}
		config_rule_clear(&t);
		return 0;
	}
	if (t.match == NULL) {
		config_fail(p, item, sub, "a rule needs both id and match (only a starter "
		    "rule can be named by its id alone)");
		goto fail;
	}
	if (t.reason == NULL && (t.reason = strdup("blocked by a configured rule")) == NULL)
		goto fail_oom;
	if ((nr = realloc(cfg->rules, (cfg->n_rules + 1) * sizeof *nr)) == NULL)
		goto fail_oom;
	cfg->rules = nr;
	t.enabled = enabled != 0;
	t.from_file = 1;
	cfg->rules[cfg->n_rules++] = t;
	return 0;
fail_keys:
	config_fail(p, k, sub, "keys must be strings");
	goto fail;
fail_oom:
	config_fail(p, item, sub, "out of memory");
fail:
	config_rule_clear(&t);
	return -1;
}

/* prices: { MODEL: { input: N, output: N, cache_write: N, cache_read: N } } */
static const char *const config_price_fields[4] = {
	"input", "output", "cache_write", "cache_read",
};

static int
config_parse_prices(struct config_parse *p, const yaml_node_t *n, struct config *cfg)
{
	yaml_node_pair_t	*pair, *ep;
	const yaml_node_t	*k, *v, *ek, *ev;
	struct config_price	*np, *pr;
	const char		*model, *key;
	char			 sub[320], f[400];
	size_t			 i;
	int			 seen;

	if (n == NULL || n->type != YAML_MAPPING_NODE)
		return config_fail(p, n, "prices", "expected a mapping of model names");
	for (pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
		if ((model = config_pair(p, pair, "prices", "keys must be model names",
		    &k, &v)) == NULL)
			return -1;
		config_field(sub, sizeof sub, "prices.%s", model);
		if (!config_valid_name(model, "-.:/@", 1) || strlen(model) > 256)
			return config_fail(p, k, sub, "'%s' is not a model name (letters, "
			    "digits and _-.:/@, at most 256)", model);
		if (config_price(cfg, model) != NULL)
			return config_fail(p, k, sub, "model listed twice");
		if (v == NULL || v->type != YAML_MAPPING_NODE)
			return config_fail(p, v, sub, "expected a mapping of input, output, "
			    "cache_write, cache_read (dollars per million tokens)");
		if ((np = realloc(cfg->prices, (cfg->n_prices + 1) * sizeof *np)) == NULL)
			return config_fail(p, k, sub, "out of memory");
		cfg->prices = np;
		pr = &cfg->prices[cfg->n_prices];
		memset(pr, 0, sizeof *pr);
		if ((pr->model = strdup(model)) == NULL)
			return config_fail(p, k, sub, "out of memory");
		cfg->n_prices++;
		seen = 0;
		for (ep = v->data.mapping.pairs.start; ep < v->data.mapping.pairs.top; ep++) {
			ek = yaml_document_get_node(p->doc, ep->key);
			ev = yaml_document_get_node(p->doc, ep->value);
			key = config_is_scalar(ek) ? config_scalar(ek) : "";
			config_field(f, sizeof f, "%s.%s", sub, key);
			for (i = 0; i < 4; i++)
				if (strcmp(key, config_price_fields[i]) == 0)
					break;
			if (i == 4)
				return config_fail(p, ek, f, "unknown key (input, output, "
				    "cache_write, cache_read)");
			if (seen & (1 << i))
				return config_fail(p, ek, f, "given twice");
			seen |= 1 << i;
			if (config_get_double(p, ev, f, 0, CONFIG_PRICE_MAX,
			    &pr->per_mtok[i]) == -1)
				return -1;
		}
		/* Input and output are what every turn costs: both must be named. */
		if ((seen & 3) != 3)
			return config_fail(p, v, sub, "input and output are required");
	}
	return 0;
}

const struct config_price *
config_price(const struct config *cfg, const char *model)
{
	if (model == NULL)
		return NULL;
	for (size_t i = 0; i < cfg->n_prices; i++)
		if (strcmp(cfg->prices[i].model, model) == 0)
			return &cfg->prices[i];
	return NULL;
}

static int
config_parse_rules(struct config_parse *p, const yaml_node_t *n, struct config *cfg)
{
	yaml_node_item_t	*it;
	const yaml_node_t	*item;
	char			 sub[128];

	if (n == NULL || n->type != YAML_SEQUENCE_NODE)
		return config_fail(p, n, "rules", "expected a list");
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		item = yaml_document_get_node(p->doc, *it);
		config_field(sub, sizeof sub, "rules[%ld]", (long)(it - n->data.sequence.items.start));
		if (item == NULL || item->type != YAML_MAPPING_NODE)
			return config_fail(p, item, sub, "expected a mapping with id, match, reason");
		if (config_parse_rule(p, item, sub, cfg) == -1)
			return -1;
	}
	return 0;
}

/* The starter rules of floor.h, on, each under its own id. */
static int
config_starter_rules(struct config *cfg)
{
	const struct floor_starter	*st;
	size_t				 n;

	st = floor_starters(&n);
	if ((cfg->rules = calloc(n, sizeof *cfg->rules)) == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct config_rule *r = &cfg->rules[i];
		cfg->n_rules++;
		r->enabled = 1;
		if ((r->id = strdup(st[i].id)) == NULL ||
		    (r->builtin = strdup(st[i].id)) == NULL ||
		    (r->reason = strdup(st[i].reason)) == NULL)
			return -1;
	}
	return 0;
}

/* The top-level keys that are one int in a range: config_parse_root reads them alike. */
static const struct config_int_field {
	const char	*name;
	long		 min, max;
	size_t		 offset;
} config_int_fields[] = {
	{ "api_port", 0, 65535, offsetof(struct config, api_port) },
	{ "max_concurrent_runs", 1, 64, offsetof(struct config, max_concurrent_runs) },
	{ "disk_free_floor_mb", 0, 1048576, offsetof(struct config, disk_free_floor_mb) },
	{ "import_checkout_max_mb", 1, 1048576, offsetof(struct config, import_checkout_max_mb) },
	{ "keep_runs", 0, 10000, offsetof(struct config, keep_runs) },
	{ "jobs_rediscover_minutes", 0, 1440, offsetof(struct config, jobs_rediscover_minutes) },
	{ "archive_retention_days", 0, 36500, offsetof(struct config, archive_retention_days) },
};

static const struct config_int_field *
config_int_field(const char *key)
{
	size_t	i;

	for (i = 0; i < sizeof config_int_fields / sizeof config_int_fields[0]; i++)
		if (strcmp(key, config_int_fields[i].name) == 0)
			return &config_int_fields[i];
	return NULL;
}

static int
config_parse_root(struct config_parse *p, const yaml_node_t *root, struct config *cfg)
{
	yaml_node_pair_t	*pair;
	const yaml_node_t	*k, *v;
	const char		*key;
	const struct config_int_field *f;
	long			 l;

	if (root == NULL)
		return 0;	/* an empty file: the defaults stand */
	if (root->type != YAML_MAPPING_NODE)
		return config_fail(p, root, "(top level)", "expected a mapping");
	for (pair = root->data.mapping.pairs.start; pair < root->data.mapping.pairs.top; pair++) {
		if ((key = config_pair(p, pair, "(top level)", "keys must be strings",
		    &k, &v)) == NULL)
			return -1;
		if ((f = config_int_field(key)) != NULL) {
			if (config_get_long(p, v, key, f->min, f->max, &l) == -1)
				return -1;
			*(int *)((char *)cfg + f->offset) = (int)l;
		} else if (strcmp(key, "sandbox") == 0) {
			if (config_parse_policy(p, v, "sandbox", &cfg->sandbox) == -1)
				return -1;
		} else if (strcmp(key, "engines") == 0) {
			if (config_parse_engines(p, v, cfg) == -1)
				return -1;
		} else if (strcmp(key, "budgets") == 0) {
			if (config_parse_budgets(p, v, cfg) == -1)
				return -1;
		} else if (strcmp(key, "limits") == 0) {
			if (config_parse_limits(p, v, cfg) == -1)
				return -1;
		} else if (strcmp(key, "approvals") == 0) {
			if (config_parse_approvals(p, v, cfg) == -1)
				return -1;
		} else if (strcmp(key, "protected_branches") == 0) {
			if (config_get_list(p, v, key, config_check_branch,
			    "a branch name", &cfg->protected_branches) == -1)
				return -1;
		} else if (strcmp(key, "run_log_max_bytes") == 0) {
			/* 4 KiB .. 1 TiB: a cap below a few lines would hide every run. */
			if (config_get_long(p, v, key, CONFIG_MIN_RUN_LOG,
			    CONFIG_MAX_RUN_LOG, &l) == -1)
				return -1;
			cfg->run_log_max_bytes = l;
		} else if (strcmp(key, "rules") == 0) {
			if (config_parse_rules(p, v, cfg) == -1)
				return -1;
		} else if (strcmp(key, "prices") == 0) {
			if (config_parse_prices(p, v, cfg) == -1)
				return -1;
		} else if (strcmp(key, "desktop_notifications") == 0) {
			if (config_get_bool(p, v, key, &cfg->desktop_notifications) == -1)
				return -1;
		} else if (strcmp(key, "network") == 0) {
			if (config_parse_network(p, v, key, &cfg->network_open,
			    &cfg->network_allow) == -1)
				return -1;
		} else
			return config_fail(p, k, key, "unknown key");
	}
	return 0;
}

int
config_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	policy_init(&cfg->sandbox);
	cfg->budget_dollars = CONFIG_DEFAULT_DOLLARS;
	cfg->budget_turns = CONFIG_DEFAULT_TURNS;
	cfg->budget_seconds = CONFIG_DEFAULT_SECONDS;
	cfg->budget_wait = CONFIG_DEFAULT_BUDGET_WAIT;
	cfg->limit_processes = CONFIG_DEFAULT_LIMIT_PROCESSES;
	cfg->limit_memory_mb = CONFIG_DEFAULT_LIMIT_MEMORY_MB;
	cfg->api_port = CONFIG_DEFAULT_PORT;
	cfg->max_concurrent_runs = CONFIG_DEFAULT_CONCURRENCY;
	cfg->disk_free_floor_mb = CONFIG_DEFAULT_DISK_FLOOR_MB;
	cfg->import_checkout_max_mb = CONFIG_DEFAULT_CHECKOUT_MAX_MB;
	cfg->keep_runs = CONFIG_DEFAULT_KEEP_RUNS;
	cfg->jobs_rediscover_minutes = CONFIG_DEFAULT_JOBS_MINUTES;
	cfg->approvals_max_per_run = CONFIG_DEFAULT_APPROVALS_PER_RUN;
	cfg->approvals_per_minute = CONFIG_DEFAULT_APPROVALS_PER_MINUTE;
	cfg->approvals_ask = AUTOALLOW_ASK_DEFAULT;
	cfg->archive_retention_days = CONFIG_DEFAULT_ARCHIVE_DAYS;
	cfg->run_log_max_bytes = CONFIG_DEFAULT_RUN_LOG;
	if (strlist_add(&cfg->protected_branches, "main") == -1 ||
	    strlist_add(&cfg->protected_branches, "master") == -1 ||
	    config_starter_rules(cfg) == -1) {
		config_free(cfg);
		return -1;
	}
	return 0;
}

/*
 * No mapping may name a key twice: YAML leaves the answer to the reader, and a second
 * "budgets:" silently replacing the first is exactly the mistake to name. Depth is
 * bounded by the file's size (CONFIG_MAX_SIZE) and libyaml's own nesting limit.
 */
static int
config_no_duplicates(struct config_parse *p, const yaml_node_t *n, const char *field,
    int depth)
{
	yaml_node_pair_t	*a, *b;
	yaml_node_item_t	*it;
	const yaml_node_t	*ka, *kb;
	char			 sub[128];

	if (n == NULL || depth > 64)
		return 0;
	if (n->type == YAML_SEQUENCE_NODE) {
		for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++)
			if (config_no_duplicates(p, yaml_document_get_node(p->doc, *it),
			    field, depth + 1) == -1)
				return -1;
		return 0;
	}
	if (n->type != YAML_MAPPING_NODE)
		return 0;
	for (a = n->data.mapping.pairs.start; a < n->data.mapping.pairs.top; a++) {
		ka = yaml_document_get_node(p->doc, a->key);
		if (ka == NULL || !config_is_scalar(ka))
			continue;
		if (field[0] != '\0')
			config_field(sub, sizeof sub, "%s.%s", field, config_scalar(ka));
		else
			config_field(sub, sizeof sub, "%s", config_scalar(ka));
		for (b = a + 1; ka != NULL && config_is_scalar(ka) &&
		    b < n->data.mapping.pairs.top; b++) {
			kb = yaml_document_get_node(p->doc, b->key);
			if (kb != NULL && config_is_scalar(kb) &&
			    strcmp(config_scalar(ka), config_scalar(kb)) == 0)
				return config_fail(p, kb, sub,
				    "given twice (first on line %lu)",
				    (unsigned long)ka->start_mark.line + 1);
		}
		if (config_no_duplicates(p, yaml_document_get_node(p->doc, a->value),
		    sub, depth + 1) == -1)
			return -1;
	}
	return 0;
}

int
config_parse(const char *name, const char *text, size_t len, struct config *cfg,
    char *err, size_t errlen)
{
	yaml_parser_t		 parser;
	yaml_document_t		 doc;
	struct config		 tmp;
	struct config_parse	 p = { name, &doc, err, errlen };
	yaml_node_t		*root;
	int			 rc;

	if (len > CONFIG_MAX_SIZE) {
		snprintf(err, errlen, "%s:1: (file): larger than %d bytes", name,
		    CONFIG_MAX_SIZE);
		return -1;
	}
	if (memchr(text, '\0', len) != NULL) {
		snprintf(err, errlen, "%s:1: (file): contains a NUL byte", name);
		return -1;
	}
	if (config_defaults(&tmp) == -1) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -1;
	}
	if (!yaml_parser_initialize(&parser)) {
		config_free(&tmp);
		snprintf(err, errlen, "%s: out of memory", name);
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "%s:%lu: (syntax): %s", name,
		    (unsigned long)parser.problem_mark.line + 1,
		    parser.problem != NULL ? parser.problem : "malformed YAML");
		yaml_parser_delete(&parser);
		config_free(&tmp);
		return -1;
	}
	root = yaml_document_get_root_node(&doc);
	rc = config_no_duplicates(&p, root, "", 0);
	if (rc == 0)
		rc = config_parse_root(&p, root, &tmp);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (rc == -1) {
		config_free(&tmp);
		return -1;
	}
	if ((tmp.path = strdup(name)) == NULL) {
		config_free(&tmp);
		snprintf(err, errlen, "%s: out of memory", name);
		return -1;
	}
	*cfg = tmp;
	return 0;
}

int
config_load(const char *path, int must_exist, struct config *cfg, char *err,
    size_t errlen)
{
	struct stat	 st;
	char		*buf;
	ssize_t		 n;
	size_t		 off = 0;
	int		 fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT && !must_exist)
			return config_defaults(cfg) == -1 ? -1 : 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	if (st.st_size > CONFIG_MAX_SIZE) {
		snprintf(err, errlen, "%s:1: (file): larger than %d bytes", path,
		    CONFIG_MAX_SIZE);
		close(fd);
		return -1;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		close(fd);
		return -1;
	}
	while (off < (size_t)st.st_size) {
		n = read(fd, buf + off, (size_t)st.st_size - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	buf[off] = '\0';
	rc = config_parse(path, buf, off, cfg, err, errlen);
	free(buf);
	return rc;
}

int
config_default_path(char *out, size_t outlen)
{
	char	 root[PATH_MAX];

	if (paths_clockwork_home(root, sizeof root) == -1)
		return -1;
	if ((size_t)snprintf(out, outlen, "%s/config.yaml", root) >= outlen) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

void
config_free(struct config *cfg)
{
	free(cfg->path);
	policy_free(&cfg->sandbox);
	for (size_t i = 0; i < cfg->n_engines; i++) {
		free(cfg->engines[i].name);
		free(cfg->engines[i].base_url);
		free(cfg->engines[i].model);
		free(cfg->engines[i].key_env);
		strlist_free(&cfg->engines[i].network_allow);
		policy_free(&cfg->engines[i].sandbox);
	}
	free(cfg->engines);
	free(cfg->engine_default);
	strlist_free(&cfg->protected_branches);
	strlist_free(&cfg->network_allow);
	for (size_t i = 0; i < cfg->n_rules; i++) {
		free(cfg->rules[i].id);
		free(cfg->rules[i].match);
		free(cfg->rules[i].reason);
		free(cfg->rules[i].builtin);
	}
	free(cfg->rules);
	for (size_t i = 0; i < cfg->n_prices; i++)
		free(cfg->prices[i].model);
	free(cfg->prices);
	memset(cfg, 0, sizeof *cfg);
}

const struct config_engine *
config_engine(const struct config *cfg, const char *engine)
{
	for (size_t i = 0; i < cfg->n_engines; i++)
		if (strcmp(cfg->engines[i].name, engine) == 0)
			return &cfg->engines[i];
	return NULL;
}

const struct policy *
config_engine_policy(const struct config *cfg, const char *engine)
{
	for (size_t i = 0; i < cfg->n_engines; i++)
		if (strcmp(cfg->engines[i].name, engine) == 0)
			return &cfg->engines[i].sandbox;
	return NULL;
}

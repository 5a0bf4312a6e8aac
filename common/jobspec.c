/*
 * The jobs parser (jobspec.h). YAML is first turned into the same cJSON tree JSON
 * gives (every scalar a string, nesting and node count bounded so aliases cannot
 * multiply the work), and one schema walker reads that tree. The walker looks up only
 * the five job fields; every other key is recorded by name as ignored and its value
 * is not looked at, so no spelling of a permission mode, engine, key or budget can
 * reach a field.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <yaml.h>

#include "jobspec.h"

struct jobspec_ctx {
	const char	*name;
	char		*err;
	size_t		 errlen;
	size_t		 nodes;		/* YAML nodes visited */
};

static int
jobspec_fail(struct jobspec_ctx *c, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
jobspec_fail(struct jobspec_ctx *c, const char *field, const char *fmt, ...)
{
	char	msg[320];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "%s: %s: %s", c->name, field, msg);
	return -1;
}

int
jobspec_format_of(const char *path)
{
	size_t	len = strlen(path);

	if (len >= 5 && strcmp(path + len - 5, ".json") == 0)
		return JOBSPEC_JSON;
	if ((len >= 5 && strcmp(path + len - 5, ".yaml") == 0) ||
	    (len >= 4 && strcmp(path + len - 4, ".yml") == 0))
		return JOBSPEC_YAML;
	return -1;
}

int
jobspec_name_valid(const char *s)
{
	size_t	len = strlen(s);

	if (len == 0 || len > JOBSPEC_MAX_NAME || s[0] == '.' || s[0] == '-')
		return 0;
	if (strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
	    != len)
		return 0;
	if (strstr(s, "..") != NULL || (len >= 5 && strcmp(s + len - 5, ".lock") == 0))
		return 0;
	return 1;
}

int
jobspec_path_valid(const char *s)
{
	const char	*p = s, *slash;
	size_t		 n;

	if (*s == '\0' || *s == '/' || strlen(s) > JOBSPEC_MAX_PATH)
		return 0;
	for (; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '\\')
			return 0;
	for (p = s; *p != '\0'; p = slash + 1) {
		slash = strchr(p, '/');
		n = slash != NULL ? (size_t)(slash - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return 0;
		if (slash == NULL)
			break;
	}
	return 1;
}

/* ---- YAML to cJSON ---------------------------------------------------------------- */

static cJSON	*jobspec_yaml_node(struct jobspec_ctx *, yaml_document_t *, yaml_node_t *,
		    int depth, const char *where);

static cJSON *
jobspec_yaml_node(struct jobspec_ctx *c, yaml_document_t *doc, yaml_node_t *n, int depth,
    const char *where)
{
	cJSON		*o = NULL, *v;
	yaml_node_t	*k, *val;
	yaml_node_item_t *it;
	yaml_node_pair_t *pair;
	char		 key[JOBSPEC_MAX_KEY + 1];

	if (n == NULL) {
		jobspec_fail(c, where, "missing node");
		return NULL;
	}
	if (++c->nodes > JOBSPEC_MAX_NODES) {
		jobspec_fail(c, where, "more than %d nodes (aliases counted each time)",
		    JOBSPEC_MAX_NODES);
		return NULL;
	}
	if (depth > JOBSPEC_MAX_DEPTH) {
		jobspec_fail(c, where, "nested deeper than %d", JOBSPEC_MAX_DEPTH);
		return NULL;
	}
	switch (n->type) {
	case YAML_SCALAR_NODE:
		if (memchr(n->data.scalar.value, '\0', n->data.scalar.length) != NULL) {
			jobspec_fail(c, where, "a NUL byte in a value");
			return NULL;
		}
		if ((o = cJSON_CreateString((const char *)n->data.scalar.value)) == NULL)
			jobspec_fail(c, where, "out of memory");
		return o;
	case YAML_SEQUENCE_NODE:
		if ((o = cJSON_CreateArray()) == NULL)
			break;
		for (it = n->data.sequence.items.start; it < n->data.sequence.items.top;
		    it++) {
			if ((v = jobspec_yaml_node(c, doc, yaml_document_get_node(doc, *it),
			    depth + 1, where)) == NULL) {
				cJSON_Delete(o);
				return NULL;
			}
			cJSON_AddItemToArray(o, v);
		}
		return o;
	case YAML_MAPPING_NODE:
		if ((o = cJSON_CreateObject()) == NULL)
			break;
		for (pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top;
		    pair++) {
			k = yaml_document_get_node(doc, pair->key);
			val = yaml_document_get_node(doc, pair->value);
			if (k == NULL || k->type != YAML_SCALAR_NODE) {
				cJSON_Delete(o);
				jobspec_fail(c, where, "a key that is not a plain string");
				return NULL;
			}
			snprintf(key, sizeof key, "%s", (const char *)k->data.scalar.value);
			if (memchr(k->data.scalar.value, '\0', k->data.scalar.length) != NULL ||
			    cJSON_GetObjectItemCaseSensitive(o,
			    (const char *)k->data.scalar.value) != NULL) {
				cJSON_Delete(o);
				jobspec_fail(c, where, "key '%s' given twice (or holds a NUL)",
				    key);
				return NULL;
			}
			if ((v = jobspec_yaml_node(c, doc, val, depth + 1, where)) == NULL) {
				cJSON_Delete(o);
				return NULL;
			}
			cJSON_AddItemToObject(o, (const char *)k->data.scalar.value, v);
		}
		return o;
	default:
		jobspec_fail(c, where, "an empty or unknown YAML node");
		return NULL;
	}
	jobspec_fail(c, where, "out of memory");
	return NULL;
}

static cJSON *
jobspec_yaml(struct jobspec_ctx *c, const char *text, size_t len)
{
	yaml_parser_t	 parser;
	yaml_document_t	 doc;
	yaml_node_t	*root;
	cJSON		*o;

	if (!yaml_parser_initialize(&parser)) {
		jobspec_fail(c, "(file)", "out of memory");
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		jobspec_fail(c, "(syntax)", "line %lu: %s",
		    (unsigned long)parser.problem_mark.line + 1,
		    parser.problem != NULL ? parser.problem : "malformed YAML");
		yaml_parser_delete(&parser);
		return NULL;
	}
	if ((root = yaml_document_get_root_node(&doc)) == NULL) {
		jobspec_fail(c, "(file)", "empty: no document");
		o = NULL;
	} else
		o = jobspec_yaml_node(c, &doc, root, 0, "(file)");
	yaml_document_delete(&doc);
	/* A second document would be text nobody reviews: refused, not ignored. */
	if (o != NULL && (!yaml_parser_load(&parser, &doc) ||
	    yaml_document_get_root_node(&doc) != NULL)) {
		if (parser.error == YAML_NO_ERROR)
			yaml_document_delete(&doc);
		cJSON_Delete(o);
		o = NULL;
		jobspec_fail(c, "(file)", "more than one YAML document, or text after it");
	} else if (o != NULL)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return o;
}

/* ---- the schema ------------------------------------------------------------------- */

static int
jobspec_ignore(struct jobspec_ctx *c, struct jobspec *js, const char *prefix,
    const char *key)
{
	char	*s;

	if (js->n_ignored >= JOBSPEC_MAX_IGNORED) {
		js->ignored_more++;
		return 0;
	}
	if (asprintf(&s, "%s%.*s", prefix, JOBSPEC_MAX_KEY, key) == -1)
		return jobspec_fail(c, "(file)", "out of memory");
	js->ignored[js->n_ignored++] = s;
	return 0;
}

/* A string field of at most max bytes; non-empty when required. */
static int
jobspec_string(struct jobspec_ctx *c, const cJSON *v, const char *field, size_t max,
    int nonempty, char **out)
{
	if (!cJSON_IsString(v) || v->valuestring == NULL)
		return jobspec_fail(c, field, "must be a string");
	if (nonempty && v->valuestring[0] == '\0')
		return jobspec_fail(c, field, "must not be empty");
	if (strlen(v->valuestring) > max)
		return jobspec_fail(c, field, "longer than %zu bytes", max);
	if ((*out = strdup(v->valuestring)) == NULL)
		return jobspec_fail(c, field, "out of memory");
	return 0;
}

static int
jobspec_context(struct jobspec_ctx *c, const cJSON *v, const char *field,
    struct jobspec_job *j)
{
	const cJSON	*p;
	char		 f[96];
	int		 n = cJSON_GetArraySize(v);

	if (!cJSON_IsArray(v))
		return jobspec_fail(c, field, "must be a list of paths");
	if (n > JOBSPEC_MAX_CONTEXT)
		return jobspec_fail(c, field, "more than %d paths", JOBSPEC_MAX_CONTEXT);
	if (n == 0)
		return 0;
	if ((j->context = calloc((size_t)n, sizeof *j->context)) == NULL)
		return jobspec_fail(c, field, "out of memory");
	cJSON_ArrayForEach(p, v) {
		snprintf(f, sizeof f, "%.64s[%zu]", field, j->n_context);
		if (jobspec_string(c, p, f, JOBSPEC_MAX_PATH, 1,
		    &j->context[j->n_context]) == -1)
			return -1;
		j->n_context++;
		if (!jobspec_path_valid(j->context[j->n_context - 1]))
			return jobspec_fail(c, f, "must be a relative path inside the "
			    "repository (no leading '/', no '..', no control characters)");
	}
	return 0;
}

static int
jobspec_job(struct jobspec_ctx *c, struct jobspec *js, const cJSON *o, size_t idx,
    struct jobspec_job *j)
{
	const cJSON	*it;
	char		 f[96], prefix[32];
	int		 rc = 0;

	snprintf(prefix, sizeof prefix, "jobs[%zu].", idx);
	if (!cJSON_IsObject(o)) {
		snprintf(f, sizeof f, "jobs[%zu]", idx);
		return jobspec_fail(c, f, "must be a mapping of name, prompt, description, "
		    "schedule, context");
	}
	cJSON_ArrayForEach(it, o) {
		const char *k = it->string != NULL ? it->string : "";

		snprintf(f, sizeof f, "jobs[%zu].%.*s", idx, 24, k);
		if (strcmp(k, "name") == 0) {
			if ((rc = jobspec_string(c, it, f, JOBSPEC_MAX_NAME, 1, &j->name)) == 0 &&
			    !jobspec_name_valid(j->name))
				rc = jobspec_fail(c, f, "must be 1-%d of A-Z a-z 0-9 . _ -, not "
				    "starting with '.' or '-', without '..'", JOBSPEC_MAX_NAME);
		} else if (strcmp(k, "prompt") == 0)
			rc = jobspec_string(c, it, f, JOBSPEC_MAX_PROMPT, 1, &j->prompt);
		else if (strcmp(k, "description") == 0)
			rc = jobspec_string(c, it, f, JOBSPEC_MAX_DESCRIPTION, 0,
			    &j->description);
		else if (strcmp(k, "schedule") == 0)
			rc = jobspec_string(c, it, f, JOBSPEC_MAX_SCHEDULE, 1, &j->schedule);
		else if (strcmp(k, "context") == 0)
			rc = jobspec_context(c, it, f, j);
		else
			rc = jobspec_ignore(c, js, prefix, k);
		if (rc == -1)
			return -1;
	}
	if (j->name == NULL) {
		snprintf(f, sizeof f, "jobs[%zu].name", idx);
		return jobspec_fail(c, f, "is required");
	}
	if (j->prompt == NULL) {
		snprintf(f, sizeof f, "jobs[%zu].prompt", idx);
		return jobspec_fail(c, f, "is required");
	}
	for (size_t i = 0; i < idx; i++)
		if (strcmp(js->jobs[i].name, j->name) == 0) {
			snprintf(f, sizeof f, "jobs[%zu].name", idx);
			return jobspec_fail(c, f, "'%s' is used by jobs[%zu] too", j->name, i);
		}
	return 0;
}

/* Duplicate keys in a JSON object: cJSON keeps both, and a reader might take either. */
static int
jobspec_json_dups(struct jobspec_ctx *c, const cJSON *o, int depth)
{
	const cJSON	*a, *b;

	if (depth > JOBSPEC_MAX_DEPTH)
		return jobspec_fail(c, "(file)", "nested deeper than %d", JOBSPEC_MAX_DEPTH);
	for (a = o != NULL ? o->child : NULL; a != NULL; a = a->next) {
		if (cJSON_IsObject(o) && a->string != NULL)
			for (b = a->next; b != NULL; b = b->next)
				if (b->string != NULL && strcmp(a->string, b->string) == 0)
					return jobspec_fail(c, "(file)", "key '%.*s' given "
					    "twice in one object", JOBSPEC_MAX_KEY, a->string);
		if ((cJSON_IsObject(a) || cJSON_IsArray(a)) &&
		    jobspec_json_dups(c, a, depth + 1) == -1)
			return -1;
	}
	return 0;
}

static int
jobspec_root(struct jobspec_ctx *c, const cJSON *root, struct jobspec *js)
{
	const cJSON	*it, *jobs = NULL, *j;
	size_t		 n;

	if (!cJSON_IsObject(root))
		return jobspec_fail(c, "(file)", "must be a mapping with a 'jobs' list");
	if ((js->ignored = calloc(JOBSPEC_MAX_IGNORED, sizeof *js->ignored)) == NULL)
		return jobspec_fail(c, "(file)", "out of memory");
	cJSON_ArrayForEach(it, root) {
		if (it->string != NULL && strcmp(it->string, "jobs") == 0)
			jobs = it;
		else if (jobspec_ignore(c, js, "", it->string != NULL ? it->string : "") == -1)
			return -1;
	}
	if (jobs == NULL)
		return jobspec_fail(c, "jobs", "is required (a list of jobs)");
	if (!cJSON_IsArray(jobs))
		return jobspec_fail(c, "jobs", "must be a list");
	n = (size_t)cJSON_GetArraySize(jobs);
	if (n > JOBSPEC_MAX_JOBS)
		return jobspec_fail(c, "jobs", "more than %d jobs", JOBSPEC_MAX_JOBS);
	if (n > 0 && (js->jobs = calloc(n, sizeof *js->jobs)) == NULL)
		return jobspec_fail(c, "jobs", "out of memory");
	cJSON_ArrayForEach(j, jobs) {
		/* Counted first, so that a failure frees what the job got so far. */
		js->n_jobs++;
		if (jobspec_job(c, js, j, js->n_jobs - 1, &js->jobs[js->n_jobs - 1]) == -1)
			return -1;
	}
	return 0;
}

int
jobspec_parse(const char *name, const char *text, size_t len, enum jobspec_format fmt,
    struct jobspec *out, char *err, size_t errlen)
{
	struct jobspec_ctx	 c = { name, err, errlen, 0 };
	cJSON			*root;
	int			 rc;

	memset(out, 0, sizeof *out);
	if (len > JOBSPEC_MAX_BYTES)
		return jobspec_fail(&c, "(file)", "larger than %d bytes", JOBSPEC_MAX_BYTES);
	if (memchr(text, '\0', len) != NULL)
		return jobspec_fail(&c, "(file)", "holds a NUL byte: not a text file");
	if (fmt == JOBSPEC_YAML)
		root = jobspec_yaml(&c, text, len);
	else {
		if ((root = cJSON_ParseWithLength(text, len)) == NULL)
			return jobspec_fail(&c, "(syntax)", "not valid JSON (near byte %ld)",
			    cJSON_GetErrorPtr() != NULL ? (long)(cJSON_GetErrorPtr() - text) :
			    -1L);
		if (jobspec_json_dups(&c, root, 0) == -1) {
			cJSON_Delete(root);
			return -1;
		}
	}
	if (root == NULL)
		return -1;
	rc = jobspec_root(&c, root, out);
	cJSON_Delete(root);
	if (rc == -1)
		jobspec_free(out);
	return rc;
}

void
jobspec_free(struct jobspec *js)
{
	if (js == NULL)
		return;
	for (size_t i = 0; i < js->n_jobs; i++) {
		struct jobspec_job *j = &js->jobs[i];

		free(j->name);
		free(j->prompt);
		free(j->description);
		free(j->schedule);
		for (size_t k = 0; k < j->n_context; k++)
			free(j->context[k]);
		free(j->context);
	}
	free(js->jobs);
	for (size_t i = 0; i < js->n_ignored; i++)
		free(js->ignored[i]);
	free(js->ignored);
	memset(js, 0, sizeof *js);
}

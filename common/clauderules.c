/*
 * Claude Code's permission rules in a repository's settings, parsed and mapped onto
 * Clockwork's task rules: see clauderules.h. The mapping asks the floor for a
 * command's family, so a task rule names exactly what autoallow.c will compare.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoallow.h"
#include "clauderules.h"
#include "floor.h"
#include "json.h"

static const char *const clauderules_lists[] = { "allow", "ask", "deny" };

const char *
clauderules_list_name(enum clauderules_list l)
{
	return (unsigned)l < 3 ? clauderules_lists[l] : "?";
}

const char *
clauderules_effect_name(enum clauderules_effect e)
{
	switch (e) {
	case CLAUDERULES_TASK_ALLOW:
		return "allow";
	case CLAUDERULES_TASK_ASK:
		return "ask";
	default:
		return "none";
	}
}

/*
 * The one family the floor names for a plain command line, in fam; -1 when it names
 * none or several (a wrapper's payload, two commands, a program it cannot see).
 */
static int
clauderules_family(const char *cmd, char *fam, size_t famlen, int *denied)
{
	static const struct floor_policy pol = { .home = "/nonexistent" };
	struct floor_result		 fr;

	if (floor_evaluate(cmd, &pol, &fr) == -1)
		return -1;
	if (denied != NULL)
		*denied = fr.verdict == FLOOR_DENY;
	if (fr.family_opaque || fr.n_families != 1 ||
	    (size_t)snprintf(fam, famlen, "%s", fr.families[0]) >= famlen)
		return -1;
	return 0;
}

/*
 * 1 when the family is a program whose next word the floor makes part of the
 * family (npm, git, cargo, make): a prefix of the program alone then stands for
 * every subcommand, which no one task rule names.
 */
static int
clauderules_has_subcommands(const char *fam)
{
	char	 probe[FLOOR_FAMILY_MAX + 16], f2[FLOOR_FAMILY_MAX];

	if ((size_t)snprintf(probe, sizeof probe, "%s zzsub", fam) >= sizeof probe)
		return 1;
	return clauderules_family(probe, f2, sizeof f2, NULL) == -1 ||
	    strcmp(f2, fam) != 0;
}

/* The rule's command with runs of spaces made one, trimmed; -1 when too long. */
static int
clauderules_squeeze(const char *s, size_t n, char *out, size_t outlen)
{
	size_t	 o = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == ' ' && (o == 0 || out[o - 1] == ' '))
			continue;
		if (o + 1 >= outlen)
			return -1;
		out[o++] = s[i];
	}
	while (o > 0 && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
	return 0;
}

static void __attribute__((format(printf, 2, 3)))
clauderules_note(struct clauderules_rule *r, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(r->note, sizeof r->note, fmt, ap);
	va_end(ap);
}

/* A tool other than Bash: why Clockwork's task rules do not hold it. */
static void
clauderules_other_tool(const char *tool, size_t tlen, struct clauderules_rule *r)
{
	static const char *const files[] = { "Read", "Edit", "Write", "MultiEdit",
	    "NotebookEdit", "Glob", "Grep", "LS", NULL };

	for (size_t i = 0; files[i] != NULL; i++)
		if (strlen(files[i]) == tlen && strncmp(tool, files[i], tlen) == 0) {
			clauderules_note(r, "a file rule: what a run may read and write is "
			    "the sandbox's (its worktree), not a task rule");
			return;
		}
	if ((tlen == 8 && strncmp(tool, "WebFetch", 8) == 0) ||
	    (tlen == 9 && strncmp(tool, "WebSearch", 9) == 0)) {
		clauderules_note(r, "a network rule: the hosts a run reaches are the task's "
		    "egress rules (cwctl network), not a task rule");
		return;
	}
	if (tlen > 5 && strncmp(tool, "mcp__", 5) == 0) {
		clauderules_note(r, "an MCP tool rule: task rules hold command families "
		    "only");
		return;
	}
	clauderules_note(r, "not a Bash rule: task rules hold command families only");
}

void
clauderules_map(enum clauderules_list list, const char *text, struct clauderules_rule *r)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789 ._-/:=+@%,";
	char		 cmd[CLAUDERULES_MAX_RULE], fam[FLOOR_FAMILY_MAX];
	const char	*spec, *end;
	size_t		 tlen, n;
	int		 prefix = 0, denied = 0;

	r->list = list;
	r->effect = CLAUDERULES_NONE;
	r->family[0] = '\0';
	r->note[0] = '\0';
	tlen = strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_-");
	if (tlen == 0 || (text[tlen] != '\0' && text[tlen] != '(') ||
	    (text[tlen] == '(' && (n = strlen(text)) > 0 && text[n - 1] != ')')) {
		clauderules_note(r, "not a rule Claude Code understands (Tool or "
		    "Tool(specifier))");
		return;
	}
	if (tlen != 4 || strncmp(text, "Bash", 4) != 0) {
		clauderules_other_tool(text, tlen, r);
		return;
	}
	/*
	 * The specifier, between the parentheses, as written. Spaces around it are not
	 * trimmed but refused: trimmed, "Bash(gi:*    )" became the prefix rule "gi",
	 * broader than what it says (fuzz/clauderules); an import is never broader.
	 */
	spec = text[tlen] == '(' ? text + tlen + 1 : text + tlen;
	end = text[tlen] == '(' ? text + strlen(text) - 1 : spec;
	if (spec < end && (*spec == ' ' || end[-1] == ' ')) {
		clauderules_note(r, "spaces around the pattern: not mapped");
		return;
	}
	n = (size_t)(end - spec);
	if (memchr(spec, '\\', n) != NULL) {
		clauderules_note(r, "an escape in the pattern: not mapped");
		return;
	}
	if (n >= 2 && spec[n - 1] == '*' && (spec[n - 2] == ':' || spec[n - 2] == ' ')) {
		prefix = 1;		/* "npm test:*", "npm test *" */
		n -= 2;
	} else if (n >= 1 && spec[n - 1] == '*' && memchr(spec, '*', n - 1) == NULL &&
	    n > 1) {
		clauderules_note(r, "a wildcard with no space before it matches longer words "
		    "too (\"npm t*\" matches \"npm tx\"): not mapped");
		return;
	}
	if (memchr(spec, '*', n) != NULL && !(n == 1 && spec[0] == '*')) {
		clauderules_note(r, "a wildcard inside the command stands for any program or "
		    "argument there: not mapped");
		return;
	}
	if (clauderules_squeeze(spec, n, cmd, sizeof cmd) == -1) {
		clauderules_note(r, "too long");
		return;
	}
	if (cmd[0] == '\0' || strcmp(cmd, "*") == 0) {
		if (list == CLAUDERULES_ALLOW)
			clauderules_note(r, "allows every command: a rule for everything is never "
			    "imported");
		else
			clauderules_note(r, "covers every command: not mapped (cwctl task ask "
			    "NAME all asks about every call)");
		return;
	}
	if (strspn(cmd, plain) != strlen(cmd)) {
		clauderules_note(r, "shell syntax in the command (quotes, operators, "
		    "variables, globs): not mapped");
		return;
	}
	if (clauderules_family(cmd, fam, sizeof fam, &denied) == -1 ||
	    !autoallow_family_valid(fam)) {
		clauderules_note(r, "Clockwork names no one command family for it (a "
		    "wrapper, several commands, a program it cannot see): not mapped");
		return;
	}
	if (list != CLAUDERULES_ALLOW) {
		r->effect = CLAUDERULES_TASK_ASK;
		snprintf(r->family, sizeof r->family, "%s", fam);
		if (strcmp(fam, cmd) != 0)
			clauderules_note(r, "asks every '%s' (more than the rule names)", fam);
		else if (clauderules_has_subcommands(fam))
			clauderules_note(r, "asks '%s' and every subcommand of it", fam);
		return;
	}
	if (denied) {
		clauderules_note(r, "the floor denies this command: no rule allows it");
		return;
	}
	if (strcmp(fam, cmd) != 0) {
		n = strlen(fam);
		if (strncmp(cmd, fam, n) == 0 && cmd[n] == ' ')
			clauderules_note(r, "narrower than a command family: a task rule would "
			    "allow every '%s'", fam);
		else
			clauderules_note(r, "its command family is '%s', which the rule does "
			    "not name", fam);
		return;
	}
	if (prefix && clauderules_has_subcommands(fam)) {
		clauderules_note(r, "allows every subcommand of '%s': a task rule names one "
		    "subcommand ('%s SUBCOMMAND:*')", fam, fam);
		return;
	}
	r->effect = CLAUDERULES_TASK_ALLOW;
	snprintf(r->family, sizeof r->family, "%s", fam);
	if (!prefix)
		clauderules_note(r, "Claude allows exactly this command; the task rule "
		    "allows '%s' with any arguments, up to ordinary risk", fam);
	else
		clauderules_note(r, "up to ordinary risk");
}

/* How many members of obj are named key: a duplicate makes the file ambiguous. */
static int
clauderules_count(const cJSON *obj, const char *key)
{
	const cJSON	*e;
	int		 n = 0;

	cJSON_ArrayForEach(e, obj)
		if (e->string != NULL && strcmp(e->string, key) == 0)
			n++;
	return n;
}

void
clauderules_free(struct clauderules *c)
{
	for (size_t i = 0; c->rules != NULL && i < c->n; i++)
		free(c->rules[i].text);
	free(c->rules);
	c->rules = NULL;
	c->n = 0;
}

int
clauderules_parse(const char *file, const char *text, size_t len,
    struct clauderules *out, char *err, size_t errlen)
{
	cJSON		*root = NULL;
	const cJSON	*perm, *arr, *e;
	size_t		 total = 0, i;
	int		 l;

	out->rules = NULL;
	out->n = 0;
	if (len > CLAUDERULES_MAX_BYTES) {
		snprintf(err, errlen, "%s: %zu bytes, larger than the limit of %d", file, len,
		    CLAUDERULES_MAX_BYTES);
		return -1;
	}
	if ((root = json_parse(text, len)) == NULL || !cJSON_IsObject(root)) {
		snprintf(err, errlen, "%s: not a JSON object", file);
		goto fail;
	}
	if (clauderules_count(root, "permissions") > 1) {
		snprintf(err, errlen, "%s: permissions: given twice", file);
		goto fail;
	}
	if ((perm = cJSON_GetObjectItemCaseSensitive(root, "permissions")) == NULL) {
		cJSON_Delete(root);
		return 0;
	}
	if (!cJSON_IsObject(perm)) {
		snprintf(err, errlen, "%s: permissions: not an object", file);
		goto fail;
	}
	for (l = 0; l < 3; l++) {
		if (clauderules_count(perm, clauderules_lists[l]) > 1) {
			snprintf(err, errlen, "%s: permissions.%s: given twice", file,
			    clauderules_lists[l]);
			goto fail;
		}
		if ((arr = cJSON_GetObjectItemCaseSensitive(perm, clauderules_lists[l])) ==
		    NULL)
			continue;
		if (!cJSON_IsArray(arr)) {
			snprintf(err, errlen, "%s: permissions.%s: not an array", file,
			    clauderules_lists[l]);
			goto fail;
		}
		i = 0;
		cJSON_ArrayForEach(e, arr) {
			if (!cJSON_IsString(e)) {
				snprintf(err, errlen, "%s: permissions.%s[%zu]: not a string",
				    file, clauderules_lists[l], i);
				goto fail;
			}
			if (strlen(e->valuestring) >= CLAUDERULES_MAX_RULE) {
				snprintf(err, errlen, "%s: permissions.%s[%zu]: %zu bytes, longer "
				    "than the limit of %d", file, clauderules_lists[l], i,
				    strlen(e->valuestring), CLAUDERULES_MAX_RULE - 1);
				goto fail;
			}
			i++;
			if (++total > CLAUDERULES_MAX_RULES) {
				snprintf(err, errlen, "%s: permissions: more than %d rules", file,
				    CLAUDERULES_MAX_RULES);
				goto fail;
			}
		}
	}
	if (total > 0 && (out->rules = calloc(total, sizeof *out->rules)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", file);
		goto fail;
	}
	for (l = 0; l < 3; l++) {
		arr = cJSON_GetObjectItemCaseSensitive(perm, clauderules_lists[l]);
		cJSON_ArrayForEach(e, arr) {
			struct clauderules_rule *r = &out->rules[out->n];
			if ((r->text = strdup(e->valuestring)) == NULL) {
				snprintf(err, errlen, "%s: out of memory", file);
				goto fail;
			}
			out->n++;
			clauderules_map((enum clauderules_list)l, r->text, r);
		}
	}
	cJSON_Delete(root);
	return 0;
fail:
	cJSON_Delete(root);
	clauderules_free(out);
	return -1;
}

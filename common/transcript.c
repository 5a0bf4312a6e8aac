/*
 * The readable transcript's entries (common/transcript.h): made bounded, checked, and
 * rendered for a person.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "record.h"
#include "transcript.h"
#include "vis.h"

static cJSON *
transcript_new(const char *kind)
{
	cJSON	*o;

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "k", kind);
	return o;
}

/* Add len bytes of s under name, cut to max on a UTF-8 boundary; "cut" counts the rest. */
static void
transcript_add(cJSON *o, const char *name, const char *s, size_t len, size_t max)
{
	char	*t;
	size_t	 n;

	if (o == NULL || s == NULL)
		return;
	n = record_cut(s, len, max);
	if ((t = strndup(s, n)) == NULL)
		return;
	/* A NUL inside the engine's text ends it here: what follows is counted as cut. */
	n = strlen(t);
	json_add_string(o, name, t);
	free(t);
	if (n < len)
		cJSON_AddNumberToObject(o, "cut", (double)(len - n));
}

static void
transcript_add_str(cJSON *o, const char *name, const char *s, size_t max)
{
	if (s != NULL)
		transcript_add(o, name, s, strlen(s), max);
}

cJSON *
transcript_text(const char *text)
{
	cJSON	*o = transcript_new("text");

	transcript_add_str(o, "text", text != NULL ? text : "", TRANSCRIPT_TEXT_MAX);
	return o;
}

cJSON *
transcript_tool(const char *tool, const char *id, const char *command, const char *path,
    const char *detail)
{
	cJSON	*o = transcript_new("tool");

	record_add_string(o, "tool", tool != NULL ? tool : "?", 128);
	if (id != NULL)
		record_add_string(o, "id", id, 128);
	transcript_add_str(o, "command", command, TRANSCRIPT_FIELD_MAX);
	if (command == NULL)
		transcript_add_str(o, "path", path, TRANSCRIPT_FIELD_MAX);
	if (command == NULL && path == NULL)
		transcript_add_str(o, "detail", detail, TRANSCRIPT_FIELD_MAX);
	return o;
}

cJSON *
transcript_result(const char *id, const char *text, size_t len, int error)
{
	cJSON	*o = transcript_new("result");

	if (id != NULL)
		record_add_string(o, "id", id, 128);
	transcript_add(o, "text", text != NULL ? text : "", text != NULL ? len : 0,
	    TRANSCRIPT_RESULT_MAX);
	cJSON_AddBoolToObject(o, "error", error != 0);
	return o;
}

cJSON *
transcript_floor(const char *rule, const char *reason, const char *command)
{
	cJSON	*o = transcript_new("floor");

	record_add_string(o, "rule", rule != NULL ? rule : "", 128);
	transcript_add_str(o, "reason", reason != NULL ? reason : "", TRANSCRIPT_FIELD_MAX);
	transcript_add_str(o, "command", command != NULL ? command : "",
	    TRANSCRIPT_FIELD_MAX);
	return o;
}

cJSON *
transcript_ask(const char *approval, const char *tool, const char *command,
    double deadline)
{
	cJSON	*o = transcript_new("ask");

	record_add_string(o, "approval", approval != NULL ? approval : "", 128);
	record_add_string(o, "tool", tool != NULL ? tool : "?", 256);
	transcript_add_str(o, "command", command, TRANSCRIPT_FIELD_MAX);
	if (deadline > 0)
		cJSON_AddNumberToObject(o, "deadline", deadline);
	return o;
}

cJSON *
transcript_answer(const char *approval, const char *decision, const char *by,
    const char *reason)
{
	cJSON	*o = transcript_new("answer");

	record_add_string(o, "approval", approval != NULL ? approval : "", 128);
	record_add_string(o, "decision", decision != NULL ? decision : "deny", 16);
	record_add_string(o, "by", by != NULL ? by : "", 256);
	transcript_add_str(o, "reason", reason, TRANSCRIPT_FIELD_MAX);
	return o;
}

cJSON *
transcript_final(const char *text, int error)
{
	cJSON	*o = transcript_new("final");

	transcript_add_str(o, "text", text != NULL ? text : "", TRANSCRIPT_TEXT_MAX);
	cJSON_AddBoolToObject(o, "error", error != 0);
	return o;
}

cJSON *
transcript_usage(double dollars, int turns)
{
	cJSON	*o = transcript_new("usage");

	cJSON_AddNumberToObject(o, "dollars", dollars);
	cJSON_AddNumberToObject(o, "turns", turns);
	return o;
}

cJSON *
transcript_note(const char *text)
{
	cJSON	*o = transcript_new("note");

	transcript_add_str(o, "text", text != NULL ? text : "", TRANSCRIPT_FIELD_MAX);
	return o;
}

/* ---- checking ------------------------------------------------------------------ */

struct transcript_shape {
	const char	*kind;
	const char	*strings;	/* required string fields, space separated */
	const char	*optional;	/* optional string fields */
	const char	*numbers;	/* required numbers */
};

static const struct transcript_shape transcript_shapes[] = {
	{ "text",   "text",			"",			"" },
	{ "tool",   "tool",			"id command path detail", "" },
	{ "result", "text",			"id",			"" },
	{ "floor",  "rule reason command",	"",			"" },
	{ "ask",    "approval tool",		"command",		"" },
	{ "answer", "approval decision by",	"reason",		"" },
	{ "final",  "text",			"",			"" },
	{ "usage",  "",				"",			"dollars turns" },
	{ "note",   "text",			"",			"" },
};

/* Each space-separated name of list passes want(field) (or is absent when optional). */
static int
transcript_fields(const cJSON *o, const char *list, int optional, int number)
{
	char		 name[32];
	const char	*p = list;
	const cJSON	*f;
	size_t		 n;

	while (*p != '\0') {
		n = strcspn(p, " ");
		if (n == 0 || n >= sizeof name)
			return -1;
		memcpy(name, p, n);
		name[n] = '\0';
		p += n + (p[n] == ' ');
		f = cJSON_GetObjectItemCaseSensitive(o, name);
		if (f == NULL && optional)
			continue;
		if (number ? !cJSON_IsNumber(f) : !cJSON_IsString(f))
			return -1;
	}
	return 0;
}

int
transcript_check(const cJSON *o)
{
	const char	*k = json_get_string(o, "k");

	if (k == NULL)
		return -1;
	for (size_t i = 0; i < sizeof transcript_shapes / sizeof transcript_shapes[0]; i++)
		if (strcmp(transcript_shapes[i].kind, k) == 0)
			return transcript_fields(o, transcript_shapes[i].strings, 0, 0) == 0 &&
			    transcript_fields(o, transcript_shapes[i].optional, 1, 0) == 0 &&
			    transcript_fields(o, transcript_shapes[i].numbers, 0, 1) == 0 ?
			    0 : -1;
	return -1;
}

/* ---- rendering ----------------------------------------------------------------- */

#define C_RESET		"\033[0m"
#define C_BOLD		"\033[1m"
#define C_DIM		"\033[2m"
#define C_RED		"\033[31m"
#define C_GREEN		"\033[32m"
#define C_YELLOW	"\033[33m"
#define C_CYAN		"\033[36m"
#define C_MAGENTA	"\033[35m"

struct transcript_out {
	char	*buf;
	size_t	 len, cap;
	int	 failed;
};

static void
transcript_put(struct transcript_out *w, const char *s, size_t n)
{
	char	*nb;
	size_t	 ncap;

	if (w->failed)
		return;
	if (w->len + n + 1 > w->cap) {
		ncap = w->cap == 0 ? 256 : w->cap;
		while (ncap < w->len + n + 1)
			ncap *= 2;
		if ((nb = realloc(w->buf, ncap)) == NULL) {
			w->failed = 1;
			return;
		}
		w->buf = nb;
		w->cap = ncap;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

static void
transcript_puts(struct transcript_out *w, const char *s)
{
	transcript_put(w, s, strlen(s));
}

/* Untrusted text, made visible; multi-line text continues indented under its tag. */
static void
transcript_putv(struct transcript_out *w, const char *s, int multiline)
{
	char		*v;
	const char	*p, *nl;

	if (s == NULL)
		return;
	if ((v = vis_str(s, multiline ? VIS_KEEP_NL | VIS_KEEP_TAB : 0)) == NULL) {
		w->failed = 1;
		return;
	}
	/* Trailing newlines say nothing. */
	for (size_t n = strlen(v); n > 0 && v[n - 1] == '\n'; n--)
		v[n - 1] = '\0';
	for (p = v; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		transcript_put(w, p, (size_t)(nl - p));
		transcript_puts(w, "\n         ");
	}
	transcript_puts(w, p);
	free(v);
}

static void
transcript_tag(struct transcript_out *w, const char *tag, const char *color, int on)
{
	char	pad[16];

	if (on)
		transcript_puts(w, color);
	snprintf(pad, sizeof pad, "%-8s ", tag);
	transcript_puts(w, pad);
	if (on)
		transcript_puts(w, C_RESET);
}

static void
transcript_cut(struct transcript_out *w, const cJSON *e)
{
	double	cut;
	char	buf[64];

	if (json_get_number(e, "cut", &cut) == 0 && cut > 0) {
		snprintf(buf, sizeof buf, " [... %.0f bytes more]", cut);
		transcript_puts(w, buf);
	}
}

char *
transcript_render(const cJSON *e, int color)
{
	struct transcript_out	 w = { 0 };
	const char		*k, *s;
	double			 d;
	int			 n, err = 0;
	char			 buf[128];

	if (transcript_check(e) == -1)
		return NULL;
	k = json_get_string(e, "k");
	(void)json_get_bool(e, "error", &err);
	if (strcmp(k, "text") == 0) {
		transcript_tag(&w, "agent", C_BOLD, color);
		transcript_putv(&w, json_get_string(e, "text"), 1);
		transcript_cut(&w, e);
	} else if (strcmp(k, "tool") == 0) {
		transcript_tag(&w, "tool", C_CYAN, color);
		transcript_putv(&w, json_get_string(e, "tool"), 0);
		if ((s = json_get_string(e, "command")) != NULL ||
		    (s = json_get_string(e, "path")) != NULL ||
		    (s = json_get_string(e, "detail")) != NULL) {
			transcript_puts(&w, "  ");
			transcript_putv(&w, s, 1);
		}
		transcript_cut(&w, e);
	} else if (strcmp(k, "result") == 0) {
		transcript_tag(&w, err ? "error" : "result", err ? C_RED : C_DIM, color);
		transcript_putv(&w, json_get_string(e, "text"), 1);
		transcript_cut(&w, e);
	} else if (strcmp(k, "floor") == 0) {
		transcript_tag(&w, "floor", C_RED, color);
		transcript_puts(&w, "refused ");
		transcript_putv(&w, json_get_string(e, "command"), 0);
		transcript_puts(&w, " (");
		transcript_putv(&w, json_get_string(e, "rule"), 0);
		transcript_puts(&w, "): ");
		transcript_putv(&w, json_get_string(e, "reason"), 0);
	} else if (strcmp(k, "ask") == 0) {
		s = json_get_string(e, "approval");
		transcript_tag(&w, "WAITING", C_YELLOW C_BOLD, color);
		transcript_puts(&w, "approval ");
		transcript_putv(&w, s, 0);
		transcript_puts(&w, ": ");
		transcript_putv(&w, json_get_string(e, "tool"), 0);
		if (json_get_string(e, "command") != NULL) {
			transcript_puts(&w, " ");
			transcript_putv(&w, json_get_string(e, "command"), 0);
		}
		transcript_puts(&w, "\n         answer: cwctl approve ");
		transcript_putv(&w, s, 0);
		transcript_puts(&w, "   or   cwctl deny ");
		transcript_putv(&w, s, 0);
	} else if (strcmp(k, "answer") == 0) {
		s = json_get_string(e, "decision");
		n = strcmp(s, "allow") == 0;
		transcript_tag(&w, "answer", n ? C_GREEN : C_RED, color);
		transcript_puts(&w, "approval ");
		transcript_putv(&w, json_get_string(e, "approval"), 0);
		transcript_puts(&w, n ? " allowed" : " denied");
		if (*json_get_string(e, "by") != '\0') {
			transcript_puts(&w, " by ");
			transcript_putv(&w, json_get_string(e, "by"), 0);
		}
		if ((s = json_get_string(e, "reason")) != NULL && *s != '\0') {
			transcript_puts(&w, ": ");
			transcript_putv(&w, s, 0);
		}
	} else if (strcmp(k, "final") == 0) {
		transcript_tag(&w, err ? "failed" : "final", err ? C_RED : C_GREEN, color);
		transcript_putv(&w, json_get_string(e, "text"), 1);
		transcript_cut(&w, e);
	} else if (strcmp(k, "usage") == 0) {
		transcript_tag(&w, "usage", C_DIM, color);
		(void)json_get_number(e, "dollars", &d);
		(void)json_get_int(e, "turns", &n);
		snprintf(buf, sizeof buf, "$%.4f, %d turn%s", d, n, n == 1 ? "" : "s");
		transcript_puts(&w, buf);
	} else {
		transcript_tag(&w, "note", C_MAGENTA, color);
		transcript_putv(&w, json_get_string(e, "text"), 0);
	}
	if (w.failed) {
		free(w.buf);
		return NULL;
	}
	return w.buf;
}

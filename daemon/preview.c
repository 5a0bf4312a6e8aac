/*
 * The security preview of an imported job or template (SPEC W2): what a person
 * should see before they enable work that arrived with someone else's commit. It is
 * computed once, when the job is discovered, and stored with the task, so the
 * person reviews exactly what was read:
 *
 *  - the whole prompt as it would run, with every hidden character made visible
 *    (common/vis.c), and the defaults it gets (engine, mode, budgets, schedule);
 *  - which floor and configured rules its text would trip (common/floor.c, on the
 *    whole text, each line, each `quoted` span and each line's tail from every word,
 *    so "please run git push --force origin main" trips like the command would);
 *  - URLs and paths it mentions, paths outside the repository marked;
 *  - instruction-override phrases ("ignore previous instructions" and the like);
 *  - hidden characters (zero-width, bidi controls, tags, invalid UTF-8) with their
 *    offsets, and words that mix Latin letters with Cyrillic, Greek or fullwidth
 *    lookalikes (homoglyph tricks);
 *  - what the run would be allowed to read and write;
 *  - keys in the file that were ignored, and for a changed job what changed.
 * Every list is bounded and says how many findings it left out.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon.h"
#include "floor.h"
#include "jobs.h"
#include "json.h"
#include "paths.h"
#include "preview.h"
#include "store.h"
#include "vis.h"

#define PREVIEW_MAX_LIST	32	/* entries per finding list */
#define PREVIEW_MAX_EVALS	1000	/* floor evaluations per prompt */
#define PREVIEW_MAX_SNIPPET	160	/* bytes of text quoted per finding */
#define PREVIEW_MAX_EVAL_LEN	512	/* bytes of text per floor evaluation */
#define PREVIEW_SEEN_SLOTS	8192	/* > every piece the budget allows */

struct preview_list {
	cJSON	*a;
	size_t	 n, more;
};

static const char *const preview_overrides[] = {
	"ignore previous instructions", "ignore all previous", "ignore the above",
	"ignore prior instructions", "ignore your instructions", "disregard previous",
	"disregard all previous", "disregard the above", "disregard your instructions",
	"forget your instructions", "forget previous instructions", "forget everything",
	"new instructions:", "you are now", "system prompt", "developer mode",
	"jailbreak", "do anything now", "override your", "bypass", "without asking",
	"do not tell the user", "don't tell the user", "pretend you are",
	"<|im_start|>", "</system>", "<system>",
};

static int
preview_list_room(struct preview_list *l)
{
	if (l->n >= PREVIEW_MAX_LIST) {
		l->more++;
		return 0;
	}
	l->n++;
	return 1;
}

static void
preview_list_done(cJSON *o, const char *key, struct preview_list *l)
{
	char	k[64];

	cJSON_AddItemToObject(o, key, l->a);
	if (l->more > 0) {
		snprintf(k, sizeof k, "%s_more", key);
		cJSON_AddNumberToObject(o, k, (double)l->more);
	}
}

/* A visible copy of len bytes at s, cut to PREVIEW_MAX_SNIPPET. */
static cJSON *
preview_snippet(const char *s, size_t len)
{
	char	*v;
	cJSON	*j;

	if (len > PREVIEW_MAX_SNIPPET)
		len = PREVIEW_MAX_SNIPPET;
	if ((v = vis_buf(s, len, 0, NULL)) == NULL)
		return cJSON_CreateString("[unprintable]");
	j = cJSON_CreateString(v);
	free(v);
	return j;
}

/* ---- rules ------------------------------------------------------------------------ */

struct preview_rules {
	struct daemon		*d;
	struct floor_policy	 pol;
	struct preview_list	 l;
	size_t			 evals;
	int			 truncated;	/* the budget ran out */
	size_t			*shared;	/* evaluations left to the caller, or NULL */
	uint64_t		*seen;		/* PREVIEW_SEEN_SLOTS hashes, 0: free */
};

/* FNV-1a of a piece, for skipping pieces already evaluated. */
static uint64_t
preview_hash(const char *s, size_t len)
{
	uint64_t	h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h != 0 ? h : 1;
}

/* 1 when this piece was evaluated before (then it costs nothing), else records it. */
static int
preview_seen(struct preview_rules *pr, const char *s, size_t len)
{
	uint64_t	h = preview_hash(s, len);
	size_t		i = (size_t)(h % PREVIEW_SEEN_SLOTS);

	while (pr->seen[i] != 0) {
		if (pr->seen[i] == h)
			return 1;
		i = (i + 1) % PREVIEW_SEEN_SLOTS;
	}
	pr->seen[i] = h;
	return 0;
}

/*
 * Evaluate one piece of the prompt, and record the first time each rule denies one.
 * Prose is not shell: a stray quote or apostrophe after a command makes the whole
 * piece unparseable, so on a parse failure the piece up to its last quote is tried,
 * and so on (each try costs one evaluation of the budget).
 */
static void
preview_rule_eval(struct preview_rules *pr, const char *s, size_t len)
{
	struct floor_result	 r;
	const cJSON		*it;
	char			*text;
	cJSON			*e;
	int			 known;

	if (len > PREVIEW_MAX_EVAL_LEN)
		len = PREVIEW_MAX_EVAL_LEN;
	while (len > 0) {
		if (pr->evals >= PREVIEW_MAX_EVALS ||
		    (pr->shared != NULL && *pr->shared == 0)) {
			pr->truncated = 1;
			return;
		}
		if (preview_seen(pr, s, len))
			return;
		pr->evals++;
		if (pr->shared != NULL)
			(*pr->shared)--;
		if ((text = strndup(s, len)) == NULL)
			return;
		if (floor_evaluate(text, &pr->pol, &r) == -1 || r.verdict != FLOOR_DENY) {
			free(text);
			return;
		}
		free(text);
		if (strncmp(r.rule, "floor.parse", 11) != 0)
			break;
		while (len > 0 && strchr("'\"`", s[len - 1]) == NULL)
			len--;
		if (len > 0)
			len--;		/* the quote itself */
	}
	if (len == 0)
		return;
	known = 0;
	cJSON_ArrayForEach(it, pr->l.a)
		if (strcmp(json_get_string(it, "rule"), r.rule) == 0)
			known = 1;
	if (!known && preview_list_room(&pr->l)) {
		e = cJSON_CreateObject();
		json_add_string(e, "rule", r.rule);
		cJSON_AddBoolToObject(e, "floor", r.floor);
		json_add_string(e, "reason", r.reason);
		cJSON_AddItemToObject(e, "text", preview_snippet(s, len));
		cJSON_AddItemToArray(pr->l.a, e);
	}
}

/*
 * Each line (clauses 0) or each clause of prose (1: cut at , ; ! ? and a full stop
 * before a space) whole, or (tails 1) its tail from every word after the first on:
 * "then run git push --force origin main, and" holds "git push --force origin main".
 */
static void
preview_pieces(struct preview_rules *pr, const char *prompt, int clauses, int tails)
{
	const char	*line, *end, *p, *q;

	for (line = prompt; *line != '\0'; line = *end != '\0' ? end + 1 : end) {
		end = line + strcspn(line, clauses ? "\n,;!?" : "\n");
		if (clauses)
			for (q = line; q < end; q++)
				if (*q == '.' && (q[1] == ' ' || q[1] == '\n' || q[1] == '\0')) {
					end = q;
					break;
				}
		for (p = line; p < end; ) {
			while (p < end && isspace((unsigned char)*p))
				p++;
			if (p >= end)
				break;
			if (tails == (p != line + strspn(line, " \t\r")))
				preview_rule_eval(pr, p, (size_t)(end - p));
			if (!tails)
				break;
			while (p < end && !isspace((unsigned char)*p))
				p++;
		}
	}
}

static void
preview_rules(struct daemon *d, const char *prompt, size_t *shared, cJSON *o)
{
	struct preview_rules	 pr;
	const char		*p, *q;
	char			 home[PATH_MAX];

	memset(&pr, 0, sizeof pr);
	pr.d = d;
	pr.shared = shared;
	if ((pr.seen = calloc(PREVIEW_SEEN_SLOTS, sizeof *pr.seen)) == NULL) {
		cJSON_AddBoolToObject(o, "rules_incomplete", 1);
		cJSON_AddItemToObject(o, "rules", cJSON_CreateArray());
		return;
	}
	pr.l.a = cJSON_CreateArray();
	pr.pol.protected_branches = d != NULL ? &d->cfg.protected_branches : NULL;
	pr.pol.rules = d != NULL ? d->cfg.rules : NULL;
	pr.pol.n_rules = d != NULL ? d->cfg.n_rules : 0;
	pr.pol.cwhome = d != NULL ? d->home : NULL;
	if (paths_home(home, sizeof home) == 0)
		pr.pol.home = home;

	/*
	 * Cheap and likely pieces first, so that a prompt long enough to use up the
	 * evaluation budget loses only the word-by-word tails: the whole text, each
	 * clause, each line, each `quoted` span, then the tails. Past the budget the
	 * preview says the check is incomplete.
	 */
	preview_rule_eval(&pr, prompt, strlen(prompt));
	preview_pieces(&pr, prompt, 1, 0);
	preview_pieces(&pr, prompt, 0, 0);
	for (p = prompt; (p = strchr(p, '`')) != NULL; p = q + 1) {
		while (*p == '`')
			p++;
		if ((q = strchr(p, '`')) == NULL)
			break;
		preview_rule_eval(&pr, p, (size_t)(q - p));
		while (q[1] == '`')
			q++;
	}
	preview_pieces(&pr, prompt, 1, 1);
	preview_pieces(&pr, prompt, 0, 1);
	cJSON_AddBoolToObject(o, "rules_incomplete", pr.truncated);
	free(pr.seen);
	preview_list_done(o, "rules", &pr.l);
}

/* ---- URLs, paths, override phrases ------------------------------------------------ */

static size_t
preview_token_len(const char *p)
{
	return strcspn(p, " \t\r\n\"'`<>()[]{},;");
}

static void
preview_urls_paths(const char *prompt, cJSON *o)
{
	static const char *const schemes[] = { "http://", "https://", "ftp://", "file://",
	    "ssh://", "git://", "git@", "data:" };
	struct preview_list	 urls = { cJSON_CreateArray(), 0, 0 };
	struct preview_list	 paths = { cJSON_CreateArray(), 0, 0 };
	const char		*p = prompt, *tok;
	size_t			 len;
	int			 url, outside;
	cJSON			*e;

	while (*p != '\0') {
		while (*p != '\0' && preview_token_len(p) == 0)
			p++;
		if (*p == '\0')
			break;
		tok = p;
		len = preview_token_len(p);
		p += len;
		url = 0;
		for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
			if (strncasecmp(tok, schemes[i], strlen(schemes[i])) == 0)
				url = 1;
		if (url) {
			if (preview_list_room(&urls))
				cJSON_AddItemToArray(urls.a, preview_snippet(tok, len));
			continue;
		}
		if (memchr(tok, '/', len) == NULL && strncmp(tok, "~", 1) != 0 &&
		    strncmp(tok, "$HOME", 5) != 0)
			continue;
		outside = tok[0] == '/' || tok[0] == '~' || tok[0] == '$' ||
		    memmem(tok, len, "..", 2) != NULL;
		if (preview_list_room(&paths)) {
			e = cJSON_CreateObject();
			cJSON_AddItemToObject(e, "path", preview_snippet(tok, len));
			cJSON_AddBoolToObject(e, "outside_repository", outside);
			cJSON_AddItemToArray(paths.a, e);
		}
	}
	preview_list_done(o, "urls", &urls);
	preview_list_done(o, "paths", &paths);
}

static void
preview_override_phrases(const char *prompt, cJSON *o)
{
	struct preview_list	 l = { cJSON_CreateArray(), 0, 0 };
	const char		*p;
	cJSON			*e;

	for (size_t i = 0; i < sizeof preview_overrides / sizeof preview_overrides[0]; i++)
		for (p = prompt; (p = strcasestr(p, preview_overrides[i])) != NULL;
		    p += strlen(preview_overrides[i])) {
			if (!preview_list_room(&l))
				break;
			e = cJSON_CreateObject();
			json_add_string(e, "phrase", preview_overrides[i]);
			cJSON_AddNumberToObject(e, "offset", (double)(p - prompt));
			cJSON_AddItemToObject(e, "text", preview_snippet(p,
			    strcspn(p, "\n")));
			cJSON_AddItemToArray(l.a, e);
		}
	preview_list_done(o, "overrides", &l);
}

/* ---- hidden characters and homoglyphs --------------------------------------------- */

/* One UTF-8 sequence at p (len bytes left): its code point and length, or -1. */
static long
preview_utf8(const unsigned char *p, size_t len, size_t *n)
{
	unsigned long	cp;
	size_t		need;

	if (p[0] < 0x80) {
		*n = 1;
		return p[0];
	}
	if ((p[0] & 0xe0) == 0xc0) {
		need = 2;
		cp = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		need = 3;
		cp = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		need = 4;
		cp = p[0] & 0x07;
	} else
		return -1;
	if (len < need)
		return -1;
	for (size_t i = 1; i < need; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return -1;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((need == 2 && cp < 0x80) || (need == 3 && cp < 0x800) ||
	    (need == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*n = need;
	return (long)cp;
}

static const char *
preview_hidden_kind(unsigned long cp)
{
	if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	    cp == 0x200e || cp == 0x200f || cp == 0x061c)
		return "bidi control";
	if ((cp >= 0x200b && cp <= 0x200d) || cp == 0x2060 || cp == 0xfeff)
		return "zero-width";
	if (cp >= 0xe0000 && cp <= 0xe007f)
		return "tag character";
	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
		return "control character";
	return "invisible format character";
}

/* 1 Latin, 2 a lookalike script (Cyrillic, Greek, fullwidth Latin), 0 other. */
static int
preview_script(long cp)
{
	if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z'))
		return 1;
	if ((cp >= 0x0400 && cp <= 0x04ff) || (cp >= 0x0370 && cp <= 0x03ff) ||
	    (cp >= 0xff21 && cp <= 0xff3a) || (cp >= 0xff41 && cp <= 0xff5a))
		return 2;
	return 0;
}

static void
preview_hidden(const char *prompt, cJSON *o)
{
	struct preview_list	 hid = { cJSON_CreateArray(), 0, 0 };
	struct preview_list	 hom = { cJSON_CreateArray(), 0, 0 };
	const unsigned char	*s = (const unsigned char *)prompt;
	size_t			 len = strlen(prompt), i = 0, n, wstart = 0;
	int			 latin = 0, other = 0, sc;
	long			 cp;
	char			 u[24];
	cJSON			*e;

	while (i <= len) {
		if (i == len) {
			cp = ' ';
			n = 1;
		} else if ((cp = preview_utf8(s + i, len - i, &n)) == -1) {
			if (preview_list_room(&hid)) {
				e = cJSON_CreateObject();
				cJSON_AddNumberToObject(e, "offset", (double)i);
				snprintf(u, sizeof u, "\\x%02x", s[i]);
				json_add_string(e, "char", u);
				json_add_string(e, "kind", "invalid UTF-8");
				cJSON_AddItemToArray(hid.a, e);
			}
			i++;
			latin = other = 0;
			wstart = i;
			continue;
		}
		if (cp != '\n' && cp != '\t' && vis_hidden_codepoint((unsigned long)cp) &&
		    preview_list_room(&hid)) {
			e = cJSON_CreateObject();
			cJSON_AddNumberToObject(e, "offset", (double)i);
			snprintf(u, sizeof u, "U+%04lX", (unsigned long)cp);
			json_add_string(e, "char", u);
			json_add_string(e, "kind", preview_hidden_kind((unsigned long)cp));
			cJSON_AddItemToArray(hid.a, e);
		}
		/* A word: letters of any script; it ends at anything else. */
		sc = preview_script(cp);
		if (sc == 1)
			latin = 1;
		else if (sc == 2)
			other = 1;
		else if (!(cp >= 0x80 && !vis_hidden_codepoint((unsigned long)cp) &&
		    cp != 0xa0)) {
			if (latin && other && preview_list_room(&hom)) {
				e = cJSON_CreateObject();
				cJSON_AddNumberToObject(e, "offset", (double)wstart);
				cJSON_AddItemToObject(e, "word", preview_snippet(prompt + wstart,
				    i - wstart));
				json_add_string(e, "kind", "Latin letters mixed with Cyrillic, "
				    "Greek or fullwidth lookalikes");
				cJSON_AddItemToArray(hom.a, e);
			}
			latin = other = 0;
			wstart = i + n;
		}
		i += n;
	}
	preview_list_done(o, "hidden", &hid);
	preview_list_done(o, "homoglyphs", &hom);
}

/* ---- the rest --------------------------------------------------------------------- */

static void
preview_access(const struct preview_input *in, cJSON *o)
{
	cJSON	*a = cJSON_AddObjectToObject(o, "access"), *r, *w;
	char	 buf[PATH_MAX + 128];

	r = cJSON_AddArrayToObject(a, "read");
	w = cJSON_AddArrayToObject(a, "write");
	if (in->task->repo != NULL) {
		snprintf(buf, sizeof buf, "%s: the repository's committed files and objects "
		    "(read-only; the working tree is never touched)", in->task->repo);
		cJSON_AddItemToArray(r, cJSON_CreateString(buf));
		snprintf(buf, sizeof buf, "~/.clockwork/worktrees/%s/<run>: the run's own "
		    "repository, on branch clockwork/%s/<run>", in->name, in->name);
		cJSON_AddItemToArray(w, cJSON_CreateString(buf));
	} else {
		snprintf(buf, sizeof buf, "~/.clockwork/worktrees/%s/<run>: a scratch "
		    "directory", in->name);
		cJSON_AddItemToArray(w, cJSON_CreateString(buf));
	}
	cJSON_AddItemToArray(r, cJSON_CreateString("the system paths and engine install "
	    "the sandbox policy grants (cwctl sandbox exec shows them); no credential "
	    "location"));
	cJSON_AddItemToArray(w, cJSON_CreateString("a private temporary directory"));
	json_add_string(a, "network", "the configured egress allowlist only");
	json_add_string(a, "commands", "every shell command passes the floor; with "
	    "acceptEdits, other tools ask for approval");
	if (strcmp(in->task->engine, "command") == 0)
		json_add_string(a, "engine_note", "engine 'command': the prompt is run as a "
		    "shell command line (sh -c) inside the sandbox");
}

static void
preview_changes(const struct preview_input *in, const cJSON *now, cJSON *o)
{
	static const char *const fields[] = { "prompt", "description",
	    "proposed_schedule", "schedule", "permission_mode", "engine" };
	const cJSON	*a, *b;
	cJSON		*c = cJSON_AddArrayToObject(o, "changes"), *e;

	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		a = cJSON_GetObjectItemCaseSensitive(in->previous, fields[i]);
		b = cJSON_GetObjectItemCaseSensitive(now, fields[i]);
		if ((a == NULL && b == NULL) || (a != NULL && b != NULL &&
		    cJSON_Compare(a, b, 1)))
			continue;
		e = cJSON_CreateObject();
		json_add_string(e, "field", fields[i]);
		cJSON_AddItemToObject(e, "before", a != NULL ? cJSON_Duplicate(a, 1) :
		    cJSON_CreateNull());
		cJSON_AddItemToObject(e, "after", b != NULL ? cJSON_Duplicate(b, 1) :
		    cJSON_CreateNull());
		cJSON_AddItemToArray(c, e);
	}
}

cJSON *
preview_build(struct daemon *d, const struct preview_input *in)
{
	char	 now[STORE_TIME_LEN], *v;
	cJSON	*o = cJSON_CreateObject(), *def, *a;
	int	 warnings = 0;

	if (o == NULL)
		return NULL;
	store_now(now, sizeof now);
	json_add_string(o, "computed_at", now);
	json_add_string(o, "name", in->name);
	if (in->source != NULL)
		cJSON_AddItemToObject(o, "source", cJSON_Duplicate(in->source, 1));
	json_add_string(o, "prompt", in->prompt);
	v = vis_str(in->prompt, VIS_KEEP_NL | VIS_KEEP_TAB);
	json_add_string(o, "prompt_visible", v != NULL ? v : "[unprintable]");
	free(v);
	json_add_string(o, "description", in->description);
	json_add_string(o, "proposed_schedule", in->proposed_schedule);
	a = cJSON_AddArrayToObject(o, "context");
	for (size_t i = 0; i < in->n_context; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(in->context[i]));
	def = cJSON_AddObjectToObject(o, "defaults");
	json_add_string(def, "engine", in->task->engine);
	json_add_string(def, "permission_mode", in->task->permission_mode);
	cJSON_AddNumberToObject(def, "budget_dollars", in->task->budget_dollars);
	cJSON_AddNumberToObject(def, "budget_turns", in->task->budget_turns);
	cJSON_AddNumberToObject(def, "budget_seconds", in->task->budget_seconds);
	json_add_string(def, "schedule", in->task->schedule);
	cJSON_AddBoolToObject(def, "enabled", 0);
	a = cJSON_AddArrayToObject(o, "ignored");
	for (size_t i = 0; i < in->n_ignored; i++) {
		v = vis_str(in->ignored[i], 0);
		cJSON_AddItemToArray(a, cJSON_CreateString(v != NULL ? v : "?"));
		free(v);
	}
	if (in->ignored_more > 0)
		cJSON_AddNumberToObject(o, "ignored_more", (double)in->ignored_more);
	preview_rules(d, in->prompt, in->budget, o);
	preview_urls_paths(in->prompt, o);
	preview_override_phrases(in->prompt, o);
	preview_hidden(in->prompt, o);
	preview_access(in, o);
	if (in->previous != NULL) {
		cJSON	*cur = jobs_definition(in->task);

		json_add_string(cur, "description", in->description);
		json_add_string(cur, "proposed_schedule", in->proposed_schedule);

		preview_changes(in, cur, o);
		cJSON_Delete(cur);
	}
	warnings = cJSON_GetArraySize(cJSON_GetObjectItem(o, "rules")) +
	    cJSON_GetArraySize(cJSON_GetObjectItem(o, "overrides")) +
	    cJSON_GetArraySize(cJSON_GetObjectItem(o, "hidden")) +
	    cJSON_GetArraySize(cJSON_GetObjectItem(o, "homoglyphs")) +
	    cJSON_GetArraySize(cJSON_GetObjectItem(o, "urls")) +
	    (int)in->n_ignored + (int)in->ignored_more +
	    cJSON_IsTrue(cJSON_GetObjectItem(o, "rules_incomplete"));
	cJSON_AddNumberToObject(o, "warnings", warnings);
	return o;
}

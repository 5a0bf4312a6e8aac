/*
 * The Telegram Bot API's JSON (daemon/tgapi.h). Everything read here comes from the
 * network: every field is checked for its type and bounds, and a field that is not
 * what the documentation says makes the update one we skip, never a crash.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "record.h"
#include "runend.h"
#include "tgapi.h"
#include "vis.h"

/* Telegram ids fit in 52 bits; anything else is not one. */
static int
tgapi_id(const cJSON *o, const char *key, int64_t *out)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
	    fabs(v->valuedouble) > 9007199254740991.0 ||
	    v->valuedouble != floor(v->valuedouble))
		return -1;
	*out = (int64_t)v->valuedouble;
	return 0;
}

int
tgapi_reply_parse(const char *body, size_t len, struct tgapi_reply *out)
{
	const cJSON	*ok, *p;
	const char	*s;
	int64_t		 n;

	memset(out, 0, sizeof *out);
	if (body == NULL || len == 0 || len > TGAPI_MAX_REPLY)
		return -1;
	if ((out->root = cJSON_ParseWithLength(body, len)) == NULL ||
	    !cJSON_IsObject(out->root) ||
	    !cJSON_IsBool(ok = cJSON_GetObjectItemCaseSensitive(out->root, "ok"))) {
		tgapi_reply_free(out);
		return -1;
	}
	out->ok = cJSON_IsTrue(ok);
	if (tgapi_id(out->root, "error_code", &n) == 0 && n > 0 && n < 1000)
		out->error_code = (long)n;
	if ((s = json_get_string(out->root, "description")) != NULL)
		snprintf(out->description, sizeof out->description, "%s", s);
	p = cJSON_GetObjectItemCaseSensitive(out->root, "parameters");
	if (cJSON_IsObject(p) && tgapi_id(p, "retry_after", &n) == 0 && n > 0 &&
	    n < 86400)
		out->retry_after = (long)n;
	if (out->ok)
		out->result = cJSON_GetObjectItemCaseSensitive(out->root, "result");
	return 0;
}

int
tgapi_reply_digest(struct tgapi_reply *r)
{
	const cJSON	*u;
	int64_t		 n;
	int		 rc = 0;

	if (cJSON_IsObject(r->result) && tgapi_id(r->result, "message_id", &n) == 0) {
		r->has_message_id = 1;
		r->message_id = n;
	}
	if (cJSON_IsArray(r->result)) {
		r->result_array = 1;
		if ((r->updates = calloc(TGAPI_UPDATES_MAX, sizeof *r->updates)) == NULL)
			rc = -1;
		else
			cJSON_ArrayForEach(u, r->result) {
				if (r->n_updates == TGAPI_UPDATES_MAX)
					break;
				if (tgapi_update_parse(u, &r->updates[r->n_updates]) == 0)
					r->n_updates++;
			}
	}
	cJSON_Delete(r->root);
	r->root = NULL;
	r->result = NULL;
	return rc;
}

void
tgapi_reply_free(struct tgapi_reply *r)
{
	cJSON_Delete(r->root);
	free(r->updates);
	r->root = NULL;
	r->result = NULL;
	r->updates = NULL;
	r->n_updates = 0;
}

static int
tgapi_parse_data(const char *data, struct tgapi_press *p)
{
	const char	*id;
	size_t		 n;

	if (data == NULL || strlen(data) > TGAPI_DATA_MAX ||
	    strncmp(data, TGAPI_DATA_PREFIX, sizeof TGAPI_DATA_PREFIX - 1) != 0)
		return 0;
	data += sizeof TGAPI_DATA_PREFIX - 1;
	if ((data[0] != 'a' && data[0] != 'd' && data[0] != 't') || data[1] != ':')
		return 0;
	id = data + 2;
	n = strlen(id);
	/* Approval ids are ours: letters, digits and '-' (runs.c makes "ap-<hex>"). */
	if (n == 0 || n >= sizeof p->approval_id || strspn(id,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != n)
		return 0;
	p->allow = data[0] == 'a' || data[0] == 't';
	p->for_task = data[0] == 't';
	memcpy(p->approval_id, id, n + 1);
	return 1;
}

int
tgapi_update_parse(const cJSON *u, struct tgapi_press *p)
{
	const cJSON	*cq, *from, *msg, *chat;
	const char	*s;

	memset(p, 0, sizeof *p);
	if (!cJSON_IsObject(u) || tgapi_id(u, "update_id", &p->update_id) == -1 ||
	    p->update_id < 0)
		return -1;
	if (!cJSON_IsObject(cq = cJSON_GetObjectItemCaseSensitive(u, "callback_query")))
		return 0;
	if ((s = json_get_string(cq, "id")) == NULL || *s == '\0' ||
	    strlen(s) >= sizeof p->query_id)
		return 0;
	snprintf(p->query_id, sizeof p->query_id, "%s", s);
	if (!cJSON_IsObject(from = cJSON_GetObjectItemCaseSensitive(cq, "from")) ||
	    tgapi_id(from, "id", &p->from_id) == -1)
		return 0;
	p->is_press = 1;
	if ((s = json_get_string(from, "username")) != NULL &&
	    strlen(s) < sizeof p->from_username && strspn(s,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(s))
		snprintf(p->from_username, sizeof p->from_username, "%s", s);
	/* An old message may come without its chat: such a press can never be checked. */
	if (cJSON_IsObject(msg = cJSON_GetObjectItemCaseSensitive(cq, "message")) &&
	    cJSON_IsObject(chat = cJSON_GetObjectItemCaseSensitive(msg, "chat")) &&
	    tgapi_id(chat, "id", &p->chat_id) == 0) {
		if ((s = json_get_string(chat, "type")) != NULL &&
		    strlen(s) < sizeof p->chat_type)
			snprintf(p->chat_type, sizeof p->chat_type, "%s", s);
		if (tgapi_id(msg, "message_id", &p->message_id) == -1)
			p->message_id = 0;
	} else
		p->chat_id = 0;
	p->ours = tgapi_parse_data(json_get_string(cq, "data"), p);
	return 0;
}

int
tgapi_button_data(char *out, size_t outlen, int allow, const char *approval_id)
{
	int	 n = snprintf(out, outlen, TGAPI_DATA_PREFIX "%c:%s", allow == 2 ? 't' :
		    allow ? 'a' : 'd', approval_id);

	if (n < 0 || (size_t)n >= outlen || n > TGAPI_DATA_MAX)
		return -1;
	return 0;
}

int
tgapi_user_allowed(const char *allowed, int64_t uid)
{
	cJSON		*a;
	const cJSON	*it;
	int		 yes = 0;

	if (allowed == NULL || (a = cJSON_Parse(allowed)) == NULL)
		return 0;
	cJSON_ArrayForEach(it, a)
		if (cJSON_IsNumber(it) && it->valuedouble == (double)uid)
			yes = 1;
	cJSON_Delete(a);
	return yes;
}

/*
 * Negative ids are groups, supergroups and channels in the Bot API; the type is
 * checked too, and either one saying "group" makes it one (the stricter answer).
 */
int
tgapi_chat_is_group(const char *type, int64_t chat_id)
{
	if (chat_id < 0)
		return 1;
	return type == NULL || strcmp(type, "private") != 0;
}

int64_t
tgapi_seconds_left(const char *deadline, time_t now)
{
	struct tm	 tm;
	const char	*end;

	if (deadline == NULL || *deadline == '\0')
		return INT64_MIN;
	memset(&tm, 0, sizeof tm);
	if ((end = strptime(deadline, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
		return INT64_MIN;
	return (int64_t)timegm(&tm) - (int64_t)now;
}

/* The part of an approval's input a person decides on: a Bash command as itself. */
static char *
tgapi_command(const struct store_telegram_item *it)
{
	cJSON		*in;
	const char	*cmd, *host, *q;
	char		*out = NULL, *t;
	int		 port;

	if (it->input == NULL)
		return strdup("");
	if ((in = cJSON_Parse(it->input)) == NULL)
		return strdup(it->input);
	if (it->tool != NULL && strcmp(it->tool, "Bash") == 0 &&
	    (cmd = json_get_string(in, "command")) != NULL)
		out = strdup(cmd);
	else if (it->tool != NULL && strcmp(it->tool, "budget") == 0 &&
	    (q = json_get_string(in, "question")) != NULL)
		out = strdup(q);	/* the runner's budget question */
	else if (it->tool != NULL && strcmp(it->tool, "network") == 0 &&
	    (host = json_get_string(in, "host")) != NULL && json_get_int(in, "port", &port) == 0) {
		/*
		 * The host first, whole, on its own line (Telegram wraps it): it is what the
		 * person approves, far shorter than TGAPI_COMMAND_SHOWN, so never cut.
		 */
		q = json_get_string(in, "question");
		if (asprintf(&out, "%s %s%s%s:%d%s%s", json_get_string(in, "method") != NULL ?
		    json_get_string(in, "method") : "CONNECT", strchr(host, ':') ? "[" : "",
		    host, strchr(host, ':') ? "]" : "", port, q != NULL ? "\n\n" : "",
		    q != NULL ? q : "") == -1)
			out = NULL;
	} else if ((t = cJSON_PrintUnformatted(in)) != NULL) {
		out = strdup(t);
		cJSON_free(t);
	}
	cJSON_Delete(in);
	return out;
}

static void
tgapi_time_left(char *buf, size_t len, int64_t left)
{
	if (left == INT64_MIN)
		snprintf(buf, len, "until the run's time budget ends");
	else if (left <= 0)
		snprintf(buf, len, "none (the deadline has passed)");
	else if (left >= 3600)
		snprintf(buf, len, "%lldh %02lldm", (long long)(left / 3600),
		    (long long)(left % 3600 / 60));
	else
		snprintf(buf, len, "%lldm %02llds", (long long)(left / 60),
		    (long long)(left % 60));
}

char *
tgapi_message_text(const struct store_telegram_item *it, time_t now)
{
	char	*cmd, *shown = NULL, *head = NULL, *text = NULL;
	char	 left[64], who[160], tail[128] = "", risk[160], more[200] = "";
	size_t	 len, cut;
	int	 pending = it->state != NULL && strcmp(it->state, "pending") == 0;

	if ((cmd = tgapi_command(it)) == NULL)
		return NULL;
	/*
	 * The approval's input was masked when it was stored (runs.c); the bytes a run
	 * chose are made visible, then cut.
	 */
	if ((shown = vis_str(cmd, VIS_KEEP_NL | VIS_KEEP_TAB)) == NULL)
		goto done;
	len = strlen(shown);
	cut = record_cut(shown, len, TGAPI_COMMAND_SHOWN);
	if ((head = strndup(shown, cut)) == NULL)
		goto done;
	if (cut < len)
		snprintf(tail, sizeof tail, "\u2026 (+%zu bytes: cwctl approvals show %s)",
		    len - cut, it->approval_id);
	/* The kind of call first: the floor's risk level and the rule that raised it. */
	snprintf(risk, sizeof risk, "Risk: %s%s%s%s", it->risk != NULL ? it->risk :
	    "ordinary", it->risk_rule != NULL ? " (" : "",
	    it->risk_rule != NULL ? it->risk_rule : "", it->risk_rule != NULL ? ")" : "");
	if (pending) {
		tgapi_time_left(left, sizeof left, tgapi_seconds_left(it->deadline, now));
		/* A burst is one message: the run's other asks are counted, not sent. */
		if (it->run_others > 0)
			snprintf(more, sizeof more, "\n\n+%lld more from this run waiting: "
			    "the next comes here once this one is answered, or answer them "
			    "all in the Inbox (cwctl approvals)", (long long)it->run_others);
		if (asprintf(&text, "%s\nApproval needed: %s\n\n%s%s\n\nrun: %s\ntask: %s\n"
		    "approval: %s\ntime left: %s%s", risk, it->tool != NULL ? it->tool : "?",
		    head, tail, it->run_id, it->task, it->approval_id, left, more) == -1)
			text = NULL;
	} else {
		if (it->state != NULL && strcmp(it->state, "expired") == 0)
			snprintf(who, sizeof who, "Expired (%s): no answer counts now",
			    it->answered_by != NULL ? it->answered_by : "clockworkd");
		else
			snprintf(who, sizeof who, "%s by %s", it->state != NULL &&
			    strcmp(it->state, "allowed") == 0 ? "Approved" : "Denied",
			    it->answered_by != NULL ? it->answered_by : "?");
		if (asprintf(&text, "%s\n\n%s: %s%s\n\nrun: %s\ntask: %s\napproval: %s",
		    who, it->tool != NULL ? it->tool : "?", head, tail, it->run_id, it->task,
		    it->approval_id) == -1)
			text = NULL;
	}
	/* Telegram counts characters; bytes are a safe upper bound. */
	if (text != NULL && strlen(text) >= TGAPI_TEXT_MAX)
		text[record_cut(text, strlen(text), TGAPI_TEXT_MAX - 1)] = '\0';
done:
	free(cmd);
	free(shown);
	free(head);
	return text;
}

cJSON *
tgapi_keyboard(const char *approval_id, int always)
{
	cJSON	*kb, *rows, *row, *b;
	char	 data[TGAPI_DATA_MAX + 1];

	if ((kb = cJSON_CreateObject()) == NULL)
		return NULL;
	rows = cJSON_AddArrayToObject(kb, "inline_keyboard");
	row = cJSON_CreateArray();
	cJSON_AddItemToArray(rows, row);
	/* Approve, Always for this task (cwctl approve --for-task; when asked), Deny. */
	for (int k = 0; k < 3; k++) {
		int allow = k == 0 ? 1 : k == 1 ? 2 : 0;
		if (allow == 2 && !always)
			continue;
		if (tgapi_button_data(data, sizeof data, allow, approval_id) == -1) {
			cJSON_Delete(kb);
			return NULL;
		}
		b = cJSON_CreateObject();
		json_add_string(b, "text", allow == 1 ? "Approve" : allow == 2 ?
		    "Always for this task" : "Deny");
		json_add_string(b, "callback_data", data);
		cJSON_AddItemToArray(row, b);
	}
	return kb;
}

/*
 * s (from a stored report, masked when it was stored) made visible, appended to the
 * buffer at *off (never past len).
 */
static void
tgapi_add_shown(char *buf, size_t len, size_t *off, const char *s)
{
	char	*v = NULL;

	if (s == NULL || *off >= len)
		return;
	v = vis_str(s, 0);
	if (v != NULL) {
		size_t n = (size_t)snprintf(buf + *off, len - *off, "%s", v);

		*off = *off + n < len ? *off + n : len;
	}
	free(v);
}

static void
tgapi_add(char *buf, size_t len, size_t *off, const char *s)
{
	size_t	 n;

	if (*off >= len)
		return;
	n = (size_t)snprintf(buf + *off, len - *off, "%s", s);
	*off = *off + n < len ? *off + n : len;
}

char *
tgapi_notice_text(const char *task, const char *run_id, const cJSON *report,
    const char *review_url, int announce_end)
{
	const cJSON	*git = cJSON_GetObjectItemCaseSensitive(report, "git");
	const cJSON	*list = cJSON_GetObjectItemCaseSensitive(git, "automation"), *f;
	const char	*q = json_get_string(git, "quarantine");
	char		*buf, *line;
	size_t		 off = 0, len = TGAPI_TEXT_MAX;
	int		 i = 0;

	if (!announce_end && cJSON_GetArraySize(list) == 0 && q == NULL)
		return NULL;
	if ((buf = malloc(len)) == NULL)
		return NULL;
	buf[0] = '\0';
	if ((line = runend_line(report)) == NULL) {
		free(buf);
		return NULL;
	}
	tgapi_add(buf, len, &off, "Run ");
	tgapi_add_shown(buf, len, &off, run_id);
	tgapi_add(buf, len, &off, " of task ");
	tgapi_add_shown(buf, len, &off, task);
	tgapi_add(buf, len, &off, " ");
	tgapi_add(buf, len, &off, line);
	tgapi_add(buf, len, &off, ".\n\n");
	free(line);
	if (cJSON_GetArraySize(list) > 0) {
		tgapi_add(buf, len, &off, "Automation files in a run's work (tools run them "
		    "when a checkout is opened). They are held back in its worktree; merging "
		    "needs cwctl run merge --accept-automation after reading the diff:\n");
		cJSON_ArrayForEach(f, list) {
			if (i++ == 20) {
				tgapi_add(buf, len, &off, "  ...\n");
				break;
			}
			tgapi_add(buf, len, &off, "  ");
			tgapi_add_shown(buf, len, &off, json_get_string(f, "status"));
			tgapi_add(buf, len, &off, " ");
			tgapi_add_shown(buf, len, &off, json_get_string(f, "path"));
			tgapi_add(buf, len, &off, "\n");
		}
	}
	if (q != NULL) {
		tgapi_add(buf, len, &off, "A run's work was not imported: ");
		tgapi_add_shown(buf, len, &off, json_get_string(git, "error"));
		tgapi_add(buf, len, &off, "\nIt is kept, untrusted and inert (a bundle and "
		    "plain files, no repository), in ");
		tgapi_add_shown(buf, len, &off, q);
		tgapi_add(buf, len, &off, "\n");
	}
	/* What to type next, and the Inbox's page of the run on this machine. */
	tgapi_add(buf, len, &off, cJSON_GetArraySize(list) > 0 || q != NULL ? "\n" : "");
	tgapi_add(buf, len, &off, "Review: cwctl run diff ");
	tgapi_add_shown(buf, len, &off, run_id);
	tgapi_add(buf, len, &off, ", then cwctl run merge (or land, push, discard) ");
	tgapi_add_shown(buf, len, &off, run_id);
	if (review_url != NULL) {
		tgapi_add(buf, len, &off, "\nInbox: ");
		tgapi_add_shown(buf, len, &off, review_url);
	}
	tgapi_add(buf, len, &off, "\n\nrun: ");
	tgapi_add_shown(buf, len, &off, run_id);
	tgapi_add(buf, len, &off, "\ntask: ");
	tgapi_add_shown(buf, len, &off, task);
	if (strlen(buf) >= TGAPI_TEXT_MAX)
		buf[record_cut(buf, strlen(buf), TGAPI_TEXT_MAX - 1)] = '\0';
	return buf;
}

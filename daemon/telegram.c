/*
 * Telegram approvals (SPEC I2, issue 13): outbound only. The daemon long-polls the Bot
 * API's getUpdates and sends, edits and answers through it; it never listens.
 *
 * Why libcurl's multi interface driven by libevent (curl_multi_socket_action), not a
 * thread or a child: every answer must go through approvals_respond() on the daemon's loop
 * (the store, the live runs and their pipes belong to that loop and nothing here
 * locks), so a thread would have to hand each press back across threads anyway, and a
 * child would need its own protocol and its own copy of the token. With the multi
 * interface each transfer is a set of non-blocking sockets and a timer on the same
 * loop: a 25 s long poll costs one idle socket, and nothing here ever blocks the loop
 * (name resolution runs in curl's resolver thread, sockets never block).
 *
 * What a press must pass (docs/SECURITY.md, "Telegram approvals"):
 *  - the button is ours (cw1:a:<id> or cw1:d:<id>) and names an approval we know;
 *  - the press comes from the chat configured on the approval's task now;
 *  - in a group, supergroup or channel, the presser's user id is on the task's
 *    allowed_user_ids (a group without a list: no press ever counts).
 * A press that fails any of these changes nothing and is answered "Not allowed". One
 * that passes goes through approvals_respond(), the Inbox's and cwctl's path, with the
 * Telegram user as the actor, and is audited like theirs.
 *
 * Messages are pushed, not swept: Telegram subscribes to the bus (bus.h) for approval
 * and run events, and each one that matters (an approval asked, answered or expired; a
 * run that ended) starts one pass over what the store says is due (store_telegram_due,
 * store_telegram_notices_due). A pass that cannot send (the network, a 429 with
 * retry_after, a 5xx) holds further passes back and arms a one-shot retry timer, 1 s
 * doubling to 60 s; a pass that found nothing to do arms nothing. So an idle daemon
 * with a bot token has one long poll in flight and no timer at all.
 *
 * The update offset is stored after each update is handled, so a restart resumes
 * after the last handled press: nothing replayed, nothing lost. A replay could not
 * answer twice anyway (the store's compare-and-set), but it would answer "already
 * answered" to a press that worked.
 *
 * The token lives in the secret store (common/secret.c), in this process's memory and
 * in libcurl's copy of each URL; it is masked in every log line (mask_literal_add) and
 * nothing here passes it to a runner, a log or the store.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "approvals.h"
#include "bus.h"
#include "clock.h"
#include "daemon.h"
#include "dynlib.h"
#include "journal.h"
#include "json.h"
#include "log.h"
#include "mask.h"
#include "parsechild.h"
#include "record.h"
#include "recover.h"
#include "secret.h"
#include "store.h"
#include "telegram.h"
#include "tgapi.h"
#include "wire.h"

#define TG_API_BASE		"https://api.telegram.org"
#define TG_BASE_ENV		"CW_TELEGRAM_API_BASE_FOR_TESTS"
#define TG_POLL_SECONDS		25	/* getUpdates' long-poll timeout */
#define TG_CALL_SECONDS		20	/* any other call */
#define TG_BACKOFF_MIN_MS	1000
#define TG_BACKOFF_MAX_MS	60000
#define TG_SWEEP_BATCH		16
#define TG_MAX_CALLS		32	/* in flight at once, the poll included */

struct telegram;
struct tg_call;
typedef void	(*tg_done_fn)(struct telegram *, struct tg_call *,
		    struct tgapi_reply *, const char *neterr);

struct tg_call {
	struct telegram		*tg;
	CURL			*easy;
	struct curl_slist	*hdrs;
	char			*body;
	char			*resp;
	size_t			 resp_len;
	int			 too_big;
	char			 method[32];
	tg_done_fn		 done;
	char			 approval_id[STORE_ID_LEN];
	char			 run_id[CW_RUN_ID_MAX + 1];	/* a run notice's, or the
								   approval's run */
	int			 sending;	/* a new approval message (sendMessage) */
	char			 state[16];	/* what an edit shows */
	int64_t			 chat_id;
	TAILQ_ENTRY(tg_call)	 entry;
};

struct telegram {
	struct daemon		*d;
	CURLM			*multi;
	struct event		*curl_timer;
	struct event		*poll_ev;	/* the next getUpdates, after a back-off */
	struct event		*kick_ev;	/* a pass over what is due, on the next loop turn */
	struct event		*retry_ev;	/* the next pass after a failure (one-shot) */
	struct bus_sub		*sub;		/* approval and run events */
	int			 more;		/* a pass left work for when a call ends */
	char			*token;
	char			 base[512];
	int			 base_overridden;
	int64_t			 offset;
	struct tg_call		*poll;
	int			 backoff_ms;
	int			 sweep_backoff_ms;
	int64_t			 sweep_hold_ms;	/* no sends before this (monotonic) */
	char			 error[300];	/* the problem reported, "" if none */
	long			 error_code;
	int64_t			 n_sent, n_edited, n_presses, n_refused;
	struct {
		int64_t		 chat_id;
		int		 done, ok;
		char		 description[256];
	} test;
	size_t			 n_calls;
	TAILQ_HEAD(, tg_call)	 calls;
};

static void	tg_poll(struct telegram *);
static void	tg_check(struct telegram *);
static void	tg_kick(struct telegram *);

/*
 * libcurl is loaded when the first call to the Bot API is made (a token is set), not
 * linked: linked in, it and its TLS stack cost every daemon some 3.7 MiB of resident
 * memory from the start, Telegram or not (dynlib.h, docs/performance.md).
 */
#define TG_CURL_FN(f)	__typeof__(curl_##f) *f
#define TG_CURL_SYM(f)	{ "curl_" #f, &tg_curl.f }
static struct {
	TG_CURL_FN(easy_cleanup);
	TG_CURL_FN(easy_getinfo);
	TG_CURL_FN(easy_init);
	TG_CURL_FN(easy_setopt);
	TG_CURL_FN(easy_strerror);
	TG_CURL_FN(multi_add_handle);
	TG_CURL_FN(multi_assign);
	TG_CURL_FN(multi_cleanup);
	TG_CURL_FN(multi_info_read);
	TG_CURL_FN(multi_init);
	TG_CURL_FN(multi_remove_handle);
	TG_CURL_FN(multi_setopt);
	TG_CURL_FN(multi_socket_action);
	TG_CURL_FN(slist_append);
	TG_CURL_FN(slist_free_all);
} tg_curl;


/* ---- libcurl on the libevent loop ------------------------------------------------ */

static void
tg_event_cb(evutil_socket_t fd, short what, void *arg)
{
	struct telegram	*tg = arg;
	int		 flags = 0, running;

	if (what & EV_READ)
		flags |= CURL_CSELECT_IN;
	if (what & EV_WRITE)
		flags |= CURL_CSELECT_OUT;
	tg_curl.multi_socket_action(tg->multi, fd, flags, &running);
	tg_check(tg);
}

static int
tg_socket_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
	struct telegram	*tg = userp;
	struct event	*ev = socketp;
	short		 kind = EV_PERSIST;

	(void)easy;
	if (ev != NULL) {
		event_free(ev);
		tg_curl.multi_assign(tg->multi, s, NULL);
	}
	if (what == CURL_POLL_REMOVE)
		return 0;
	if (what & CURL_POLL_IN)
		kind |= EV_READ;
	if (what & CURL_POLL_OUT)
		kind |= EV_WRITE;
	if ((ev = event_new(tg->d->base, s, kind, tg_event_cb, tg)) == NULL ||
	    event_add(ev, NULL) == -1) {
		if (ev != NULL)
			event_free(ev);
		return -1;
	}
	tg_curl.multi_assign(tg->multi, s, ev);
	return 0;
}

static void
tg_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct telegram	*tg = arg;
	int		 running;

	(void)fd;
	(void)what;
	tg_curl.multi_socket_action(tg->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	tg_check(tg);
}

static int
tg_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct telegram	*tg = userp;
	struct timeval	 tv;

	(void)multi;
	if (timeout_ms < 0)
		return evtimer_del(tg->curl_timer);
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	return evtimer_add(tg->curl_timer, &tv);
}

static size_t
tg_write_cb(char *p, size_t size, size_t n, void *arg)
{
	struct tg_call	*c = arg;
	size_t		 len = size * n;
	char		*nb;

	if (c->resp_len + len > TGAPI_MAX_REPLY) {
		c->too_big = 1;
		return 0;	/* ends the transfer */
	}
	if ((nb = realloc(c->resp, c->resp_len + len + 1)) == NULL)
		return 0;
	c->resp = nb;
	memcpy(c->resp + c->resp_len, p, len);
	c->resp_len += len;
	c->resp[c->resp_len] = '\0';
	return len;
}

static void
tg_call_free(struct tg_call *c)
{
	if (c == NULL)
		return;
	if (c->easy != NULL)
		tg_curl.easy_cleanup(c->easy);
	tg_curl.slist_free_all(c->hdrs);
	free(c->body);
	free(c->resp);
	free(c);
}

/* libcurl and the multi handle on the loop, made on first use; -1 if they cannot be. */
static int
tg_multi(struct telegram *tg)
{
	const struct dynlib_sym	 syms[] = {
		TG_CURL_SYM(easy_cleanup),
		TG_CURL_SYM(easy_getinfo),
		TG_CURL_SYM(easy_init),
		TG_CURL_SYM(easy_setopt),
		TG_CURL_SYM(easy_strerror),
		TG_CURL_SYM(multi_add_handle),
		TG_CURL_SYM(multi_assign),
		TG_CURL_SYM(multi_cleanup),
		TG_CURL_SYM(multi_info_read),
		TG_CURL_SYM(multi_init),
		TG_CURL_SYM(multi_remove_handle),
		TG_CURL_SYM(multi_setopt),
		TG_CURL_SYM(multi_socket_action),
		TG_CURL_SYM(slist_append),
		TG_CURL_SYM(slist_free_all),
	};
	char			 err[256];
	static int		 said;

	if (tg->multi != NULL)
		return 0;
	if (dynlib_open("libcurl.so.4", syms, sizeof syms / sizeof syms[0], err,
	    sizeof err) == NULL) {
		/* Each call fails alike until libcurl is installed: said once. */
		if (!said)
			log_error("telegram: cannot call the Bot API: %s", err);
		said = 1;
		return -1;
	}
	if ((tg->multi = tg_curl.multi_init()) == NULL) {
		log_error("telegram: cannot make libcurl's multi handle");
		return -1;
	}
	tg_curl.multi_setopt(tg->multi, CURLMOPT_SOCKETFUNCTION, tg_socket_cb);
	tg_curl.multi_setopt(tg->multi, CURLMOPT_SOCKETDATA, tg);
	tg_curl.multi_setopt(tg->multi, CURLMOPT_TIMERFUNCTION, tg_timer_cb);
	tg_curl.multi_setopt(tg->multi, CURLMOPT_TIMERDATA, tg);
	return 0;
}

/*
 * Start a POST of params (consumed) to method. done runs once, from the loop, with
 * the parsed reply or a network error. NULL when nothing could be started.
 */
static struct tg_call *
tg_call(struct telegram *tg, const char *method, cJSON *params, tg_done_fn done,
    long timeout_s)
{
	struct tg_call	*c;
	char		*url = NULL;

	if (tg->token == NULL || tg->n_calls >= TG_MAX_CALLS || tg_multi(tg) == -1 ||
	    (c = calloc(1, sizeof *c)) == NULL) {
		cJSON_Delete(params);
		return NULL;
	}
	c->tg = tg;
	c->done = done;
	snprintf(c->method, sizeof c->method, "%s", method);
	c->body = cJSON_PrintUnformatted(params);
	cJSON_Delete(params);
	if (c->body == NULL || (c->easy = tg_curl.easy_init()) == NULL ||
	    (c->hdrs = tg_curl.slist_append(NULL,
	    "Content-Type: application/json")) == NULL ||
	    asprintf(&url, "%s/bot%s/%s", tg->base, tg->token, method) == -1) {
		tg_call_free(c);
		return NULL;
	}
	tg_curl.easy_setopt(c->easy, CURLOPT_URL, url);
	explicit_bzero(url, strlen(url));
	free(url);
	tg_curl.easy_setopt(c->easy, CURLOPT_POSTFIELDS, c->body);
	tg_curl.easy_setopt(c->easy, CURLOPT_HTTPHEADER, c->hdrs);
	tg_curl.easy_setopt(c->easy, CURLOPT_WRITEFUNCTION, tg_write_cb);
	tg_curl.easy_setopt(c->easy, CURLOPT_WRITEDATA, c);
	tg_curl.easy_setopt(c->easy, CURLOPT_PRIVATE, c);
	tg_curl.easy_setopt(c->easy, CURLOPT_TIMEOUT, timeout_s);
	tg_curl.easy_setopt(c->easy, CURLOPT_CONNECTTIMEOUT, 10L);
	tg_curl.easy_setopt(c->easy, CURLOPT_NOSIGNAL, 1L);
	tg_curl.easy_setopt(c->easy, CURLOPT_FOLLOWLOCATION, 0L);
	/* The real API is HTTPS only; the tests' stand-in is plain HTTP on loopback. */
	tg_curl.easy_setopt(c->easy, CURLOPT_PROTOCOLS_STR,
	    tg->base_overridden ? "http,https" : "https");
	if (tg_curl.multi_add_handle(tg->multi, c->easy) != CURLM_OK) {
		tg_call_free(c);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&tg->calls, c, entry);
	tg->n_calls++;
	return c;
}

/* Every transfer that ended: its reply to its done function. */
static void
tg_check(struct telegram *tg)
{
	CURLMsg			*msg;
	struct tg_call		*c;
	struct tgapi_reply	 reply;
	char			 neterr[400], perr[256];
	long			 code = 0;
	int			 left, parsed;

	while ((msg = tg_curl.multi_info_read(tg->multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		c = NULL;
		tg_curl.easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&c);
		tg_curl.multi_remove_handle(tg->multi, msg->easy_handle);
		if (c == NULL)
			continue;
		TAILQ_REMOVE(&tg->calls, c, entry);
		tg->n_calls--;
		neterr[0] = '\0';
		parsed = -1;
		if (msg->data.result != CURLE_OK)
			snprintf(neterr, sizeof neterr, "%s%s", c->too_big ?
			    "reply too large: " : "",
			    tg_curl.easy_strerror(msg->data.result));
		else {
			tg_curl.easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &code);
			/* The body is the network's: cw-parse reads it (parsechild.h). */
			if ((parsed = parsechild_tgreply(c->resp, c->resp_len, &reply,
			    perr, sizeof perr)) == -1)
				snprintf(neterr, sizeof neterr, "HTTP %ld with no Bot API "
				    "reply (%s)", code, perr);
		}
		if (c->done != NULL)
			c->done(tg, c, parsed == 0 ? &reply : NULL, neterr[0] ? neterr : NULL);
		if (parsed == 0)
			tgapi_reply_free(&reply);
		tg_call_free(c);
		/* A pass stopped at TG_MAX_CALLS: a call has ended, so it can go on. */
		if (tg->more) {
			tg->more = 0;
			tg_kick(tg);
		}
	}
}

/* ---- health: one report per problem --------------------------------------------- */

static void
tg_report(struct telegram *tg, long code, const char *what)
{
	cJSON	*j;
	char	 line[sizeof tg->error];

	snprintf(line, sizeof line, "%s", what);
	mask_literals_inplace(line);
	if (tg->error_code == code && strcmp(tg->error, line) == 0)
		return;
	tg->error_code = code;
	snprintf(tg->error, sizeof tg->error, "%s", line);
	log_warn("telegram: %s", line);
	if ((j = cJSON_CreateObject()) != NULL) {
		if (code > 0)
			cJSON_AddNumberToObject(j, "error_code", (double)code);
		json_add_string(j, "description", line);
		journal_add(tg->d, NULL, "telegram_error", j);
	}
}

static void
tg_healthy(struct telegram *tg)
{
	if (tg->error[0] != '\0')
		log_info("telegram: getUpdates works again");
	tg->error[0] = '\0';
	tg->error_code = 0;
	tg->backoff_ms = 0;
}

/* ---- the long poll ---------------------------------------------------------------- */

static void
tg_poll_later(struct telegram *tg, int ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };

	evtimer_add(tg->poll_ev, &tv);
}

static void
tg_backoff(struct telegram *tg, int ms_at_least)
{
	tg->backoff_ms = tg->backoff_ms == 0 ? TG_BACKOFF_MIN_MS : tg->backoff_ms * 2;
	if (tg->backoff_ms > TG_BACKOFF_MAX_MS)
		tg->backoff_ms = TG_BACKOFF_MAX_MS;
	if (tg->backoff_ms < ms_at_least)
		tg->backoff_ms = ms_at_least;
	log_debug("telegram: next getUpdates in %d ms", tg->backoff_ms);
	tg_poll_later(tg, tg->backoff_ms);
}

static void
tg_answer_press(struct telegram *tg, const char *query_id, const char *text)
{
	cJSON	*p = cJSON_CreateObject();

	json_add_string(p, "callback_query_id", query_id);
	json_add_string(p, "text", text);
	tg_call(tg, "answerCallbackQuery", p, NULL, TG_CALL_SECONDS);
}

static void
tg_refuse(struct telegram *tg, const struct tgapi_press *p, const char *run_id,
    const char *why)
{
	cJSON	*j;

	tg->n_refused++;
	log_info("telegram: press on %s from user %" PRId64 " in chat %" PRId64
	    " refused: %s", p->approval_id, p->from_id, p->chat_id, why);
	if ((j = cJSON_CreateObject()) != NULL) {
		json_add_string(j, "approval", p->approval_id);
		cJSON_AddNumberToObject(j, "chat_id", (double)p->chat_id);
		cJSON_AddNumberToObject(j, "user_id", (double)p->from_id);
		json_add_string(j, "reason", why);
		journal_add(tg->d, run_id, "telegram_press_refused", j);
	}
	tg_answer_press(tg, p->query_id, "Not allowed");
}

/* One press of a button: checked, then answered through the one respond path. */
static void
tg_press(struct telegram *tg, const struct tgapi_press *p)
{
	struct store_telegram_item	 it;
	char				 actor[96], why[512];
	cJSON				*j;
	int				 rc;

	if (!p->is_press)
		return;
	tg->n_presses++;
	if (!p->ours) {
		tg_answer_press(tg, p->query_id, "This button is not one of Clockwork's.");
		return;
	}
	if ((rc = store_telegram_item_get(tg->d->store, p->approval_id, &it)) != 1) {
		tg_answer_press(tg, p->query_id, rc == 0 ?
		    "Clockwork no longer knows this approval." :
		    "Clockwork could not look this approval up; try again.");
		return;
	}
	if (it.task_chat_id == 0 || p->chat_id != it.task_chat_id)
		tg_refuse(tg, p, it.run_id, "not the task's chat");
	else if (tgapi_chat_is_group(p->chat_type, p->chat_id) &&
	    !tgapi_user_allowed(it.allowed_user_ids, p->from_id))
		tg_refuse(tg, p, it.run_id, "a group member not on allowed_user_ids");
	else {
		snprintf(actor, sizeof actor, "telegram user %" PRId64 "%s%s%s", p->from_id,
		    p->from_username[0] ? " (@" : "", p->from_username,
		    p->from_username[0] ? ")" : "");
		switch (approvals_respond_via(tg->d, p->approval_id, p->allow, NULL, actor,
		    APPROVALS_VIA_TELEGRAM, why, sizeof why)) {
		case APPROVALS_OK:
			if ((j = cJSON_CreateObject()) != NULL) {
				json_add_string(j, "decision", p->allow ? "allow" : "deny");
				json_add_string(j, "via", "telegram");
				cJSON_AddNumberToObject(j, "chat_id", (double)p->chat_id);
			}
			if (p->for_task && j != NULL)
				json_add_string(j, "scope", "task");
			journal_audit(tg->d, actor, "approval.answer", p->approval_id, j);
			if (p->for_task) {
				/* The same path as cwctl approve --for-task. */
				char	 rule[400], rwhy[300], line[800];

				if (approvals_for_task(tg->d, p->approval_id, actor, rule,
				    sizeof rule, rwhy, sizeof rwhy) == 0)
					snprintf(line, sizeof line, "Approved; for this task "
					    "from now on: %s.", rule);
				else
					snprintf(line, sizeof line, "Approved this once: %s", rwhy);
				line[record_cut(line, strlen(line), 190)] = '\0';
				tg_answer_press(tg, p->query_id, line);
			} else
				tg_answer_press(tg, p->query_id, p->allow ? "Approved." :
				    "Denied.");
			break;
		case APPROVALS_REFUSED:
			/* Nothing changed; the press is refused and journaled, and says why. */
			why[record_cut(why, strlen(why), 190)] = '\0';
			if ((j = cJSON_CreateObject()) != NULL) {
				json_add_string(j, "approval", p->approval_id);
				cJSON_AddNumberToObject(j, "chat_id", (double)p->chat_id);
				cJSON_AddNumberToObject(j, "user_id", (double)p->from_id);
				json_add_string(j, "reason", why);
				journal_add(tg->d, it.run_id, "telegram_press_refused", j);
			}
			tg_answer_press(tg, p->query_id, why);
			break;
		case APPROVALS_ALREADY:
		case APPROVALS_RUN_ENDED:
		case APPROVALS_NOT_FOUND:
			/* answerCallbackQuery's text is at most 200 characters. */
			why[record_cut(why, strlen(why), 190)] = '\0';
			tg_answer_press(tg, p->query_id, why);
			break;
		default:
			log_warn("telegram: press on %s: %s", p->approval_id, why);
			tg_answer_press(tg, p->query_id,
			    "Clockwork could not record the answer; try again.");
			break;
		}
	}
	store_telegram_item_free(&it);
	/* An answer is published on the bus (approvals.c): its edit comes from there. */
}

static void
tg_store_offset(struct telegram *tg)
{
	char	 v[32];

	snprintf(v, sizeof v, "%" PRId64, tg->offset);
	if (store_telegram_state_set(tg->d->store, "offset", v) == -1)
		log_error("telegram: cannot store the update offset: %s",
		    store_errmsg(tg->d->store));
}

static void
tg_poll_done(struct telegram *tg, struct tg_call *c, struct tgapi_reply *r,
    const char *neterr)
{
	struct tgapi_press	 p;
	char			 what[300];

	(void)c;
	tg->poll = NULL;
	if (r == NULL) {
		/* The network or a proxy, not the Bot API: retry quietly, backing off. */
		log_info("telegram: getUpdates: %s", neterr != NULL ? neterr : "failed");
		tg_backoff(tg, 0);
		return;
	}
	if (!r->ok) {
		snprintf(what, sizeof what, "getUpdates: %ld %s", r->error_code,
		    r->description[0] ? r->description : "error");
		if (r->error_code == 401 || r->error_code == 404 || r->error_code == 409) {
			/* A wrong token, or another poller on the same bot: a person must act. */
			tg_report(tg, r->error_code, what);
			tg_backoff(tg, 0);
		} else
			tg_backoff(tg, (int)r->retry_after * 1000);
		return;
	}
	tg_healthy(tg);
	for (size_t i = 0; i < r->n_updates; i++) {
		p = r->updates[i];
		if (p.update_id < tg->offset)
			continue;	/* confirmed already: never handled twice */
		tg_press(tg, &p);
		tg->offset = p.update_id + 1;
		tg_store_offset(tg);
	}
	tg_poll_later(tg, 0);
}

static void
tg_poll(struct telegram *tg)
{
	cJSON	*p, *kinds;

	if (tg->token == NULL || tg->poll != NULL)
		return;
	p = cJSON_CreateObject();
	cJSON_AddNumberToObject(p, "offset", (double)tg->offset);
	cJSON_AddNumberToObject(p, "timeout", TG_POLL_SECONDS);
	kinds = cJSON_AddArrayToObject(p, "allowed_updates");
	cJSON_AddItemToArray(kinds, cJSON_CreateString("callback_query"));
	if ((tg->poll = tg_call(tg, "getUpdates", p, tg_poll_done,
	    TG_POLL_SECONDS + 15)) == NULL)
		tg_backoff(tg, 0);
}

static void
tg_poll_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	tg_poll(arg);
}

/* ---- messages: one per approval, edited when it is decided ------------------------ */

static void
tg_sweep_failed(struct telegram *tg, const char *method, const char *why)
{
	struct timeval	 tv;

	tg->sweep_backoff_ms = tg->sweep_backoff_ms == 0 ? TG_BACKOFF_MIN_MS :
	    tg->sweep_backoff_ms * 2;
	if (tg->sweep_backoff_ms > TG_BACKOFF_MAX_MS)
		tg->sweep_backoff_ms = TG_BACKOFF_MAX_MS;
	tg->sweep_hold_ms = clock_mono_ms() + tg->sweep_backoff_ms;
	log_info("telegram: %s: %s; retrying in %d ms", method, why, tg->sweep_backoff_ms);
	/* The only timer Telegram's messages have: armed while something failed. */
	tv = clock_ms_timeval(tg->sweep_backoff_ms);
	evtimer_add(tg->retry_ev, &tv);
}

static void
tg_send_done(struct telegram *tg, struct tg_call *c, struct tgapi_reply *r,
    const char *neterr)
{
	int64_t	 mid = 0;

	if (r == NULL || !r->ok) {
		tg_sweep_failed(tg, "sendMessage", r == NULL ? neterr : r->description);
		return;
	}
	if (r->has_message_id)
		mid = r->message_id;
	tg->n_sent++;
	tg->sweep_backoff_ms = 0;
	/*
	 * It may have been answered meanwhile, or more are due. Not when the store
	 * could not record it: the next pass would send it again, and again.
	 */
	if (store_telegram_message_add(tg->d->store, c->approval_id, c->chat_id,
	    mid) == -1)
		log_error("telegram: cannot record the message of %s: %s", c->approval_id,
		    store_errmsg(tg->d->store));
	else
		tg_kick(tg);
}

static void
tg_edit_done(struct telegram *tg, struct tg_call *c, struct tgapi_reply *r,
    const char *neterr)
{
	if (r == NULL) {
		tg_sweep_failed(tg, "editMessageText", neterr);
		return;
	}
	/*
	 * A 400 means the message cannot show it (deleted, too old, or already showing
	 * it): asking again would never work, so it counts as shown.
	 */
	if (!r->ok && r->error_code != 400) {
		tg_sweep_failed(tg, "editMessageText", r->description);
		return;
	}
	tg->n_edited++;
	tg->sweep_backoff_ms = 0;
	/* More may be due; not when the store could not record it (see tg_send_done). */
	if (store_telegram_message_shown(tg->d->store, c->approval_id, c->state) != -1)
		tg_kick(tg);
}

static int
tg_busy(struct telegram *tg, const char *approval_id)
{
	struct tg_call	*c;

	TAILQ_FOREACH(c, &tg->calls, entry)
		if (strcmp(c->approval_id, approval_id) == 0)
			return 1;
	return 0;
}

static void	tg_sweep_notices(struct telegram *);

/*
 * Whether a message for another approval of v[i]'s run is being sent: from this
 * batch (an earlier item) or still in flight from the last sweep.
 */
static int
tg_run_sending(struct telegram *tg, const struct store_telegram_item *v, size_t i)
{
	struct tg_call	*c;

	for (size_t k = 0; k < i; k++)
		if (v[k].chat_id == 0 && v[k].run_id != NULL && v[i].run_id != NULL &&
		    strcmp(v[k].run_id, v[i].run_id) == 0)
			return 1;
	TAILQ_FOREACH(c, &tg->calls, entry)
		if (c->run_id[0] != '\0' && v[i].run_id != NULL &&
		    strcmp(c->run_id, v[i].run_id) == 0 &&
		    c->sending)
			return 1;
	return 0;
}

static void
tg_sweep(struct telegram *tg)
{
	struct store_telegram_item	*v;
	struct tg_call			*c;
	cJSON				*p, *kb;
	char				*text;
	size_t				 n;
	int				 send;

	if (tg->token == NULL)
		return;
	if (clock_mono_ms() < tg->sweep_hold_ms)
		return;		/* retry_ev is armed for then */
	if (store_telegram_due(tg->d->store, TG_SWEEP_BATCH, &v, &n) == -1) {
		log_error("telegram: %s", store_errmsg(tg->d->store));
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (tg_busy(tg, v[i].approval_id))
			continue;
		send = v[i].chat_id == 0;
		/* One new message per run per sweep (store_telegram_due: one live). */
		if (send && tg_run_sending(tg, v, i))
			continue;
		if ((text = tgapi_message_text(&v[i], time(NULL))) == NULL)
			continue;
		p = cJSON_CreateObject();
		cJSON_AddNumberToObject(p, "chat_id", (double)(send ? v[i].task_chat_id :
		    v[i].chat_id));
		if (!send)
			cJSON_AddNumberToObject(p, "message_id", (double)v[i].message_id);
		json_add_string(p, "text", text);
		free(text);
		/* A pending approval gets the buttons; a decided one loses them. */
		/* A budget question has nothing to remember for the task. */
		kb = send ? tgapi_keyboard(v[i].approval_id, v[i].tool == NULL ||
		    strcmp(v[i].tool, "budget") != 0) : cJSON_CreateObject();
		if (!send && kb != NULL)
			cJSON_AddArrayToObject(kb, "inline_keyboard");
		if (kb != NULL)
			cJSON_AddItemToObject(p, "reply_markup", kb);
		c = tg_call(tg, send ? "sendMessage" : "editMessageText", p,
		    send ? tg_send_done : tg_edit_done, TG_CALL_SECONDS);
		if (c == NULL) {
			tg->more = tg->n_calls > 0;
			break;
		}
		snprintf(c->approval_id, sizeof c->approval_id, "%s", v[i].approval_id);
		snprintf(c->run_id, sizeof c->run_id, "%s", v[i].run_id != NULL ?
		    v[i].run_id : "");
		c->sending = send;
		snprintf(c->state, sizeof c->state, "%s", v[i].state);
		c->chat_id = send ? v[i].task_chat_id : v[i].chat_id;
	}
	store_telegram_item_list_free(v, n);
	tg_sweep_notices(tg);
}

/* A run notice was sent (or can never be): it is not sent again. */
static void
tg_notice_done(struct telegram *tg, struct tg_call *c, struct tgapi_reply *r,
    const char *neterr)
{
	double	 n = 0;

	if (r == NULL || (!r->ok && r->error_code != 400)) {
		tg_sweep_failed(tg, "sendMessage", r == NULL ? neterr : r->description);
		return;
	}
	if (r->ok && r->has_message_id)
		n = (double)r->message_id;
	tg->sweep_backoff_ms = 0;
	/* More may be due past this pass's batch (not this one again: see above). */
	if (store_telegram_notice_add(tg->d->store, c->run_id, c->chat_id,
	    (int64_t)n) == -1)
		log_error("telegram: cannot record the notice of run %s: %s", c->run_id,
		    store_errmsg(tg->d->store));
	else
		tg_kick(tg);
}

/*
 * Each ended run of a task with a chat gets one message there: its end, when the task
 * announces its runs' ends (notify_end, on by default), and always when its work
 * needs a person's eye (SPEC U3: automation files, quarantine).
 */
static void
tg_sweep_notices(struct telegram *tg)
{
	struct store_telegram_notice	*v;
	struct tg_call			*c;
	cJSON				*p, *rep;
	char				*text, url[128];
	size_t				 n;
	int				 busy;

	if (store_telegram_notices_due(tg->d->store, TG_SWEEP_BATCH, &v, &n) == -1) {
		log_error("telegram: %s", store_errmsg(tg->d->store));
		return;
	}
	for (size_t i = 0; i < n; i++) {
		busy = 0;
		TAILQ_FOREACH(c, &tg->calls, entry)
			if (strcmp(c->run_id, v[i].run_id) == 0)
				busy = 1;
		if (busy)
			continue;
		rep = json_parse(v[i].report, strlen(v[i].report));
		if (tg->d->port > 0)
			snprintf(url, sizeof url, "http://127.0.0.1:%d/#run/%s", tg->d->port,
			    v[i].run_id);
		text = tgapi_notice_text(v[i].task, v[i].run_id, rep,
		    tg->d->port > 0 ? url : NULL, v[i].notify_end);
		cJSON_Delete(rep);
		if (text == NULL)
			continue;
		p = cJSON_CreateObject();
		cJSON_AddNumberToObject(p, "chat_id", (double)v[i].chat_id);
		json_add_string(p, "text", text);
		free(text);
		if ((c = tg_call(tg, "sendMessage", p, tg_notice_done, TG_CALL_SECONDS)) == NULL) {
			tg->more = tg->n_calls > 0;
			break;
		}
		snprintf(c->run_id, sizeof c->run_id, "%s", v[i].run_id);
		c->chat_id = v[i].chat_id;
	}
	store_telegram_notice_list_free(v, n);
}

static void
tg_sweep_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	tg_sweep(arg);
}

/* ---- the daemon's side -------------------------------------------------------------- */

/*
 * A pass over what is due, on the next turn of the loop: a burst of events (a run
 * that asks ten times, then ends) makes one pass, not one each.
 */
static void
tg_kick(struct telegram *tg)
{
	if (tg->token != NULL && !event_pending(tg->kick_ev, EV_TIMEOUT, NULL))
		event_active(tg->kick_ev, EV_TIMEOUT, 0);
}

/* The bus: an approval asked, answered or expired, or a run that ended. */
static void
tg_event(const struct bus_event *e, void *arg)
{
	struct telegram	*tg = arg;

	if (tg->token == NULL)
		return;
	if (e->type == BUS_APPROVAL || (e->type == BUS_RUN && bus_run_ended(e)))
		tg_kick(tg);
}

/* Stop every transfer (a new token, or shutdown). */
static void
tg_cancel_all(struct telegram *tg)
{
	struct tg_call	*c;

	while ((c = TAILQ_FIRST(&tg->calls)) != NULL) {
		TAILQ_REMOVE(&tg->calls, c, entry);
		tg_curl.multi_remove_handle(tg->multi, c->easy);
		tg_call_free(c);
	}
	tg->n_calls = 0;
	tg->poll = NULL;
	tg->more = 0;
	if (tg->poll_ev != NULL)
		evtimer_del(tg->poll_ev);
	if (tg->retry_ev != NULL)
		evtimer_del(tg->retry_ev);
}

/*
 * Update ids are per bot: the offset stored for one bot would hide another's updates
 * below it. The bot's id (the token's part before ':', public: it is the bot's user
 * id) is stored with the offset, and a token of another bot starts from 0.
 */
static void
tg_check_bot(struct telegram *tg)
{
	char	 id[32], *stored = NULL;
	size_t	 n = strcspn(tg->token, ":");

	if (n == 0 || n >= sizeof id)
		return;
	memcpy(id, tg->token, n);
	id[n] = '\0';
	if (store_telegram_state_get(tg->d->store, "bot_id", &stored) == -1)
		return;
	if (stored == NULL || strcmp(stored, id) != 0) {
		if (stored != NULL)
			log_info("telegram: a token of another bot (%s, was %s): updates "
			    "from 0", id, stored);
		tg->offset = 0;
		tg_store_offset(tg);
		store_telegram_state_set(tg->d->store, "bot_id", id);
	}
	free(stored);
}

int
telegram_reload(struct daemon *d)
{
	struct telegram	*tg = d->telegram;
	char		*tok = NULL, err[512];
	int		 rc;

	if (tg == NULL)
		return -1;
	if ((rc = secret_get(d->home, TELEGRAM_TOKEN_SECRET, &tok, err,
	    sizeof err)) == -1) {
		tg_report(tg, 0, err);
		return -1;
	}
	if (tok != NULL && tg->token != NULL && strcmp(tok, tg->token) == 0) {
		secret_free(tok);
		return 0;
	}
	tg_cancel_all(tg);
	if (tg->token != NULL) {
		mask_literal_remove(tg->token);
		secret_free(tg->token);
		tg->token = NULL;
	}
	tg->error[0] = '\0';
	tg->error_code = 0;
	tg->backoff_ms = 0;
	tg->sweep_backoff_ms = 0;
	tg->sweep_hold_ms = 0;
	if (rc == 0)
		return 0;
	if (mask_literal_add(tok) == -1) {
		tg_report(tg, 0, "the bot token is too short to be a Telegram token");
		secret_free(tok);
		return -1;
	}
	tg->token = tok;
	tg_check_bot(tg);
	log_info("telegram: bot token loaded; polling %s", tg->base_overridden ?
	    "the test stand-in" : "api.telegram.org");
	tg_poll(tg);
	tg_kick(tg);	/* what was due before this token (or this start) */
	return 0;
}

int
telegram_start(struct daemon *d)
{
	struct telegram	*tg;
	const char	*base = getenv(TG_BASE_ENV);
	struct bus_filter f;
	char		*off = NULL;

	if ((tg = calloc(1, sizeof *tg)) == NULL)
		return -1;
	tg->d = d;
	TAILQ_INIT(&tg->calls);
	snprintf(tg->base, sizeof tg->base, "%s", TG_API_BASE);
	if (base != NULL && *base != '\0') {
		/* For the tests' stand-in only: loopback, said loudly. */
		if (strncmp(base, "http://127.0.0.1:", 17) != 0) {
			log_error("telegram: %s must be http://127.0.0.1:PORT; ignored",
			    TG_BASE_ENV);
		} else {
			snprintf(tg->base, sizeof tg->base, "%s", base);
			tg->base_overridden = 1;
			log_warn("telegram: using the test stand-in at %s (%s)", tg->base,
			    TG_BASE_ENV);
		}
	}
	if (store_telegram_state_get(d->store, "offset", &off) == 1) {
		tg->offset = strtoll(off, NULL, 10);
		if (tg->offset < 0)
			tg->offset = 0;
	}
	free(off);
	if ((tg->curl_timer = evtimer_new(d->base, tg_timeout_cb, tg)) == NULL ||
	    (tg->poll_ev = evtimer_new(d->base, tg_poll_cb, tg)) == NULL ||
	    (tg->retry_ev = evtimer_new(d->base, tg_sweep_cb, tg)) == NULL ||
	    (tg->kick_ev = event_new(d->base, -1, 0, tg_sweep_cb, tg)) == NULL) {
		d->telegram = tg;
		telegram_stop(d);
		return -1;
	}
	memset(&f, 0, sizeof f);
	f.types = (1u << BUS_APPROVAL) | (1u << BUS_RUN);
	if (d->bus != NULL && (tg->sub = bus_subscribe(d->bus, &f, tg_event, tg)) == NULL) {
		d->telegram = tg;
		telegram_stop(d);
		return -1;
	}
	d->telegram = tg;
	telegram_reload(d);
	return 0;
}

void
telegram_stop(struct daemon *d)
{
	struct telegram	*tg = d->telegram;

	if (tg == NULL)
		return;
	bus_unsubscribe(tg->sub);
	if (tg->multi != NULL)
		tg_cancel_all(tg);
	if (tg->multi != NULL)
		tg_curl.multi_cleanup(tg->multi);
	if (tg->curl_timer != NULL)
		event_free(tg->curl_timer);
	if (tg->poll_ev != NULL)
		event_free(tg->poll_ev);
	if (tg->retry_ev != NULL)
		event_free(tg->retry_ev);
	if (tg->kick_ev != NULL)
		event_free(tg->kick_ev);
	if (tg->token != NULL) {
		mask_literal_remove(tg->token);
		secret_free(tg->token);
	}
	free(tg);
	d->telegram = NULL;
}

/* Store a new token (from cwctl, over the API) and use it. */
int
telegram_set_token(struct daemon *d, const char *token, char *err, size_t errlen)
{
	enum secret_backend	 where;
	size_t			 n = token != NULL ? strlen(token) : 0;

	if (n < MASK_LITERAL_MIN || n > 256 || strchr(token, ':') == NULL ||
	    strspn(token, "0123456789abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ:_-") != n) {
		snprintf(err, errlen, "token: not a Telegram bot token (digits, ':', then "
		    "letters, digits, '_' and '-'; as @BotFather gives it)");
		return -1;
	}
	if (secret_set(d->home, TELEGRAM_TOKEN_SECRET, token, &where, err, errlen) == -1)
		return -1;
	log_info("telegram: bot token stored (%s)", secret_backend_name(where));
	if (telegram_reload(d) == -1 && d->telegram != NULL) {
		snprintf(err, errlen, "stored, but not in use: %s", d->telegram->error);
		return -1;
	}
	return 0;
}

static void
tg_test_done(struct telegram *tg, struct tg_call *c, struct tgapi_reply *r,
    const char *neterr)
{
	(void)c;
	tg->test.done = 1;
	tg->test.ok = r != NULL && r->ok;
	snprintf(tg->test.description, sizeof tg->test.description, "%s",
	    r == NULL ? (neterr != NULL ? neterr : "failed") : r->ok ? "sent" :
	    r->description);
	mask_literals_inplace(tg->test.description);
}

int
telegram_test(struct daemon *d, int64_t chat_id, char *err, size_t errlen)
{
	struct telegram	*tg = d->telegram;
	cJSON		*p;

	if (tg == NULL || tg->token == NULL) {
		snprintf(err, errlen, "no bot token: set one with cwctl telegram set-token");
		return -1;
	}
	p = cJSON_CreateObject();
	cJSON_AddNumberToObject(p, "chat_id", (double)chat_id);
	json_add_string(p, "text", "Clockwork test message: this chat can receive "
	    "approvals. A task sends them here with delivery.telegram.chat_id.");
	tg->test.chat_id = chat_id;
	tg->test.done = 0;
	tg->test.ok = 0;
	tg->test.description[0] = '\0';
	if (tg_call(tg, "sendMessage", p, tg_test_done, TG_CALL_SECONDS) == NULL) {
		snprintf(err, errlen, "cannot start the request");
		return -1;
	}
	return 0;
}

cJSON *
telegram_status_json(struct daemon *d)
{
	struct telegram	*tg = d->telegram;
	cJSON		*o = cJSON_CreateObject(), *t;

	if (tg == NULL)
		return o;
	cJSON_AddBoolToObject(o, "token_set", tg->token != NULL);
	json_add_string(o, "secret_backend", secret_backend_name(secret_backend()));
	cJSON_AddBoolToObject(o, "polling", tg->poll != NULL);
	if (tg->base_overridden)
		json_add_string(o, "api_base_for_tests", tg->base);
	json_add_string(o, "error", tg->error[0] ? tg->error : NULL);
	if (tg->error_code > 0)
		cJSON_AddNumberToObject(o, "error_code", (double)tg->error_code);
	cJSON_AddNumberToObject(o, "offset", (double)tg->offset);
	cJSON_AddNumberToObject(o, "messages_sent", (double)tg->n_sent);
	cJSON_AddNumberToObject(o, "messages_edited", (double)tg->n_edited);
	cJSON_AddNumberToObject(o, "presses", (double)tg->n_presses);
	cJSON_AddNumberToObject(o, "presses_refused", (double)tg->n_refused);
	if (tg->test.chat_id != 0 && (t = cJSON_AddObjectToObject(o, "test")) != NULL) {
		cJSON_AddNumberToObject(t, "chat_id", (double)tg->test.chat_id);
		cJSON_AddBoolToObject(t, "done", tg->test.done);
		cJSON_AddBoolToObject(t, "ok", tg->test.ok);
		json_add_string(t, "description", tg->test.description);
	}
	return o;
}

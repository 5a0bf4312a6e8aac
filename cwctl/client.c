/*
 * cwctl's HTTP client (see client.h), over the daemon's unix socket in the Clockwork
 * home ($CLOCKWORK_HOME/clockworkd.sock). No token is sent: the daemon takes the
 * kernel's word on who we are (SO_PEERCRED), and names us by uid and pid in its audit
 * log. A missing socket or a refused connection means the daemon is not running,
 * which is exit 4 with one line on how to start it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "client.h"
#include "clock.h"
#include "cwctl.h"
#include "json.h"
#include "paths.h"

#define CLIENT_MAX_ANSWER	(64 * 1024 * 1024)
#define CLIENT_SUN_PATH		108	/* sizeof sockaddr_un.sun_path */

struct client_buf {
	char	*p;
	size_t	 len;
	int	 overflow;
};

static size_t
client_write_cb(char *data, size_t size, size_t n, void *arg)
{
	struct client_buf	*b = arg;
	size_t			 add = size * n;
	char			*np;

	if (b->len + add > CLIENT_MAX_ANSWER) {
		b->overflow = 1;
		return 0;
	}
	if ((np = realloc(b->p, b->len + add + 1)) == NULL)
		return 0;
	b->p = np;
	memcpy(b->p + b->len, data, add);
	b->len += add;
	b->p[b->len] = '\0';
	return add;
}

static void
client_not_running(const char *home)
{
	fprintf(stderr, "cwctl: clockworkd is not running for %s; start it with "
	    "'clockworkd' (or 'clockworkd --foreground', or 'cwctl service install')\n",
	    home);
}

int
client_escape(const char *s, char *out, size_t outlen)
{
	static const char	hex[] = "0123456789ABCDEF";
	size_t			o = 0;

	for (; *s != '\0'; s++) {
		unsigned char	c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~') {
			if (o + 1 >= outlen)
				return -1;
			out[o++] = (char)c;
		} else {
			if (o + 3 >= outlen)
				return -1;
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return 0;
}

/* Returns 0 with *status set, 4 when no daemon answers, 1 on other failures. */
static int
client_do(const char *method, const char *path, const cJSON *body, long *status,
    cJSON **out, char *err, size_t errlen, char *home, size_t homelen)
{
	char			 sock[PATH_MAX], url[PATH_MAX];
	struct curl_slist	*h = NULL;
	struct client_buf	 b = { 0 };
	char			*text = NULL;
	CURL			*c;
	CURLcode		 cc;
	int			 rc = 1;

	*status = 0;
	*out = NULL;
	if (paths_clockwork_home(home, homelen) == -1) {
		snprintf(err, errlen, "cannot find the Clockwork home: %s", strerror(errno));
		return 1;
	}
	if ((size_t)snprintf(sock, sizeof sock, "%s/clockworkd.sock", home) >=
	    CLIENT_SUN_PATH) {
		snprintf(err, errlen, "%.400s: longer than a unix socket path may be", sock);
		return 1;
	}
	if (access(sock, F_OK) == -1 && errno == ENOENT)
		return 4;
	/* The host part is only for the request line: the socket decides who answers. */
	snprintf(url, sizeof url, "http://localhost%s", path);
	if ((c = curl_easy_init()) == NULL) {
		snprintf(err, errlen, "cannot initialise libcurl");
		return 1;
	}
	curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, sock);
	h = curl_slist_append(h, "X-Clockwork-Client: cwctl");
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Expect:");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, client_write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (body != NULL) {
		text = json_print(body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, text != NULL ? text : "{}");
	} else if (strcmp(method, "POST") == 0)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
	cc = curl_easy_perform(c);
	if (cc == CURLE_COULDNT_CONNECT) {
		rc = 4;
		goto out;
	}
	if (cc != CURLE_OK) {
		snprintf(err, errlen, "%s %s: %s", method, path, curl_easy_strerror(cc));
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	if (b.len > 0 && (*out = json_parse(b.p, b.len)) == NULL) {
		snprintf(err, errlen, "%s %s: the answer is not JSON (HTTP %ld)", method, path,
		    *status);
		goto out;
	}
	rc = 0;
out:
	cJSON_free(text);
	free(b.p);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return rc;
}

int
client_call_quiet(const char *method, const char *path, const cJSON *body, long *status,
    cJSON **out)
{
	char	err[512], home[PATH_MAX];
	int	rc;

	rc = client_do(method, path, body, status, out, err, sizeof err, home, sizeof home);
	if (rc != 0)
		*status = 0;
	return rc;
}

int
client_call(const char *method, const char *path, const cJSON *body, cJSON **out)
{
	char		 err[512], home[PATH_MAX];
	const cJSON	*e;
	const char	*msg, *code;
	long		 status;
	int		 rc;

	rc = client_do(method, path, body, &status, out, err, sizeof err, home,
	    sizeof home);
	if (rc == 4) {
		client_not_running(home);
		return CWCTL_EXIT_NODAEMON;
	}
	if (rc != 0) {
		fprintf(stderr, "cwctl: %s\n", err);
		return CWCTL_EXIT_FAILURE;
	}
	if (status >= 200 && status < 300)
		return CWCTL_EXIT_OK;
	e = cJSON_GetObjectItemCaseSensitive(*out, "error");
	msg = json_get_string(e, "message");
	code = json_get_string(e, "code");
	fprintf(stderr, "cwctl: %s\n", msg != NULL ? msg : "the daemon refused the request");
	rc = CWCTL_EXIT_FAILURE;
	/* already_answered, and a run already merged, landed or discarded (issue 27). */
	if (status == 409 && code != NULL && (strncmp(code, "already_", 8) == 0 ||
	    strcmp(code, "run_ended") == 0 || strcmp(code, "settings_changed") == 0))
		rc = CWCTL_EXIT_DENIED;
	if (status == 401 || status == 403)
		rc = CWCTL_EXIT_DENIED;
	if (status == 409 && code != NULL && strcmp(code, "no_conversation") == 0)
		rc = CWCTL_EXIT_NO_CONVERSATION;
	if (status == 409 && code != NULL && (strcmp(code, "run_active") == 0 ||
	    strcmp(code, "branch_held") == 0))
		rc = CWCTL_EXIT_BUSY;
	if (status == 409 && code != NULL && (strcmp(code, "branch_gone") == 0 ||
	    strcmp(code, "branch_checked_out") == 0 || strcmp(code, "worktree_dirty") == 0))
		rc = CWCTL_EXIT_BRANCH;
	cJSON_Delete(*out);
	*out = NULL;
	return rc;
}

int
client_send(const char *method, const char *path, cJSON *body, cJSON **out)
{
	int	rc;

	rc = client_call(method, path, body, out);
	cJSON_Delete(body);
	return rc;
}

void
client_print_json(const cJSON *v)
{
	char	*t = cJSON_Print(v);

	if (t != NULL) {
		printf("%s\n", t);
		cJSON_free(t);
	}
}

/* ---- the event stream ---------------------------------------------------------- */

#define CLIENT_EVENTS_SILENCE_MS	45000	/* three heartbeats (events.c: 15 s) */
#define CLIENT_EVENTS_RECONNECT_MS	30000	/* how long a lost daemon is waited for */

struct client_events {
	char			 query[1024];
	char			 sock[PATH_MAX];
	char			 home[PATH_MAX];
	CURLM			*m;
	CURL			*c;
	struct curl_slist	*h;
	struct client_buf	 b;
	size_t			 off;		/* what of b has been parsed */
	uint64_t		 last;		/* the last event id seen */
	int			 ended;		/* the transfer is over */
	int			 reconnected;	/* a "reconnected" event is owed */
};

static void
client_events_drop(struct client_events *ce)
{
	if (ce->c != NULL) {
		curl_multi_remove_handle(ce->m, ce->c);
		curl_easy_cleanup(ce->c);
		ce->c = NULL;
	}
	curl_slist_free_all(ce->h);
	ce->h = NULL;
	free(ce->b.p);
	memset(&ce->b, 0, sizeof ce->b);
	ce->off = 0;
	ce->ended = 0;
}

/* Drive the transfer for at most ms: 1 when it ended, 0 otherwise. */
static int
client_events_pump(struct client_events *ce, int ms)
{
	CURLMsg	*msg;
	int	 running = 0, left;
	size_t	 had = ce->b.len;

	if (ce->ended)
		return 1;
	if (curl_multi_perform(ce->m, &running) != CURLM_OK) {
		ce->ended = 1;
		return 1;
	}
	while ((msg = curl_multi_info_read(ce->m, &left)) != NULL)
		if (msg->msg == CURLMSG_DONE)
			ce->ended = 1;
	if (ce->ended || running == 0) {
		ce->ended = 1;
		return 1;
	}
	/* What came is the caller's; else wait on the socket until bytes come. */
	if (ce->b.len == had)
		(void)curl_multi_poll(ce->m, NULL, 0, ms, NULL);
	return 0;
}

/*
 * Open the stream: returns 0 once the daemon has answered 200 (it subscribed the
 * stream before sending that, so nothing published after this returns is missed), 4
 * when no daemon answers, 1 with err filled on any other failure (a refused filter).
 */
static int
client_events_connect(struct client_events *ce, char *err, size_t errlen)
{
	char		 url[PATH_MAX + 64], hdr[64];
	long		 status = 0;
	int64_t		 end = clock_mono_ms() + 10000;
	cJSON		*o;
	const char	*msg;

	client_events_drop(ce);
	if (access(ce->sock, F_OK) == -1 && errno == ENOENT)
		return 4;
	if ((ce->c = curl_easy_init()) == NULL) {
		snprintf(err, errlen, "cannot initialise libcurl");
		return 1;
	}
	snprintf(url, sizeof url, "http://localhost/api/events%s%s",
	    ce->query[0] != '\0' ? "?" : "", ce->query);
	ce->h = curl_slist_append(ce->h, "X-Clockwork-Client: cwctl");
	ce->h = curl_slist_append(ce->h, "Accept: text/event-stream");
	if (ce->last > 0) {
		snprintf(hdr, sizeof hdr, "Last-Event-ID: %llu", (unsigned long long)ce->last);
		ce->h = curl_slist_append(ce->h, hdr);
	}
	curl_easy_setopt(ce->c, CURLOPT_UNIX_SOCKET_PATH, ce->sock);
	curl_easy_setopt(ce->c, CURLOPT_URL, url);
	curl_easy_setopt(ce->c, CURLOPT_HTTPHEADER, ce->h);
	curl_easy_setopt(ce->c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(ce->c, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(ce->c, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(ce->c, CURLOPT_WRITEFUNCTION, client_write_cb);
	curl_easy_setopt(ce->c, CURLOPT_WRITEDATA, &ce->b);
	if (curl_multi_add_handle(ce->m, ce->c) != CURLM_OK) {
		snprintf(err, errlen, "cannot start the event stream");
		return 1;
	}
	for (;;) {
		curl_easy_getinfo(ce->c, CURLINFO_RESPONSE_CODE, &status);
		if (status != 0 && (status != 200 || ce->b.len > 0))
			break;
		if (client_events_pump(ce, 200)) {
			curl_easy_getinfo(ce->c, CURLINFO_RESPONSE_CODE, &status);
			break;
		}
		if (clock_mono_ms() > end) {
			snprintf(err, errlen, "GET /api/events: no answer within 10 s");
			return 1;
		}
	}
	if (status == 200 && !(ce->ended && ce->b.len == 0))
		return 0;
	if (status == 0)
		return 4;		/* refused or reset: nobody there */
	while (!client_events_pump(ce, 200) && clock_mono_ms() < end)
		;			/* the rest of the error answer */
	o = ce->b.len > 0 ? json_parse(ce->b.p, ce->b.len) : NULL;
	msg = json_get_string(cJSON_GetObjectItemCaseSensitive(o, "error"), "message");
	snprintf(err, errlen, "GET /api/events: %s (HTTP %ld)", msg != NULL ? msg :
	    "the daemon refused the stream", status);
	cJSON_Delete(o);
	return 1;
}

int
client_events_open(const char *query, struct client_events **out)
{
	struct client_events	*ce;
	char			 err[512];
	int			 rc;

	*out = NULL;
	if ((ce = calloc(1, sizeof *ce)) == NULL) {
		fprintf(stderr, "cwctl: out of memory\n");
		return CWCTL_EXIT_FAILURE;
	}
	if (paths_clockwork_home(ce->home, sizeof ce->home) == -1) {
		fprintf(stderr, "cwctl: cannot find the Clockwork home: %s\n", strerror(errno));
		free(ce);
		return CWCTL_EXIT_FAILURE;
	}
	if ((size_t)snprintf(ce->sock, sizeof ce->sock, "%s/clockworkd.sock", ce->home) >=
	    CLIENT_SUN_PATH || (size_t)snprintf(ce->query, sizeof ce->query, "%s",
	    query != NULL ? query : "") >= sizeof ce->query) {
		fprintf(stderr, "cwctl: %.400s: longer than a unix socket path may be\n",
		    ce->sock);
		free(ce);
		return CWCTL_EXIT_FAILURE;
	}
	if ((ce->m = curl_multi_init()) == NULL) {
		fprintf(stderr, "cwctl: cannot initialise libcurl\n");
		free(ce);
		return CWCTL_EXIT_FAILURE;
	}
	if ((rc = client_events_connect(ce, err, sizeof err)) != 0) {
		if (rc == 4)
			client_not_running(ce->home);
		else
			fprintf(stderr, "cwctl: %s\n", err);
		client_events_close(ce);
		return rc == 4 ? CWCTL_EXIT_NODAEMON : CWCTL_EXIT_FAILURE;
	}
	*out = ce;
	return CWCTL_EXIT_OK;
}

void
client_events_close(struct client_events *ce)
{
	if (ce == NULL)
		return;
	client_events_drop(ce);
	if (ce->m != NULL)
		curl_multi_cleanup(ce->m);
	free(ce);
}

void
client_event_clear(struct client_event *ev)
{
	cJSON_Delete(ev->data);
	memset(ev, 0, sizeof *ev);
}

/*
 * One whole event from what has come (a blank line ends it): 1 with ev filled, 0 when
 * no whole event is there yet. Comments and "retry:" lines are skipped; an event with
 * neither a type nor data is no event.
 */
static int
client_events_parse(struct client_events *ce, struct client_event *ev)
{
	char	*p, *end, *nl, *line, *data = NULL;

	for (;;) {
		p = ce->b.p + ce->off;
		if (ce->b.p == NULL || (end = strstr(p, "\n\n")) == NULL)
			return 0;
		memset(ev, 0, sizeof *ev);
		*end = '\0';
		for (line = p; line != NULL && *line != '\0'; line = nl) {
			if ((nl = strchr(line, '\n')) != NULL)
				*nl++ = '\0';
			if (strncmp(line, "id: ", 4) == 0)
				ev->id = strtoull(line + 4, NULL, 10);
			else if (strncmp(line, "event: ", 7) == 0)
				snprintf(ev->type, sizeof ev->type, "%s", line + 7);
			else if (strncmp(line, "data: ", 6) == 0)
				data = line + 6;
		}
		ce->off = (size_t)(end + 2 - ce->b.p);
		if (data != NULL)
			ev->data = json_parse(data, strlen(data));
		if (ev->id > ce->last)
			ce->last = ev->id;
		if (ev->type[0] != '\0' || ev->data != NULL)
			break;
	}
	/* Keep the buffer small: drop what was parsed once it is most of it. */
	if (ce->off > 64 * 1024 && ce->off * 2 > ce->b.len) {
		memmove(ce->b.p, ce->b.p + ce->off, ce->b.len - ce->off + 1);
		ce->b.len -= ce->off;
		ce->off = 0;
	}
	return 1;
}

/*
 * The stream was lost: open it again with Last-Event-ID, for up to
 * CLIENT_EVENTS_RECONNECT_MS. Waiting between tries is for the daemon to come
 * back (a restart), not a poll of its state.
 */
static int
client_events_reconnect(struct client_events *ce, const char *why)
{
	char		 err[512];
	int64_t		 end = clock_mono_ms() + CLIENT_EVENTS_RECONNECT_MS;
	long		 pause_ms = 50;
	struct timespec	 ts;
	int		 rc;

	fprintf(stderr, "cwctl: lost the event stream from clockworkd (%s); reconnecting "
	    "for up to %d s\n", why, CLIENT_EVENTS_RECONNECT_MS / 1000);
	for (;;) {
		if ((rc = client_events_connect(ce, err, sizeof err)) == 0) {
			fprintf(stderr, "cwctl: reconnected to clockworkd\n");
			ce->reconnected = 1;
			return CWCTL_EXIT_OK;
		}
		if (rc != 4) {
			fprintf(stderr, "cwctl: %s\n", err);
			return CWCTL_EXIT_FAILURE;
		}
		if (clock_mono_ms() >= end) {
			fprintf(stderr, "cwctl: clockworkd did not come back within %d s\n",
			    CLIENT_EVENTS_RECONNECT_MS / 1000);
			client_not_running(ce->home);
			return CWCTL_EXIT_NODAEMON;
		}
		ts.tv_sec = pause_ms / 1000;
		ts.tv_nsec = pause_ms % 1000 * 1000000L;
		nanosleep(&ts, NULL);
		if ((pause_ms *= 2) > 1000)
			pause_ms = 1000;
	}
}

int
client_events_next(struct client_events *ce, struct client_event *ev)
{
	int64_t	 heard = clock_mono_ms();
	size_t	 had;
	int	 rc;

	memset(ev, 0, sizeof *ev);
	for (;;) {
		if (ce->reconnected) {
			ce->reconnected = 0;
			snprintf(ev->type, sizeof ev->type, "reconnected");
			return CWCTL_EXIT_OK;
		}
		if (client_events_parse(ce, ev)) {
			heard = clock_mono_ms();
			if (strcmp(ev->type, "heartbeat") == 0) {
				client_event_clear(ev);
				continue;
			}
			if (strcmp(ev->type, "cutoff") == 0) {
				client_event_clear(ev);
				if ((rc = client_events_reconnect(ce, "cut off")) != 0)
					return rc;
				continue;
			}
			return CWCTL_EXIT_OK;
		}
		if (ce->b.overflow) {
			fprintf(stderr, "cwctl: an event longer than %d bytes\n",
			    CLIENT_MAX_ANSWER);
			return CWCTL_EXIT_FAILURE;
		}
		had = ce->b.len;
		/* Asleep until bytes come or the heartbeat is overdue: nothing is asked. */
		if (client_events_pump(ce, (int)(CLIENT_EVENTS_SILENCE_MS + 1 -
		    (clock_mono_ms() - heard)) > 0 ? (int)(CLIENT_EVENTS_SILENCE_MS + 1 -
		    (clock_mono_ms() - heard)) : 1)) {
			if (ce->b.len > had)
				continue;	/* the last bytes before the end */
			if ((rc = client_events_reconnect(ce, "the connection closed")) != 0)
				return rc;
			heard = clock_mono_ms();
		} else if (ce->b.len > had) {
			heard = clock_mono_ms();
		} else if (clock_mono_ms() - heard > CLIENT_EVENTS_SILENCE_MS) {
			if ((rc = client_events_reconnect(ce, "no heartbeat")) != 0)
				return rc;
			heard = clock_mono_ms();
		}
	}
}

int
client_events_wait(struct client_events *ce)
{
	struct client_event	ev;
	int			rc, cutoff;

	if ((rc = client_events_next(ce, &ev)) != 0)
		return rc;
	client_event_clear(&ev);
	/*
	 * What came with it is covered by the one read of state that follows; taken
	 * without blocking (a block with no event, such as "retry:", is no event).
	 */
	while (client_events_parse(ce, &ev)) {
		cutoff = strcmp(ev.type, "cutoff") == 0;
		client_event_clear(&ev);
		if (cutoff)
			return client_events_reconnect(ce, "cut off");
	}
	return CWCTL_EXIT_OK;
}

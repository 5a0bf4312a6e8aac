/*
 * The run's egress proxy: see proxy.h. One struct proxy_conn per client connection,
 * through these states:
 *
 *   HEAD        reading the request head (proxyreq_parse), under a deadline
 *   ASKING      no rule names the host and network.ask is on: held for a person's
 *               answer (an approval), until proxy_decide() or the hold deadline
 *   RESOLVING   the policy allowed the host:port; evdns is looking the name up
 *   CONNECTING  a non-blocking connect to the first address the rule may reach
 *   TUNNEL      bytes copied both ways, counted, with back-pressure and an idle limit;
 *               for plain HTTP, the client's bytes only up to the end of the request's
 *               body (proxyreq_body_take): one request per connection
 *   DRAINING    one side has ended; what is buffered for the other is written, then
 *               the connection closes
 *
 * A refusal is answered with a short 403/400/502 text and the connection closes once
 * it is written.
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <sys/time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "asklimit.h"
#include "clock.h"
#include "json.h"
#include "proxy.h"
#include "proxyreq.h"
#include "record.h"
#include "wire.h"

enum proxy_state { PS_HEAD, PS_ASKING, PS_RESOLVING, PS_CONNECTING, PS_TUNNEL, PS_DRAINING };

struct proxy_conn {
	TAILQ_ENTRY(proxy_conn)	 entry;
	struct proxy		*p;
	enum proxy_state	 state;
	struct bufferevent	*client, *upstream;
	struct evdns_getaddrinfo_request *dns;
	struct event		*deadline;
	struct proxyreq		 req;
	int			 have_req;
	const struct netrule	*rule;
	char			 addr[INET6_ADDRSTRLEN];
	uint64_t		 up, down;
	struct timespec		 t0;
	int			 denied;
	char			 error[160];
	struct proxyreq_body	 body;		/* plain HTTP: where the request ends */
	int			 extra;		/* bytes came after it (not relayed) */
	char			 ask_id[32];	/* while ASKING */
	cJSON			*announce;	/* its approval_request, while ASKING */
};
TAILQ_HEAD(proxy_conns, proxy_conn);

struct proxy {
	struct event_base	*base;
	struct evdns_base	*dns;
	struct evconnlistener	*listener;
	struct netrule		*rules;
	size_t			 n_rules;
	int			 idle_seconds;
	char			*run_id;
	void			(*emit)(void *, cJSON *);
	void			*arg;
	struct proxy_conns	 conns;
	int			 nconns;
	int			 ask, hold_seconds, nheld;
	struct asklimit		*asks;		/* the run's approval budget, or NULL */
	struct netrule		 granted[PROXY_MAX_GRANTS];	/* answered "allow" */
	size_t			 ngranted;
	uint64_t		 total, allowed, denied, bytes_up, bytes_down;
	struct record_list	 denials;
};

static void	proxy_close(struct proxy_conn *);
static void	proxy_answer(struct proxy_conn *, int, const char *);
static int	proxy_ask(struct proxy_conn *);
static void	proxy_arm(struct proxy_conn *, int);
static void	proxy_head_read(struct bufferevent *, void *);
static void	proxy_head_event(struct bufferevent *, short, void *);
static void	proxy_relay_read(struct bufferevent *, void *);
static void	proxy_relay_write(struct bufferevent *, void *);
static void	proxy_relay_event(struct bufferevent *, short, void *);

static long
proxy_ms_since(const struct timespec *t0)
{
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* The record of one connection: an event for the daemon, and a denial for the report. */
static cJSON *
proxy_record(const struct proxy_conn *c, const char *verdict, const char *reason)
{
	cJSON	*o;

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	if (c->have_req) {
		record_add_string(o, "host", c->req.host, CW_RECORD_MAX_TEXT);
		cJSON_AddNumberToObject(o, "port", c->req.port);
		cJSON_AddStringToObject(o, "method", c->req.connect ? "CONNECT" :
		    c->req.method);
	}
	if (c->addr[0] != '\0')
		cJSON_AddStringToObject(o, "addr", c->addr);
	cJSON_AddStringToObject(o, "verdict", verdict);
	if (c->rule != NULL)
		cJSON_AddStringToObject(o, "rule", c->rule->text);
	if (reason != NULL)
		record_add_string(o, "reason", reason, CW_RECORD_MAX_TEXT);
	cJSON_AddNumberToObject(o, "bytes_up", (double)c->up);
	cJSON_AddNumberToObject(o, "bytes_down", (double)c->down);
	cJSON_AddNumberToObject(o, "ms", (double)proxy_ms_since(&c->t0));
	return o;
}

static void
proxy_emit(struct proxy *p, const char *kind, const cJSON *rec)
{
	cJSON	*ev, *it;

	if (p->emit == NULL || rec == NULL || (ev = cJSON_CreateObject()) == NULL)
		return;
	cJSON_AddNumberToObject(ev, "v", CW_WIRE_VERSION);
	cJSON_AddStringToObject(ev, "type", "event");
	cJSON_AddStringToObject(ev, "kind", kind);
	cJSON_AddStringToObject(ev, "run_id", p->run_id);
	cJSON_ArrayForEach(it, rec)
		cJSON_AddItemToObject(ev, it->string, cJSON_Duplicate(it, 1));
	p->emit(p->arg, ev);
}

/* Close once the reply is written. */
static void
proxy_flushed_cb(struct bufferevent *bev, void *arg)
{
	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		proxy_close(arg);
}

static void
proxy_flush_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	proxy_close(arg);
}

/* A refused connection: counted, an event for the daemon, a denial for the report. */
static void
proxy_deny_record(struct proxy_conn *c, const char *why)
{
	struct proxy	*p = c->p;
	cJSON		*rec;

	c->denied = 1;
	p->denied++;
	if ((rec = proxy_record(c, "denied", why)) != NULL) {
		proxy_emit(p, "net_deny", rec);
		record_list_add(&p->denials, rec);
	}
}

/* Refuse with an HTTP status and a line saying why; record it; close when written. */
static void
proxy_refuse(struct proxy_conn *c, int code, const char *why)
{
	const char	*status = code == 403 ? "Forbidden" : code == 400 ? "Bad Request" :
			    code == 504 ? "Gateway Timeout" : "Bad Gateway";
	char		 body[720];
	int		 n;

	if (code == 403 || code == 400)
		proxy_deny_record(c, why);
	else
		snprintf(c->error, sizeof c->error, "%s", why);
	if (c->dns != NULL) {
		/* An answer that comes later must find nothing to connect. */
		evdns_getaddrinfo_cancel(c->dns);
		c->dns = NULL;
	}
	n = snprintf(body, sizeof body, "clockwork: %s\n", why);
	if (n < 0 || (size_t)n >= sizeof body)
		n = (int)strlen(body);
	if (c->upstream != NULL) {
		bufferevent_free(c->upstream);
		c->upstream = NULL;
	}
	c->state = PS_DRAINING;
	evbuffer_add_printf(bufferevent_get_output(c->client), "HTTP/1.1 %d %s\r\n"
	    "Content-Type: text/plain\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
	    code, status, n, body);
	bufferevent_disable(c->client, EV_READ);
	bufferevent_setcb(c->client, NULL, proxy_flushed_cb, proxy_flush_event, c);
	bufferevent_enable(c->client, EV_WRITE);
}

static void
proxy_close(struct proxy_conn *c)
{
	struct proxy	*p = c->p;
	cJSON		*rec;

	if (!c->denied && c->have_req) {
		if ((rec = proxy_record(c, "allowed", c->error[0] ? c->error : NULL)) != NULL) {
			proxy_emit(p, "net", rec);
			cJSON_Delete(rec);
		}
	}
	p->bytes_up += c->up;
	p->bytes_down += c->down;
	if (c->dns != NULL)
		evdns_getaddrinfo_cancel(c->dns);	/* its callback sees CANCEL only */
	if (c->deadline != NULL)
		event_free(c->deadline);
	if (c->client != NULL)
		bufferevent_free(c->client);
	if (c->upstream != NULL)
		bufferevent_free(c->upstream);
	if (c->have_req)
		proxyreq_free(&c->req);
	if (c->announce != NULL) {
		cJSON_Delete(c->announce);
		p->nheld--;
	}
	TAILQ_REMOVE(&p->conns, c, entry);
	if (p->nconns-- == PROXY_MAX_CONNS && p->listener != NULL)
		evconnlistener_enable(p->listener);
	free(c);
}

static void
proxy_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct proxy_conn	*c = arg;

	(void)fd;
	(void)what;
	if (c->state == PS_HEAD || c->state == PS_DRAINING)
		proxy_close(c);
	else if (c->state == PS_ASKING)
		proxy_answer(c, 0, "no answer before the hold ended");
	else
		proxy_refuse(c, 504, "connecting upstream took too long");
}

static void
proxy_arm(struct proxy_conn *c, int ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };

	evtimer_add(c->deadline, &tv);
}

/*
 * Move the client's bytes of a plain HTTP request upstream: the rest of its body and
 * nothing after it. Bytes after it (a pipelined request, whatever its Host:) are
 * dropped, never relayed: the rule was checked for the first request only. 0, or -1
 * when the body is malformed and c is closed here (400 if the server has not answered
 * yet, else the connection just ends).
 */
static int
proxy_relay_body(struct proxy_conn *c, struct evbuffer *in, struct evbuffer *out)
{
	struct evbuffer_iovec	 v[16];
	size_t			 take;
	ssize_t			 n;
	int			 nv;
	char			 err[160], why[200];

	while (evbuffer_get_length(in) > 0 && !c->body.done) {
		nv = evbuffer_peek(in, -1, NULL, v, 16);
		take = 0;
		for (int i = 0; i < nv && i < 16 && !c->body.done; i++) {
			n = proxyreq_body_take(&c->body, v[i].iov_base, v[i].iov_len, err,
			    sizeof err);
			if (n == -1) {
				snprintf(why, sizeof why, "malformed request body: %s", err);
				if (c->down == 0)
					proxy_refuse(c, 400, why);
				else {
					proxy_deny_record(c, why);
					proxy_close(c);
				}
				return -1;
			}
			take += (size_t)n;
		}
		c->up += take;
		evbuffer_remove_buffer(in, out, take);
	}
	if (evbuffer_get_length(in) > 0) {
		if (!c->extra && c->error[0] == '\0')
			snprintf(c->error, sizeof c->error, "bytes after the request (a "
			    "pipelined request?) were not relayed: one request per connection");
		c->extra = 1;
		evbuffer_drain(in, evbuffer_get_length(in));
	}
	return 0;
}

/*
 * Move what src has read to dst, counting; stop reading when dst is full. 0, or -1
 * when the connection was closed here.
 */
static int
proxy_relay(struct proxy_conn *c, struct bufferevent *src)
{
	struct bufferevent	*dst = src == c->client ? c->upstream : c->client;
	struct evbuffer		*in = bufferevent_get_input(src);
	size_t			 n = evbuffer_get_length(in);

	if (dst == NULL)
		return 0;
	if (src == c->client && !c->req.connect) {
		if (proxy_relay_body(c, in, bufferevent_get_output(dst)) == -1)
			return -1;
	} else {
		if (src == c->client)
			c->up += n;
		else
			c->down += n;
		evbuffer_add_buffer(bufferevent_get_output(dst), in);
	}
	if (evbuffer_get_length(bufferevent_get_output(dst)) >= PROXY_BUFFER)
		bufferevent_disable(src, EV_READ);
	return 0;
}

static void
proxy_relay_read(struct bufferevent *src, void *arg)
{
	(void)proxy_relay(arg, src);
}

/* dst drained below the watermark: read from its source again (or finish draining). */
static void
proxy_relay_write(struct bufferevent *dst, void *arg)
{
	struct proxy_conn	*c = arg;
	struct bufferevent	*src = dst == c->client ? c->upstream : c->client;

	if (c->state == PS_DRAINING) {
		if (evbuffer_get_length(bufferevent_get_output(dst)) == 0)
			proxy_close(c);
		return;
	}
	if (src != NULL)
		bufferevent_enable(src, EV_READ);
}

static void
proxy_relay_event(struct bufferevent *bev, short what, void *arg)
{
	struct proxy_conn	*c = arg;
	struct bufferevent	*other = bev == c->client ? c->upstream : c->client;

	(void)what;
	/* Whatever it sent last is passed on, then the other side is ended too. */
	if (proxy_relay(c, bev) == -1)
		return;
	if (bev == c->client)
		c->client = NULL;
	else
		c->upstream = NULL;
	bufferevent_free(bev);
	if (other == NULL || evbuffer_get_length(bufferevent_get_output(other)) == 0) {
		proxy_close(c);
		return;
	}
	c->state = PS_DRAINING;
	bufferevent_disable(other, EV_READ);
	bufferevent_setwatermark(other, EV_WRITE, 0, 0);
	proxy_arm(c, PROXY_CONNECT_MS);
}

static void
proxy_tunnel(struct proxy_conn *c)
{
	struct timeval	 idle = { c->p->idle_seconds, 0 };
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";

	evtimer_del(c->deadline);
	c->state = PS_TUNNEL;
	if (c->req.connect)
		bufferevent_write(c->client, ok, sizeof ok - 1);
	else {
		bufferevent_write(c->upstream, c->req.upstream, c->req.upstream_len);
		c->up += c->req.upstream_len;
		proxyreq_body_init(&c->body, &c->req);
	}
	bufferevent_setcb(c->client, proxy_relay_read, proxy_relay_write, proxy_relay_event, c);
	bufferevent_setcb(c->upstream, proxy_relay_read, proxy_relay_write, proxy_relay_event,
	    c);
	bufferevent_setwatermark(c->client, EV_WRITE, PROXY_BUFFER / 2, 0);
	bufferevent_setwatermark(c->upstream, EV_WRITE, PROXY_BUFFER / 2, 0);
	bufferevent_set_timeouts(c->client, &idle, NULL);
	bufferevent_set_timeouts(c->upstream, &idle, NULL);
	bufferevent_enable(c->client, EV_READ | EV_WRITE);
	bufferevent_enable(c->upstream, EV_READ | EV_WRITE);
	/* Bytes the client sent after the head (a pipelined body, a TLS hello). */
	if (evbuffer_get_length(bufferevent_get_input(c->client)) > 0)
		(void)proxy_relay(c, c->client);
}

static void
proxy_upstream_event(struct bufferevent *bev, short what, void *arg)
{
	struct proxy_conn	*c = arg;
	char			 why[128];

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		proxy_tunnel(c);
		return;
	}
	snprintf(why, sizeof why, "cannot connect to %s: %s", c->addr,
	    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	proxy_refuse(c, 502, why);
}

static void
proxy_connect(struct proxy_conn *c, const struct sockaddr *sa, socklen_t sl)
{
	c->state = PS_CONNECTING;
	if ((c->upstream = bufferevent_socket_new(c->p->base, -1, BEV_OPT_CLOSE_ON_FREE)) ==
	    NULL) {
		proxy_refuse(c, 502, "out of memory");
		return;
	}
	bufferevent_setcb(c->upstream, NULL, NULL, proxy_upstream_event, c);
	if (bufferevent_socket_connect(c->upstream, sa, (int)sl) == -1) {
		char	 why[128];

		snprintf(why, sizeof why, "cannot connect to %s", c->addr);
		proxy_refuse(c, 502, why);
	}
}

static void
proxy_addr_text(const struct sockaddr *sa, char *out, size_t outlen)
{
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out,
		    (socklen_t)outlen);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out,
		    (socklen_t)outlen);
	else
		snprintf(out, outlen, "?");
}

static void
proxy_resolved(int result, struct evutil_addrinfo *res, void *arg)
{
	struct proxy_conn	*c = arg;
	struct evutil_addrinfo	*ai;
	char			 why[640];

	if (result == EVUTIL_EAI_CANCEL)
		return;		/* the connection is gone */
	c->dns = NULL;
	if (result != 0) {
		snprintf(why, sizeof why, "cannot resolve %s: %s", c->req.host,
		    evutil_gai_strerror(result));
		proxy_refuse(c, 502, why);
		return;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		proxy_addr_text(ai->ai_addr, c->addr, sizeof c->addr);
		if (netrule_addr_ok(c->rule, ai->ai_addr)) {
			proxy_connect(c, ai->ai_addr, ai->ai_addrlen);
			evutil_freeaddrinfo(res);
			return;
		}
	}
	snprintf(why, sizeof why, "network policy: %s resolves to %s, a private, loopback "
	    "or link-local address; only a rule naming that address reaches it",
	    c->req.host, c->addr[0] ? c->addr : "no usable address");
	if (res != NULL)
		evutil_freeaddrinfo(res);
	proxy_refuse(c, 403, why);
}

/* The request's IP literal as a socket address (port set); its length. */
static socklen_t
proxy_literal(const struct proxy_conn *c, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	if (strchr(c->req.host, ':') != NULL) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)c->req.port);
		inet_pton(AF_INET6, c->req.host, &s6->sin6_addr);
		return sizeof *s6;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)c->req.port);
		inet_pton(AF_INET, c->req.host, &s4->sin_addr);
		return sizeof *s4;
	}
}

/* While held, nothing the client sends is read as a request; its bytes stay queued. */
static void
proxy_held_read(struct bufferevent *bev, void *arg)
{
	(void)bev;
	(void)arg;
}

/*
 * The client gave up while its connection was held: the question is withdrawn (the
 * daemon expires the approval, as it does one the bridge gave up on) and it closes.
 */
static void
proxy_held_event(struct bufferevent *bev, short what, void *arg)
{
	struct proxy_conn	*c = arg;
	struct proxy		*p = c->p;
	cJSON			*ev;

	(void)bev;
	(void)what;
	if (p->emit != NULL && (ev = cJSON_CreateObject()) != NULL) {
		cJSON_AddNumberToObject(ev, "v", CW_WIRE_VERSION);
		cJSON_AddStringToObject(ev, "type", "event");
		cJSON_AddStringToObject(ev, "kind", "approval_timeout");
		cJSON_AddStringToObject(ev, "run_id", p->run_id);
		cJSON_AddStringToObject(ev, "id", c->ask_id);
		cJSON_AddStringToObject(ev, "by", "client_gone");
		cJSON_AddStringToObject(ev, "reason", "the connection was closed before "
		    "an answer came");
		p->emit(p->arg, ev);
	}
	proxy_close(c);
}

/* Hold the connection and ask: an approval_request for the daemon. */
static int
proxy_ask(struct proxy_conn *c)
{
	struct proxy	*p = c->p;
	unsigned char	 rnd[8];
	cJSON		*msg, *in;
	struct timeval	 tv;
	struct sockaddr_storage ss;
	double		 deadline;
	int		 private;

	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		return -1;
	snprintf(c->ask_id, sizeof c->ask_id, "net-");
	for (size_t i = 0; i < sizeof rnd; i++)
		snprintf(c->ask_id + 4 + 2 * i, 3, "%02x", rnd[i]);
	gettimeofday(&tv, NULL);
	deadline = ((double)tv.tv_sec + p->hold_seconds) * 1000.0;
	if ((msg = cJSON_CreateObject()) == NULL)
		return -1;
	cJSON_AddNumberToObject(msg, "v", CW_WIRE_VERSION);
	cJSON_AddStringToObject(msg, "type", "approval_request");
	cJSON_AddStringToObject(msg, "run_id", p->run_id);
	cJSON_AddStringToObject(msg, "id", c->ask_id);
	cJSON_AddStringToObject(msg, "tool", PROXY_TOOL);
	cJSON_AddNumberToObject(msg, "deadline", deadline);
	/*
	 * The risk a person weighs (issue 26 item 9): granting an address no name rule
	 * may reach (loopback: this machine's own services; private and link-local: the
	 * LAN, a cloud's metadata address) reaches beyond what the sandbox promises. A
	 * name is not that: its grant is a name rule, which never reaches such an
	 * address, whatever the name resolves to (netrule_addr_ok).
	 */
	private = 0;
	if (c->req.is_addr) {
		(void)proxy_literal(c, &ss);
		private = netrule_private((struct sockaddr *)&ss);
	}
	if (private) {
		cJSON_AddStringToObject(msg, "risk", "outside_worktree");
		cJSON_AddStringToObject(msg, "risk_rule", "network.private_address");
	}
	if ((in = cJSON_AddObjectToObject(msg, "input")) != NULL) {
		cJSON_AddStringToObject(in, "host", c->req.host);
		cJSON_AddNumberToObject(in, "port", c->req.port);
		cJSON_AddStringToObject(in, "method", c->req.connect ? "CONNECT" :
		    c->req.method);
		cJSON_AddStringToObject(in, "question", private ? "allow this address for "
		    "this run, or for this task (cwctl approve ID --for-task)? It is a "
		    "loopback, private or link-local address: a service on this machine or "
		    "its network, outside the sandbox" : "allow this host for this run, or "
		    "for this task (cwctl approve ID --for-task)?");
	}
	if ((c->announce = cJSON_Duplicate(msg, 1)) == NULL) {
		cJSON_Delete(msg);
		return -1;
	}
	p->nheld++;
	c->state = PS_ASKING;
	bufferevent_setcb(c->client, proxy_held_read, NULL, proxy_held_event, c);
	bufferevent_enable(c->client, EV_READ);
	evtimer_del(c->deadline);
	proxy_arm(c, p->hold_seconds * 1000);
	if (p->emit != NULL)
		p->emit(p->arg, msg);
	else
		cJSON_Delete(msg);
	return 0;
}

/*
 * Whether the run's approval budget allows one more ask (asklimit.h): -1 with why
 * filled when it does not. The daemon hears of a limit once per burst, as an
 * approval_limit event, never once per refused connection.
 */
static int
proxy_ask_admit(struct proxy_conn *c, char *why, size_t whylen)
{
	struct proxy	*p = c->p;
	char		 reason[160];
	const char	*kind;
	int		 first;
	cJSON		*ev;

	if (p->asks == NULL || asklimit_admit(p->asks, clock_mono_ms(), reason,
	    sizeof reason, &kind, &first) == 0)
		return 0;
	snprintf(why, whylen, "network policy: no rule allows %.300s:%d, and no approval "
	    "can be asked: %s", c->req.host, c->req.port, reason);
	if (first && p->emit != NULL && (ev = cJSON_CreateObject()) != NULL) {
		cJSON_AddNumberToObject(ev, "v", CW_WIRE_VERSION);
		cJSON_AddStringToObject(ev, "type", "event");
		cJSON_AddStringToObject(ev, "kind", "approval_limit");
		cJSON_AddStringToObject(ev, "run_id", p->run_id);
		cJSON_AddStringToObject(ev, "tool", PROXY_TOOL);
		cJSON_AddStringToObject(ev, "limit", kind);
		cJSON_AddStringToObject(ev, "reason", reason);
		p->emit(p->arg, ev);
	}
	return -1;
}

static void
proxy_decide_conn(struct proxy_conn *c)
{
	struct proxy		*p = c->p;
	struct evutil_addrinfo	 hints;
	struct sockaddr_storage	 ss;
	socklen_t		 sl;
	char			 why[640], port[8];
	int			 v6 = strchr(c->req.host, ':') != NULL;

	if ((c->rule = netrule_find(p->rules, p->n_rules, c->req.host, c->req.port)) == NULL)
		c->rule = netrule_find(p->granted, p->ngranted, c->req.host, c->req.port);
	if (c->rule == NULL) {
		/*
		 * Each held ask may become a grant when it is answered, and answers come
		 * in any number at once: a place in granted[] is kept for every held ask,
		 * so the answers can never outnumber the table (proxy_answer checks again).
		 */
		if (p->ask && p->nheld < PROXY_MAX_HELD &&
		    p->ngranted + (size_t)p->nheld < PROXY_MAX_GRANTS) {
			if (proxy_ask_admit(c, why, sizeof why) == -1) {
				proxy_refuse(c, 403, why);
				return;
			}
			if (proxy_ask(c) == 0)
				return;
		}
		snprintf(why, sizeof why, "network policy: no rule allows %s%s%s:%d "
		    "(network.allow in config.yaml%s)", v6 ? "[" : "", c->req.host,
		    v6 ? "]" : "", c->req.port, !p->ask ? "" : p->nheld >= PROXY_MAX_HELD ?
		    "; too many held already" : "; the run has approved or is asking about "
		    PROXY_MAX_GRANTS_TEXT " hosts, the most it may");
		proxy_refuse(c, 403, why);
		return;
	}
	p->allowed++;
	c->state = PS_RESOLVING;
	if (c->req.is_addr) {
		sl = proxy_literal(c, &ss);
		snprintf(c->addr, sizeof c->addr, "%.45s", c->req.host);
		if (!netrule_addr_ok(c->rule, (struct sockaddr *)&ss)) {
			p->allowed--;
			snprintf(why, sizeof why, "network policy: %s is a private, loopback or "
			    "link-local address; only a rule naming it reaches it", c->addr);
			proxy_refuse(c, 403, why);
			return;
		}
		proxy_connect(c, (struct sockaddr *)&ss, sl);
		return;
	}
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	snprintf(port, sizeof port, "%d", c->req.port);
	/* NULL: answered at once (the callback has run, c may be gone) or failed likewise. */
	c->dns = evdns_getaddrinfo(p->dns, c->req.host, port, &hints, proxy_resolved, c);
}

/* A held connection's answer: allow grants host:port for the run and goes on. */
static void
proxy_answer(struct proxy_conn *c, int allow, const char *message)
{
	struct proxy	*p = c->p;
	struct netrule	*g;
	char		 rule[NETRULE_HOST_MAX + 16], why[640], err[64];
	int		 v6 = strchr(c->req.host, ':') != NULL;

	cJSON_Delete(c->announce);
	c->announce = NULL;
	p->nheld--;
	evtimer_del(c->deadline);
	bufferevent_disable(c->client, EV_READ);
	bufferevent_setcb(c->client, proxy_head_read, NULL, proxy_head_event, c);
	snprintf(rule, sizeof rule, "%s%s%s:%d", v6 ? "[" : "", c->req.host, v6 ? "]" : "",
	    c->req.port);
	if (!allow) {
		snprintf(why, sizeof why, "network policy: %s was not approved%s%.400s", rule,
		    message != NULL && message[0] != '\0' ? ": " : "",
		    message != NULL ? message : "");
		proxy_refuse(c, 403, why);
		return;
	}
	/* Two held asks for one host: the first answer granted it already. */
	if (netrule_find(p->granted, p->ngranted, c->req.host, c->req.port) == NULL) {
		if (p->ngranted >= PROXY_MAX_GRANTS) {
			proxy_refuse(c, 403, "network policy: this run has approved as many "
			    "hosts as it may (" PROXY_MAX_GRANTS_TEXT ")");
			return;
		}
		g = &p->granted[p->ngranted];
		if (netrule_parse(rule, g, err, sizeof err) == -1) {
			proxy_refuse(c, 403, "network policy: the approved host is not a rule");
			return;
		}
		p->ngranted++;
	}
	c->state = PS_HEAD;		/* proxy_decide_conn finds the rule now */
	proxy_arm(c, PROXY_CONNECT_MS);
	proxy_decide_conn(c);
}

int
proxy_decide(struct proxy *p, const char *id, int allow, const char *message)
{
	struct proxy_conn	*c;

	TAILQ_FOREACH(c, &p->conns, entry)
		if (c->state == PS_ASKING && strcmp(c->ask_id, id) == 0) {
			proxy_answer(c, allow, message);
			return 0;
		}
	return -1;
}

void
proxy_reannounce(struct proxy *p)
{
	struct proxy_conn	*c;
	cJSON			*m;

	TAILQ_FOREACH(c, &p->conns, entry)
		if (c->state == PS_ASKING && c->announce != NULL && p->emit != NULL &&
		    (m = cJSON_Duplicate(c->announce, 1)) != NULL)
			p->emit(p->arg, m);
}

static void
proxy_head_read(struct bufferevent *bev, void *arg)
{
	struct proxy_conn	*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	size_t			 len = evbuffer_get_length(in);
	char			 err[256];
	int			 rc;

	if (len > PROXYREQ_MAX_HEAD)
		len = PROXYREQ_MAX_HEAD;
	rc = proxyreq_parse((const char *)evbuffer_pullup(in, (ssize_t)len), len, &c->req,
	    err, sizeof err);
	if (rc == 0)
		return;
	if (rc == -1) {
		proxy_refuse(c, 400, err);
		return;
	}
	c->have_req = 1;
	evbuffer_drain(in, c->req.head_len);
	bufferevent_disable(bev, EV_READ);
	proxy_decide_conn(c);
}

static void
proxy_head_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	proxy_close(arg);
}

static void
proxy_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int sl,
    void *arg)
{
	struct proxy		*p = arg;
	struct proxy_conn	*c;

	(void)sa;
	(void)sl;
	if ((c = calloc(1, sizeof *c)) == NULL ||
	    (c->client = bufferevent_socket_new(p->base, fd, BEV_OPT_CLOSE_ON_FREE)) == NULL ||
	    (c->deadline = evtimer_new(p->base, proxy_deadline_cb, c)) == NULL) {
		if (c != NULL && c->client != NULL)
			bufferevent_free(c->client);
		else
			evutil_closesocket(fd);
		free(c);
		return;
	}
	c->p = p;
	c->state = PS_HEAD;
	clock_gettime(CLOCK_MONOTONIC, &c->t0);
	TAILQ_INSERT_TAIL(&p->conns, c, entry);
	p->total++;
	/* At the cap, stop accepting: the kernel's backlog holds the rest. */
	if (++p->nconns == PROXY_MAX_CONNS)
		evconnlistener_disable(l);
	bufferevent_setcb(c->client, proxy_head_read, NULL, proxy_head_event, c);
	bufferevent_setwatermark(c->client, EV_READ, 0, PROXYREQ_MAX_HEAD + 1);
	bufferevent_enable(c->client, EV_READ);
	proxy_arm(c, PROXY_HEAD_DEADLINE_MS);
}

static void
proxy_accept_error(struct evconnlistener *l, void *arg)
{
	(void)arg;
	/* EMFILE and the like: the connections we hold will close; stop for now. */
	if (EVUTIL_SOCKET_ERROR() == EMFILE || EVUTIL_SOCKET_ERROR() == ENFILE)
		evconnlistener_disable(l);
}

struct proxy *
proxy_new(struct event_base *base, const struct proxy_config *cfg, char *err,
    size_t errlen)
{
	struct proxy	*p;

	if ((p = calloc(1, sizeof *p)) == NULL || (p->run_id = strdup(cfg->run_id)) == NULL ||
	    (cfg->n_rules > 0 && (p->rules = calloc(cfg->n_rules, sizeof *p->rules)) == NULL) ||
	    record_list_init(&p->denials, CW_RECORD_MAX_LIST, CW_RECORD_MAX_BYTES) == -1) {
		snprintf(err, errlen, "proxy: out of memory");
		proxy_free(p);
		return NULL;
	}
	if (cfg->n_rules > 0)
		memcpy(p->rules, cfg->rules, cfg->n_rules * sizeof *p->rules);
	p->n_rules = cfg->n_rules;
	p->base = base;
	p->idle_seconds = cfg->idle_seconds > 0 ? cfg->idle_seconds : 600;
	p->ask = cfg->ask;
	p->asks = cfg->asks;
	p->hold_seconds = cfg->hold_seconds > 0 ? cfg->hold_seconds : 600;
	p->emit = cfg->emit;
	p->arg = cfg->arg;
	TAILQ_INIT(&p->conns);
	/* resolv.conf and /etc/hosts, read now, outside the run's namespace. */
	if ((p->dns = evdns_base_new(base, EVDNS_BASE_INITIALIZE_NAMESERVERS |
	    EVDNS_BASE_DISABLE_WHEN_INACTIVE)) == NULL) {
		snprintf(err, errlen, "proxy: cannot start the resolver");
		proxy_free(p);
		return NULL;
	}
	return p;
}

int
proxy_adopt(struct proxy *p, int fd, char *err, size_t errlen)
{
	evutil_make_socket_nonblocking(fd);
	if ((p->listener = evconnlistener_new(p->base, proxy_accept, p,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd)) == NULL) {
		snprintf(err, errlen, "proxy: cannot serve the listener");
		evutil_closesocket(fd);
		return -1;
	}
	evconnlistener_set_error_cb(p->listener, proxy_accept_error);
	return 0;
}

cJSON *
proxy_totals(const struct proxy *p)
{
	cJSON	*o;

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddNumberToObject(o, "connections", (double)p->total);
	cJSON_AddNumberToObject(o, "allowed", (double)p->allowed);
	cJSON_AddNumberToObject(o, "denied", (double)p->denied);
	cJSON_AddNumberToObject(o, "bytes_up", (double)p->bytes_up);
	cJSON_AddNumberToObject(o, "bytes_down", (double)p->bytes_down);
	cJSON_AddItemToObject(o, "denials", record_list_json(&p->denials));
	return o;
}

void
proxy_free(struct proxy *p)
{
	struct proxy_conn	*c;

	if (p == NULL)
		return;
	/* The run is over and reported: what is still open ends without a record. */
	p->emit = NULL;
	while ((c = TAILQ_FIRST(&p->conns)) != NULL)
		proxy_close(c);
	if (p->listener != NULL)
		evconnlistener_free(p->listener);
	if (p->dns != NULL)
		evdns_base_free(p->dns, 1);
	record_list_free(&p->denials);
	free(p->rules);
	free(p->run_id);
	free(p);
}

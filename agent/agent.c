/*
 * cw-agent loop: Clockwork's own agent loop (see agent.h for where it runs and why).
 *
 * A run is a conversation: the prompt, then turns of the model, each answered with the
 * results of the tools it called, until it answers without a tool call (its final
 * message) or a budget ends it. Errors a user will meet are named plainly: a refused
 * key (401), no credit, a rate limit (retried, honouring retry-after), a context that
 * grew too long (the oldest tool results are cut and the turn is asked again), a
 * network that is down, a stream that broke off (the turn is asked again).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/prctl.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <seccomp.h>

#include "agent.h"
#include "conversation.h"
#include "anthropic.h"
#include "curlload.h"
#include "json.h"
#include "landlock.h"
#include "openai.h"
#include "spec.h"
#include "sse.h"
#include "transcript.h"

#define AGENT_MAX_TOKENS	8192
#define AGENT_SSE_MAX		(2 * 1024 * 1024)
#define AGENT_BODY_MAX		(4 * 1024 * 1024)	/* an error body, or a whole answer */
#define AGENT_RETRIES		5
#define AGENT_RETRY_CAP_S	60		/* longest wait a retry-after may ask */
#define AGENT_TOOL_LINE_MAX	(1024 * 1024)
#define AGENT_SYSTEM \
	"You are Clockwork's coding agent, working in a git worktree (your current " \
	"directory). Use the tools to read, change and test the code. Shell commands " \
	"are checked by a policy and may be refused or held for a person's approval."
#define AGENT_CUT_TEXT		"[this tool result was removed to fit the context window]"

/* Readable by the agent after narrowing: CA certificates and the resolver's files. */
static const char *agent_read_dirs[] = {
	"/etc/ssl", "/etc/pki", "/etc/ca-certificates", "/usr/share/ca-certificates",
	"/usr/lib/ssl", "/usr/local/share/ca-certificates",
};
static const char *agent_read_files[] = {
	"/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/gai.conf",
	"/etc/host.conf",
};
/* Never again, once narrowed: running anything, and reading another process. */
static const char *agent_denied[] = {
	"execve", "execveat", "ptrace", "process_vm_readv", "process_vm_writev",
};

/* agent.h: LeakSanitizer's check at exit, off in the sandboxed subcommands. */
int	agent_lsan_off;

#if defined(__SANITIZE_ADDRESS__)
#define AGENT_ASAN	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AGENT_ASAN	1
#endif
#endif
#ifdef AGENT_ASAN
int	__lsan_is_turned_off(void);
int
__lsan_is_turned_off(void)
{
	return agent_lsan_off;
}
#endif

struct agent {
	char		*key, *base_url, *model, *prompt, *mode;
	int		 openai;	/* Chat Completions, else the Messages API */
	int		 max_turns;
	double		 max_dollars;
	int		 have_price;
	double		 price[4];	/* $ per million: input, output, cache write, read */
	cJSON		*tools, *messages;
	int		 sent;		/* messages written out for the runner to keep */
	int		 turns;
	double		 dollars;
	struct provider_usage total;
	FILE		*tools_in;	/* the tool host's answers */
};

struct agent_http {
	int			 openai;
	struct anthropic_turn	*turn;
	struct sse		*sse;
	long			 status;
	int			 bad;		/* the stream was malformed or errored */
	char			*body;		/* a non-200 body, bounded */
	size_t			 bodylen;
	long			 retry_after;	/* seconds, -1 when not given */
	int			 json;		/* Content-Type: application/json */
};

int
agent_narrow(char *err, size_t errlen)
{
	struct sandbox_spec	 s;
	struct landlock_extra	 x;
	scmp_filter_ctx		 ctx;
	size_t			 i;
	int			 abi, rc = -1;

	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		snprintf(err, errlen, "prctl: %s", strerror(errno));
		return -1;
	}
	memset(&s, 0, sizeof s);
	memset(&x, 0, sizeof x);
	for (i = 0; i < sizeof agent_read_dirs / sizeof agent_read_dirs[0]; i++)
		if (strlist_add(&s.read_dirs, agent_read_dirs[i]) == -1)
			goto nomem;
	for (i = 0; i < sizeof agent_read_files / sizeof agent_read_files[0]; i++)
		if (strlist_add(&s.read_files, agent_read_files[i]) == -1)
			goto nomem;
	if ((abi = landlock_abi()) < 1) {
		snprintf(err, errlen, "landlock is not available: the key holder cannot be "
		    "narrowed");
		goto out;
	}
	if (landlock_apply(abi, &s, &x, err, errlen) == -1)
		goto out;
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		goto nomem;
	for (i = 0; i < sizeof agent_denied / sizeof agent_denied[0]; i++) {
		int nr = seccomp_syscall_resolve_name(agent_denied[i]);

		if (nr == __NR_SCMP_ERROR ||
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0) < 0) {
			seccomp_release(ctx);
			snprintf(err, errlen, "seccomp: rule for %s", agent_denied[i]);
			goto out;
		}
	}
	if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0 ||
	    seccomp_load(ctx) < 0) {
		seccomp_release(ctx);
		snprintf(err, errlen, "seccomp: the filter could not be loaded");
		goto out;
	}
	seccomp_release(ctx);
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	strlist_free(&s.read_dirs);
	strlist_free(&s.read_files);
	return rc;
}

/* ---- output for the runner (engine_byok.c reads it) --------------------------------- */

static void
agent_out(cJSON *o)
{
	char	*s;

	if (o == NULL)
		return;
	if ((s = cJSON_PrintUnformatted(o)) != NULL) {
		fputs(s, stdout);
		fputc('\n', stdout);
		fflush(stdout);
		cJSON_free(s);
	}
	cJSON_Delete(o);
}

static void
agent_entry(cJSON *entry)
{
	cJSON	*o;

	if (entry == NULL)
		return;
	if ((o = cJSON_CreateObject()) == NULL) {
		cJSON_Delete(entry);
		return;
	}
	cJSON_AddStringToObject(o, "type", "entry");
	cJSON_AddItemToObject(o, "entry", entry);
	agent_out(o);
}

/*
 * Each message as it joins the conversation, numbered, for the runner to keep
 * (engine_byok.c): a later `cwctl run continue` sends them back (agent_init).
 */
static void
agent_message(struct agent *a, const cJSON *msg)
{
	cJSON	*o, *c;

	if ((o = cJSON_CreateObject()) == NULL)
		return;
	cJSON_AddStringToObject(o, "type", "message");
	cJSON_AddNumberToObject(o, "n", a->sent++);
	if ((c = cJSON_Duplicate(msg, 1)) != NULL)
		cJSON_AddItemToObject(o, "message", c);
	agent_out(o);
}

/* more: the turn asked for tools, so the loop goes on (a budget pause may hold it). */
static void
agent_progress(struct agent *a, int more)
{
	cJSON	*o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "type", "usage");
	cJSON_AddBoolToObject(o, "more", more);
	cJSON_AddNumberToObject(o, "turns", a->turns);
	cJSON_AddNumberToObject(o, "dollars", a->have_price ? a->dollars : -1);
	cJSON_AddNumberToObject(o, "input_tokens", (double)a->total.input);
	cJSON_AddNumberToObject(o, "output_tokens", (double)a->total.output);
	cJSON_AddNumberToObject(o, "cache_write_tokens", (double)a->total.cache_write);
	cJSON_AddNumberToObject(o, "cache_read_tokens", (double)a->total.cache_read);
	agent_out(o);
}

static void
agent_result(const char *subtype, int is_error, const char *text)
{
	cJSON	*o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "type", "result");
	cJSON_AddStringToObject(o, "subtype", subtype);
	cJSON_AddBoolToObject(o, "is_error", is_error);
	cJSON_AddStringToObject(o, "result", text != NULL ? text : "");
	agent_out(o);
}

/* ---- the tool host ------------------------------------------------------------------ */

/*
 * One line of at most max bytes from in (the tool host, which runs in the sandbox: it
 * does not get to make us allocate without bound). NULL at EOF, on error or past max.
 */
static char *
agent_getline(FILE *in, size_t max, size_t *lenp)
{
	char	*buf = NULL, *nbuf;
	size_t	 len = 0, cap = 0;
	int	 c;

	while ((c = getc(in)) != EOF) {
		if (len + 2 > cap) {
			cap = cap == 0 ? 4096 : cap * 2;
			if (cap > max + 2 || (nbuf = realloc(buf, cap)) == NULL)
				goto fail;
			buf = nbuf;
		}
		buf[len++] = (char)c;
		if (c == '\n')
			break;
	}
	if (len == 0 || buf[len - 1] != '\n')
		goto fail;
	buf[len] = '\0';
	*lenp = len;
	return buf;
fail:
	if (buf != NULL)
		explicit_bzero(buf, len);
	free(buf);
	return NULL;
}

static int
agent_tool_send(const cJSON *o)
{
	char	*s;
	size_t	 len, off = 0;
	ssize_t	 n;

	if ((s = cJSON_PrintUnformatted(o)) == NULL)
		return -1;
	len = strlen(s);
	s[len++] = '\n';	/* replaces the NUL: the length is what goes out */
	while (off < len) {
		if ((n = write(AGENT_FD_TOOLS, s + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			cJSON_free(s);
			return -1;
		}
		off += (size_t)n;
	}
	cJSON_free(s);
	return 0;
}

/* Run one tool call in the sandbox; the reply's text and error flag. -1: host gone. */
static int
agent_tool_call(struct agent *a, const cJSON *block, char **text, int *error)
{
	cJSON		*req, *rep;
	char		*line;
	size_t		 len;
	int		 n;
	const char	*s;

	*text = NULL;
	*error = 1;
	if ((req = cJSON_CreateObject()) == NULL)
		return -1;
	cJSON_AddStringToObject(req, "id", json_get_string(block, "id"));
	cJSON_AddStringToObject(req, "name", json_get_string(block, "name"));
	cJSON_AddItemToObject(req, "input", cJSON_Duplicate(
	    cJSON_GetObjectItemCaseSensitive(block, "input"), 1));
	cJSON_AddStringToObject(req, "mode", a->mode);
	n = agent_tool_send(req);
	cJSON_Delete(req);
	if (n == -1 || (line = agent_getline(a->tools_in, AGENT_TOOL_LINE_MAX,
	    &len)) == NULL)
		return -1;
	rep = json_parse(line, len);
	free(line);
	if ((s = json_get_string(rep, "text")) == NULL) {
		cJSON_Delete(rep);
		return -1;
	}
	*text = strdup(s);
	*error = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rep, "error"));
	cJSON_Delete(rep);
	return *text != NULL ? 0 : -1;
}

/* ---- the provider ------------------------------------------------------------------- */

static int
agent_sse_cb(void *arg, const char *event, const char *data, size_t len)
{
	struct agent_http	*h = arg;

	if ((h->openai ? openai_stream_event(h->turn, data, len) :
	    anthropic_stream_event(h->turn, event, data, len)) == -1) {
		h->bad = 1;
		return -1;
	}
	return 0;
}

static size_t
agent_write_cb(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct agent_http	*h = arg;
	size_t			 len = size * nmemb, room;

	if (h->status == 0)
		h->status = 200;	/* set properly by the header callback */
	if (h->status == 200 && !h->json) {
		if (sse_feed(h->sse, ptr, len) == -1)
			return 0;	/* ends the transfer: the stream is unusable */
		return len;
	}
	/* An error body, or a whole answer from a server that does not stream. */
	if (h->status == 200 && h->bodylen + len > AGENT_BODY_MAX) {
		h->bad = 1;
		return 0;
	}
	room = AGENT_BODY_MAX - h->bodylen;
	if (len < room)
		room = len;
	memcpy(h->body + h->bodylen, ptr, room);
	h->bodylen += room;
	h->body[h->bodylen] = '\0';
	return len;
}

static size_t
agent_header_cb(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct agent_http	*h = arg;
	size_t			 len = size * nmemb;
	char			 line[256];
	int			 code;

	if (len >= sizeof line)
		return len;
	memcpy(line, ptr, len);
	line[len] = '\0';
	if (sscanf(line, "HTTP/%*s %d", &code) == 1)
		h->status = code;
	else if (strncasecmp(line, "retry-after:", 12) == 0)
		h->retry_after = strtol(line + 12, NULL, 10);
	else if (strncasecmp(line, "content-type:", 13) == 0)
		h->json = strcasestr(line + 13, "application/json") != NULL;
	return len;
}

enum agent_outcome {
	AGENT_OK,
	AGENT_RETRY,		/* wait and ask again */
	AGENT_TOO_LONG,		/* cut the context and ask again */
	AGENT_FATAL,
};

/* One request. On AGENT_FATAL or a retry, why is a sentence for a person. */
static enum agent_outcome
agent_request(struct agent *a, struct anthropic_turn *turn, long *wait, char *why,
    size_t whylen)
{
	struct agent_http	 h;
	struct curl_slist	*hdr = NULL;
	CURL			*c;
	CURLcode		 cc;
	cJSON			*req;
	char			*body, url[2048], keyhdr[4200], etype[64], emsg[512];
	enum agent_outcome	 out = AGENT_FATAL;

	memset(&h, 0, sizeof h);
	h.turn = turn;
	h.openai = a->openai;
	h.retry_after = -1;
	*wait = 0;
	if ((h.sse = sse_new(AGENT_SSE_MAX, agent_sse_cb, &h)) == NULL ||
	    (h.body = malloc(AGENT_BODY_MAX + 1)) == NULL) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	h.body[0] = '\0';
	req = (a->openai ? openai_request : anthropic_request)(a->model, AGENT_MAX_TOKENS,
	    AGENT_SYSTEM, a->tools, a->messages, 1);
	body = req != NULL ? cJSON_PrintUnformatted(req) : NULL;
	cJSON_Delete(req);
	if (body == NULL) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	if (a->openai) {
		/* The base URL holds the version: https://api.openai.com/v1 */
		snprintf(url, sizeof url, "%s/chat/completions", a->base_url);
		snprintf(keyhdr, sizeof keyhdr, "Authorization: Bearer %s", a->key);
	} else {
		snprintf(url, sizeof url, "%s/v1/messages", a->base_url);
		snprintf(keyhdr, sizeof keyhdr, "x-api-key: %s", a->key);
	}
	hdr = curlload_fn.slist_append(hdr, keyhdr);
	explicit_bzero(keyhdr, sizeof keyhdr);
	if (!a->openai)
		hdr = curlload_fn.slist_append(hdr, "anthropic-version: " ANTHROPIC_VERSION);
	hdr = curlload_fn.slist_append(hdr, "content-type: application/json");
	hdr = curlload_fn.slist_append(hdr, "accept: text/event-stream");
	if ((c = curlload_fn.easy_init()) == NULL || hdr == NULL) {
		snprintf(why, whylen, "libcurl could not start");
		free(body);
		goto out;
	}
	curlload_fn.easy_setopt(c, CURLOPT_URL, url);
	curlload_fn.easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curlload_fn.easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curlload_fn.easy_setopt(c, CURLOPT_WRITEFUNCTION, agent_write_cb);
	curlload_fn.easy_setopt(c, CURLOPT_WRITEDATA, &h);
	curlload_fn.easy_setopt(c, CURLOPT_HEADERFUNCTION, agent_header_cb);
	curlload_fn.easy_setopt(c, CURLOPT_HEADERDATA, &h);
	curlload_fn.easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curlload_fn.easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	curlload_fn.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https,http");
	curlload_fn.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curlload_fn.easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
	/* A stream that sends nothing for two minutes is dead. */
	curlload_fn.easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curlload_fn.easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 120L);
	cc = curlload_fn.easy_perform(c);
	curlload_fn.easy_cleanup(c);
	free(body);
	/* A server that answered the whole message at once, though asked to stream. */
	if (h.status == 200 && h.json && !h.bad && cc == CURLE_OK &&
	    (a->openai ? openai_parse_message : anthropic_parse_message)(turn, h.body,
	    h.bodylen) == -1)
		h.bad = 1;

	if (h.status == 200 && turn->done && !h.bad) {
		out = AGENT_OK;
	} else if (h.status == 200 && turn->err_type[0] != '\0') {
		/* An error event inside the stream (overloaded_error, api_error). */
		snprintf(why, whylen, "the provider ended the answer with %s: %s",
		    turn->err_type, turn->err_msg);
		out = AGENT_RETRY;
	} else if (h.status == 200 && h.bad) {
		snprintf(why, whylen, "the provider's stream was malformed: %s",
		    turn->err_msg);
		out = AGENT_RETRY;
	} else if (h.status == 200 || (h.status == 0 && cc != CURLE_OK &&
	    cc != CURLE_COULDNT_CONNECT && cc != CURLE_COULDNT_RESOLVE_HOST &&
	    cc != CURLE_OPERATION_TIMEDOUT)) {
		snprintf(why, whylen, "the provider's stream broke off before the answer "
		    "was whole (%s)", cc != CURLE_OK ? curlload_fn.easy_strerror(cc) : "no message_stop");
		out = AGENT_RETRY;
	} else if (h.status == 0) {
		snprintf(why, whylen, "network down: cannot reach %s (%s)", a->base_url,
		    curlload_fn.easy_strerror(cc));
		out = AGENT_RETRY;
		*wait = 2;
	} else {
		etype[0] = emsg[0] = '\0';
		(void)(a->openai ? openai_parse_error : anthropic_parse_error)(h.body,
		    h.bodylen, etype, sizeof etype, emsg, sizeof emsg);
		if (h.status == 401) {
			snprintf(why, whylen, "the provider refused the key (HTTP 401%s%s): "
			    "check it with cwctl key list, or add it again", etype[0] ?
			    ", " : "", etype);
		} else if (h.status == 402 || strcmp(etype, "insufficient_quota") == 0 ||
		    strstr(emsg, "credit balance") != NULL ||
		    strstr(emsg, "quota") != NULL || strstr(emsg, "billing") != NULL) {
			snprintf(why, whylen, "no credit left with the provider (HTTP %ld): %s",
			    h.status, emsg);
		} else if (h.status == 429) {
			snprintf(why, whylen, "rate limited by the provider (HTTP 429)");
			*wait = h.retry_after >= 0 ? h.retry_after : 0;
			out = AGENT_RETRY;
		} else if (h.status == 413 || (h.status == 400 && (strstr(emsg,
		    "prompt is too long") != NULL || strstr(emsg, "context") != NULL ||
		    strcmp(etype, "context_length_exceeded") == 0))) {
			snprintf(why, whylen, "the conversation is too long for the model: %s",
			    emsg);
			out = AGENT_TOO_LONG;
		} else if (h.status >= 500) {
			snprintf(why, whylen, "the provider failed (HTTP %ld%s%s)", h.status,
			    etype[0] ? ", " : "", etype);
			*wait = h.retry_after >= 0 ? h.retry_after : 0;
			out = AGENT_RETRY;
		} else {
			snprintf(why, whylen, "the provider refused the request (HTTP %ld%s%s): "
			    "%s", h.status, etype[0] ? ", " : "", etype, emsg);
		}
	}
out:
	if (hdr != NULL) {
		/* Scrub the copy of the key curl made for the header. */
		for (struct curl_slist *l = hdr; l != NULL; l = l->next)
			explicit_bzero(l->data, strlen(l->data));
		curlload_fn.slist_free_all(hdr);
	}
	sse_free(h.sse);
	free(h.body);
	return out;
}

/* Cut the oldest tool result still whole. 0, or -1 when nothing is left to cut. */
static int
agent_compact(struct agent *a)
{
	cJSON	*m, *blk, *content;

	cJSON_ArrayForEach(m, a->messages) {
		content = cJSON_GetObjectItemCaseSensitive(m, "content");
		if (!cJSON_IsArray(content))
			continue;
		cJSON_ArrayForEach(blk, content) {
			const char *type = json_get_string(blk, "type");
			const char *c = json_get_string(blk, "content");

			if (type == NULL || strcmp(type, "tool_result") != 0 || c == NULL ||
			    strcmp(c, AGENT_CUT_TEXT) == 0)
				continue;
			cJSON_ReplaceItemInObjectCaseSensitive(blk, "content",
			    cJSON_CreateString(AGENT_CUT_TEXT));
			return 0;
		}
	}
	return -1;
}

static void
agent_sleep(long s)
{
	struct timespec	ts = { s, 0 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* One turn, asked again as the errors allow. 0, or -1 with why. */
static int
agent_turn(struct agent *a, struct anthropic_turn *turn, char *why, size_t whylen)
{
	enum agent_outcome	 o;
	long			 wait;
	int			 tries = 0;
	char			 note[1200];

	for (;;) {
		anthropic_turn_init(turn);
		o = agent_request(a, turn, &wait, why, whylen);
		if (o == AGENT_OK)
			return 0;
		anthropic_turn_free(turn);
		if (o == AGENT_FATAL)
			return -1;
		if (o == AGENT_TOO_LONG) {
			if (agent_compact(a) == -1)
				return -1;
			snprintf(note, sizeof note, "%s; the oldest tool result was cut", why);
			agent_entry(transcript_note(note));
			continue;
		}
		if (++tries > AGENT_RETRIES)
			return -1;
		if (wait <= 0)
			wait = 1L << (tries - 1);	/* 1, 2, 4, 8, 16 s */
		if (wait > AGENT_RETRY_CAP_S)
			wait = AGENT_RETRY_CAP_S;
		snprintf(note, sizeof note, "%s; asking again in %lds (try %d of %d)", why,
		    wait, tries + 1, AGENT_RETRIES + 1);
		agent_entry(transcript_note(note));
		agent_sleep(wait);
	}
}

/* ---- the tools the model is offered ----------------------------------------------- */

static void
agent_tool_def(cJSON *tools, const char *name, const char *desc, const char *props,
    const char *required)
{
	cJSON	*t = cJSON_CreateObject(), *schema;
	char	 buf[1024];

	cJSON_AddStringToObject(t, "name", name);
	cJSON_AddStringToObject(t, "description", desc);
	snprintf(buf, sizeof buf, "{\"type\":\"object\",\"properties\":{%s},"
	    "\"required\":[%s]}", props, required);
	schema = cJSON_Parse(buf);
	cJSON_AddItemToObject(t, "input_schema", schema);
	cJSON_AddItemToArray(tools, t);
}

#define P(n, d)	"\"" n "\":{\"type\":\"string\",\"description\":\"" d "\"}"

static cJSON *
agent_tools(int plan)
{
	cJSON	*t = cJSON_CreateArray();

	agent_tool_def(t, "read_file", "Read a file of the worktree.",
	    P("path", "path relative to the worktree"), "\"path\"");
	agent_tool_def(t, "list_files", "List a directory of the worktree.",
	    P("path", "directory; . for the top"), "");
	agent_tool_def(t, "grep", "Search files for a regular expression (grep -rn).",
	    P("pattern", "extended regular expression") "," P("path", "where to look"),
	    "\"pattern\"");
	if (plan)
		return t;	/* plan mode: read-only tools only */
	agent_tool_def(t, "write_file", "Create or overwrite a file.",
	    P("path", "path") "," P("content", "the whole new content"),
	    "\"path\",\"content\"");
	agent_tool_def(t, "edit_file", "Replace one exact occurrence of old_string.",
	    P("path", "path") "," P("old_string", "text that occurs exactly once") ","
	    P("new_string", "its replacement"), "\"path\",\"old_string\",\"new_string\"");
	agent_tool_def(t, "bash", "Run a shell command in the worktree (sh -c).",
	    P("command", "the command line"), "\"command\"");
	return t;
}

/* ---- the loop ----------------------------------------------------------------------- */

static double
agent_cost(const struct agent *a, const struct provider_usage *u)
{
	if (!a->have_price)
		return 0;
	return ((double)u->input * a->price[0] + (double)u->output * a->price[1] +
	    (double)u->cache_write * a->price[2] + (double)u->cache_read * a->price[3]) /
	    1e6;
}

static void
agent_tool_entry(const cJSON *block)
{
	const char	*name = json_get_string(block, "name");
	const cJSON	*in = cJSON_GetObjectItemCaseSensitive(block, "input");

	agent_entry(transcript_tool(name, json_get_string(block, "id"),
	    strcmp(name, "bash") == 0 ? json_get_string(in, "command") : NULL,
	    json_get_string(in, "path"), json_get_string(in, "pattern")));
}

/* The exit code the tool host passes on: 0 completed, 1 failed. */
static int
agent_loop(struct agent *a)
{
	struct anthropic_turn	 turn;
	char			 why[1024], *text, *final = NULL;
	const cJSON		*blk;
	cJSON			*msg, *results, *res;
	int			 error, calls;

	for (;;) {
		if (agent_turn(a, &turn, why, sizeof why) == -1) {
			agent_entry(transcript_final(why, 1));
			agent_result("error_provider", 1, why);
			free(final);
			return 1;
		}
		a->turns++;
		a->total.input += turn.usage.input;
		a->total.output += turn.usage.output;
		a->total.cache_write += turn.usage.cache_write;
		a->total.cache_read += turn.usage.cache_read;
		a->dollars += agent_cost(a, &turn.usage);
		free(final);
		final = NULL;
		calls = 0;
		cJSON_ArrayForEach(blk, turn.content) {
			const char *type = json_get_string(blk, "type");

			if (type != NULL && strcmp(type, "text") == 0) {
				agent_entry(transcript_text(json_get_string(blk, "text")));
				free(final);
				final = strdup(json_get_string(blk, "text"));
			} else if (type != NULL && strcmp(type, "tool_use") == 0)
				calls++;
		}
		/* Negative: no price, so no cost to report (shown as not reported). */
		agent_entry(transcript_usage(a->have_price ? a->dollars : -1, a->turns));
		agent_progress(a, calls > 0 && strcmp(turn.stop_reason, "tool_use") == 0);
		msg = cJSON_CreateObject();
		cJSON_AddStringToObject(msg, "role", "assistant");
		cJSON_AddItemToObject(msg, "content", turn.content);
		turn.content = NULL;
		cJSON_AddItemToArray(a->messages, msg);
		agent_message(a, msg);
		if (a->max_dollars > 0 && a->dollars >= a->max_dollars) {
			snprintf(why, sizeof why, "the dollar budget ($%.4f) is spent: $%.4f",
			    a->max_dollars, a->dollars);
			agent_entry(transcript_final(why, 1));
			agent_result("error_max_budget_usd", 1, why);
			anthropic_turn_free(&turn);
			free(final);
			return 1;
		}
		if (calls == 0 || strcmp(turn.stop_reason, "tool_use") != 0) {
			agent_entry(transcript_final(final != NULL ? final : "", 0));
			agent_result("success", 0, final);
			anthropic_turn_free(&turn);
			free(final);
			return 0;
		}
		if (a->max_turns > 0 && a->turns >= a->max_turns) {
			snprintf(why, sizeof why, "the turn budget (%d) is spent", a->max_turns);
			agent_entry(transcript_final(why, 1));
			agent_result("error_max_turns", 1, why);
			anthropic_turn_free(&turn);
			free(final);
			return 1;
		}
		results = cJSON_CreateArray();
		/* The turn's blocks, now the last message's content. */
		cJSON_ArrayForEach(blk, cJSON_GetObjectItemCaseSensitive(msg, "content")) {
			const char *type = json_get_string(blk, "type");

			if (type == NULL || strcmp(type, "tool_use") != 0)
				continue;
			agent_tool_entry(blk);
			if (agent_tool_call(a, blk, &text, &error) == -1) {
				cJSON_Delete(results);
				anthropic_turn_free(&turn);
				free(final);
				snprintf(why, sizeof why, "the run's tool host is gone");
				agent_entry(transcript_final(why, 1));
				agent_result("error_tools", 1, why);
				return 1;
			}
			agent_entry(transcript_result(json_get_string(blk, "id"), text,
			    strlen(text), error));
			res = cJSON_CreateObject();
			cJSON_AddStringToObject(res, "type", "tool_result");
			cJSON_AddStringToObject(res, "tool_use_id", json_get_string(blk, "id"));
			cJSON_AddStringToObject(res, "content", text);
			if (error)
				cJSON_AddTrueToObject(res, "is_error");
			cJSON_AddItemToArray(results, res);
			free(text);
		}
		anthropic_turn_free(&turn);
		msg = cJSON_CreateObject();
		cJSON_AddStringToObject(msg, "role", "user");
		cJSON_AddItemToObject(msg, "content", results);
		cJSON_AddItemToArray(a->messages, msg);
		agent_message(a, msg);
	}
}

/* ---- start -------------------------------------------------------------------------- */

/* The first line from the tool socket: the run's facts. */
static char *
agent_read_init(FILE *in, size_t *lenp)
{
	return agent_getline(in, AGENT_INIT_MAX, lenp);
}

static char *
agent_field(const cJSON *j, const char *name)
{
	const char	*s = json_get_string(j, name);

	return s != NULL ? strdup(s) : NULL;
}

static int
agent_init(struct agent *a, char *err, size_t errlen)
{
	cJSON		*j, *last, *content, *blk;
	const cJSON	*p;
	const char	*s;
	char		*buf;
	size_t		 len;
	int		 resume, rc;
	static const char *pn[4] = { "input", "output", "cache_write", "cache_read" };

	if ((buf = agent_read_init(a->tools_in, &len)) == NULL) {
		snprintf(err, errlen, "no facts from the runner");
		return -1;
	}
	j = json_parse(buf, len);
	explicit_bzero(buf, len);
	free(buf);
	if (j == NULL) {
		snprintf(err, errlen, "the run's facts are not JSON");
		return -1;
	}
	a->key = agent_field(j, "key");
	a->base_url = agent_field(j, "base_url");
	a->model = agent_field(j, "model");
	a->prompt = agent_field(j, "prompt");
	a->mode = agent_field(j, "mode");
	a->openai = (s = json_get_string(j, "provider")) != NULL && strcmp(s, "openai") == 0;
	resume = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "resume"));
	(void)json_get_int(j, "max_turns", &a->max_turns);
	(void)json_get_number(j, "max_dollars", &a->max_dollars);
	if (cJSON_IsObject(p = cJSON_GetObjectItemCaseSensitive(j, "price"))) {
		a->have_price = 1;
		for (int i = 0; i < 4; i++)
			(void)json_get_number(p, pn[i], &a->price[i]);
	}
	/* The key's copy in the parsed tree goes with it. */
	if (cJSON_IsString(p = cJSON_GetObjectItemCaseSensitive(j, "key")))
		explicit_bzero(p->valuestring, strlen(p->valuestring));
	cJSON_Delete(j);
	if (a->key == NULL || a->key[0] == '\0' || a->base_url == NULL ||
	    a->model == NULL || a->prompt == NULL || a->mode == NULL) {
		snprintf(err, errlen, "the run's facts lack key, base_url, model, prompt or "
		    "mode");
		return -1;
	}
	a->tools = agent_tools(strcmp(a->mode, "plan") == 0);
	/*
	 * A continued run: the kept conversation is the next line (engine_byok.c writes
	 * it after the facts), and the new prompt follows it. A conversation that ends
	 * with the user's turn (the earlier run stopped before the model answered) gets
	 * the new prompt as a second text block of that turn, so turns still alternate.
	 */
	if (resume) {
		if ((buf = agent_getline(a->tools_in, CONVERSATION_FILE_MAX + 1, &len)) ==
		    NULL) {
			snprintf(err, errlen, "no kept conversation from the runner");
			return -1;
		}
		rc = conversation_messages_parse(buf, len, &a->messages, err, errlen);
		free(buf);
		if (rc == -1)
			return -1;
		a->sent = cJSON_GetArraySize(a->messages);
		last = cJSON_GetArrayItem(a->messages, a->sent - 1);
		if (strcmp(json_get_string(last, "role"), "user") == 0) {
			content = cJSON_GetObjectItemCaseSensitive(last, "content");
			blk = cJSON_CreateObject();
			cJSON_AddStringToObject(blk, "type", "text");
			cJSON_AddStringToObject(blk, "text", a->prompt);
			if (cJSON_IsString(content)) {
				cJSON	*arr = cJSON_CreateArray(), *t = cJSON_CreateObject();

				cJSON_AddStringToObject(t, "type", "text");
				cJSON_AddStringToObject(t, "text", content->valuestring);
				cJSON_AddItemToArray(arr, t);
				cJSON_ReplaceItemInObjectCaseSensitive(last, "content", arr);
				content = arr;
			}
			cJSON_AddItemToArray(content, blk);
			/* The runner keeps what it was sent plus the messages after it. */
			a->sent--;
			agent_message(a, last);
			return 0;
		}
	} else
		a->messages = cJSON_CreateArray();
	p = cJSON_CreateObject();
	cJSON_AddStringToObject((cJSON *)p, "role", "user");
	cJSON_AddStringToObject((cJSON *)p, "content", a->prompt);
	cJSON_AddItemToArray(a->messages, (cJSON *)p);
	agent_message(a, p);
	return 0;
}

int
agent_cmd_loop(int argc, char **argv)
{
	struct agent	 a;
	char		 err[512];
	cJSON		*end;
	int		 code;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "cw-agent loop: takes no arguments (started by cw-runner "
		    "run)\n");
		return AGENT_EXIT_USAGE;
	}
	agent_lsan_off = 1;
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	signal(SIGPIPE, SIG_IGN);
	memset(&a, 0, sizeof a);
	/* libcurl and its TLS library load what they need before the narrowing. */
	if (curlload_open(CURL_GLOBAL_DEFAULT, err, sizeof err) == -1) {
		fprintf(stderr, "cw-agent loop: libcurl could not start: %s\n", err);
		return AGENT_EXIT_FAILURE;
	}
	if (agent_narrow(err, sizeof err) == -1) {
		fprintf(stderr, "cw-agent loop: cannot narrow the key holder: %s\n", err);
		agent_result("error_sandbox", 1, err);
		return AGENT_EXIT_REFUSED;
	}
	if ((a.tools_in = fdopen(AGENT_FD_TOOLS, "r")) == NULL ||
	    agent_init(&a, err, sizeof err) == -1) {
		fprintf(stderr, "cw-agent loop: %s\n", err);
		agent_result("error_start", 1, err);
		return AGENT_EXIT_USAGE;
	}
	code = agent_loop(&a);
	if ((end = cJSON_CreateObject()) != NULL) {
		cJSON_AddNumberToObject(end, "end", code);
		(void)agent_tool_send(end);
		cJSON_Delete(end);
	}
	explicit_bzero(a.key, strlen(a.key));
	return code;
}

/*
 * Clockwork's own agent as an engine (byok). It does not fit "one CLI in the sandbox":
 * the process that holds the provider key must not share a sandbox with the tools the
 * model drives. So the run has two processes:
 *
 *   - the tool host (`cw-agent tools`, agent/toolhost.c) is the engine process run.c
 *     starts through spec_build() + apply_sandbox(), with the run's spec; its stdin is
 *     a socket to the agent. Every tool call runs in a child of it, in the sandbox.
 *   - the agent (`cw-agent loop`, agent/agent.c) is started here by companion(), before
 *     the tool host, through apply_sandbox() in a sandbox of its own (its own PID
 *     namespace: the tools cannot even name it), and narrows itself further before it
 *     reads the key. Its stdin is the other end of the tool host's socket; its stdout
 *     is the run's stdout pipe, read by stream_line() below.
 *
 * The key travels daemon -> runner (the run message on stdin) -> agent (the first
 * line queued on the agent's end of the socket, written before the tool host exists),
 * and nowhere else: not argv, not an environment, not a file.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conversation.h"
#include "engine_byok.h"
#include "json.h"
#include "sandbox.h"
#include "spec.h"
#include "transcript.h"

/*
 * cw-agent, beside our own binary (an install puts the programs in one directory, as
 * the build does): the model loop and the tool host are its two entry points, so that
 * cw-runner itself never holds the provider code or libcurl.
 */
static int
engine_byok_agent_path(char *out, size_t outlen, char *err, size_t errlen)
{
	char	 self[PATH_MAX], *slash;
	ssize_t	 n;

	if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) <= 0) {
		snprintf(err, errlen, "cannot find cw-runner itself: %s", strerror(errno));
		return -1;
	}
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) == NULL)
		slash = self;
	*slash = '\0';
	if ((size_t)snprintf(out, outlen, "%s/cw-agent", self) >= outlen) {
		snprintf(err, errlen, "the path of cw-agent is too long");
		return -1;
	}
	if (access(out, X_OK) == -1) {
		snprintf(err, errlen, "the byok engine needs cw-agent beside cw-runner: "
		    "%s: %s", out, strerror(errno));
		return -1;
	}
	return 0;
}

static int
engine_byok_prepare(const struct engine_run *o, struct strlist *argv,
    struct strlist *env, struct strlist *files, char *err, size_t errlen)
{
	char	 agentbin[PATH_MAX], token_file[PATH_MAX], *kv;
	int	 rc;

	if (o->mode == NULL || (strcmp(o->mode, "plan") != 0 &&
	    strcmp(o->mode, "acceptEdits") != 0)) {
		snprintf(err, errlen, "permission mode must be plan or acceptEdits");
		return -1;
	}
	if (o->key == NULL || o->key[0] == '\0') {
		snprintf(err, errlen, "the byok engine needs a provider key: add one with "
		    "`cwctl key add NAME --provider anthropic` and name it with "
		    "`cwctl task add ... --engine byok --key NAME`");
		return -1;
	}
	if (o->model == NULL || o->model[0] == '\0') {
		snprintf(err, errlen, "the byok engine needs a model: give the key one "
		    "(cwctl key add --model) or set engines.byok.model");
		return -1;
	}
	/* run.c took the dollar budget away from a model with no price (run_cost_check). */
	if (o->max_dollars > 0 && o->price == NULL) {
		snprintf(err, errlen, "model '%s' has no price, so a dollar budget cannot "
		    "hold", o->model);
		return -1;
	}
	if (o->port <= 0) {
		snprintf(err, errlen, "the byok engine needs the permission bridge");
		return -1;
	}
	if (engine_byok_agent_path(agentbin, sizeof agentbin, err, errlen) == -1)
		return -1;
	if (engine_write_file(o->state_dir, ENGINE_BYOK_TOKEN_FILE, o->token, 0400,
	    token_file, sizeof token_file, err, errlen) == -1)
		return -1;
	if (strlist_add(files, token_file) == -1 || strlist_add(files, agentbin) == -1 ||
	    strlist_add(argv, agentbin) == -1 || strlist_add(argv, "tools") == -1)
		goto nomem;
	if (asprintf(&kv, "CW_BRIDGE_PORT=%d", o->port) == -1)
		goto nomem;
	rc = strlist_add(env, kv);
	free(kv);
	if (rc == -1 || asprintf(&kv, "CW_BRIDGE_TOKEN_FILE=%s", token_file) == -1)
		goto nomem;
	rc = strlist_add(env, kv);
	free(kv);
	if (rc == -1)
		goto nomem;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* The run's facts for the agent, key included: they go down a pipe, nowhere else. */
static char *
engine_byok_facts(const struct engine_run *o)
{
	cJSON	*j = cJSON_CreateObject(), *p;
	char	*s;
	int	 openai;

	if (j == NULL)
		return NULL;
	cJSON_AddStringToObject(j, "key", o->key);
	openai = o->provider != NULL && strcmp(o->provider, "openai") == 0;
	cJSON_AddStringToObject(j, "provider", openai ? "openai" : "anthropic");
	cJSON_AddStringToObject(j, "base_url", o->base_url != NULL && o->base_url[0] ?
	    o->base_url : openai ? ENGINE_BYOK_OPENAI_URL : ENGINE_BYOK_DEFAULT_URL);
	cJSON_AddStringToObject(j, "model", o->model);
	cJSON_AddStringToObject(j, "prompt", o->prompt);
	cJSON_AddStringToObject(j, "mode", o->mode);
	cJSON_AddNumberToObject(j, "max_turns", o->max_turns);
	/* The kept conversation follows on the next line (engine_byok_send_conversation). */
	if (o->resume_id != NULL)
		cJSON_AddTrueToObject(j, "resume");
	cJSON_AddNumberToObject(j, "max_dollars", o->max_dollars);
	if (o->price != NULL && (p = cJSON_AddObjectToObject(j, "price")) != NULL) {
		cJSON_AddNumberToObject(p, "input", o->price[0]);
		cJSON_AddNumberToObject(p, "output", o->price[1]);
		cJSON_AddNumberToObject(p, "cache_write", o->price[2]);
		cJSON_AddNumberToObject(p, "cache_read", o->price[3]);
	}
	s = cJSON_PrintUnformatted(j);
	p = cJSON_GetObjectItemCaseSensitive(j, "key");
	explicit_bzero(p->valuestring, strlen(p->valuestring));
	cJSON_Delete(j);
	return s;
}

/*
 * The agent's own sandbox, applied by apply_sandbox() like every process cw-runner
 * starts: its own PID, mount and IPC namespaces, no capabilities, the run's seccomp
 * filter, and a Landlock ruleset that lets it read the system (to load cw-agent and
 * its libraries) and write nothing. Then agent_narrow() shrinks its reading to the CA
 * certificates, before it reads the key.
 */
static const char *const engine_byok_agent_reads[] = {
	"/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/etc",
};

/* ---- the conversation: kept and resumed ------------------------------------------- */

#define ENGINE_BYOK_CONVERSATION	"conversation.json"

/* The kept conversation's messages, checked (conversation_messages_parse()). */
static cJSON *
engine_byok_read_conversation(int dirfd, char *err, size_t errlen)
{
	struct stat	 st;
	cJSON		*msgs = NULL;
	char		*buf = NULL, e[512];
	size_t		 got = 0;
	ssize_t		 n;
	int		 fd;

	if ((fd = engine_open_beneath(dirfd, ENGINE_BYOK_CONVERSATION, O_RDONLY |
	    O_NONBLOCK | O_NOCTTY)) == -1) {
		snprintf(err, errlen, "byok: the kept conversation: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_size >
	    CONVERSATION_FILE_MAX || (buf = malloc((size_t)st.st_size + 1)) == NULL) {
		snprintf(err, errlen, "byok: the kept conversation is not a regular file of "
		    "at most %ld bytes", CONVERSATION_FILE_MAX);
		close(fd);
		return NULL;
	}
	while (got < (size_t)st.st_size && ((n = read(fd, buf + got, (size_t)st.st_size -
	    got)) > 0 || (n == -1 && errno == EINTR)))
		if (n > 0)
			got += (size_t)n;
	close(fd);
	if (conversation_messages_parse(buf, got, &msgs, e, sizeof e) == -1)
		snprintf(err, errlen, "byok: %s", e);
	free(buf);
	return msgs;
}

/* {"messages": [...]} on one line, down the agent's socket, after the facts. */
static int
engine_byok_send_conversation(int peer, cJSON *msgs, char *err, size_t errlen)
{
	cJSON	*o = cJSON_CreateObject();
	char	*text;
	size_t	 len, off = 0;
	ssize_t	 n;

	if (o == NULL)
		return -1;
	cJSON_AddItemReferenceToObject(o, "messages", msgs);
	text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (text == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	len = strlen(text);
	text[len++] = '\n';
	while (off < len) {
		if ((n = write(peer, text + off, len - off)) == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "byok: the kept conversation could not be sent to "
			    "the agent: %s", strerror(errno));
			cJSON_free(text);
			return -1;
		}
		off += (size_t)n;
	}
	cJSON_free(text);
	return 0;
}

static pid_t
engine_byok_companion(const struct engine_run *o, int tools, int peer, int out,
    int errfd, char *err, size_t errlen)
{
	struct sandbox_spec	 s;
	struct sandbox_launch	 l;
	struct sandbox_report	 rep;
	char			 agentbin[PATH_MAX], *facts = NULL, *argv[3];
	cJSON			*conv = NULL;
	size_t			 len = 0, off = 0, i;
	ssize_t			 n;
	int			 refused = 0;
	pid_t			 pid = -1;

	memset(&s, 0, sizeof s);
	if (engine_byok_agent_path(agentbin, sizeof agentbin, err, errlen) == -1)
		return -1;
	/* Read and checked before anything starts: a bad one refuses the run. */
	if (o->resume_id != NULL && (o->resume_fd == -1 ||
	    (conv = engine_byok_read_conversation(o->resume_fd, err, errlen)) == NULL))
		return -1;
	s.enabled = 1;
	/*
	 * The host's network, not a namespace of its own: the agent is the provider's
	 * client and nothing else. It runs no tool and no code the model chose, and it
	 * connects only to the base URL from configuration; the run's tools, where an
	 * injected prompt acts, are behind the run's egress proxy like every engine's.
	 */
	s.net_open = 1;
	for (i = 0; i < sizeof engine_byok_agent_reads / sizeof engine_byok_agent_reads[0];
	    i++)
		if (strlist_add(&s.read_dirs, engine_byok_agent_reads[i]) == -1)
			goto nomem;
	if (strlist_add(&s.read_files, agentbin) == -1 ||
	    strlist_add(&s.env, "PATH=/usr/bin:/bin") == -1)
		goto nomem;
	/* The facts first, one line on the socket, queued before anyone else can write. */
	if ((facts = engine_byok_facts(o)) == NULL)
		goto nomem;
	len = strlen(facts);
	facts[len++] = '\n';	/* over the NUL: the length is what goes out */
	while (off < len) {
		if ((n = write(peer, facts + off, len - off)) == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "the run's facts could not be queued: %s",
			    strerror(errno));
			goto out;
		}
		off += (size_t)n;
	}
	argv[0] = agentbin;
	argv[1] = "loop";
	argv[2] = NULL;
	memset(&l, 0, sizeof l);
	l.argv = argv;
	/*
	 * No working directory: a cwd is a grant (mountns_granted), and "/" would bind the
	 * whole host root into the agent's view, /tmp's staging cover included.
	 */
	l.cwd = NULL;
	l.fd_in = tools;
	l.fd_out = out;
	l.fd_err = errfd;
	l.new_session = 1;
	pid = apply_sandbox(&s, &l, &rep, &refused, err, errlen);
	sandbox_report_free(&rep);
	/*
	 * The conversation goes after the agent is reading (it may be more than the
	 * socket holds), and before the tool host exists, so nothing else can come
	 * between it and the facts.
	 */
	if (pid > 0 && conv != NULL &&
	    engine_byok_send_conversation(peer, conv, err, errlen) == -1) {
		(void)kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
			;
		pid = -1;
	}
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	if (facts != NULL) {
		explicit_bzero(facts, len);
		cJSON_free(facts);
	}
	spec_free(&s);
	cJSON_Delete(conv);
	return pid;
}

/*
 * The agent numbers each message as it joins the conversation ({"type":"message",
 * "n", "message"}); the stream gathers them for keep(). A continued run's agent starts
 * at the number of messages it was sent (one less when it added the new prompt to
 * the last, a user's turn): first is where this run's messages go in the kept list.
 * A number out of turn (a line too long to parse was dropped) breaks the record,
 * and nothing is kept rather than a conversation with a hole in it.
 */
struct engine_stream {
	char	 id[33];	/* this run's conversation id: random, made here */
	cJSON	*messages;
	size_t	 bytes;
	int	 first, next, broken;
};

static struct engine_stream *
engine_byok_stream_new(void)
{
	struct engine_stream	*s;
	unsigned char		 raw[16];

	if ((s = calloc(1, sizeof *s)) == NULL)
		return NULL;
	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw ||
	    (s->messages = cJSON_CreateArray()) == NULL) {
		free(s);
		return NULL;
	}
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(s->id + 2 * i, 3, "%02x", raw[i]);
	s->first = -1;
	return s;
}

static void
engine_byok_stream_free(struct engine_stream *s)
{
	if (s == NULL)
		return;
	cJSON_Delete(s->messages);
	free(s);
}

static void
engine_byok_gather(struct engine_stream *s, const cJSON *j, size_t len,
    struct engine_progress *p)
{
	const cJSON	*m = cJSON_GetObjectItemCaseSensitive(j, "message");
	cJSON		*c;
	int		 n;

	if (s->broken)
		return;
	if (json_get_int(j, "n", &n) == -1 || n < 0 || !cJSON_IsObject(m) ||
	    (s->first != -1 && n != s->next) || (s->bytes += len) >
	    (size_t)CONVERSATION_FILE_MAX || cJSON_GetArraySize(s->messages) >=
	    CONVERSATION_MESSAGES_MAX || (c = cJSON_Duplicate(m, 1)) == NULL) {
		s->broken = 1;
		return;
	}
	if (s->first == -1)
		s->first = n;
	s->next = n + 1;
	cJSON_AddItemToArray(s->messages, c);
	if (p->session[0] == '\0')
		snprintf(p->session, sizeof p->session, "%s", s->id);
}

/* The earlier run's messages before this run's first, then this run's. */
static int
engine_byok_keep(const struct engine_keep *k, char *err, size_t errlen)
{
	struct engine_stream	*s = k->stream;
	cJSON			*all = NULL, *o, *m;
	char			*text;
	size_t			 len, off = 0;
	ssize_t			 n;
	int			 fd, rc = -1;

	if (s == NULL || cJSON_GetArraySize(s->messages) == 0)
		return 0;
	if (s->broken) {
		snprintf(err, errlen, "byok: a message of the conversation was out of turn "
		    "or too long to keep");
		return -1;
	}
	if (k->resume_fd != -1) {
		if ((all = engine_byok_read_conversation(k->resume_fd, err, errlen)) == NULL)
			return -1;
		if (s->first > cJSON_GetArraySize(all)) {
			snprintf(err, errlen, "byok: the agent numbered its first message %d, "
			    "past the %d it was sent", s->first, cJSON_GetArraySize(all));
			cJSON_Delete(all);
			return -1;
		}
		while (cJSON_GetArraySize(all) > s->first)
			cJSON_DeleteItemFromArray(all, cJSON_GetArraySize(all) - 1);
	} else if (s->first != 0) {
		snprintf(err, errlen, "byok: the conversation's first message is missing");
		return -1;
	} else if ((all = cJSON_CreateArray()) == NULL)
		goto nomem;
	cJSON_ArrayForEach(m, s->messages)
		cJSON_AddItemToArray(all, cJSON_Duplicate(m, 1));
	if ((o = cJSON_CreateObject()) == NULL) {
		cJSON_Delete(all);
		goto nomem;
	}
	cJSON_AddItemToObject(o, "messages", all);
	text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (text == NULL)
		goto nomem;
	len = strlen(text);
	if ((fd = engine_open_beneath(k->keep_fd, ENGINE_BYOK_CONVERSATION, O_WRONLY |
	    O_CREAT | O_EXCL)) == -1) {
		snprintf(err, errlen, "byok: create %s: %s", ENGINE_BYOK_CONVERSATION,
		    strerror(errno));
		cJSON_free(text);
		return -1;
	}
	while (off < len && ((n = write(fd, text + off, len - off)) > 0 ||
	    (n == -1 && errno == EINTR)))
		if (n > 0)
			off += (size_t)n;
	if (off == len && close(fd) == 0)
		rc = 1;
	else {
		if (off != len)
			close(fd);
		snprintf(err, errlen, "byok: write %s: %s", ENGINE_BYOK_CONVERSATION,
		    strerror(errno));
	}
	cJSON_free(text);
	return rc;
nomem:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* The agent's own lines: {"type":"entry"|"usage"|"result", ...}. */
static int
engine_byok_stream_line(struct engine_stream *s, const char *line, size_t len,
    struct engine_progress *p, engine_say_fn *say, void *arg)
{
	cJSON		*j;
	const cJSON	*e;
	const char	*type, *st;
	double		 d;
	int		 n, rc = 0, b;

	if ((j = json_parse(line, len)) == NULL || (type = json_get_string(j, "type")) ==
	    NULL) {
		cJSON_Delete(j);
		return -1;
	}
	if (strcmp(type, "message") == 0)
		engine_byok_gather(s, j, len, p);
	else if (strcmp(type, "entry") == 0) {
		e = cJSON_GetObjectItemCaseSensitive(j, "entry");
		if (transcript_check(e) == 0)
			say(arg, cJSON_Duplicate(e, 1));
		else
			rc = -1;
	} else if (strcmp(type, "usage") == 0) {
		if (json_get_int(j, "turns", &n) == 0 && n >= 0)
			p->turns = n;
		if (json_get_number(j, "dollars", &d) == 0 && d >= 0)
			p->dollars = d;
		p->more = json_get_bool(j, "more", &b) == 0 && b;
		rc = 1;
	} else if (strcmp(type, "result") == 0) {
		p->have_result = 1;
		if (json_get_bool(j, "is_error", &b) == 0)
			p->is_error = b;
		if ((st = json_get_string(j, "subtype")) != NULL)
			snprintf(p->subtype, sizeof p->subtype, "%s", st);
		free(p->result);
		p->result = (st = json_get_string(j, "result")) != NULL ? strdup(st) : NULL;
		rc = 1;
	} else
		rc = -1;
	cJSON_Delete(j);
	return rc;
}

/* The tool host's /floor body: {"tool":"bash","command":...}. */
static int
engine_byok_floor_command(const cJSON *body, const char **command)
{
	const char	*tool = json_get_string(body, "tool");

	*command = NULL;
	if (tool == NULL)
		return -1;
	if (strcmp(tool, "bash") != 0)
		return 0;
	if ((*command = json_get_string(body, "command")) == NULL)
		return -1;
	return 0;
}

const struct engine_ops engine_byok_ops = {
	.name = "byok",
	.prepare = engine_byok_prepare,
	.home = NULL,
	.stream_new = engine_byok_stream_new,
	.stream_line = engine_byok_stream_line,
	.stream_free = engine_byok_stream_free,
	.floor_command = engine_byok_floor_command,
	.companion = engine_byok_companion,
	.keep = engine_byok_keep,
};

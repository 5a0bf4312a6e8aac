/*
 * Clockwork's own agent as an engine (byok). It does not fit "one CLI in the sandbox":
 * the process that holds the provider key must not share a sandbox with the tools the
 * model drives. So the run has two processes:
 *
 *   - the tool host (`cw-runner toolhost`, toolhost.c) is the engine process run.c
 *     starts through spec_build() + apply_sandbox(), with the run's spec; its stdin is
 *     a socket to the agent. Every tool call runs in a child of it, in the sandbox.
 *   - the agent (`cw-runner agent`, agent.c) is started here by companion(), outside
 *     the sandbox, with the key on a pipe; it narrows itself before reading it. Its
 *     stdout is the run's stdout pipe, read by stream_line() below.
 *
 * The key travels daemon -> runner (the run message on stdin) -> agent (a pipe, fd 3),
 * and nowhere else: not argv, not an environment, not a file.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "engine_byok.h"
#include "json.h"
#include "transcript.h"

static int
engine_byok_self(char *out, size_t outlen)
{
	ssize_t	 n;

	if ((n = readlink("/proc/self/exe", out, outlen - 1)) <= 0)
		return -1;
	out[n] = '\0';
	return 0;
}

static int
engine_byok_prepare(const struct engine_run *o, struct strlist *argv,
    struct strlist *env, struct strlist *files, char *err, size_t errlen)
{
	char	 self[PATH_MAX], token_file[PATH_MAX], *kv;
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
	if (o->max_dollars > 0 && o->price == NULL) {
		snprintf(err, errlen, "model '%s' has no price in the configuration "
		    "(prices.%s), so a dollar budget cannot hold: add its price or run "
		    "without a dollar budget", o->model, o->model);
		return -1;
	}
	if (o->port <= 0) {
		snprintf(err, errlen, "the byok engine needs the permission bridge");
		return -1;
	}
	if (engine_byok_self(self, sizeof self) == -1) {
		snprintf(err, errlen, "cannot find cw-runner itself: %s", strerror(errno));
		return -1;
	}
	if (engine_write_file(o->state_dir, ENGINE_BYOK_TOKEN_FILE, o->token, 0400,
	    token_file, sizeof token_file, err, errlen) == -1)
		return -1;
	if (strlist_add(files, token_file) == -1 || strlist_add(files, self) == -1 ||
	    strlist_add(argv, self) == -1 || strlist_add(argv, "toolhost") == -1)
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

static pid_t
engine_byok_companion(const struct engine_run *o, int tools, int out, int errfd,
    char *err, size_t errlen)
{
	char	 self[PATH_MAX], *facts;
	int	 p[2];
	size_t	 len, off = 0;
	ssize_t	 n;
	pid_t	 pid;

	if (engine_byok_self(self, sizeof self) == -1) {
		snprintf(err, errlen, "cannot find cw-runner itself: %s", strerror(errno));
		return -1;
	}
	if ((facts = engine_byok_facts(o)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	len = strlen(facts);
	if (pipe2(p, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		goto fail;
	}
	if (pid == 0) {
		/* fds 3 and 4 first through copies above them, so none is overwritten. */
		int a = fcntl(p[0], F_DUPFD, 10), b = fcntl(tools, F_DUPFD, 10);
		int nul = open("/dev/null", O_RDONLY);

		if (a == -1 || b == -1 || nul == -1 || dup2(nul, 0) == -1 ||
		    dup2(out, 1) == -1 || dup2(errfd, 2) == -1 ||
		    dup2(a, AGENT_FD_INIT) == -1 || dup2(b, AGENT_FD_TOOLS) == -1)
			_exit(126);
		for (int fd = AGENT_FD_TOOLS + 1; fd < 1024; fd++)
			(void)close(fd);
		/* Its own group: the run's signals to the sandbox do not reach it. */
		(void)setpgid(0, 0);
		execl(self, "cw-runner", "agent", (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	while (off < len) {
		if ((n = write(p[1], facts + off, len - off)) == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(p[1]);
	explicit_bzero(facts, len);
	cJSON_free(facts);
	if (off < len) {
		snprintf(err, errlen, "the agent did not take the run's facts");
		kill(pid, SIGKILL);
		return -1;
	}
	return pid;
fail:
	explicit_bzero(facts, len);
	cJSON_free(facts);
	return -1;
}

struct engine_stream {
	int	unused;
};

static struct engine_stream *
engine_byok_stream_new(void)
{
	return calloc(1, sizeof(struct engine_stream));
}

static void
engine_byok_stream_free(struct engine_stream *s)
{
	free(s);
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

	(void)s;
	if ((j = json_parse(line, len)) == NULL || (type = json_get_string(j, "type")) ==
	    NULL) {
		cJSON_Delete(j);
		return -1;
	}
	if (strcmp(type, "entry") == 0) {
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
};

/*
 * cw-agent tools: the byok engine's process inside the run's sandbox. The runner
 * starts it through spec_build() + apply_sandbox() like any engine; its stdin is a
 * socket to the agent (agent.c), which holds the provider key outside the sandbox.
 * Each line on that socket is one tool call; each is run in a child of this process,
 * so in the run's sandbox, and answered with one line. Nothing here ever sees the key.
 *
 * A shell command goes to the run's permission bridge, exactly as Claude Code's calls
 * do: /floor first (the floor's verdict, journaled by the bridge, told to the model as
 * the floor's), then in acceptEdits mode /mcp's approval tool, where the one evaluation
 * of who answers (common/autoallow.h) runs: an ordinary call run without asking, a
 * remembered family, or a person's answer through the Inbox, cwctl or Telegram, held
 * until it comes. There is no list of its own here: a first-word list
 * would let "find . -exec ..." through and ask "npm test" (issue 23). plan mode runs
 * read-only tools only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "curlload.h"
#include "json.h"
#include "wire.h"

#define TOOLHOST_OUT_MAX	(32 * 1024)	/* a tool's output kept for the model */
#define TOOLHOST_FILE_MAX	(256 * 1024)	/* read_file's limit */
#define TOOLHOST_BASH_S		600		/* a shell command's wall-clock limit */
#define TOOLHOST_LINE_MAX	(4 * 1024 * 1024)

struct toolhost {
	int		 port;
	char		 token[128];
};

struct toolhost_out {
	char	*buf;
	size_t	 len, cap;
	size_t	 dropped;
};

static void
toolhost_out_add(struct toolhost_out *o, const char *s, size_t n)
{
	size_t	 room = o->cap - o->len;

	if (n > room) {
		o->dropped += n - room;
		n = room;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

/* ---- the bridge --------------------------------------------------------------------- */

static size_t
toolhost_curl_cb(char *ptr, size_t size, size_t nmemb, void *arg)
{
	toolhost_out_add(arg, ptr, size * nmemb);
	return size * nmemb;
}

/* POST body to the bridge's path; the answer's body in *answer (parsed). */
static int
toolhost_post(struct toolhost *h, const char *path, const cJSON *body, cJSON **answer)
{
	struct toolhost_out	 o;
	struct curl_slist	*hdr = NULL;
	CURL			*c;
	CURLcode		 cc;
	long			 status = 0;
	char			 url[128], th[200], *text;

	*answer = NULL;
	memset(&o, 0, sizeof o);
	o.cap = 64 * 1024;
	if ((o.buf = malloc(o.cap + 1)) == NULL || (text = json_print(body)) == NULL) {
		free(o.buf);
		return -1;
	}
	o.buf[0] = '\0';
	snprintf(url, sizeof url, "http://127.0.0.1:%d%s", h->port, path);
	snprintf(th, sizeof th, "%s: %s", CW_HOOK_RUN_HEADER, h->token);
	hdr = curlload_fn.slist_append(hdr, th);
	hdr = curlload_fn.slist_append(hdr, "Content-Type: application/json");
	hdr = curlload_fn.slist_append(hdr, "Accept: application/json, text/event-stream");
	if ((c = curlload_fn.easy_init()) == NULL) {
		curlload_fn.slist_free_all(hdr);
		cJSON_free(text);
		free(o.buf);
		return -1;
	}
	curlload_fn.easy_setopt(c, CURLOPT_URL, url);
	curlload_fn.easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curlload_fn.easy_setopt(c, CURLOPT_POSTFIELDS, text);
	curlload_fn.easy_setopt(c, CURLOPT_WRITEFUNCTION, toolhost_curl_cb);
	curlload_fn.easy_setopt(c, CURLOPT_WRITEDATA, &o);
	curlload_fn.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curlload_fn.easy_setopt(c, CURLOPT_NOPROXY, "*");
	cc = curlload_fn.easy_perform(c);
	curlload_fn.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curlload_fn.easy_cleanup(c);
	curlload_fn.slist_free_all(hdr);
	cJSON_free(text);
	if (cc == CURLE_OK && status == 200)
		*answer = json_parse(o.buf, o.len);
	free(o.buf);
	return *answer != NULL ? 0 : -1;
}

/*
 * May cmd run? 1 yes; 0 no with the reason in why (the floor's, or the person's).
 */
static int
toolhost_gate(struct toolhost *h, const char *id, const char *cmd, const char *mode,
    char *why, size_t whylen)
{
	cJSON		*body, *ans, *in, *args, *inner;
	const cJSON	*content;
	const char	*d, *text;
	int		 ok = 0;

	/*
	 * The floor first, always: its verdict is journaled by the bridge and told to the
	 * model as the floor's. In acceptEdits the approval tool then decides who answers.
	 */
	body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "tool", "bash");
	cJSON_AddStringToObject(body, "command", cmd);
	if (toolhost_post(h, "/floor", body, &ans) == -1) {
		snprintf(why, whylen, "Clockwork could not reach the floor: the "
		    "command was not run");
	} else if ((d = json_get_string(ans, "decision")) != NULL &&
	    strcmp(d, "allow") == 0) {
		ok = 1;
	} else {
		snprintf(why, whylen, "Clockwork's floor refused this command: %s",
		    (d = json_get_string(ans, "reason")) != NULL ? d : "denied");
	}
	cJSON_Delete(ans);
	cJSON_Delete(body);
	if (!ok || strcmp(mode, "acceptEdits") != 0)
		return ok;
	ok = 0;
	/* Who answers: the bridge's one evaluation (it checks the floor again). */
	body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "jsonrpc", "2.0");
	cJSON_AddNumberToObject(body, "id", 1);
	cJSON_AddStringToObject(body, "method", "tools/call");
	in = cJSON_AddObjectToObject(body, "params");
	cJSON_AddStringToObject(in, "name", "approve");
	args = cJSON_AddObjectToObject(in, "arguments");
	cJSON_AddStringToObject(args, "tool_name", "Bash");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(args, "input"), "command", cmd);
	if (id != NULL)
		cJSON_AddStringToObject(args, "tool_use_id", id);
	if (toolhost_post(h, "/mcp", body, &ans) == -1) {
		snprintf(why, whylen, "Clockwork could not ask for an approval: the command "
		    "was not run");
		cJSON_Delete(body);
		return 0;
	}
	cJSON_Delete(body);
	content = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ans,
	    "result"), "content");
	text = json_get_string(cJSON_GetArrayItem(content, 0), "text");
	inner = text != NULL ? cJSON_Parse(text) : NULL;
	if ((d = json_get_string(inner, "behavior")) != NULL && strcmp(d, "allow") == 0)
		ok = 1;
	else
		snprintf(why, whylen, "Not run: %s", (d = json_get_string(inner,
		    "message")) != NULL ? d : "the approval was denied");
	cJSON_Delete(inner);
	cJSON_Delete(ans);
	return ok;
}

/* ---- running one call in a child ----------------------------------------------------- */

/* The file tools, run in the child: the result on stdout, exit 0 or 1. */
static int
toolhost_file_tool(const char *name, const cJSON *in)
{
	const char	*path = json_get_string(in, "path");
	const char	*content, *olds, *news, *hit;
	char		*buf, *nbuf;
	size_t		 len = 0, ol, nl;
	ssize_t		 n;
	int		 fd;
	FILE		*f;
	DIR		*d;
	struct dirent	*de;

	if (path == NULL || path[0] == '\0')
		path = ".";
	if (strcmp(name, "list_files") == 0) {
		if ((d = opendir(path)) == NULL) {
			printf("cannot list %s: %s\n", path, strerror(errno));
			return 1;
		}
		while ((de = readdir(d)) != NULL)
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
				printf("%s%s\n", de->d_name, de->d_type == DT_DIR ? "/" : "");
		closedir(d);
		return 0;
	}
	if (strcmp(name, "write_file") == 0) {
		if ((content = json_get_string(in, "content")) == NULL) {
			printf("write_file needs content\n");
			return 1;
		}
		if ((f = fopen(path, "w")) == NULL ||
		    fwrite(content, 1, strlen(content), f) != strlen(content) ||
		    fclose(f) != 0) {
			printf("cannot write %s: %s\n", path, strerror(errno));
			return 1;
		}
		printf("wrote %zu bytes to %s\n", strlen(content), path);
		return 0;
	}
	/* read_file and edit_file read the file whole first. */
	if ((buf = malloc(TOOLHOST_FILE_MAX + 1)) == NULL)
		return 1;
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1) {
		printf("cannot read %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (len < TOOLHOST_FILE_MAX && (n = read(fd, buf + len,
	    TOOLHOST_FILE_MAX - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	if (strcmp(name, "read_file") == 0) {
		fwrite(buf, 1, len, stdout);
		if (len == TOOLHOST_FILE_MAX)
			printf("\n[cut at %d bytes]\n", TOOLHOST_FILE_MAX);
		return 0;
	}
	olds = json_get_string(in, "old_string");
	news = json_get_string(in, "new_string");
	if (olds == NULL || news == NULL || olds[0] == '\0') {
		printf("edit_file needs old_string and new_string\n");
		return 1;
	}
	if ((hit = strstr(buf, olds)) == NULL) {
		printf("old_string does not occur in %s\n", path);
		return 1;
	}
	if (strstr(hit + 1, olds) != NULL) {
		printf("old_string occurs more than once in %s: give more context\n", path);
		return 1;
	}
	ol = strlen(olds);
	nl = strlen(news);
	if ((nbuf = malloc(len - ol + nl + 1)) == NULL)
		return 1;
	memcpy(nbuf, buf, (size_t)(hit - buf));
	memcpy(nbuf + (hit - buf), news, nl);
	memcpy(nbuf + (hit - buf) + nl, hit + ol, len - (size_t)(hit - buf) - ol);
	len = len - ol + nl;
	if ((f = fopen(path, "w")) == NULL || fwrite(nbuf, 1, len, f) != len ||
	    fclose(f) != 0) {
		printf("cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("edited %s\n", path);
	return 0;
}

/* Run one call in a child of ours (in the sandbox); its output and exit status. */
static int
toolhost_child(const char *name, const cJSON *in, struct toolhost_out *o, int *status)
{
	const char	*cmd;
	char		 buf[8192];
	int		 p[2], st = 0;
	pid_t		 pid;
	ssize_t		 n;
	time_t		 t0 = time(NULL);
	struct pollfd	 pfd;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		setpgid(0, 0);
		dup2(null, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		signal(SIGPIPE, SIG_DFL);
		if (strcmp(name, "bash") == 0) {
			cmd = json_get_string(in, "command");
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
			_exit(127);
		}
		if (strcmp(name, "grep") == 0) {
			const char *pat = json_get_string(in, "pattern");
			const char *path = json_get_string(in, "path");

			execlp("grep", "grep", "-rnE", "--", pat, path != NULL ? path : ".",
			    (char *)NULL);
			_exit(127);
		}
		fflush(stdout);
		n = toolhost_file_tool(name, in);
		fflush(stdout);
		_exit((int)n);
	}
	close(p[1]);
	setpgid(pid, pid);
	pfd.fd = p[0];
	pfd.events = POLLIN;
	for (;;) {
		if (time(NULL) - t0 > TOOLHOST_BASH_S) {
			kill(-pid, SIGKILL);
			toolhost_out_add(o, "\n[killed: the command ran past its time limit]",
			    47);
			break;
		}
		if (poll(&pfd, 1, 1000) == 0)
			continue;
		if ((n = read(p[0], buf, sizeof buf)) == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		toolhost_out_add(o, buf, (size_t)n);
	}
	close(p[0]);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	/* Whatever the command left behind in its group goes with it. */
	kill(-pid, SIGKILL);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

static int
toolhost_known(const char *name, int plan)
{
	static const char *ro[] = { "read_file", "list_files", "grep" };
	static const char *rw[] = { "write_file", "edit_file", "bash" };

	for (size_t i = 0; i < 3; i++)
		if (strcmp(name, ro[i]) == 0 || (!plan && strcmp(name, rw[i]) == 0))
			return 1;
	return 0;
}

/* Answer one call: the text for the model, and whether it is an error. */
static void
toolhost_call(struct toolhost *h, const cJSON *req, struct toolhost_out *o, int *error)
{
	const char	*name = json_get_string(req, "name");
	const char	*mode = json_get_string(req, "mode");
	const char	*id = json_get_string(req, "id"), *cmd;
	const cJSON	*in = cJSON_GetObjectItemCaseSensitive(req, "input");
	char		 why[1024], head[64];
	int		 status = 0;

	*error = 1;
	if (name == NULL || mode == NULL || !cJSON_IsObject(in) ||
	    !toolhost_known(name, strcmp(mode, "plan") == 0)) {
		snprintf(why, sizeof why, "no such tool%s%s", name != NULL &&
		    mode != NULL && strcmp(mode, "plan") == 0 ?
		    " in plan mode (read-only tools only): " : ": ", name != NULL ? name : "");
		toolhost_out_add(o, why, strlen(why));
		return;
	}
	if (strcmp(name, "bash") == 0) {
		if ((cmd = json_get_string(in, "command")) == NULL) {
			toolhost_out_add(o, "bash needs a command", 20);
			return;
		}
		if (!toolhost_gate(h, id, cmd, mode, why, sizeof why)) {
			toolhost_out_add(o, why, strlen(why));
			return;
		}
	} else if (strcmp(name, "grep") == 0 && json_get_string(in, "pattern") == NULL) {
		toolhost_out_add(o, "grep needs a pattern", 20);
		return;
	}
	if (toolhost_child(name, in, o, &status) == -1) {
		snprintf(why, sizeof why, "the tool could not be started: %s",
		    strerror(errno));
		toolhost_out_add(o, why, strlen(why));
		return;
	}
	if (strcmp(name, "bash") == 0) {
		snprintf(head, sizeof head, "\n[exit code %d]", status);
		toolhost_out_add(o, head, strlen(head));
		*error = status != 0;
	} else {
		*error = status != 0 && !(strcmp(name, "grep") == 0 && status == 1);
	}
	if (o->dropped > 0) {
		snprintf(head, sizeof head, "\n[%zu more bytes not shown]", o->dropped);
		o->len = o->cap - strlen(head) < o->len ? o->cap - strlen(head) : o->len;
		memcpy(o->buf + o->len, head, strlen(head) + 1);
		o->len += strlen(head);
	}
}

static int
toolhost_reply(const char *id, const struct toolhost_out *o, int error)
{
	cJSON	*r = cJSON_CreateObject();
	char	*s;
	size_t	 len, off = 0;
	ssize_t	 n;

	cJSON_AddStringToObject(r, "id", id != NULL ? id : "");
	/* Output need not be UTF-8; cJSON escapes control bytes, the model sees text. */
	cJSON_AddStringToObject(r, "text", o->buf);
	cJSON_AddBoolToObject(r, "error", error);
	s = cJSON_PrintUnformatted(r);
	cJSON_Delete(r);
	if (s == NULL)
		return -1;
	len = strlen(s);
	s[len++] = '\n';
	while (off < len) {
		if ((n = write(0, s + off, len - off)) == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			cJSON_free(s);
			return -1;
		}
		off += (size_t)n;
	}
	cJSON_free(s);
	return 0;
}

static int
toolhost_setup(struct toolhost *h)
{
	const char	*port = getenv("CW_BRIDGE_PORT"), *tf = getenv("CW_BRIDGE_TOKEN_FILE");
	FILE		*f;

	if (port == NULL || tf == NULL || (h->port = atoi(port)) <= 0)
		return -1;
	if ((f = fopen(tf, "r")) == NULL)
		return -1;
	if (fgets(h->token, sizeof h->token, f) == NULL) {
		fclose(f);
		return -1;
	}
	fclose(f);
	h->token[strcspn(h->token, "\r\n")] = '\0';
	return 0;
}

int
agent_cmd_tools(int argc, char **argv)
{
	struct toolhost		 h;
	struct toolhost_out	 o;
	FILE			*in;
	char			*line = NULL, why[512];
	size_t			 cap = 0;
	ssize_t			 n;
	cJSON			*req;
	int			 error, code = AGENT_EXIT_FAILURE, v;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "cw-agent tools: takes no arguments\n");
		return AGENT_EXIT_USAGE;
	}
	memset(&h, 0, sizeof h);
	agent_lsan_off = 1;
	signal(SIGPIPE, SIG_IGN);
	/*
	 * Tools run as children of this process and inherit its sandbox: it must be in
	 * one. Only apply_sandbox() starts it (SPEC S1); run by hand, it refuses.
	 */
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1 ||
	    prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 2) {
		fprintf(stderr, "cw-agent tools: not in a sandbox (no seccomp filter or "
		    "no_new_privs): the byok engine runs its tools only inside one\n");
		return AGENT_EXIT_REFUSED;
	}
	if (toolhost_setup(&h) == -1) {
		fprintf(stderr, "cw-agent tools: no bridge (CW_BRIDGE_PORT, "
		    "CW_BRIDGE_TOKEN_FILE): no shell command could pass the floor\n");
		return AGENT_EXIT_USAGE;
	}
	if (curlload_open(CURL_GLOBAL_NOTHING, why, sizeof why) == -1) {
		fprintf(stderr, "cw-agent tools: %s: no tool call can reach the bridge\n",
		    why);
		return AGENT_EXIT_FAILURE;
	}
	memset(&o, 0, sizeof o);
	o.cap = TOOLHOST_OUT_MAX;
	if ((o.buf = malloc(o.cap + 1)) == NULL || (in = fdopen(0, "r")) == NULL)
		return AGENT_EXIT_FAILURE;
	while ((n = getline(&line, &cap, in)) > 0) {
		if (n > TOOLHOST_LINE_MAX || (req = json_parse(line, (size_t)n)) == NULL)
			break;
		if (json_get_int(req, "end", &v) == 0) {
			code = v == 0 ? AGENT_EXIT_OK : AGENT_EXIT_FAILURE;
			cJSON_Delete(req);
			break;
		}
		o.len = o.dropped = 0;
		o.buf[0] = '\0';
		toolhost_call(&h, req, &o, &error);
		n = toolhost_reply(json_get_string(req, "id"), &o, error);
		cJSON_Delete(req);
		if (n == -1)
			break;
	}
	free(line);
	free(o.buf);
	return code;
}

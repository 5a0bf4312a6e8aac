/*
 * The daemon's side of cw-parse (daemon/parsechild.h): start the child, send it a
 * request, read its reply within the deadline, decode the reply with every bound
 * checked again. Nothing the child sends is trusted more than the input it parsed: a
 * reply out of shape is refused and the child restarted.
 */
#define _GNU_SOURCE	/* pipe2, close_range */
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundlehdr.h"
#include "json.h"
#include "log.h"
#include "parsechild.h"
#include "parsemsg.h"
#include "spawnchild.h"
#include "tgapi.h"
#include "transcript.h"
#include "transcripts.h"

static struct {
	char		 path[PATH_MAX];
	pid_t		 pid;
	int		 to, from;	/* requests, replies */
	uint32_t	 seq;
	int		 status, have_status;	/* from parsechild_reaped */
} pc = { .to = -1, .from = -1 };

void
parsechild_init(const char *path)
{
	char	 exe[PATH_MAX];
	ssize_t	 n;

	if (path != NULL) {
		snprintf(pc.path, sizeof pc.path, "%s", path);
		return;
	}
	if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) <= 0) {
		pc.path[0] = '\0';
		return;
	}
	exe[n] = '\0';
	snprintf(pc.path, sizeof pc.path, "%s/cw-parse", dirname(exe));
}

pid_t
parsechild_pid(void)
{
	return pc.pid;
}

void
parsechild_reaped(pid_t pid, int status)
{
	if (pid == pc.pid && pid != 0) {
		pc.status = status;
		pc.have_status = 1;
	}
}

/* Close our ends and reap the child, waiting for it (it was sent SIGKILL, or is gone). */
static void
parsechild_reap(int *status, int *have)
{
	int	st = 0;
	pid_t	got;

	if (pc.to != -1)
		close(pc.to);
	if (pc.from != -1)
		close(pc.from);
	pc.to = pc.from = -1;
	*have = 0;
	if (pc.pid > 0) {
		while ((got = waitpid(pc.pid, &st, 0)) == -1 && errno == EINTR)
			;
		/* ECHILD: runs_sigchld reaped it first and handed us its status. */
		if (got == pc.pid) {
			*status = st;
			*have = 1;
		}
	}
	if (pc.have_status && !*have) {
		*status = pc.status;
		*have = 1;
	}
	pc.pid = 0;
	pc.have_status = 0;
}

void
parsechild_stop(void)
{
	int	st, have;

	if (pc.pid > 0)
		kill(pc.pid, SIGKILL);
	parsechild_reap(&st, &have);
}

/*
 * The child died, or must be ended: one log line, and the caller's error. killit: it
 * may still be there (silent past the deadline, or out of protocol), so it is killed
 * first; else its pipe closed because it is exiting, and it is only waited for.
 */
static void
parsechild_lost(const char *what, const char *why, int killit, char *err, size_t errlen)
{
	pid_t	pid = pc.pid;
	int	st = 0, have;
	char	how[96];

	if (killit && pid > 0)
		kill(pid, SIGKILL);
	parsechild_reap(&st, &have);
	if (!have)
		snprintf(how, sizeof how, "is gone");
	else if (WIFSIGNALED(st))
		snprintf(how, sizeof how, "died of signal %d%s", WTERMSIG(st),
		    killit ? " (killed by the daemon)" : "");
	else
		snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(st));
	log_warn("cw-parse (pid %d) %s while parsing %s: %s; the next call starts another",
	    (int)pid, how, what, why);
	snprintf(err, errlen, "the parser (cw-parse) failed on %s: %s (%s)", what, why, how);
}

/*
 * Start cw-parse (common/spawnchild.c): the request pipe on 0, the reply pipe on 1,
 * /dev/null on 2, nothing else, and an empty environment.
 */
static int
parsechild_spawn(char *err, size_t errlen)
{
	char		*argv[] = { "cw-parse", "serve", NULL, NULL };
	struct spawnchild	 sp;
	int		 req[2], rep[2], rc;
	pid_t		 pid;
	const char	*t;

	if (pc.path[0] == '\0')
		parsechild_init(NULL);
	if ((t = getenv("CLOCKWORK_TEST_PARSE")) != NULL && strcmp(t, "1") == 0)
		argv[2] = "--test";
	if (pipe2(req, O_CLOEXEC) == -1)
		goto fail;
	if (pipe2(rep, O_CLOEXEC) == -1) {
		close(req[0]);
		close(req[1]);
		goto fail;
	}
	memset(&sp, 0, sizeof sp);
	sp.path = pc.path;
	sp.argv = argv;
	sp.env = NULL;
	sp.fds[0] = req[0];
	sp.fds[1] = rep[1];
	sp.fds[2] = -1;
	sp.nfds = 3;
	rc = spawnchild_start(&sp, &pid, err, errlen);
	close(req[0]);
	close(rep[1]);
	if (rc == -1) {
		close(req[1]);
		close(rep[0]);
		log_warn("cannot start the parser: %s", err);
		return -1;
	}
	pc.pid = pid;
	pc.to = req[1];
	pc.from = rep[0];
	pc.have_status = 0;
	return 0;
fail:
	snprintf(err, errlen, "cannot start the parser %.400s: %s", pc.path, strerror(errno));
	log_warn("%s", err);
	return -1;
}

/* A child that is gone or wrote when nobody asked is replaced before the call. */
static void
parsechild_check_idle(void)
{
	struct pollfd	pfd = { .fd = pc.from, .events = POLLIN };
	char		err[256];
	int		wrote;

	if (pc.pid > 0 && poll(&pfd, 1, 0) != 0) {
		wrote = (pfd.revents & POLLIN) != 0 && (pfd.revents & POLLHUP) == 0;
		parsechild_lost("nothing (idle)", wrote ? "it wrote unasked" :
		    "its pipe closed", wrote, err, sizeof err);
	}
}

/*
 * One request and its reply: *rtype is PARSEMSG_ERROR or the request's reply type.
 * The request is written with SIGPIPE ignored: a dead child is an error, not a signal
 * (the import's child has SIGPIPE at its default).
 */
static int
parsechild_call(const char *what, int type, const struct parsemsg_buf *req, int *rtype,
    uint8_t **payload, size_t *plen, char *err, size_t errlen)
{
	struct sigaction	 ign = { .sa_handler = SIG_IGN }, old;
	const char		*why = "";
	uint32_t		 seq, rseq;
	int			 rc;

	*payload = NULL;
	*plen = 0;
	if (req->failed) {
		snprintf(err, errlen, "%s is over the parser's limit of %u bytes", what,
		    PARSEMSG_MAX);
		return -1;
	}
	parsechild_check_idle();
	if (pc.pid == 0 && parsechild_spawn(err, errlen) == -1)
		return -1;
	seq = ++pc.seq;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);
	rc = parsemsg_write(pc.to, type, seq, req);
	sigaction(SIGPIPE, &old, NULL);
	if (rc == -1) {
		parsechild_lost(what, strerror(errno), errno != EPIPE, err, errlen);
		return -1;
	}
	if (parsemsg_read(pc.from, PARSECHILD_TIMEOUT_MS, PARSEMSG_MAX, rtype, &rseq,
	    payload, plen, &why) == -1) {
		parsechild_lost(what, errno == ETIMEDOUT ? "no answer in time" : why,
		    errno != EPIPE, err, errlen);
		return -1;
	}
	if (rseq != seq || (*rtype != PARSEMSG_ERROR && *rtype != type + 64)) {
		free(*payload);
		*payload = NULL;
		parsechild_lost(what, "a reply that answers another request", 1, err, errlen);
		return -1;
	}
	return 0;
}

/* A reply that does not decode: the child is not trusted any longer. */
static int
parsechild_bad_reply(const char *what, uint8_t *payload, char *err, size_t errlen)
{
	free(payload);
	parsechild_lost(what, "a reply out of shape", 1, err, errlen);
	return -1;
}

int
parsechild_decode_error(const uint8_t *p, size_t len, char *err, size_t errlen)
{
	struct parsemsg_rd	r;
	char			m[PARSECHILD_ERR_MAX + 1];

	parsemsg_rd_init(&r, p, len);
	if (parsemsg_get_strbuf(&r, m, sizeof m, PARSECHILD_ERR_MAX) == -1 ||
	    parsemsg_rd_done(&r) == -1)
		return -1;
	snprintf(err, errlen, "%s", m);
	return 0;
}

/*
 * A request whose answer is the request's own reply type: *payload holds it, for the
 * caller to decode and free. The child's refusal is -1 with its message in err; req
 * is freed either way.
 */
static int
parsechild_request(const char *what, int type, struct parsemsg_buf *req,
    uint8_t **payload, size_t *plen, char *err, size_t errlen)
{
	int	rtype, rc;

	rc = parsechild_call(what, type, req, &rtype, payload, plen, err, errlen);
	parsemsg_buf_free(req);
	if (rc == -1)
		return -1;
	if (rtype == PARSEMSG_ERROR) {
		if (parsechild_decode_error(*payload, *plen, err, errlen) == -1)
			return parsechild_bad_reply(what, *payload, err, errlen);
		free(*payload);
		*payload = NULL;
		return -1;
	}
	return 0;
}

/* ---- transcripts ---------------------------------------------------------------- */

static int
parsechild_key_valid(const char *k)
{
	return k[0] != '\0' && strspn(k, "abcdefghijklmnopqrstuvwxyz_") == strlen(k);
}

int
parsechild_decode_transcript(const uint8_t *p, size_t len, size_t inlen, cJSON **entries,
    size_t *consumed)
{
	struct parsemsg_rd	 r;
	cJSON			*arr, *e, *v;
	char			 key[PARSECHILD_KEY_MAX + 1], *s;
	uint64_t		 next;
	uint32_t		 n, nf;
	uint8_t			 kind, b;

	*entries = NULL;
	parsemsg_rd_init(&r, p, len);
	next = parsemsg_get_u64(&r);
	n = parsemsg_get_u32(&r);
	/* Every entry was a line of at least "{}\n". */
	if (r.bad || next > inlen || n > inlen / 3 || (arr = cJSON_CreateArray()) == NULL)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		nf = parsemsg_get_u32(&r);
		if (r.bad || nf == 0 || nf > PARSECHILD_FIELDS_MAX ||
		    (e = cJSON_CreateObject()) == NULL)
			goto bad;
		cJSON_AddItemToArray(arr, e);
		for (uint32_t f = 0; f < nf; f++) {
			if (parsemsg_get_strbuf(&r, key, sizeof key, PARSECHILD_KEY_MAX) == -1 ||
			    !parsechild_key_valid(key) ||
			    cJSON_GetObjectItemCaseSensitive(e, key) != NULL)
				goto bad;
			kind = parsemsg_get_u8(&r);
			v = NULL;
			if (kind == 1) {
				if ((s = parsemsg_get_str(&r, TRANSCRIPTS_LINE_MAX)) == NULL)
					goto bad;
				v = cJSON_CreateString(s);
				free(s);
			} else if (kind == 2) {
				double	d = parsemsg_get_f64(&r);

				if (r.bad)
					goto bad;
				v = cJSON_CreateNumber(d);
			} else if (kind == 3) {
				if ((b = parsemsg_get_u8(&r)) > 1 || r.bad)
					goto bad;
				v = cJSON_CreateBool(b);
			}
			if (v == NULL)
				goto bad;
			cJSON_AddItemToObject(e, key, v);
		}
		/* The vocabulary's shapes, checked again on what was rebuilt here. */
		if (transcript_check(e) == -1)
			goto bad;
	}
	if (parsemsg_rd_done(&r) == -1)
		goto bad;
	*entries = arr;
	*consumed = (size_t)next;
	return 0;
bad:
	cJSON_Delete(arr);
	return -1;
}

int
parsechild_transcript(const char *buf, size_t len, size_t max, cJSON **entries,
    size_t *consumed, char *err, size_t errlen)
{
	struct parsemsg_buf	 req = { 0 };
	uint8_t			*payload;
	size_t			 plen;

	*entries = NULL;
	parsemsg_put_u64(&req, max);
	parsemsg_put_str(&req, buf, len);
	if (parsechild_request("a transcript", PARSEMSG_TRANSCRIPT, &req, &payload,
	    &plen, err, errlen) == -1)
		return -1;
	if (parsechild_decode_transcript(payload, plen, len, entries, consumed) == -1)
		return parsechild_bad_reply("a transcript", payload, err, errlen);
	free(payload);
	return 0;
}

/* ---- repository job files ------------------------------------------------------- */

static char *
parsechild_opt_str(struct parsemsg_rd *r, size_t max)
{
	uint8_t	has = parsemsg_get_u8(r);

	if (has > 1)
		r->bad = 1;
	return has == 1 ? parsemsg_get_str(r, max) : NULL;
}

int
parsechild_decode_jobspec(const uint8_t *p, size_t len, struct jobspec *out)
{
	struct parsemsg_rd	 r;
	struct jobspec		 js = { 0 };
	uint32_t		 n;

	memset(out, 0, sizeof *out);
	parsemsg_rd_init(&r, p, len);
	n = parsemsg_get_u32(&r);
	if (r.bad || n > JOBSPEC_MAX_JOBS)
		return -1;
	if (n > 0 && (js.jobs = calloc(n, sizeof *js.jobs)) == NULL)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		struct jobspec_job	*j = &js.jobs[i];
		uint32_t		 nc;

		js.n_jobs++;
		j->name = parsemsg_get_str(&r, JOBSPEC_MAX_NAME);
		j->prompt = parsemsg_get_str(&r, JOBSPEC_MAX_PROMPT);
		j->description = parsechild_opt_str(&r, JOBSPEC_MAX_DESCRIPTION);
		j->schedule = parsechild_opt_str(&r, JOBSPEC_MAX_SCHEDULE);
		nc = parsemsg_get_u32(&r);
		if (r.bad || j->name == NULL || !jobspec_name_valid(j->name) ||
		    j->prompt == NULL || nc > JOBSPEC_MAX_CONTEXT)
			goto bad;
		if (nc > 0 && (j->context = calloc(nc, sizeof *j->context)) == NULL)
			goto bad;
		for (uint32_t k = 0; k < nc; k++) {
			j->n_context++;
			if ((j->context[k] = parsemsg_get_str(&r, JOBSPEC_MAX_PATH)) == NULL ||
			    !jobspec_path_valid(j->context[k]))
				goto bad;
		}
	}
	n = parsemsg_get_u32(&r);
	if (r.bad || n > JOBSPEC_MAX_IGNORED)
		goto bad;
	if (n > 0 && (js.ignored = calloc(n, sizeof *js.ignored)) == NULL)
		goto bad;
	for (uint32_t i = 0; i < n; i++) {
		js.n_ignored++;
		/* A key path: JOBSPEC_MAX_KEY per part, and the file nests that deep. */
		if ((js.ignored[i] = parsemsg_get_str(&r, (JOBSPEC_MAX_KEY + 16) *
		    JOBSPEC_MAX_DEPTH)) == NULL)
			goto bad;
	}
	js.ignored_more = (size_t)parsemsg_get_u64(&r);
	if (js.ignored_more > JOBSPEC_MAX_NODES || parsemsg_rd_done(&r) == -1)
		goto bad;
	*out = js;
	return 0;
bad:
	jobspec_free(&js);
	return -1;
}

int
parsechild_jobspec(const char *name, const char *text, size_t len, enum jobspec_format fmt,
    struct jobspec *out, char *err, size_t errlen)
{
	struct parsemsg_buf	 req = { 0 };
	uint8_t			*payload;
	size_t			 plen;

	memset(out, 0, sizeof *out);
	parsemsg_put_str(&req, name, (size_t)-1);
	parsemsg_put_u8(&req, (uint8_t)fmt);
	parsemsg_put_str(&req, text, len);
	if (parsechild_request("a job file", PARSEMSG_JOBSPEC, &req, &payload,
	    &plen, err, errlen) == -1)
		return -1;
	if (parsechild_decode_jobspec(payload, plen, out) == -1)
		return parsechild_bad_reply("a job file", payload, err, errlen);
	free(payload);
	return 0;
}

/* ---- Telegram replies ----------------------------------------------------------- */

static int
parsechild_bool(struct parsemsg_rd *r, int *out)
{
	uint8_t	b = parsemsg_get_u8(r);

	if (b > 1)
		r->bad = 1;
	*out = b;
	return r->bad ? -1 : 0;
}

static int
parsechild_chars(const char *s, const char *set)
{
	return strspn(s, set) == strlen(s);
}

int
parsechild_decode_tgreply(const uint8_t *p, size_t len, struct tgapi_reply *out)
{
	static const char	 alnum[] = "abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
	struct parsemsg_rd	 r;
	struct tgapi_reply	 t = { 0 };
	int64_t			 n;
	uint32_t		 nu;

	memset(out, 0, sizeof *out);
	parsemsg_rd_init(&r, p, len);
	if (parsechild_bool(&r, &t.ok) == -1)
		return -1;
	if ((n = parsemsg_get_i64(&r)) < 0 || n >= 1000)
		return -1;
	t.error_code = (long)n;
	if ((n = parsemsg_get_i64(&r)) < 0 || n >= 86400)
		return -1;
	t.retry_after = (long)n;
	if (parsemsg_get_strbuf(&r, t.description, sizeof t.description,
	    sizeof t.description - 1) == -1 || parsechild_bool(&r, &t.has_message_id) == -1)
		return -1;
	t.message_id = parsemsg_get_i64(&r);
	if (parsechild_bool(&r, &t.result_array) == -1)
		return -1;
	nu = parsemsg_get_u32(&r);
	if (r.bad || nu > TGAPI_UPDATES_MAX || (nu > 0 && !t.result_array))
		return -1;
	if (nu > 0 && (t.updates = calloc(nu, sizeof *t.updates)) == NULL)
		return -1;
	for (uint32_t i = 0; i < nu; i++) {
		struct tgapi_press	*u = &t.updates[i];

		t.n_updates++;
		u->update_id = parsemsg_get_i64(&r);
		if (u->update_id < 0 || parsechild_bool(&r, &u->is_press) == -1 ||
		    parsechild_bool(&r, &u->ours) == -1 ||
		    parsemsg_get_strbuf(&r, u->query_id, sizeof u->query_id,
		    sizeof u->query_id - 1) == -1)
			goto bad;
		u->from_id = parsemsg_get_i64(&r);
		if (parsemsg_get_strbuf(&r, u->from_username, sizeof u->from_username,
		    sizeof u->from_username - 1) == -1 ||
		    !parsechild_chars(u->from_username, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"))
			goto bad;
		u->chat_id = parsemsg_get_i64(&r);
		if (parsemsg_get_strbuf(&r, u->chat_type, sizeof u->chat_type,
		    sizeof u->chat_type - 1) == -1)
			goto bad;
		u->message_id = parsemsg_get_i64(&r);
		if (parsechild_bool(&r, &u->allow) == -1 ||
		    parsechild_bool(&r, &u->for_task) == -1 ||
		    parsemsg_get_strbuf(&r, u->approval_id, sizeof u->approval_id,
		    sizeof u->approval_id - 1) == -1)
			goto bad;
		/* The same rules as tgapi_parse_data: only a press of ours has an id. */
		if (u->ours && (!u->is_press || u->approval_id[0] == '\0' ||
		    !parsechild_chars(u->approval_id, alnum) ||
		    (u->for_task && !u->allow)))
			goto bad;
		if (!u->ours && (u->approval_id[0] != '\0' || u->allow || u->for_task))
			goto bad;
	}
	if (parsemsg_rd_done(&r) == -1)
		goto bad;
	*out = t;
	return 0;
bad:
	free(t.updates);
	return -1;
}

int
parsechild_tgreply(const char *body, size_t len, struct tgapi_reply *out, char *err,
    size_t errlen)
{
	struct parsemsg_buf	 req = { 0 };
	uint8_t			*payload;
	size_t			 plen;

	memset(out, 0, sizeof *out);
	if (body == NULL || len == 0 || len > TGAPI_MAX_REPLY) {
		snprintf(err, errlen, "a reply of %zu bytes (the limit is %d)", len,
		    TGAPI_MAX_REPLY);
		return -1;
	}
	parsemsg_put_str(&req, body, len);
	if (parsechild_request("a Telegram reply", PARSEMSG_TGREPLY, &req, &payload,
	    &plen, err, errlen) == -1)
		return -1;
	if (parsechild_decode_tgreply(payload, plen, out) == -1)
		return parsechild_bad_reply("a Telegram reply", payload, err, errlen);
	free(payload);
	return 0;
}

/* ---- bundle headers ------------------------------------------------------------- */

int
parsechild_decode_bundlehdr(const uint8_t *p, size_t len, size_t inlen, char *tip,
    size_t tiplen, size_t *hdrlen)
{
	struct parsemsg_rd	r;
	char			t[65];
	uint64_t		n;
	size_t			tl;

	parsemsg_rd_init(&r, p, len);
	if (parsemsg_get_strbuf(&r, t, sizeof t, 64) == -1)
		return -1;
	n = parsemsg_get_u64(&r);
	tl = strlen(t);
	if (parsemsg_rd_done(&r) == -1 || (tl != 40 && tl != 64) ||
	    strspn(t, "0123456789abcdef") != tl || tl >= tiplen ||
	    n > inlen || n > BUNDLEHDR_MAX || n < sizeof "# v2 git bundle\n\n" - 1)
		return -1;
	memcpy(tip, t, tl + 1);
	*hdrlen = (size_t)n;
	return 0;
}

int
parsechild_bundlehdr(const char *head, size_t len, const char *branch, char *tip,
    size_t tiplen, size_t *hdrlen, char *err, size_t errlen)
{
	struct parsemsg_buf	 req = { 0 };
	uint8_t			*payload;
	size_t			 plen;

	tip[0] = '\0';
	parsemsg_put_str(&req, branch, (size_t)-1);
	parsemsg_put_str(&req, head, len);
	if (parsechild_request("a bundle header", PARSEMSG_BUNDLEHDR, &req, &payload,
	    &plen, err, errlen) == -1)
		return -1;
	if (parsechild_decode_bundlehdr(payload, plen, len, tip, tiplen, hdrlen) == -1)
		return parsechild_bad_reply("a bundle header", payload, err, errlen);
	free(payload);
	return 0;
}

/* ---- the probe (tests) ---------------------------------------------------------- */

cJSON *
parsechild_probe(char *err, size_t errlen)
{
	struct parsemsg_buf	 req = { 0 };
	struct parsemsg_rd	 r;
	uint8_t			*payload;
	size_t			 plen;
	int			 type;
	uint32_t		 n;
	char			 what[65];
	cJSON			*arr, *o;

	if (parsechild_call("a probe", PARSEMSG_PROBE, &req, &type, &payload, &plen, err,
	    errlen) == -1)
		return NULL;
	if (type != PARSEMSG_PROBE_OK || (arr = cJSON_CreateArray()) == NULL) {
		free(payload);
		snprintf(err, errlen, "the probe was refused");
		return NULL;
	}
	parsemsg_rd_init(&r, payload, plen);
	n = parsemsg_get_u32(&r);
	for (uint32_t i = 0; i < n && i < 64 && !r.bad; i++) {
		if (parsemsg_get_strbuf(&r, what, sizeof what, 64) == -1)
			break;
		o = cJSON_CreateObject();
		json_add_string(o, "what", what);
		cJSON_AddNumberToObject(o, "result", (int32_t)parsemsg_get_u32(&r));
		cJSON_AddNumberToObject(o, "errno", (int32_t)parsemsg_get_u32(&r));
		cJSON_AddItemToArray(arr, o);
	}
	free(payload);
	if (parsemsg_rd_done(&r) == -1) {
		cJSON_Delete(arr);
		snprintf(err, errlen, "a probe reply out of shape");
		return NULL;
	}
	return arr;
}

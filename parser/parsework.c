/*
 * cw-parse's parsers (parser/parsework.h): each request's untrusted bytes go through
 * the same parser the daemon used to run in its own address space (common/transcript.c,
 * common/jobspec.c, daemon/tgapi.c, common/bundlehdr.c), and only what that parser
 * accepts is encoded for the daemon, which checks it again (daemon/parsechild.c).
 */
#define _GNU_SOURCE	/* memmem */
#include <sys/socket.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundlehdr.h"
#include "jobspec.h"
#include "json.h"
#include "parsework.h"
#include "tgapi.h"
#include "transcript.h"

#define PARSEWORK_LINE_MAX	(128 * 1024)	/* daemon/transcripts.h's LINE_MAX */

static void
parsework_error(struct parsemsg_buf *out, const char *msg)
{
	parsemsg_put_str(out, msg, strnlen(msg, 1024));
}

/* One transcript entry: its string, number and bool fields, nothing else. */
static void
parsework_entry(const cJSON *e, struct parsemsg_buf *out)
{
	const cJSON	*f;
	uint32_t	 n = 0;

	cJSON_ArrayForEach(f, e)
		if (f->string != NULL && (cJSON_IsString(f) || cJSON_IsNumber(f) ||
		    cJSON_IsBool(f)))
			n++;
	parsemsg_put_u32(out, n);
	cJSON_ArrayForEach(f, e) {
		if (f->string == NULL)
			continue;
		if (cJSON_IsString(f)) {
			parsemsg_put_str(out, f->string, (size_t)-1);
			parsemsg_put_u8(out, 1);
			parsemsg_put_str(out, f->valuestring, (size_t)-1);
		} else if (cJSON_IsNumber(f)) {
			parsemsg_put_str(out, f->string, (size_t)-1);
			parsemsg_put_u8(out, 2);
			parsemsg_put_f64(out, f->valuedouble);
		} else if (cJSON_IsBool(f)) {
			parsemsg_put_str(out, f->string, (size_t)-1);
			parsemsg_put_u8(out, 3);
			parsemsg_put_u8(out, cJSON_IsTrue(f));
		}
	}
}

/* Whether an entry is one the daemon will take: keys [a-z_], at most 32, bounded. */
static int
parsework_entry_ok(const cJSON *e)
{
	const cJSON	*f;
	size_t		 n = 0, kl;

	if (!cJSON_IsObject(e) || transcript_check(e) == -1)
		return 0;
	cJSON_ArrayForEach(f, e) {
		if (f->string == NULL)
			return 0;
		kl = strlen(f->string);
		if (kl == 0 || kl > 64 || strspn(f->string, "abcdefghijklmnopqrstuvwxyz_") != kl)
			return 0;
		for (const cJSON *g = e->child; g != f; g = g->next)
			if (strcmp(g->string, f->string) == 0)
				return 0;
		if (cJSON_IsString(f) && strlen(f->valuestring) > PARSEWORK_LINE_MAX)
			return 0;
		if (++n > 32)
			return 0;
	}
	return n > 0;
}

void
parsework_transcript(const char *buf, size_t len, uint64_t max, struct parsemsg_buf *out)
{
	struct parsemsg_buf	 entries = { 0 };
	const char		*p, *nl;
	uint64_t		 next = 0;
	uint32_t		 n = 0;
	cJSON			*e;

	/* The same walk as transcripts_read did: whole lines, stop once past max. */
	for (p = buf; (nl = memchr(p, '\n', len - (size_t)(p - buf))) != NULL; p = nl + 1) {
		if ((size_t)(p - buf) >= max && p != buf)
			break;
		if ((e = json_parse(p, (size_t)(nl - p))) != NULL && parsework_entry_ok(e)) {
			parsework_entry(e, &entries);
			n++;
		}
		cJSON_Delete(e);
		next = (uint64_t)(nl + 1 - buf);
	}
	parsemsg_put_u64(out, next);
	parsemsg_put_u32(out, n);
	if (entries.failed)
		out->failed = 1;
	else	/* the entries' bytes as they are: the count says how many */
		parsemsg_put_raw(out, entries.p, entries.len);
	parsemsg_buf_free(&entries);
}

static void
parsework_opt_str(struct parsemsg_buf *out, const char *s)
{
	parsemsg_put_u8(out, s != NULL);
	if (s != NULL)
		parsemsg_put_str(out, s, (size_t)-1);
}

static void
parsework_jobspec(const struct jobspec *js, struct parsemsg_buf *out)
{
	parsemsg_put_u32(out, (uint32_t)js->n_jobs);
	for (size_t i = 0; i < js->n_jobs; i++) {
		const struct jobspec_job	*j = &js->jobs[i];

		parsemsg_put_str(out, j->name, (size_t)-1);
		parsemsg_put_str(out, j->prompt, (size_t)-1);
		parsework_opt_str(out, j->description);
		parsework_opt_str(out, j->schedule);
		parsemsg_put_u32(out, (uint32_t)j->n_context);
		for (size_t k = 0; k < j->n_context; k++)
			parsemsg_put_str(out, j->context[k], (size_t)-1);
	}
	parsemsg_put_u32(out, (uint32_t)js->n_ignored);
	for (size_t i = 0; i < js->n_ignored; i++)
		parsemsg_put_str(out, js->ignored[i], (size_t)-1);
	parsemsg_put_u64(out, js->ignored_more);
}

/* 0 and out the OK payload, or -1 and out an error message. */
int
parsework_tgreply(const char *body, size_t len, struct parsemsg_buf *out)
{
	struct tgapi_reply	r;

	if (tgapi_reply_parse(body, len, &r) == -1) {
		parsework_error(out, "not a Bot API reply (not JSON, or no \"ok\")");
		return -1;
	}
	if (tgapi_reply_digest(&r) == -1) {
		tgapi_reply_free(&r);
		parsework_error(out, "out of memory");
		return -1;
	}
	parsemsg_put_u8(out, r.ok != 0);
	parsemsg_put_i64(out, r.error_code);
	parsemsg_put_i64(out, r.retry_after);
	parsemsg_put_str(out, r.description, (size_t)-1);
	parsemsg_put_u8(out, r.has_message_id != 0);
	parsemsg_put_i64(out, r.message_id);
	parsemsg_put_u8(out, r.result_array != 0);
	parsemsg_put_u32(out, (uint32_t)r.n_updates);
	for (size_t i = 0; i < r.n_updates; i++) {
		const struct tgapi_press	*u = &r.updates[i];

		parsemsg_put_i64(out, u->update_id);
		parsemsg_put_u8(out, u->is_press != 0);
		parsemsg_put_u8(out, u->ours != 0);
		parsemsg_put_str(out, u->query_id, (size_t)-1);
		parsemsg_put_i64(out, u->from_id);
		parsemsg_put_str(out, u->from_username, (size_t)-1);
		parsemsg_put_i64(out, u->chat_id);
		parsemsg_put_str(out, u->chat_type, (size_t)-1);
		parsemsg_put_i64(out, u->message_id);
		parsemsg_put_u8(out, u->allow != 0);
		parsemsg_put_u8(out, u->for_task != 0);
		parsemsg_put_str(out, u->ours ? u->approval_id : "", (size_t)-1);
	}
	tgapi_reply_free(&r);
	return 0;
}

/* What the child must not be able to do, tried: each should fail (the test reads it). */
static void
parsework_probe(struct parsemsg_buf *out)
{
	struct {
		const char	*what;
		int		 rc, err;
	} t[4];
	int	fd;

	errno = 0;
	fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	t[0].what = "open /etc/passwd"; t[0].rc = fd; t[0].err = errno;
	errno = 0;
	fd = open("/tmp/cw-parse-probe", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	t[1].what = "create /tmp/cw-parse-probe"; t[1].rc = fd; t[1].err = errno;
	errno = 0;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	t[2].what = "socket AF_INET"; t[2].rc = fd; t[2].err = errno;
	errno = 0;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	t[3].what = "socket AF_UNIX"; t[3].rc = fd; t[3].err = errno;
	parsemsg_put_u32(out, 4);
	for (int i = 0; i < 4; i++) {
		parsemsg_put_str(out, t[i].what, (size_t)-1);
		parsemsg_put_u32(out, (uint32_t)t[i].rc);
		parsemsg_put_u32(out, (uint32_t)t[i].err);
	}
}

int
parsework_handle(int type, const uint8_t *p, size_t len, int test, int *rtype,
    struct parsemsg_buf *out)
{
	struct parsemsg_rd	 r;
	const uint8_t		*a, *b;
	size_t			 alen, blen, hdrlen;
	uint64_t		 max;
	uint8_t			 fmt;
	char			 err[1024], tip[65], *name;
	struct jobspec		 js;

	parsemsg_rd_init(&r, p, len);
	*rtype = PARSEMSG_ERROR;
	/* A parser's crash, as the tests make one (cw-parse serve --test only). */
	if (test && len > 0 && memmem(p, len, PARSEWORK_CRASH_MARK,
	    sizeof PARSEWORK_CRASH_MARK - 1) != NULL)
		__builtin_trap();
	if (test && len > 0 && memmem(p, len, PARSEWORK_HANG_MARK,
	    sizeof PARSEWORK_HANG_MARK - 1) != NULL)
		for (volatile unsigned long spin = 0;; spin++)
			;
	switch (type) {
	case PARSEMSG_TRANSCRIPT:
		max = parsemsg_get_u64(&r);
		a = parsemsg_get_bytes(&r, PARSEMSG_MAX, &alen);
		if (parsemsg_rd_done(&r) == -1)
			return -1;
		parsework_transcript((const char *)a, alen, max, out);
		*rtype = PARSEMSG_TRANSCRIPT_OK;
		return 0;
	case PARSEMSG_JOBSPEC:
		name = parsemsg_get_str(&r, 4096);
		fmt = parsemsg_get_u8(&r);
		a = parsemsg_get_bytes(&r, PARSEMSG_MAX, &alen);
		if (parsemsg_rd_done(&r) == -1 || fmt > JOBSPEC_YAML) {
			free(name);
			return -1;
		}
		if (jobspec_parse(name, (const char *)a, alen, fmt, &js, err,
		    sizeof err) == -1)
			parsework_error(out, err);
		else {
			parsework_jobspec(&js, out);
			jobspec_free(&js);
			*rtype = PARSEMSG_JOBSPEC_OK;
		}
		free(name);
		return 0;
	case PARSEMSG_TGREPLY:
		a = parsemsg_get_bytes(&r, PARSEMSG_MAX, &alen);
		if (parsemsg_rd_done(&r) == -1)
			return -1;
		if (parsework_tgreply((const char *)a, alen, out) == 0)
			*rtype = PARSEMSG_TGREPLY_OK;
		return 0;
	case PARSEMSG_BUNDLEHDR:
		name = parsemsg_get_str(&r, BUNDLEHDR_BRANCH_MAX);
		b = parsemsg_get_bytes(&r, PARSEMSG_MAX, &blen);
		if (parsemsg_rd_done(&r) == -1) {
			free(name);
			return -1;
		}
		if (bundlehdr_parse((const char *)b, blen, name, tip, sizeof tip, &hdrlen, err,
		    sizeof err) == -1)
			parsework_error(out, err);
		else {
			parsemsg_put_str(out, tip, (size_t)-1);
			parsemsg_put_u64(out, hdrlen);
			*rtype = PARSEMSG_BUNDLEHDR_OK;
		}
		free(name);
		return 0;
	case PARSEMSG_PROBE:
		if (parsemsg_rd_done(&r) == -1)
			return -1;
		parsework_probe(out);
		*rtype = PARSEMSG_PROBE_OK;
		return 0;
	}
	return -1;
}

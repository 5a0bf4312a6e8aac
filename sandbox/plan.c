/*
 * The plan's writer (cw-runner) and its parser (cw-sandbox): plan.h has the format.
 * The parser reads what another program wrote, through a descriptor anyone who can
 * start cw-sandbox can fill: it bounds every length and refuses anything it does not
 * know (test/fuzz/fuzz_plan.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

enum {
	PLAN_ABI = 'A', PLAN_ENABLED = 'E', PLAN_NETOPEN = 'N', PLAN_CARVE = 'K',
	PLAN_SESSION = 'S', PLAN_TMPVIEW = 'X', PLAN_WORKDIR = 'W', PLAN_HOME = 'H',
	PLAN_TMPDIR = 'T', PLAN_SSHSOCK = 'Q', PLAN_CWD = 'C', PLAN_NPROC = 'P',
	PLAN_DATA = 'M', PLAN_READDIR = 'r', PLAN_WRITEDIR = 'w', PLAN_READFILE = 'f',
	PLAN_WRITEFILE = 'g', PLAN_ENV = 'e', PLAN_HIDE = 'h', PLAN_ROBIND = 'b',
	PLAN_CARVEDIR = 'c', PLAN_LISTEN = 'L', PLAN_END = 'Z',
};

/* A growing output buffer; the first failure sticks. */
struct plan_out {
	char	*b;
	size_t	 len, cap;
	int	 failed;	/* 0, ENOMEM or E2BIG */
};

static void
plan_put(struct plan_out *o, int tag, const void *v, size_t n)
{
	unsigned char	 h[5];
	size_t		 need;
	char		*nb;

	if (o->failed)
		return;
	if (n > PLAN_MAX_VALUE || o->len + 5 + n > PLAN_MAX) {
		o->failed = E2BIG;
		return;
	}
	need = o->len + 5 + n;
	if (need > o->cap) {
		size_t	 cap = o->cap ? o->cap : 4096;

		while (cap < need)
			cap *= 2;
		if ((nb = realloc(o->b, cap)) == NULL) {
			o->failed = ENOMEM;
			return;
		}
		o->b = nb;
		o->cap = cap;
	}
	h[0] = (unsigned char)tag;
	h[1] = (unsigned char)(n >> 24);
	h[2] = (unsigned char)(n >> 16);
	h[3] = (unsigned char)(n >> 8);
	h[4] = (unsigned char)n;
	memcpy(o->b + o->len, h, 5);
	if (n > 0)
		memcpy(o->b + o->len + 5, v, n);
	o->len += 5 + n;
}

static void
plan_put_str(struct plan_out *o, int tag, const char *s)
{
	if (s != NULL)
		plan_put(o, tag, s, strlen(s));
}

static void
plan_put_num(struct plan_out *o, int tag, long long v)
{
	char	 buf[32];

	plan_put(o, tag, buf, (size_t)snprintf(buf, sizeof buf, "%lld", v));
}

static void
plan_put_list(struct plan_out *o, int tag, const struct strlist *l)
{
	if (l->n > PLAN_MAX_LIST && !o->failed)
		o->failed = E2BIG;
	for (size_t i = 0; i < l->n; i++)
		plan_put_str(o, tag, l->v[i]);
}

int
plan_build(const struct plan *p, char **buf, size_t *len, char *err, size_t errlen)
{
	const struct sandbox_spec	*s = &p->spec;
	struct plan_out			 o = { NULL, 0, 0, 0 };
	unsigned char			 addr[6];

	if (p->n_listen > PLAN_MAX_LISTEN) {
		snprintf(err, errlen, "plan: more than %d listeners", PLAN_MAX_LISTEN);
		errno = E2BIG;
		return -1;
	}
	/* The magic is a record-less prefix: grow the buffer by hand once. */
	if ((o.b = malloc(4096)) == NULL) {
		snprintf(err, errlen, "plan: %s", strerror(ENOMEM));
		errno = ENOMEM;
		return -1;
	}
	o.cap = 4096;
	memcpy(o.b, PLAN_MAGIC, sizeof PLAN_MAGIC - 1);
	o.len = sizeof PLAN_MAGIC - 1;
	plan_put_num(&o, PLAN_ENABLED, s->enabled != 0);
	plan_put_num(&o, PLAN_ABI, p->abi);
	plan_put_num(&o, PLAN_NETOPEN, s->net_open != 0);
	plan_put_num(&o, PLAN_CARVE, p->carve != 0);
	plan_put_num(&o, PLAN_SESSION, p->new_session != 0);
	plan_put_num(&o, PLAN_TMPVIEW, s->tmpdir_view != 0);
	plan_put_num(&o, PLAN_NPROC, p->lim.nproc);
	plan_put_num(&o, PLAN_DATA, p->lim.data);
	plan_put_str(&o, PLAN_WORKDIR, s->workdir);
	plan_put_str(&o, PLAN_HOME, s->home);
	plan_put_str(&o, PLAN_TMPDIR, s->tmpdir);
	plan_put_str(&o, PLAN_SSHSOCK, s->ssh_auth_sock);
	plan_put_str(&o, PLAN_CWD, p->cwd);
	plan_put_list(&o, PLAN_READDIR, &s->read_dirs);
	plan_put_list(&o, PLAN_WRITEDIR, &s->write_dirs);
	plan_put_list(&o, PLAN_READFILE, &s->read_files);
	plan_put_list(&o, PLAN_WRITEFILE, &s->write_files);
	plan_put_list(&o, PLAN_ENV, &s->env);
	plan_put_list(&o, PLAN_HIDE, &s->hide);
	plan_put_list(&o, PLAN_ROBIND, &s->ro_binds);
	plan_put_list(&o, PLAN_CARVEDIR, &s->carve_pending);
	for (size_t i = 0; i < p->n_listen; i++) {
		memcpy(addr, &p->listen[i].sin_addr.s_addr, 4);
		memcpy(addr + 4, &p->listen[i].sin_port, 2);
		plan_put(&o, PLAN_LISTEN, addr, sizeof addr);
	}
	plan_put(&o, PLAN_END, NULL, 0);
	if (o.failed) {
		snprintf(err, errlen, "plan: %s", o.failed == E2BIG ? "larger than cw-sandbox "
		    "accepts (a value, a list or the whole plan)" : strerror(o.failed));
		free(o.b);
		errno = o.failed;
		return -1;
	}
	*buf = o.b;
	*len = o.len;
	return 0;
}

/* A decimal in [min, max], the whole value: no sign where min is 0, no spaces. */
static int
plan_num(const char *v, size_t n, long long min, long long max, long long *out)
{
	long long	 x = 0;
	size_t		 i = 0;
	int		 neg = 0;

	if (n > 0 && v[0] == '-') {
		neg = 1;
		i = 1;
	}
	if (i == n || n > 20)
		return -1;
	for (; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		if (x > (LLONG_MAX - (v[i] - '0')) / 10)
			return -1;
		x = x * 10 + (v[i] - '0');
	}
	if (neg)
		x = -x;
	if (x < min || x > max)
		return -1;
	*out = x;
	return 0;
}

/* A string value: no NUL inside, not empty, copied with its terminator. */
static char *
plan_str(const char *v, size_t n)
{
	char	*s;

	if (n == 0 || memchr(v, '\0', n) != NULL)
		return NULL;
	if ((s = malloc(n + 1)) == NULL)
		return NULL;
	memcpy(s, v, n);
	s[n] = '\0';
	return s;
}

static const char *
plan_tagname(int tag)
{
	switch (tag) {
	case PLAN_READDIR: return "read_dirs";
	case PLAN_WRITEDIR: return "write_dirs";
	case PLAN_READFILE: return "read_files";
	case PLAN_WRITEFILE: return "write_files";
	case PLAN_ENV: return "env";
	case PLAN_HIDE: return "hide";
	case PLAN_ROBIND: return "ro_binds";
	case PLAN_CARVEDIR: return "carve_pending";
	default: return "list";
	}
}

int
plan_parse(const char *buf, size_t len, struct plan *p, char *err, size_t errlen)
{
	struct sandbox_spec	*s = &p->spec;
	unsigned char		 seen[256];
	size_t			 off, n;
	const char		*v;
	long long		 x;
	int			 tag, ended = 0;

	memset(p, 0, sizeof *p);
	memset(seen, 0, sizeof seen);
	if (len > PLAN_MAX) {
		snprintf(err, errlen, "plan: %zu bytes, more than %d", len, PLAN_MAX);
		return -1;
	}
	if (len < sizeof PLAN_MAGIC - 1 || memcmp(buf, PLAN_MAGIC,
	    sizeof PLAN_MAGIC - 1) != 0) {
		snprintf(err, errlen, "plan: not a plan (no %.6s header)", PLAN_MAGIC);
		return -1;
	}
	for (off = sizeof PLAN_MAGIC - 1; off < len && !ended; off += 5 + n) {
		struct strlist	*l = NULL;
		char		**dst = NULL, *str;
		int		*flag = NULL;

		if (len - off < 5) {
			snprintf(err, errlen, "plan: a record header cut short at byte %zu", off);
			return -1;
		}
		tag = (unsigned char)buf[off];
		n = (size_t)(unsigned char)buf[off + 1] << 24 |
		    (size_t)(unsigned char)buf[off + 2] << 16 |
		    (size_t)(unsigned char)buf[off + 3] << 8 | (unsigned char)buf[off + 4];
		if (n > PLAN_MAX_VALUE || n > len - off - 5) {
			snprintf(err, errlen, "plan: record '%c' of %zu bytes at byte %zu runs "
			    "past the end or the limit", tag > 32 && tag < 127 ? tag : '?', n, off);
			return -1;
		}
		v = buf + off + 5;
		switch (tag) {
		case PLAN_READDIR: l = &s->read_dirs; break;
		case PLAN_WRITEDIR: l = &s->write_dirs; break;
		case PLAN_READFILE: l = &s->read_files; break;
		case PLAN_WRITEFILE: l = &s->write_files; break;
		case PLAN_ENV: l = &s->env; break;
		case PLAN_HIDE: l = &s->hide; break;
		case PLAN_ROBIND: l = &s->ro_binds; break;
		case PLAN_CARVEDIR: l = &s->carve_pending; break;
		case PLAN_WORKDIR: dst = &s->workdir; break;
		case PLAN_HOME: dst = &s->home; break;
		case PLAN_TMPDIR: dst = &s->tmpdir; break;
		case PLAN_SSHSOCK: dst = &s->ssh_auth_sock; break;
		case PLAN_CWD: dst = &p->cwd; break;
		case PLAN_ENABLED: flag = &s->enabled; break;
		case PLAN_NETOPEN: flag = &s->net_open; break;
		case PLAN_CARVE: flag = &p->carve; break;
		case PLAN_SESSION: flag = &p->new_session; break;
		case PLAN_TMPVIEW: flag = &s->tmpdir_view; break;
		case PLAN_ABI: case PLAN_NPROC: case PLAN_DATA: case PLAN_LISTEN:
			break;
		case PLAN_END:
			if (n != 0) {
				snprintf(err, errlen, "plan: the end record has a value");
				return -1;
			}
			ended = 1;
			continue;
		default:
			snprintf(err, errlen, "plan: unknown record tag 0x%02x at byte %zu", tag,
			    off);
			return -1;
		}
		if (l != NULL) {
			if (l->n >= PLAN_MAX_LIST) {
				snprintf(err, errlen, "plan: more than %d %s", PLAN_MAX_LIST,
				    plan_tagname(tag));
				return -1;
			}
			if ((str = plan_str(v, n)) == NULL) {
				snprintf(err, errlen, "plan: a %s entry is empty or holds a NUL",
				    plan_tagname(tag));
				return -1;
			}
			if (strlist_add(l, str) == -1) {
				free(str);
				snprintf(err, errlen, "plan: %s", strerror(ENOMEM));
				return -1;
			}
			free(str);
			continue;
		}
		if (tag == PLAN_LISTEN) {
			if (p->n_listen >= PLAN_MAX_LISTEN || n != 6) {
				snprintf(err, errlen, "plan: a listener record is malformed or one "
				    "too many (at most %d)", PLAN_MAX_LISTEN);
				return -1;
			}
			p->listen[p->n_listen].sin_family = AF_INET;
			memcpy(&p->listen[p->n_listen].sin_addr.s_addr, v, 4);
			memcpy(&p->listen[p->n_listen].sin_port, v + 4, 2);
			p->n_listen++;
			continue;
		}
		if (seen[tag]++) {
			snprintf(err, errlen, "plan: record '%c' appears twice", tag);
			return -1;
		}
		if (dst != NULL) {
			if ((*dst = plan_str(v, n)) == NULL) {
				snprintf(err, errlen, "plan: record '%c' is empty or holds a NUL",
				    tag);
				return -1;
			}
			if ((*dst)[0] != '/') {
				snprintf(err, errlen, "plan: record '%c' is not an absolute path",
				    tag);
				return -1;
			}
			continue;
		}
		if (flag != NULL) {
			if (plan_num(v, n, 0, 1, &x) == -1) {
				snprintf(err, errlen, "plan: record '%c' is not 0 or 1", tag);
				return -1;
			}
			*flag = (int)x;
			continue;
		}
		if (plan_num(v, n, 0, tag == PLAN_ABI ? 1000 : LLONG_MAX / 2, &x) == -1) {
			snprintf(err, errlen, "plan: record '%c' is not a number in range", tag);
			return -1;
		}
		if (tag == PLAN_ABI)
			p->abi = (int)x;
		else if (tag == PLAN_NPROC)
			p->lim.nproc = x > LONG_MAX ? LONG_MAX : (long)x;
		else
			p->lim.data = x;
	}
	if (!ended || off != len) {
		snprintf(err, errlen, "plan: %s", ended ? "bytes after the end record" :
		    "no end record (cut short)");
		return -1;
	}
	if (!seen[PLAN_ENABLED]) {
		snprintf(err, errlen, "plan: no record says whether the sandbox is on");
		return -1;
	}
	/* No workdir is a plan too: the byok agent's sandbox grants none (engine_byok.c). */
	if (s->enabled && p->abi < 1) {
		snprintf(err, errlen, "plan: a sandbox without a Landlock ABI");
		return -1;
	}
	return 0;
}

void
plan_free(struct plan *p)
{
	struct sandbox_spec	*s = &p->spec;

	free(s->workdir);
	free(s->home);
	free(s->tmpdir);
	free(s->ssh_auth_sock);
	free(p->cwd);
	strlist_free(&s->read_dirs);
	strlist_free(&s->write_dirs);
	strlist_free(&s->read_files);
	strlist_free(&s->write_files);
	strlist_free(&s->env);
	strlist_free(&s->hide);
	strlist_free(&s->ro_binds);
	strlist_free(&s->carve_pending);
	memset(p, 0, sizeof *p);
}

/* A message of one buffer, with room for control data, for sendmsg or recvmsg. */
void
plan_msghdr(struct msghdr *mh, struct iovec *iov, void *base, size_t len, void *ctl,
    size_t ctllen)
{
	iov->iov_base = base;
	iov->iov_len = len;
	memset(mh, 0, sizeof *mh);
	mh->msg_iov = iov;
	mh->msg_iovlen = 1;
	mh->msg_control = ctl;
	mh->msg_controllen = ctllen;
}

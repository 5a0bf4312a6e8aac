/*
 * The plan (sandbox/plan.c): what cw-runner writes cw-sandbox reads back field for
 * field; every way a plan can be cut short or malformed is refused with a reason; and
 * the plan `cw-runner spec --plan` prints is one cw-sandbox's parser accepts, holding
 * the spec `cw-runner spec --json` shows.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "plan.h"

static void
sample(struct plan *p)
{
	struct sandbox_spec	*s = &p->spec;

	memset(p, 0, sizeof *p);
	s->enabled = 1;
	s->workdir = "/work/tree";
	s->home = "/home/u";
	s->tmpdir = "/home/u/.clockwork/tmp/x";
	s->tmpdir_view = 1;
	s->ssh_auth_sock = "/run/ssh.sock";
	p->cwd = "/work/tree/sub";
	p->abi = 6;
	p->carve = 1;
	p->new_session = 1;
	p->lim.nproc = 512;
	p->lim.data = 1LL << 33;
	p->listen[0].sin_family = AF_INET;
	p->listen[0].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	p->listen[0].sin_port = htons(4711);
	p->n_listen = 1;
	assert_int_equal(strlist_add(&s->read_dirs, "/usr"), 0);
	assert_int_equal(strlist_add(&s->read_dirs, "/etc"), 0);
	assert_int_equal(strlist_add(&s->write_dirs, "/work/tree"), 0);
	assert_int_equal(strlist_add(&s->read_files, "/home/u/.gitconfig"), 0);
	assert_int_equal(strlist_add(&s->write_files, "/dev/null"), 0);
	assert_int_equal(strlist_add(&s->env, "PATH=/usr/bin:/bin"), 0);
	assert_int_equal(strlist_add(&s->env, "A=b=c with spaces\nand a newline"), 0);
	assert_int_equal(strlist_add(&s->hide, "/run/docker.sock"), 0);
	assert_int_equal(strlist_add(&s->ro_binds, "/work/tree/.git"), 0);
	assert_int_equal(strlist_add(&s->carve_pending, "/etc"), 0);
}

static void
sample_free(struct plan *p)
{
	struct sandbox_spec	*s = &p->spec;

	strlist_free(&s->read_dirs);
	strlist_free(&s->write_dirs);
	strlist_free(&s->read_files);
	strlist_free(&s->write_files);
	strlist_free(&s->env);
	strlist_free(&s->hide);
	strlist_free(&s->ro_binds);
	strlist_free(&s->carve_pending);
}

static void
same_list(const struct strlist *a, const struct strlist *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		assert_string_equal(a->v[i], b->v[i]);
}

static void
test_round_trip(void **state)
{
	struct plan	 p, q;
	char		*buf, err[512];
	size_t		 len;

	(void)state;
	sample(&p);
	assert_int_equal(plan_build(&p, &buf, &len, err, sizeof err), 0);
	assert_int_equal(plan_parse(buf, len, &q, err, sizeof err), 0);
	assert_int_equal(q.spec.enabled, 1);
	assert_int_equal(q.spec.net_open, 0);
	assert_int_equal(q.spec.tmpdir_view, 1);
	assert_string_equal(q.spec.workdir, "/work/tree");
	assert_string_equal(q.spec.home, "/home/u");
	assert_string_equal(q.spec.tmpdir, "/home/u/.clockwork/tmp/x");
	assert_string_equal(q.spec.ssh_auth_sock, "/run/ssh.sock");
	assert_string_equal(q.cwd, "/work/tree/sub");
	assert_int_equal(q.abi, 6);
	assert_int_equal(q.carve, 1);
	assert_int_equal(q.new_session, 1);
	assert_int_equal(q.lim.nproc, 512);
	assert_true(q.lim.data == 1LL << 33);
	assert_int_equal(q.n_listen, 1);
	assert_int_equal(q.listen[0].sin_family, AF_INET);
	assert_int_equal(ntohs(q.listen[0].sin_port), 4711);
	assert_int_equal(ntohl(q.listen[0].sin_addr.s_addr), INADDR_LOOPBACK);
	same_list(&p.spec.read_dirs, &q.spec.read_dirs);
	same_list(&p.spec.write_dirs, &q.spec.write_dirs);
	same_list(&p.spec.read_files, &q.spec.read_files);
	same_list(&p.spec.write_files, &q.spec.write_files);
	same_list(&p.spec.env, &q.spec.env);
	same_list(&p.spec.hide, &q.spec.hide);
	same_list(&p.spec.ro_binds, &q.spec.ro_binds);
	same_list(&p.spec.carve_pending, &q.spec.carve_pending);
	plan_free(&q);

	/* Every prefix of the plan is cut short, and refused as such. */
	for (size_t n = 0; n < len; n++) {
		err[0] = '\0';
		assert_int_equal(plan_parse(buf, n, &q, err, sizeof err), -1);
		assert_true(err[0] != '\0');
		plan_free(&q);
	}
	free(buf);
	sample_free(&p);
}

/* A plan of these records (tag, value), with the header and, if end, the end record. */
static size_t
raw(char *out, const char *const *recs, int end)
{
	size_t	 off = sizeof PLAN_MAGIC - 1, n;

	memcpy(out, PLAN_MAGIC, off);
	for (; *recs != NULL; recs++) {
		n = strlen(*recs + 1);
		out[off] = (*recs)[0];
		out[off + 1] = out[off + 2] = 0;
		out[off + 3] = (char)(n >> 8);
		out[off + 4] = (char)n;
		memcpy(out + off + 5, *recs + 1, n);
		off += 5 + n;
	}
	if (end) {
		memcpy(out + off, "Z\0\0\0\0", 5);
		off += 5;
	}
	return off;
}

static void
refused(const char *const *recs, int end, const char *why)
{
	struct plan	 p;
	char		 buf[4096], err[512];
	size_t		 len = raw(buf, recs, end);

	err[0] = '\0';
	assert_int_equal(plan_parse(buf, len, &p, err, sizeof err), -1);
	if (strstr(err, why) == NULL)
		fail_msg("expected \"%s\" in \"%s\"", why, err);
	plan_free(&p);
}

static void
test_refusals(void **state)
{
	static const char *const ok[] = { "E1", "A6", "W/w", NULL };
	static const char *const twice[] = { "E1", "A6", "W/w", "W/x", NULL };
	static const char *const relative[] = { "E1", "A6", "Wwork", NULL };
	static const char *const unknown[] = { "E1", "A6", "W/w", "?x", NULL };
	static const char *const badflag[] = { "E2", "A6", "W/w", NULL };
	static const char *const badnum[] = { "E1", "A6", "W/w", "P12x", NULL };
	static const char *const negative[] = { "E1", "A6", "W/w", "P-1", NULL };
	static const char *const noabi[] = { "E1", "W/w", NULL };
	static const char *const noflag[] = { "A6", "W/w", NULL };
	static const char *const emptyentry[] = { "E1", "A6", "W/w", "r", NULL };
	static const char *const badlisten[] = { "E1", "A6", "W/w", "L12345", NULL };
	struct plan	 p;
	char		 buf[4096], err[512];
	size_t		 len;

	(void)state;
	len = raw(buf, ok, 1);
	assert_int_equal(plan_parse(buf, len, &p, err, sizeof err), 0);
	plan_free(&p);
	refused(ok, 0, "no end record");
	refused(twice, 1, "appears twice");
	refused(relative, 1, "not an absolute path");
	refused(unknown, 1, "unknown record tag");
	refused(badflag, 1, "not 0 or 1");
	refused(badnum, 1, "not a number");
	refused(negative, 1, "not a number");
	refused(noabi, 1, "without a Landlock ABI");
	refused(noflag, 1, "whether the sandbox is on");
	refused(emptyentry, 1, "empty or holds a NUL");
	refused(badlisten, 1, "listener");

	/* Bytes after the end, a NUL inside a path, a length past the end or the limit. */
	len = raw(buf, ok, 1);
	buf[len] = 'x';
	assert_int_equal(plan_parse(buf, len + 1, &p, err, sizeof err), -1);
	assert_non_null(strstr(err, "after the end"));
	plan_free(&p);
	len = raw(buf, ok, 1);
	buf[len - 6] = '\0';	/* W's value "/w" becomes "/\0" */
	assert_int_equal(plan_parse(buf, len, &p, err, sizeof err), -1);
	plan_free(&p);
	len = raw(buf, ok, 0);
	memcpy(buf + len, "r\x7f\xff\xff\xff", 5);
	assert_int_equal(plan_parse(buf, len + 5, &p, err, sizeof err), -1);
	assert_non_null(strstr(err, "past the end or the limit"));
	plan_free(&p);
	memcpy(buf, "CWPLAN2\n", 8);
	assert_int_equal(plan_parse(buf, len, &p, err, sizeof err), -1);
	assert_non_null(strstr(err, "not a plan"));
	plan_free(&p);
}

/* A value larger than cw-sandbox takes is refused by the writer, not sent. */
static void
test_build_bounds(void **state)
{
	struct plan	 p;
	char		*big, *buf, err[512];
	size_t		 len;

	(void)state;
	sample(&p);
	assert_non_null(big = malloc(PLAN_MAX_VALUE + 3));
	memset(big, 'a', PLAN_MAX_VALUE + 2);
	memcpy(big, "X=", 2);
	big[PLAN_MAX_VALUE + 2] = '\0';
	assert_int_equal(strlist_add(&p.spec.env, big), 0);
	assert_int_equal(plan_build(&p, &buf, &len, err, sizeof err), -1);
	assert_int_equal(errno, E2BIG);
	assert_non_null(strstr(err, "larger than cw-sandbox accepts"));
	free(big);
	sample_free(&p);
}

/* The real cw-runner's plan for a real spec: cw-sandbox's parser takes it. */
static void
test_runner_plan(void **state)
{
	struct plan	 p;
	char		 cmd[PATH_MAX * 2], dir[] = CW_TEST_TMP_DIR "/plan-XXXXXX", err[512];
	char		 canon[PATH_MAX], *buf;
	size_t		 len = 0, cap = 1 << 20;
	FILE		*f;
	int		 found = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_non_null(realpath(dir, canon));
	snprintf(cmd, sizeof cmd, "'%s/cw-runner' spec --plan --workdir '%s'", CW_BIN_DIR,
	    dir);
	assert_non_null(f = popen(cmd, "r"));
	assert_non_null(buf = malloc(cap));
	for (size_t n; (n = fread(buf + len, 1, cap - len, f)) > 0; len += n)
		assert_true(len + n < cap);
	assert_int_equal(pclose(f), 0);
	assert_int_equal(plan_parse(buf, len, &p, err, sizeof err), 0);
	assert_int_equal(p.spec.enabled, 1);
	assert_true(p.abi >= 1);
	assert_string_equal(p.spec.workdir, canon);
	for (size_t i = 0; i < p.spec.write_dirs.n; i++)
		if (strcmp(p.spec.write_dirs.v[i], canon) == 0)
			found = 1;
	assert_true(found);
	assert_true(strlist_contains(&p.spec.read_dirs, "/usr"));
	for (size_t i = 0, path = 0; i < p.spec.env.n || !path; i++) {
		assert_true(i < p.spec.env.n);
		path = strncmp(p.spec.env.v[i], "PATH=", 5) == 0;
		if (path)
			break;
	}
	plan_free(&p);
	free(buf);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_build_bounds),
		cmocka_unit_test(test_runner_plan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

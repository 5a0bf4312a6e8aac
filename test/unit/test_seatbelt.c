/*
 * Golden tests for the macOS Seatbelt profile generator (runner/seatbelt.c). Specs
 * are built by hand, so nothing here touches the filesystem except the base profile
 * and the golden files. CW_UPDATE_GOLDEN=1 rewrites the goldens instead of comparing
 * (see sandbox-profiles/README.md); do that only on purpose and review the diff.
 *
 * These are text tests. Running the profiles under sandbox-exec needs a Mac.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "credpaths.h"
#include "engine.h"
#include "seatbelt.h"
#include "spec.h"

#define BASE_PATH	CW_SRC_DIR "/sandbox-profiles/" SEATBELT_BASE_NAME
#define GOLDEN_DIR	CW_SRC_DIR "/test/fixtures/seatbelt"

static char	*base;

static int
setup(void **state)
{
	char	 err[512];

	(void)state;
	if (seatbelt_load_base(BASE_PATH, &base, err, sizeof err) == -1) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	free(base);
	return 0;
}

static void
add(struct strlist *l, const char *s)
{
	assert_int_equal(strlist_add(l, s), 0);
}

static void
spec_init(struct sandbox_spec *s, const char *engine, const char *home,
    const char *workdir, const char *tmpdir)
{
	memset(s, 0, sizeof *s);
	s->enabled = 1;
	s->engine = strdup(engine);
	s->home = strdup(home);
	s->workdir = strdup(workdir);
	s->tmpdir = tmpdir != NULL ? strdup(tmpdir) : NULL;
	assert_non_null(s->engine);
	assert_non_null(s->home);
	assert_non_null(s->workdir);
}

static const struct seatbelt_options opts_dev = { "/Users/dev/.clockwork", 501 };

static char *
slurp(const char *path)
{
	FILE	*f;
	char	*buf;
	long	 n;

	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Compare text with the golden file, or rewrite it when CW_UPDATE_GOLDEN=1. */
static void
golden(const char *name, const char *text)
{
	char		 path[PATH_MAX];
	const char	*u = getenv("CW_UPDATE_GOLDEN");
	char		*want;
	FILE		*f;
	size_t		 i, line = 1;

	snprintf(path, sizeof path, "%s/%s.sb", GOLDEN_DIR, name);
	if (u != NULL && strcmp(u, "1") == 0) {
		assert_non_null(f = fopen(path, "wb"));
		assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
		assert_int_equal(fclose(f), 0);
		fprintf(stderr, "rewrote golden %s\n", path);
		return;
	}
	if ((want = slurp(path)) == NULL)
		fail_msg("golden %s missing (CW_UPDATE_GOLDEN=1 creates it)", path);
	for (i = 0; want[i] != '\0' && want[i] == text[i]; i++) {
		if (want[i] == '\n')
			line++;
	}
	if (want[i] != text[i]) {
		fprintf(stderr, "%s differs at line %zu\n--- golden\n%.200s\n--- got\n"
		    "%.200s\n", path, line, want + i, text + i);
		free(want);
		fail_msg("golden mismatch: %s", name);
	}
	free(want);
}

/* Not inlined: gcc's -Wdangling-pointer otherwise mistakes the result for &out. */
static char *render(const struct sandbox_spec *, const struct seatbelt_options *)
    __attribute__((__noinline__));

static char *
render(const struct sandbox_spec *s, const struct seatbelt_options *o)
{
	char	*out, err[512];

	if (seatbelt_render_opts(s, o, base, &out, err, sizeof err) == -1)
		fail_msg("render: %s", err);
	return out;
}

/*
 * A small SBPL reader, independent of the generator: it walks the profile with
 * Scheme's string rules (backslash escapes in "...", #"..." raw, ';' comments) and
 * returns, for each top-level form, the strings it holds, decoded. A path that broke
 * out of its string would show up as an extra form, an unbalanced one, or a string
 * that does not decode back to the path.
 */
struct form {
	size_t	 start;
	int	 nstrings;
	char	 str[1024];	/* first string, decoded */
};

static size_t
read_forms(const char *p, struct form *forms, size_t max)
{
	size_t	 n = 0, i = 0, o = 0;
	int	 depth = 0;

	while (p[i] != '\0') {
		char	 c = p[i];

		if (c == ';') {
			while (p[i] != '\0' && p[i] != '\n')
				i++;
			continue;
		}
		if (c == '"' || (c == '#' && p[i + 1] == '"')) {
			int		 raw = (c == '#');
			struct form	*f;

			assert_true(depth > 0 && n > 0);
			f = &forms[n - 1];
			i += raw ? 2 : 1;
			o = 0;
			while (p[i] != '"') {
				assert_true(p[i] != '\0');
				assert_true(p[i] != '\n');	/* never a newline in a string */
				if (!raw && p[i] == '\\') {
					i++;
					assert_true(p[i] == '\\' || p[i] == '"');
				}
				if (f->nstrings == 0) {
					assert_true(o + 1 < sizeof f->str);
					f->str[o++] = p[i];
				}
				i++;
			}
			if (f->nstrings == 0)
				f->str[o] = '\0';
			f->nstrings++;
			i++;
			continue;
		}
		if (c == '(') {
			if (depth == 0) {
				assert_true(n < max);
				memset(&forms[n], 0, sizeof forms[n]);
				forms[n++].start = i;
			}
			depth++;
		} else if (c == ')') {
			depth--;
			assert_true(depth >= 0);
		}
		i++;
	}
	assert_int_equal(depth, 0);
	return n;
}

/* The forms after the base profile, i.e. the ones the generator wrote. */
static size_t
generated_forms(const char *text, struct form *forms, size_t max, size_t *first)
{
	size_t	 n = read_forms(text, forms, max), i;

	for (i = 0; i < n && forms[i].start < strlen(base); i++)
		;
	*first = i;
	return n;
}

static int
has_string(const struct form *forms, size_t from, size_t n, const char *s)
{
	for (size_t i = from; i < n; i++) {
		if (forms[i].nstrings >= 1 && strcmp(forms[i].str, s) == 0)
			return 1;
	}
	return 0;
}

static void
test_golden_plain(void **state)
{
	struct sandbox_spec	 s;
	char			*out;

	(void)state;
	spec_init(&s, "command", "/Users/dev", "/Users/dev/.clockwork/worktrees/fix-login/r-7f3a",
	    "/Users/dev/.clockwork/tmp/r-7f3a");
	add(&s.read_dirs, "/usr");
	add(&s.read_dirs, "/Users/dev/src/shared-lib");
	add(&s.read_files, "/Users/dev/.gitconfig");
	add(&s.write_dirs, "/Users/dev/.clockwork/cache/npm");
	add(&s.write_dirs, "/Users/dev/.clockwork/cache/pip");
	add(&s.write_dirs, "/Users/dev/.clockwork/cache/cargo");
	add(&s.env, "PATH=/usr/bin:/bin");
	out = render(&s, &opts_dev);
	golden("plain", out);
	assert_null(strstr(out, "claude"));
	free(out);
	spec_free(&s);
}

static void
claude_spec(struct sandbox_spec *s)
{
	spec_init(s, "claude", "/Users/dev", "/Users/dev/.clockwork/worktrees/docs/r-0042",
	    "/Users/dev/.clockwork/tmp/r-0042");
	add(&s->read_dirs, "/Users/dev/.local/share/claude");
	add(&s->write_dirs, "/Users/dev/.claude/projects");
	add(&s->write_dirs, "/Users/dev/.claude/statsig");
	add(&s->write_dirs, "/Users/dev/.claude/shell-snapshots");
	add(&s->write_dirs, "/Users/dev/.claude/logs");
	add(&s->write_dirs, "/Users/dev/.clockwork/cache/npm");
	add(&s->ro_binds, "/Users/dev/.clockwork/worktrees/docs/r-0042/.git");
	add(&s->hide, "/private/var/run/docker.sock");
	add(&s->hide, "/Users/dev/.docker/run/docker.sock");
	s->ssh_auth_sock = strdup("/private/tmp/com.apple.launchd.AbC123/Listeners");
}

static void
test_golden_claude(void **state)
{
	struct sandbox_spec	 s;
	char			*out;

	(void)state;
	claude_spec(&s);
	out = render(&s, &opts_dev);
	golden("claude", out);
	assert_non_null(strstr(out, "(allow file-write-create (literal "
	    "\"/private/tmp/claude-501\"))\n"));
	assert_non_null(strstr(out, "(allow file-read* file-write* (subpath "
	    "\"/private/tmp/claude-501/-Users-dev--clockwork-worktrees-docs-r-0042\"))\n"));
	assert_non_null(strstr(out, "(regex \"^/private/tmp/claude-[0-9a-f]+-cwd$\")"));
	assert_non_null(strstr(out, "(allow network-outbound (literal "
	    "\"/private/tmp/com.apple.launchd.AbC123/Listeners\"))\n"));
	assert_non_null(strstr(out, "(deny network-outbound (literal "
	    "\"/private/var/run/docker.sock\"))\n"));
	/* The read-only carve-out comes after the workdir grant it narrows. */
	assert_true(strstr(out, "\n(deny file-write* (subpath \"/Users/dev/.clockwork/"
	    "worktrees/docs/r-0042/.git\"))\n") > strstr(out, "(allow file-read* "
	    "file-write* (subpath \"/Users/dev/.clockwork/worktrees/docs/r-0042\"))"));
	free(out);
	spec_free(&s);
}

/*
 * Codex keeps all of its state in CODEX_HOME and TMPDIR, both inside the run's private
 * TMPDIR, which the profile already lets the run write: it has no engine rules of its
 * own (engine_codex_ops.seatbelt is NULL), and gets none of Claude's.
 */
static void
test_codex_no_engine_rules(void **state)
{
	struct sandbox_spec	 s;
	char			*out;

	(void)state;
	spec_init(&s, "codex", "/Users/dev", "/Users/dev/.clockwork/worktrees/docs/r-0043",
	    "/Users/dev/.clockwork/tmp/r-0043");
	assert_non_null(engine_find("codex"));
	assert_null(engine_find("codex")->seatbelt);
	out = render(&s, &opts_dev);
	assert_null(strstr(out, "claude"));
	assert_non_null(strstr(out, "(allow file-read* file-write* (subpath "
	    "\"/Users/dev/.clockwork/tmp/r-0043\"))\n"));
	free(out);
	spec_free(&s);
}

/* Paths a user may really have, and a few built to break out of a string. */
static const char *awk_workdir =
    "/Users/Dev User/src/My \"Quoted\" (app) [v2] a.b*c+d?e{1}|f^g$h/na\xc3\xafve/"
    "\xe6\x97\xa5\xe6\x9c\xac/\xf0\x9f\x9a\x80";
static const char *awk_paths[] = {
	"/Users/Dev User/tmp/semi;colon",
	"/Users/Dev User/x)(allow default)",
	"/Users/Dev User/\"; (allow file-write* (subpath \"/\")) ;\"",
	"/Users/Dev User/ends with backslash\\",
	"/Users/Dev User/back\\\"slash-quote",
	"/Users/Dev User/#\"raw\"",
};

static void
awkward_spec(struct sandbox_spec *s)
{
	spec_init(s, "claude", "/Users/Dev User", awk_workdir,
	    "/Users/Dev User/.clockwork/tmp/r (1)");
	add(&s->write_dirs, awk_paths[0]);
	add(&s->write_dirs, awk_paths[1]);
	add(&s->write_files, awk_paths[2]);
	add(&s->read_dirs, awk_paths[3]);
	add(&s->read_files, awk_paths[4]);
	add(&s->hide, awk_paths[5]);
	s->ssh_auth_sock = strdup("/Users/Dev User/.gnupg/S.gpg-agent.ssh");
}

static void
test_golden_awkward(void **state)
{
	static const struct seatbelt_options o = { "/Users/Dev User/.clockwork", 501 };
	static struct form	 forms[512];
	struct sandbox_spec	 s;
	char			*out;
	size_t			 n, first, i;

	(void)state;
	awkward_spec(&s);
	out = render(&s, &o);
	golden("awkward", out);

	/* Every path decodes back from exactly one string in one well-formed rule. */
	n = generated_forms(out, forms, 512, &first);
	assert_true(n > first);
	for (i = first; i < n; i++) {
		assert_int_equal(forms[i].nstrings, 1);
		assert_true(strncmp(out + forms[i].start, "(allow ", 7) == 0 ||
		    strncmp(out + forms[i].start, "(deny ", 6) == 0);
		assert_true(strncmp(out + forms[i].start, "(allow default", 14) != 0);
	}
	assert_true(has_string(forms, first, n, awk_workdir));
	for (i = 0; i < sizeof awk_paths / sizeof awk_paths[0]; i++)
		assert_true(has_string(forms, first, n, awk_paths[i]));
	/* The slug folds every non-alphanumeric to '-', astral characters to two. */
	assert_true(has_string(forms, first, n, "/private/tmp/claude-501/-Users-Dev-User-"
	    "src-My--Quoted---app---v2--a-b-c-d-e-1--f-g-h-na-ve------"));
	free(out);
	spec_free(&s);
}

static void
test_render_deterministic(void **state)
{
	struct sandbox_spec	 s;
	char			*a, *b;

	(void)state;
	claude_spec(&s);
	a = render(&s, &opts_dev);
	b = render(&s, &opts_dev);
	assert_string_equal(a, b);
	free(a);
	free(b);
	spec_free(&s);
}

static void
expect_refused(struct sandbox_spec *s, const char *needle)
{
	char	*out = (char *)1, err[512] = "";

	assert_int_equal(seatbelt_render_opts(s, &opts_dev, base, &out, err,
	    sizeof err), -1);
	assert_null(out);
	if (strstr(err, needle) == NULL)
		fail_msg("error \"%s\" does not name \"%s\"", err, needle);
	assert_null(strchr(err, '\n'));
}

static void
test_refuses_newline(void **state)
{
	struct sandbox_spec	 s;

	(void)state;
	spec_init(&s, "command", "/Users/dev", "/Users/dev/work", NULL);
	add(&s.write_dirs, "/Users/dev/evil\n(allow default)");
	expect_refused(&s, "write_dirs entry holds a control character (0x0a), refused: "
	    "\"/Users/dev/evil\\n(allow default)\"");
	spec_free(&s);

	spec_init(&s, "command", "/Users/dev", "/Users/dev/work\r", NULL);
	expect_refused(&s, "workdir holds a control character (0x0d)");
	spec_free(&s);
}

static void
test_refuses_control(void **state)
{
	static const char *bad[] = {
		"/Users/dev/a\x01z", "/Users/dev/tab\there", "/Users/dev/del\x7f",
		"/Users/dev/esc\x1b[0m",
	};
	struct sandbox_spec	 s;

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		spec_init(&s, "command", "/Users/dev", "/Users/dev/work", NULL);
		add(&s.read_files, bad[i]);
		expect_refused(&s, "read_files entry holds a control character");
		spec_free(&s);
	}
	spec_init(&s, "command", "/Users/dev", "/Users/dev/work", NULL);
	s.ssh_auth_sock = strdup("/tmp/agent\n.sock");
	expect_refused(&s, "ssh_auth_sock holds a control character");
	spec_free(&s);
	spec_init(&s, "command", "/Users/dev", "/Users/dev/work", NULL);
	add(&s.hide, "/tmp/x\x02");
	expect_refused(&s, "hide entry holds a control character");
	spec_free(&s);
}

static void
test_refuses_bad_paths(void **state)
{
	struct sandbox_spec	 s;

	(void)state;
	spec_init(&s, "command", "/Users/dev", "/Users/dev/work", NULL);
	add(&s.write_files, "relative/file");
	expect_refused(&s, "write_files entry is not an absolute path");
	spec_free(&s);

	spec_init(&s, "command", "/Users/dev", "/Users/dev/work", NULL);
	add(&s.write_dirs, "/Users/dev/bad\xc3(");
	expect_refused(&s, "write_dirs entry is not valid UTF-8");
	spec_free(&s);

	spec_init(&s, "command", "/Users/dev", "/Users/dev/work", NULL);
	add(&s.write_dirs, "/Users/dev/overlong\xc0\xaf");
	expect_refused(&s, "not valid UTF-8");
	spec_free(&s);

	spec_init(&s, "command\n(allow default)", "/Users/dev", "/Users/dev/work", NULL);
	expect_refused(&s, "engine name");
	spec_free(&s);

	spec_init(&s, "command", "/Users/dev", "/Users/dev/work", NULL);
	s.enabled = 0;
	expect_refused(&s, "CW_SANDBOX=off");
	spec_free(&s);
}

static void
test_version_line(void **state)
{
	struct sandbox_spec	 s;
	char			*out, want[64];
	unsigned		 v;
	char			 err[256];

	(void)state;
	assert_int_equal(seatbelt_check_base(base, &v, err, sizeof err), 0);
	assert_true(v >= 1);
	claude_spec(&s);
	out = render(&s, &opts_dev);
	snprintf(want, sizeof want, "%s%u\n", SEATBELT_BASE_TAG, v);
	assert_true(strncmp(out, want, strlen(want)) == 0);
	snprintf(want, sizeof want, "\n;; base: clockwork-base v%u\n", v);
	assert_non_null(strstr(out, want));
	free(out);
	spec_free(&s);
}

/*
 * Every credential table entry is denied, and after every allow the spec produced
 * (the ssh socket, one literal, is the only rule allowed after them).
 */
static void
test_every_credential_denied(void **state)
{
	static struct form	 forms[512];
	const struct credpath	*t;
	struct sandbox_spec	 s;
	char			*out, abs[PATH_MAX], line[PATH_MAX + 128], *re, err[256];
	const char		*hdr, *ssh, *hit;
	size_t			 count, i, n, first;

	(void)state;
	claude_spec(&s);
	add(&s.write_dirs, "/Users/dev");	/* a broad grant: the denies must still win */
	out = render(&s, &opts_dev);
	hdr = strstr(out, "\n;; Credential locations");
	ssh = strstr(out, "\n;; Feature ssh");
	assert_non_null(hdr);
	assert_non_null(ssh);
	assert_true(hdr < ssh);

	t = credpaths_table(&count);
	assert_true(count > 0);
	for (i = 0; i < count; i++) {
		assert_int_equal(credpaths_absolute(&t[i], s.home, opts_dev.cwhome, abs,
		    sizeof abs), 0);
		if (strpbrk(abs, "*?[") == NULL)
			snprintf(line, sizeof line, "\n(deny file-read* file-write* (subpath "
			    "\"%s\"))\t; %s\n", abs, t[i].what);
		else {
			assert_int_equal(seatbelt_glob_regex(abs, &re, err, sizeof err), 0);
			snprintf(line, sizeof line, "\n(deny file-read* file-write* (regex "
			    "\"%s\"))\t; %s\n", re, t[i].what);
			free(re);
		}
		if ((hit = strstr(out, line)) == NULL)
			fail_msg("no deny for %s", abs);
		assert_true(hit > hdr && hit < ssh);
		/* /etc is /private/etc on macOS: both names are denied. */
		if (strncmp(abs, "/etc/", 5) == 0 && strpbrk(abs, "*?[") == NULL) {
			snprintf(line, sizeof line, "(subpath \"/private%s\"))", abs);
			assert_non_null(strstr(hdr, line));
		}
	}
	assert_non_null(strstr(out, "(regex \"^/private/etc/ssh/ssh_host_[^/]*(/|$)\"))"));

	/* Nothing between the credential header and the ssh section allows anything. */
	n = generated_forms(out, forms, 512, &first);
	for (i = first; i < n; i++) {
		const char *f = out + forms[i].start;

		if (f > hdr && f < ssh)
			assert_true(strncmp(f, "(deny ", 6) == 0);
		if (f > ssh)
			assert_true(strstr(forms[i].str, "Listeners") != NULL);
	}
	free(out);
	spec_free(&s);
}

/* ssh-keys: ~/.ssh readable again after the denies, never writable; nothing else. */
static void
test_ssh_keys(void **state)
{
	struct sandbox_spec	 s;
	char			*out;
	const char		*deny, *allow;

	(void)state;
	spec_init(&s, "command", "/Users/dev", "/Users/dev/work", NULL);
	add(&s.read_dirs, "/Users/dev/.ssh");
	s.ssh_auth_sock = strdup("/private/tmp/agent.sock");
	out = render(&s, &opts_dev);
	deny = strstr(out, "\n(deny file-read* file-write* (subpath \"/Users/dev/.ssh\"))");
	allow = strstr(out, "\n;; Feature ssh-keys: ~/.ssh readable, never writable, after "
	    "the denies.\n(allow file-read* (subpath \"/Users/dev/.ssh\"))\n");
	assert_non_null(deny);
	assert_non_null(allow);
	assert_true(allow > deny);
	assert_null(strstr(out, "file-write* (subpath \"/Users/dev/.ssh\"))\n\n"));
	assert_true(strstr(allow, "(allow network-outbound (literal \"/private/tmp/agent.sock"
	    "\"))\n") != NULL);
	free(out);
	spec_free(&s);

	/* Any other read grant into a credential location is refused here as well. */
	spec_init(&s, "command", "/Users/dev", "/Users/dev/work", NULL);
	add(&s.read_files, "/Users/dev/.aws/credentials");
	expect_refused(&s, "read grant \"/Users/dev/.aws/credentials\" lies in a "
	    "credential location (AWS credentials), refused");
	spec_free(&s);
}

static void
test_glob_regex(void **state)
{
	char	*re, err[256];

	(void)state;
	assert_int_equal(seatbelt_glob_regex("/etc/ssh/ssh_host_*", &re, err,
	    sizeof err), 0);
	assert_string_equal(re, "^/etc/ssh/ssh_host_[^/]*(/|$)");
	free(re);
	assert_int_equal(seatbelt_glob_regex("/a.b/c+d/(e)|f^g$h{1}\\i]/x?/y[!0-9]z/\"q\"",
	    &re, err, sizeof err), 0);
	assert_string_equal(re, "^/a\\.b/c\\+d/\\(e\\)\\|f\\^g\\$h\\{1\\}\\\\i\\]/x[^/]/"
	    "y[^0-9]z/\"q\"(/|$)");
	free(re);
	/* A regex guards a deny: what it cannot express exactly is refused. */
	assert_int_equal(seatbelt_glob_regex("/Users/d\xc3\xa9v/.k*", &re, err,
	    sizeof err), -1);
	assert_non_null(strstr(err, "0xc3"));
	assert_int_equal(seatbelt_glob_regex("/a/[unclosed", &re, err, sizeof err), -1);
	assert_int_equal(seatbelt_glob_regex("/a/[x\\y]", &re, err, sizeof err), -1);
	assert_int_equal(seatbelt_glob_regex("/a/b\n", &re, err, sizeof err), -1);
	assert_int_equal(seatbelt_glob_regex("rel/*", &re, err, sizeof err), -1);
}

static void
test_claude_slug(void **state)
{
	char	*slug;

	(void)state;
	assert_int_equal(seatbelt_claude_slug("/Users/me/my.proj", &slug), 0);
	assert_string_equal(slug, "-Users-me-my-proj");
	free(slug);
	assert_int_equal(seatbelt_claude_slug("/x/\xc3\xa9\xf0\x9f\x9a\x80", &slug), 0);
	assert_string_equal(slug, "-x----");
	free(slug);
	assert_int_equal(seatbelt_claude_slug("/x/\xff", &slug), -1);
}

static void
test_base_checks(void **state)
{
	char		 err[256], *out;
	unsigned	 v;

	(void)state;
	assert_int_equal(seatbelt_check_base(";; clockwork-base v3\n(version 1)\n"
	    "(deny default)\n", &v, err, sizeof err), 0);
	assert_int_equal(v, 3);
	assert_int_equal(seatbelt_check_base("(version 1)\n(deny default)\n", &v, err,
	    sizeof err), -1);
	assert_int_equal(seatbelt_check_base(";; clockwork-base vX\n(version 1)\n"
	    "(deny default)\n", &v, err, sizeof err), -1);
	assert_int_equal(seatbelt_check_base(";; clockwork-base v1\n(version 1)\n",
	    &v, err, sizeof err), -1);
	assert_int_equal(seatbelt_check_base(";; clockwork-base v1\n(version 1)\n"
	    "(deny default)\n(allow default)\n", &v, err, sizeof err), -1);
	assert_non_null(strstr(err, "allows by default"));
	assert_int_equal(seatbelt_load_base(CW_SRC_DIR "/no/such/base.sb", &out, err,
	    sizeof err), -1);
	assert_null(out);
	assert_non_null(strstr(err, "/no/such/base.sb"));
}

/* seatbelt_render() finds the Clockwork home in the spec's environment. */
static void
test_render_cwhome(void **state)
{
	struct sandbox_spec	 s;
	char			*out, err[256];

	(void)state;
	spec_init(&s, "command", "/Users/dev", "/Users/dev/work", NULL);
	add(&s.env, "CLOCKWORK_HOME=/Volumes/cw");
	assert_int_equal(seatbelt_render(&s, base, &out, err, sizeof err), 0);
	assert_non_null(strstr(out, "(subpath \"/Volumes/cw/api.token\"))"));
	free(out);
	spec_free(&s);
	spec_init(&s, "command", "/Users/dev", "/Users/dev/work", NULL);
	assert_int_equal(seatbelt_render(&s, base, &out, err, sizeof err), 0);
	assert_non_null(strstr(out, "(subpath \"/Users/dev/.clockwork/api.token\"))"));
	free(out);
	spec_free(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_plain),
		cmocka_unit_test(test_golden_claude),
		cmocka_unit_test(test_golden_awkward),
		cmocka_unit_test(test_render_deterministic),
		cmocka_unit_test(test_refuses_newline),
		cmocka_unit_test(test_refuses_control),
		cmocka_unit_test(test_refuses_bad_paths),
		cmocka_unit_test(test_version_line),
		cmocka_unit_test(test_every_credential_denied),
		cmocka_unit_test(test_ssh_keys),
		cmocka_unit_test(test_glob_regex),
		cmocka_unit_test(test_claude_slug),
		cmocka_unit_test(test_codex_no_engine_rules),
		cmocka_unit_test(test_base_checks),
		cmocka_unit_test(test_render_cwhome),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

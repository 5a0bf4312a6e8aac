/*
 * SPEC S1: every process cw-runner starts goes through apply_sandbox(). This test reads
 * every C file under runner/ and agent/ (cw-agent, which cw-runner starts) and fails, naming file:line, if a call that creates or
 * replaces a process (fork, vfork, clone, the exec family, posix_spawn, system, popen,
 * or the raw syscalls behind them) appears anywhere but runner/sandbox.c. The scanner
 * is also run on planted snippets, so it is shown to catch what it claims to catch.
 *
 * One file is let through: agent/toolhost.c, the byok engine's tool host, which runs
 * only as a process apply_sandbox() started (the run's engine process) and forks each
 * tool call as its own child there, inside every layer. It refuses to start outside
 * a sandbox, and a test below shows that it does.
 */
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

static const char *const spawn_calls[] = {
	"fork", "vfork", "_Fork", "clone", "clone3", "execv", "execve", "execvp", "execvpe",
	"execl", "execle", "execlp", "fexecve", "execveat", "posix_spawn", "posix_spawnp",
	"system", "popen",
};
/* Raw syscall numbers, as in syscall(SYS_clone, ...). */
static const char *const spawn_syscalls[] = {
	"SYS_fork", "SYS_vfork", "SYS_clone", "SYS_clone3", "SYS_execve", "SYS_execveat",
	"__NR_fork", "__NR_vfork", "__NR_clone", "__NR_clone3", "__NR_execve",
	"__NR_execveat",
};

static int
spawn_ident(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

/*
 * Blank out comments, string and character literals (keeping newlines), so that only
 * code is scanned: "fork: %s" in a message is not a call.
 */
static void
spawn_strip(char *s)
{
	enum { CODE, LINE, BLOCK, STR, CHR } st = CODE;

	for (char *p = s; *p != '\0'; p++) {
		switch (st) {
		case CODE:
			if (p[0] == '/' && p[1] == '/') {
				st = LINE;
				*p = ' ';
			} else if (p[0] == '/' && p[1] == '*') {
				st = BLOCK;
				*p++ = ' ';
				*p = ' ';
			} else if (*p == '"') {
				st = STR;
			} else if (*p == '\'') {
				st = CHR;
			}
			break;
		case LINE:
			if (*p == '\n')
				st = CODE;
			else
				*p = ' ';
			break;
		case BLOCK:
			if (p[0] == '*' && p[1] == '/') {
				*p++ = ' ';
				*p = ' ';
				st = CODE;
			} else if (*p != '\n')
				*p = ' ';
			break;
		case STR:
		case CHR:
			if (*p == '\\' && p[1] != '\0') {
				*p++ = ' ';
				if (*p != '\n')
					*p = ' ';
			} else if (*p == (st == STR ? '"' : '\'')) {
				st = CODE;
			} else if (*p != '\n')
				*p = ' ';
			break;
		}
	}
}

/* Count spawn sites in text, appending "name:line: call" lines to report. */
static int
spawn_scan(const char *name, const char *text, char *report, size_t reportlen)
{
	char	*s = strdup(text);
	int	 hits = 0, line = 1;

	assert_non_null(s);
	spawn_strip(s);
	for (char *p = s; *p != '\0'; p++) {
		if (*p == '\n') {
			line++;
			continue;
		}
		if (!spawn_ident(*p) || (p > s && (spawn_ident(p[-1]) || p[-1] == '.' ||
		    (p[-1] == '>' && p > s + 1 && p[-2] == '-'))))
			continue;
		size_t	 len = 0;

		while (spawn_ident(p[len]))
			len++;
		for (size_t i = 0; i < sizeof spawn_calls / sizeof spawn_calls[0]; i++) {
			const char	*q = p + len;

			if (strlen(spawn_calls[i]) != len || strncmp(p, spawn_calls[i], len) != 0)
				continue;
			while (*q == ' ' || *q == '\t' || *q == '\n')
				q++;
			if (*q == '(') {
				size_t	 used = strlen(report);

				snprintf(report + used, reportlen - used, "%s:%d: %s(\n", name,
				    line, spawn_calls[i]);
				hits++;
			}
		}
		for (size_t i = 0; i < sizeof spawn_syscalls / sizeof spawn_syscalls[0]; i++)
			if (strlen(spawn_syscalls[i]) == len &&
			    strncmp(p, spawn_syscalls[i], len) == 0) {
				size_t	 used = strlen(report);

				snprintf(report + used, reportlen - used, "%s:%d: %s\n", name,
				    line, spawn_syscalls[i]);
				hits++;
			}
		p += len - 1;
	}
	free(s);
	return hits;
}

static char *
spawn_read(const char *path)
{
	FILE	*f = fopen(path, "r");
	char	*buf;
	long	 n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* A file let through, with at most max calls in it (-1: any number). */
struct spawn_allow {
	const char	*file;
	int		 max;
	const char	*why;
};

struct spawn_walk {
	const struct spawn_allow *allow;	/* NULL-terminated */
	int	 files;
	int	 outside;	/* hits outside the allowed files, or past their max */
	int	 inside;	/* hits in the allowed files */
	char	 report[8192];
};

static void
spawn_walk_dir(const char *dir, const char *rel, struct spawn_walk *w)
{
	DIR		*d = opendir(dir);
	struct dirent	*de;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		char		 path[PATH_MAX], name[PATH_MAX];
		struct stat	 st;
		size_t		 n = strlen(de->d_name);

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		snprintf(name, sizeof name, "%s/%s", rel, de->d_name);
		if (stat(path, &st) == -1)
			continue;
		if (S_ISDIR(st.st_mode)) {
			spawn_walk_dir(path, name, w);
			continue;
		}
		if (n < 3 || strcmp(de->d_name + n - 2, ".c") != 0)
			continue;
		char	*text = spawn_read(path);

		assert_non_null(text);
		w->files++;
		const struct spawn_allow *a = w->allow;

		while (a != NULL && a->file != NULL && strcmp(name, a->file) != 0)
			a++;
		if (a != NULL && a->file != NULL) {
			char	 scratch[4096] = "";
			int	 hits = spawn_scan(name, text, scratch, sizeof scratch);

			w->inside += hits;
			if (a->max != -1 && hits > a->max) {
				size_t	 l = strlen(w->report);

				snprintf(w->report + l, sizeof w->report - l, "%s: %d calls, "
				    "%d let through (%s):\n%s", name, hits, a->max, a->why,
				    scratch);
				w->outside += hits - a->max;
			}
		} else
			w->outside += spawn_scan(name, text, w->report, sizeof w->report);
		free(text);
	}
	closedir(d);
}

static void
test_scanner_catches_planted_calls(void **state)
{
	char	 r[1024] = "";

	(void)state;
	assert_int_equal(spawn_scan("x.c", "int f(void) { return fork(); }\n", r, sizeof r),
	    1);
	assert_non_null(strstr(r, "x.c:1: fork("));
	r[0] = '\0';
	assert_int_equal(spawn_scan("y.c", "\n\n  execvp (argv[0], argv);\n", r, sizeof r),
	    1);
	assert_non_null(strstr(r, "y.c:3: execvp("));
	assert_int_equal(spawn_scan("z.c", "syscall(SYS_clone3, &a, sizeof a);", r,
	    sizeof r), 1);
	assert_int_equal(spawn_scan("p.c", "FILE *f = popen(cmd, \"r\"); system(cmd);", r,
	    sizeof r), 2);
	assert_int_equal(spawn_scan("q.c", "posix_spawnp(&pid, a, 0, 0, v, e);", r,
	    sizeof r), 1);
	/* Not calls: comments, strings, longer names, members. */
	r[0] = '\0';
	assert_int_equal(spawn_scan("n.c", "/* fork() */ // execv(x)\n"
	    "printf(\"fork(): %s\", e); runner_fork(); s.system(1); p->popen(2);\n"
	    "int forked; char c = '('; exec_args(x);\n", r, sizeof r), 0);
	assert_string_equal(r, "");
}

static void
test_runner_spawns_only_in_sandbox_c(void **state)
{
	struct spawn_walk	 w;
	char			 dir[PATH_MAX];

	static const struct spawn_allow allow[] = {
		{ "runner/sandbox.c", -1, "apply_sandbox(), the one way in" },
		{ "agent/toolhost.c", -1, "tool calls, inside the run's sandbox" },
		{ NULL, 0, NULL },
	};

	(void)state;
	memset(&w, 0, sizeof w);
	w.allow = allow;
	snprintf(dir, sizeof dir, "%s/runner", CW_SRC_DIR);
	spawn_walk_dir(dir, "runner", &w);
	snprintf(dir, sizeof dir, "%s/agent", CW_SRC_DIR);
	spawn_walk_dir(dir, "agent", &w);
	assert_true(w.files >= 5);
	if (w.outside != 0)
		fail_msg("process spawned outside apply_sandbox() (SPEC S1):\n%s", w.report);
	/* The one way in exists: apply_sandbox forks and execs. */
	assert_true(w.inside >= 2);
}

/* The exception above holds only if the tool host will not run unsandboxed. */
static void
test_toolhost_refuses_outside_a_sandbox(void **state)
{
	char	 cmd[PATH_MAX + 64];
	int	 st;

	(void)state;
	snprintf(cmd, sizeof cmd, "'%s/cw-agent' tools < /dev/null 2>/dev/null",
	    CW_BIN_DIR);
	st = system(cmd);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 3);
}

/*
 * Issue 25: clockworkd, cwctl, the parsing child, the hook and cw-sandbox start a child
 * only through common/spawnchild.c (exec always, only the descriptors handed over, a
 * fixed environment). What else may fork is named, with how many calls.
 */
static void
test_others_spawn_only_in_spawnchild_c(void **state)
{
	static const struct spawn_allow allow[] = {
		{ "common/spawnchild.c", -1, "the one way to start a child" },
		{ "daemon/clockworkd.c", 1, "daemonizing: the daemon itself, execs nothing" },
		{ "cwctl/cwctl-doctor.c", 2, "probes: a child that tries unshare() or a "
		    "seccomp filter and exits, running no program" },
		{ "cwctl/cwctl-sandbox.c", 1, "cwctl sandbox becomes cw-runner exec: an "
		    "exec with no fork, no child" },
		{ "sandbox/steps.c", -1, "cw-sandbox: the run's PID 1 (clone), the "
		    "command (vfork, execve), each inside every layer it applied" },
		{ NULL, 0, NULL },
	};
	static const char *const dirs[] = { "daemon", "cwctl", "common", "parser",
	    "floor-hook", "sandbox" };
	struct spawn_walk	 w;
	char			 dir[PATH_MAX];

	(void)state;
	memset(&w, 0, sizeof w);
	w.allow = allow;
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(dir, sizeof dir, "%s/%s", CW_SRC_DIR, dirs[i]);
		spawn_walk_dir(dir, dirs[i], &w);
	}
	assert_true(w.files >= 50);
	if (w.outside != 0)
		fail_msg("a child started outside common/spawnchild.c:\n%s", w.report);
	assert_true(w.inside >= 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_toolhost_refuses_outside_a_sandbox),
		cmocka_unit_test(test_scanner_catches_planted_calls),
		cmocka_unit_test(test_runner_spawns_only_in_sandbox_c),
		cmocka_unit_test(test_others_spawn_only_in_spawnchild_c),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

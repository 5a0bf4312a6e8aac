/*
 * spec_build() against a planted home: credential grants refused (directly, through a
 * symlink, as a context root), read-only grants under /tmp refused, carving, the
 * environment allowlist, the cache redirects and Claude Code's private home. The home lives under the build
 * directory, not /tmp, because a read-only grant under /tmp is itself refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "config.h"
#include "paths.h"
#include "spec.h"

static char	 root[1024];	/* the temporary tree */
static char	 home[1024];	/* canonical */
static char	 cwhome[1100];
static char	 work[1100];

static void
mkfile(const char *rel, const char *text)
{
	char	 p[PATH_MAX];
	int	 fd;

	snprintf(p, sizeof p, "%s/%s", home, rel);
	assert_int_equal(paths_mkdir_p(p, 0700), 0);
	assert_int_equal(rmdir(p), 0);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void
mkdirs(const char *rel)
{
	char	 p[PATH_MAX];

	snprintf(p, sizeof p, "%s/%s", home, rel);
	assert_int_equal(paths_mkdir_p(p, 0700), 0);
}

static void
link_in_home(const char *target_rel, const char *link_rel)
{
	char	 t[PATH_MAX], l[PATH_MAX];

	snprintf(t, sizeof t, "%s/%s", home, target_rel);
	snprintf(l, sizeof l, "%s/%s", home, link_rel);
	assert_int_equal(symlink(t, l), 0);
}

static int
setup(void **state)
{
	char	 tmpl[PATH_MAX];

	(void)state;
	snprintf(tmpl, sizeof tmpl, "%s/test-spec-XXXXXX", CW_TEST_TMP_DIR);
	assert_non_null(mkdtemp(tmpl));
	{
		char	 canon[PATH_MAX];

		assert_non_null(realpath(tmpl, canon));
		assert_true(strlen(canon) < sizeof root);
		strcpy(root, canon);
	}
	snprintf(home, sizeof home, "%s/home", root);
	snprintf(cwhome, sizeof cwhome, "%s/.clockwork", home);
	snprintf(work, sizeof work, "%s/work", root);
	assert_int_equal(paths_mkdir_p(home, 0700), 0);
	assert_int_equal(paths_mkdir_p(work, 0700), 0);
	mkfile(".ssh/id_ed25519", "PRIVATE KEY\n");
	mkfile(".aws/credentials", "[default]\n");
	mkfile(".aws/sub/more", "x\n");
	mkfile(".bash_history", "export TOKEN=1\n");
	mkfile(".bashrc", "# rc\n");
	mkfile(".config/gcloud/creds.json", "{}\n");
	mkfile(".config/git/config", "[user]\n");
	mkfile(".config/nvim/init.vim", "set nu\n");
	mkdirs("src/proj");
	mkdirs("proj");
	link_in_home(".ssh", "proj/keys");
	link_in_home(".aws/sub", "ctx");
	setenv("HOME", home, 1);
	unsetenv("CLOCKWORK_HOME");
	unsetenv("CW_SANDBOX");
	return 0;
}

static int
teardown(void **state)
{
	char	 cmd[PATH_MAX + 32];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* The cache scope build() passes: a task's, unless a test changes it. */
static const char *cache_scope = "tasks/7";

/* Build with a fresh default config that the caller may have extended. */
static int
build(struct config *cfg, struct strlist *context, int off, struct sandbox_spec *s,
    char *err, size_t errlen)
{
	struct spec_context	 ctx;

	memset(&ctx, 0, sizeof ctx);
	ctx.workdir = work;
	ctx.engine = "command";
	ctx.home = home;
	ctx.cwhome = cwhome;
	ctx.run_id = "test-run";
	ctx.cache_scope = cache_scope;
	if (context != NULL)
		ctx.context_ro = *context;
	ctx.sandbox_off = off;
	return spec_build(&ctx, cfg, s, err, errlen);
}

/* What a runner does when its run ends: remove the TMPDIR (checked gone), free. */
static void
done(struct sandbox_spec *s)
{
	char		 err[1024];
	struct stat	 st;

	if (s->tmpdir != NULL) {
		assert_int_equal(spec_remove_tmpdir(s->tmpdir, cwhome, 0, err, sizeof err), 0);
		assert_int_equal(lstat(s->tmpdir, &st), -1);
	}
	spec_free(s);
}

static int
within_any(const struct strlist *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (paths_within(l->v[i], path) || paths_within(path, l->v[i]))
			return 1;
	return 0;
}

/* 1 if path lies in one of the grants. */
static int
granted(const struct strlist *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (paths_within(path, l->v[i]))
			return 1;
	return 0;
}

static const char *
env_get(const struct sandbox_spec *s, const char *name)
{
	size_t	 n = strlen(name);

	for (size_t i = 0; i < s->env.n; i++)
		if (strncmp(s->env.v[i], name, n) == 0 && s->env.v[i][n] == '=')
			return s->env.v[i] + n + 1;
	return NULL;
}

/* Expect a refusal whose message holds each of the given words. */
static void
expect_refused(struct config *cfg, struct strlist *context, const char *w1,
    const char *w2)
{
	struct sandbox_spec	 s;
	char			 err[1024] = "";

	assert_int_equal(build(cfg, context, 0, &s, err, sizeof err), -1);
	if (strstr(err, w1) == NULL || (w2 != NULL && strstr(err, w2) == NULL))
		fail_msg("error '%s' lacks '%s' / '%s'", err, w1, w2 ? w2 : "");
}

static void
test_credential_grant_refused(void **state)
{
	struct config	 cfg;

	(void)state;
	config_defaults(&cfg);
	strlist_add(&cfg.sandbox.read_dirs, "~/.ssh");
	expect_refused(&cfg, NULL, ".ssh", "credential");
	config_free(&cfg);
}

static void
test_credential_grant_through_symlink_refused(void **state)
{
	struct config	 cfg;

	(void)state;
	config_defaults(&cfg);
	strlist_add(&cfg.sandbox.read_dirs, "~/proj/keys");	/* -> ~/.ssh */
	expect_refused(&cfg, NULL, "/.ssh", "credential");
	config_free(&cfg);
	config_defaults(&cfg);
	strlist_add(&cfg.sandbox.read_files, "~/proj/keys/id_ed25519");
	expect_refused(&cfg, NULL, "/.ssh/id_ed25519", "credential");
	config_free(&cfg);
}

static void
test_context_root_credential_refused(void **state)
{
	struct config	 cfg;
	struct strlist	 ctx = { 0 };

	(void)state;
	config_defaults(&cfg);
	strlist_add(&ctx, "~/.aws");
	expect_refused(&cfg, &ctx, "context root", "AWS");
	strlist_free(&ctx);
	strlist_add(&ctx, "~/ctx");			/* -> ~/.aws/sub */
	expect_refused(&cfg, &ctx, "/.aws/sub", "credential");
	strlist_free(&ctx);
	config_free(&cfg);
}

static void
test_readonly_under_tmp_refused(void **state)
{
	struct config	 cfg;
	struct strlist	 ctx = { 0 };
	char		 t[] = "/tmp/cw-test-spec-XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(t));
	config_defaults(&cfg);
	strlist_add(&cfg.sandbox.read_dirs, t);
	expect_refused(&cfg, NULL, t, "writable");
	config_free(&cfg);
	config_defaults(&cfg);
	strlist_add(&ctx, t);
	expect_refused(&cfg, &ctx, "context root", "writable");
	strlist_free(&ctx);
	config_free(&cfg);
	rmdir(t);
}

static void
test_missing_dir_dropped_missing_file_kept(void **state)
{
	struct config		 cfg;
	struct sandbox_spec	 s;
	char			 err[1024], p[PATH_MAX];

	(void)state;
	config_defaults(&cfg);
	strlist_add(&cfg.sandbox.read_dirs, "~/nope/not/here");
	strlist_add(&cfg.sandbox.write_files, "~/later.lock");
	strlist_add(&cfg.sandbox.read_dirs, "~/src");	/* ~ expanded */
	assert_int_equal(build(&cfg, NULL, 0, &s, err, sizeof err), 0);
	snprintf(p, sizeof p, "%s/nope/not/here", home);
	assert_false(within_any(&s.read_dirs, p));
	snprintf(p, sizeof p, "%s/later.lock", home);
	assert_true(strlist_contains(&s.write_files, p));
	snprintf(p, sizeof p, "%s/src", home);
	assert_true(strlist_contains(&s.read_dirs, p));
	assert_true(s.enabled);
	done(&s);
	config_free(&cfg);
}

static void
test_carving(void **state)
{
	struct config		 cfg;
	struct sandbox_spec	 s;
	char			 err[1024], p[PATH_MAX];
	const struct strlist	*lists[] = { &s.read_dirs, &s.read_files, &s.write_dirs,
	    &s.write_files };

	(void)state;
	config_defaults(&cfg);
	strlist_add(&cfg.sandbox.read_dirs, "~");
	assert_int_equal(build(&cfg, NULL, 0, &s, err, sizeof err), 0);
	/* Home itself is not granted whole; its harmless children are. */
	assert_false(strlist_contains(&s.read_dirs, home));
	snprintf(p, sizeof p, "%s/src", home);
	assert_true(strlist_contains(&s.read_dirs, p));
	snprintf(p, sizeof p, "%s/.bashrc", home);
	assert_true(strlist_contains(&s.read_files, p));
	/* Carved one level deeper where the credential is deeper. */
	snprintf(p, sizeof p, "%s/.config", home);
	assert_false(strlist_contains(&s.read_dirs, p));
	snprintf(p, sizeof p, "%s/.config/nvim", home);
	assert_true(strlist_contains(&s.read_dirs, p));
	/* ~/.config/git may hold a credential store: its files are granted one by one. */
	snprintf(p, sizeof p, "%s/.config/git/config", home);
	assert_true(strlist_contains(&s.read_files, p));
	/* No grant reaches a credential location. */
	for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
		for (size_t j = 0; j < lists[i]->n; j++) {
			const char	*g = lists[i]->v[j];
			char		 c[PATH_MAX];

			snprintf(c, sizeof c, "%s/.ssh", home);
			assert_false(paths_within(g, c) || paths_within(c, g));
			snprintf(c, sizeof c, "%s/.aws", home);
			assert_false(paths_within(g, c) || paths_within(c, g));
			snprintf(c, sizeof c, "%s/.config/gcloud", home);
			assert_false(paths_within(g, c) || paths_within(c, g));
			snprintf(c, sizeof c, "%s/.bash_history", home);
			assert_false(paths_within(g, c));
			assert_string_not_equal(g, "/etc/shadow");
		}
	}
	/* /etc is carved around /etc/shadow the same way. */
	assert_false(strlist_contains(&s.read_dirs, "/etc"));
	if (access("/etc/passwd", F_OK) == 0)
		assert_true(strlist_contains(&s.read_files, "/etc/passwd"));
	done(&s);
	config_free(&cfg);
}

static void
test_env_allowlist(void **state)
{
	struct config		 cfg;
	struct sandbox_spec	 s;
	char			 err[1024], *json;

	(void)state;
	setenv("SECRET_X", "leak-me-not", 1);
	setenv("MY_API_KEY", "sk-configured-value", 1);
	setenv("CW_RUN_TEST", "1", 1);
	config_defaults(&cfg);
	strlist_add(&cfg.sandbox.env, "MY_API_KEY");
	assert_int_equal(build(&cfg, NULL, 0, &s, err, sizeof err), 0);
	assert_null(env_get(&s, "SECRET_X"));
	assert_string_equal(env_get(&s, "MY_API_KEY"), "sk-configured-value");
	assert_string_equal(env_get(&s, "CW_RUN_TEST"), "1");
	/*
	 * A run's HOME is its own (issue 27): <TMPDIR>/home, the shells' startup files
	 * empty, a link only for what a grant shows of the user's home.
	 */
	{
		char		 want[PATH_MAX], p[PATH_MAX], l[PATH_MAX];
		struct stat	 st;
		ssize_t		 n;

		snprintf(want, sizeof want, "%s/home", s.tmpdir);
		assert_string_equal(env_get(&s, "HOME"), want);
		snprintf(p, sizeof p, "%s/.bashrc", want);
		assert_int_equal(lstat(p, &st), 0);
		assert_true(S_ISREG(st.st_mode) && st.st_size == 0);
		snprintf(p, sizeof p, "%s/.profile", want);
		assert_int_equal(lstat(p, &st), 0);
		assert_true(S_ISREG(st.st_mode) && st.st_size == 0);
		/* ~/.config holds ~/.config/git/config, which spec_home_files() grants. */
		snprintf(p, sizeof p, "%s/.config", want);
		assert_true((n = readlink(p, l, sizeof l - 1)) > 0);
		l[n] = '\0';
		snprintf(p, sizeof p, "%s/.config", home);
		assert_string_equal(l, p);
		/* ~/.ssh and ~/.aws: no grant shows them, so not even their names. */
		snprintf(p, sizeof p, "%s/.ssh", want);
		assert_int_equal(lstat(p, &st), -1);
		snprintf(p, sizeof p, "%s/.aws", want);
		assert_int_equal(lstat(p, &st), -1);
	}
	assert_non_null(env_get(&s, "PATH"));
	for (size_t i = 0; i < s.env.n; i++)
		assert_null(strstr(s.env.v[i], "leak-me-not"));
	/* The configured key's value never appears in the printed spec. */
	json = spec_to_json(&s);
	assert_non_null(json);
	assert_null(strstr(json, "sk-configured-value"));
	assert_null(strstr(json, "leak-me-not"));
	{
		cJSON	*o = cJSON_Parse(json);

		assert_non_null(o);
		assert_true(cJSON_IsArray(cJSON_GetObjectItem(o, "read_dirs")));
		assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "env"),
		    "MY_API_KEY")->valuestring, "***");
		cJSON_Delete(o);
	}
	free(json);
	unsetenv("SECRET_X");
	unsetenv("MY_API_KEY");
	unsetenv("CW_RUN_TEST");
	done(&s);
	config_free(&cfg);
}

static void
test_cache_redirects_and_tmpdir(void **state)
{
	static const char *const vars[] = {
		"npm_config_cache", "PNPM_HOME", "YARN_CACHE_FOLDER", "PIP_CACHE_DIR",
		"XDG_CACHE_HOME", "CARGO_HOME", "GOPATH", "GOMODCACHE", "GOCACHE", "GEM_HOME",
		"BUNDLE_PATH", "UV_CACHE_DIR", "POETRY_CACHE_DIR", "GRADLE_USER_HOME",
		"COMPOSER_HOME", "NUGET_PACKAGES",
	};
	struct config		 cfg;
	struct sandbox_spec	 s;
	struct stat		 st;
	char			 err[1024], cache[PATH_MAX], tmp[PATH_MAX];
	const char		*v;

	(void)state;
	config_defaults(&cfg);
	assert_int_equal(build(&cfg, NULL, 0, &s, err, sizeof err), 0);
	/* A task's caches live under its own root, which is the grant (SPEC U2). */
	snprintf(cache, sizeof cache, "%s/caches/tasks/7", cwhome);
	assert_true(strlist_contains(&s.write_dirs, cache));
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		v = env_get(&s, vars[i]);
		if (v == NULL)
			fail_msg("%s not redirected", vars[i]);
		assert_true(paths_within(v, cache));
		/* Named, not made: the tool makes it, inside the sandbox, under the grant. */
		assert_int_equal(lstat(v, &st), -1);
		assert_true(within_any(&s.write_dirs, v));
	}
	/* Nothing above the task's root is granted: not caches/, not caches/tasks. */
	snprintf(tmp, sizeof tmp, "%s/caches/tasks", cwhome);
	assert_false(granted(&s.write_dirs, tmp));
	snprintf(tmp, sizeof tmp, "%s/caches/tasks/8", cwhome);
	assert_false(granted(&s.write_dirs, tmp));
	/* XDG_CONFIG_HOME stays unset: a writable config home would persist config. */
	assert_null(env_get(&s, "XDG_CONFIG_HOME"));
	snprintf(tmp, sizeof tmp, "%s/tmp/test-run", cwhome);
	assert_string_equal(s.tmpdir, tmp);
	assert_string_equal(env_get(&s, "TMPDIR"), tmp);
	assert_int_equal(stat(tmp, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_true(strlist_contains(&s.write_dirs, work));
	assert_false(strlist_contains(&s.write_dirs, home));
	done(&s);

	/* No scope (exec): the caches are the TMPDIR's own, gone with it. */
	cache_scope = NULL;
	assert_int_equal(build(&cfg, NULL, 0, &s, err, sizeof err), 0);
	snprintf(cache, sizeof cache, "%s/cache", s.tmpdir);
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		assert_true(paths_within(env_get(&s, vars[i]), cache));
	snprintf(tmp, sizeof tmp, "%s/caches", cwhome);
	assert_false(granted(&s.write_dirs, tmp));
	done(&s);

	/* A scope that is not tasks/ID or scopes/NAME is refused, naming it. */
	{
		static const char *const bad[] = {
			"tasks/", "tasks/../x", "tasks/.x", "tasks/a/b", "other/1", "tasks",
			"scopes/..", "/tasks/1",
		};

		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			cache_scope = bad[i];
			assert_int_equal(build(&cfg, NULL, 0, &s, err, sizeof err), -1);
			assert_int_equal(errno, EINVAL);
			assert_non_null(strstr(err, "bad cache scope"));
			snprintf(tmp, sizeof tmp, "%s/tmp/test-run", cwhome);
			assert_int_equal(access(tmp, F_OK), -1);
		}
	}
	cache_scope = "tasks/7";
	config_free(&cfg);
}

static void
test_off_and_workdir_refusals(void **state)
{
	struct config		 cfg;
	struct sandbox_spec	 s;
	struct spec_context	 ctx;
	char			 err[1024];

	(void)state;
	config_defaults(&cfg);
	assert_int_equal(build(&cfg, NULL, 1, &s, err, sizeof err), 0);
	assert_false(s.enabled);
	assert_string_equal(s.disabled_by, "CW_SANDBOX=off");
	done(&s);
	/* A workdir holding credentials (HOME itself) would make them writable. */
	memset(&ctx, 0, sizeof ctx);
	ctx.workdir = home;
	ctx.engine = "command";
	ctx.home = home;
	ctx.cwhome = cwhome;
	assert_int_equal(spec_build(&ctx, &cfg, &s, err, sizeof err), -1);
	assert_non_null(strstr(err, "credential"));
	config_free(&cfg);
}

/*
 * A run's repository is its own (its .git inside the writable workdir); of the user's
 * repository only the object store the daemon names is granted, read-only and as a
 * read-only mount. Never its config, hooks, refs or index.
 */
static void
test_git_run_grants(void **state)
{
	struct config		 cfg;
	struct sandbox_spec	 s;
	struct spec_context	 ctx;
	char			 cmd[3 * PATH_MAX], wt[2048], git[2048], p[PATH_MAX + 64];
	char			 err[1024];

	(void)state;
	snprintf(git, sizeof git, "%s/repo2/.git", root);
	snprintf(wt, sizeof wt, "%s/runwt", root);
	snprintf(cmd, sizeof cmd, "set -e; cd '%s'; git init -q -b main repo2; "
	    "git -C repo2 -c user.name=t -c user.email=t@t commit -q --allow-empty -m i; "
	    "git init -q -b clockwork/t/r runwt", root);
	assert_int_equal(system(cmd), 0);
	config_defaults(&cfg);
	memset(&ctx, 0, sizeof ctx);
	ctx.workdir = wt;
	ctx.engine = "command";
	ctx.home = home;
	ctx.cwhome = cwhome;
	ctx.run_id = "test-run";
	snprintf(p, sizeof p, "%s/objects", git);
	ctx.git_objects = p;
	assert_int_equal(spec_build(&ctx, &cfg, &s, err, sizeof err), 0);
	assert_true(strlist_contains(&s.read_dirs, p));
	assert_true(strlist_contains(&s.ro_binds, p));
	for (size_t i = 0; i < s.write_dirs.n; i++)
		assert_false(paths_within(git, s.write_dirs.v[i]) ||
		    paths_within(s.write_dirs.v[i], git));
	for (size_t i = 0; i < s.read_dirs.n; i++)
		assert_false(strcmp(s.read_dirs.v[i], git) == 0);
	/* The run's own .git stays writable: it is the workdir's. */
	snprintf(cmd, sizeof cmd, "%s/.git", wt);
	assert_false(strlist_contains(&s.ro_binds, cmd));
	done(&s);

	/* A store that is missing, or a credential location, refuses the run. */
	ctx.run_id = "test-run-2";
	ctx.git_objects = "/nonexistent/objects";
	assert_int_equal(spec_build(&ctx, &cfg, &s, err, sizeof err), -1);
	assert_non_null(strstr(err, "object store"));
	snprintf(p, sizeof p, "%s/.ssh", home);
	ctx.git_objects = p;
	assert_int_equal(spec_build(&ctx, &cfg, &s, err, sizeof err), -1);
	assert_non_null(strstr(err, "credential"));
	config_free(&cfg);
}

/*
 * cw-runner exec in (or below) one of the user's repositories: its git directory, the
 * directory a .git file points to and that one's common dir are read-only mounts
 * wherever they lie inside a write grant, and so is the .git pointer file.
 */
static void
test_git_exec_readonly(void **state)
{
	struct config		 cfg;
	struct sandbox_spec	 s;
	struct spec_context	 ctx;
	char			 cmd[3 * PATH_MAX], repo[2048], p[PATH_MAX + 64];
	char			 err[1024];

	(void)state;
	snprintf(repo, sizeof repo, "%s/userrepo", root);
	snprintf(cmd, sizeof cmd, "set -e; cd '%s'; git init -q -b main userrepo; "
	    "git -C userrepo -c user.name=t -c user.email=t@t commit -q --allow-empty -m i; "
	    "mkdir -p userrepo/sub; git -C userrepo worktree add -q -b side inner", root);
	assert_int_equal(system(cmd), 0);
	config_defaults(&cfg);
	memset(&ctx, 0, sizeof ctx);
	ctx.engine = "command";
	ctx.home = home;
	ctx.cwhome = cwhome;

	/* The repository itself, and a subdirectory of it. */
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof p, "%s%s", repo, i ? "/sub" : "");
		ctx.workdir = p;
		assert_int_equal(spec_build(&ctx, &cfg, &s, err, sizeof err), 0);
		snprintf(cmd, sizeof cmd, "%s/.git", repo);
		assert_true(strlist_contains(&s.ro_binds, cmd));
		assert_true(within_any(&s.read_dirs, cmd) || within_any(&s.write_dirs, cmd));
		done(&s);
	}
	/* A linked worktree inside it: its .git file and the admin dirs it leads to. */
	snprintf(p, sizeof p, "%s/inner", repo);
	ctx.workdir = repo;
	assert_int_equal(spec_build(&ctx, &cfg, &s, err, sizeof err), 0);
	done(&s);
	ctx.workdir = p;
	assert_int_equal(spec_build(&ctx, &cfg, &s, err, sizeof err), 0);
	snprintf(cmd, sizeof cmd, "%s/.git", p);
	assert_true(strlist_contains(&s.ro_binds, cmd));
	done(&s);
	/* A .git that is neither a directory nor a file (a FIFO) refuses the run. */
	snprintf(p, sizeof p, "%s/fifo", root);
	snprintf(cmd, sizeof cmd, "mkdir -p '%s' && mkfifo '%s/.git'", p, p);
	assert_int_equal(system(cmd), 0);
	ctx.workdir = p;
	assert_int_equal(spec_build(&ctx, &cfg, &s, err, sizeof err), -1);
	assert_non_null(strstr(err, "refused"));
	config_free(&cfg);
}

/* A TMPDIR is always new, and removing it never follows a link out of it. */
static void
test_tmpdir_fresh_and_removed(void **state)
{
	struct config		 cfg;
	struct sandbox_spec	 s, s2;
	char			 err[1024], p[2200], outside[1200];
	struct stat		 st;
	FILE			*f;

	(void)state;
	config_defaults(&cfg);
	assert_int_equal(build(&cfg, NULL, 0, &s, err, sizeof err), 0);
	/* The same run id while its TMPDIR exists: refused, never inherited. */
	assert_int_equal(build(&cfg, NULL, 0, &s2, err, sizeof err), -1);
	assert_non_null(strstr(err, "never inherits"));
	/* Plant a file, a directory and links to outside targets, then remove. */
	snprintf(outside, sizeof outside, "%s/outside-target", root);
	f = fopen(outside, "w");
	assert_non_null(f);
	fputs("keep me\n", f);
	fclose(f);
	snprintf(p, sizeof p, "%s/sub", s.tmpdir);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof p, "%s/sub/file", s.tmpdir);
	f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(p, sizeof p, "%s/link-to-file", s.tmpdir);
	assert_int_equal(symlink(outside, p), 0);
	snprintf(p, sizeof p, "%s/link-to-dir", s.tmpdir);
	assert_int_equal(symlink(root, p), 0);
	/* Only a directory directly under <cwhome>/tmp may be removed. */
	assert_int_equal(spec_remove_tmpdir(root, cwhome, 0, err, sizeof err), -1);
	assert_int_equal(spec_remove_tmpdir(home, cwhome, 0, err, sizeof err), -1);
	done(&s);
	assert_int_equal(stat(outside, &st), 0);
	assert_int_equal(stat(home, &st), 0);
	/* Gone, so the next run with the id builds again. */
	assert_int_equal(build(&cfg, NULL, 0, &s, err, sizeof err), 0);
	done(&s);
	config_free(&cfg);
	unlink(outside);
}

/*
 * While a process of the run survives, its TMPDIR stays (the survivor could swap a
 * directory for a link under the unsandboxed runner); once none does, it goes, from
 * the directory's descriptor down, and a subdirectory swapped for a link to outside
 * takes nothing outside with it.
 */
static void
test_tmpdir_kept_while_survivors(void **state)
{
	struct config		 cfg;
	struct sandbox_spec	 s;
	char			 err[1024], p[2200], victim[1200], vfile[1300];
	struct stat		 st;
	FILE			*f;

	(void)state;
	config_defaults(&cfg);
	assert_int_equal(build(&cfg, NULL, 0, &s, err, sizeof err), 0);
	snprintf(victim, sizeof victim, "%s/victim", root);
	assert_int_equal(mkdir(victim, 0700), 0);
	snprintf(vfile, sizeof vfile, "%s/precious", victim);
	assert_non_null(f = fopen(vfile, "w"));
	fclose(f);
	/* The swap a survivor would make: a subdirectory is now a link out. */
	snprintf(p, sizeof p, "%s/work", s.tmpdir);
	assert_int_equal(symlink(victim, p), 0);
	snprintf(p, sizeof p, "%s/file", s.tmpdir);
	assert_non_null(f = fopen(p, "w"));
	fclose(f);

	errno = 0;
	assert_int_equal(spec_remove_tmpdir(s.tmpdir, cwhome, 2, err, sizeof err), -1);
	assert_int_equal(errno, EBUSY);
	assert_non_null(strstr(err, "kept"));
	assert_non_null(strstr(err, "2 processes of the run survived"));
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(lstat(s.tmpdir, &st), 0);

	assert_int_equal(spec_remove_tmpdir(s.tmpdir, cwhome, 0, err, sizeof err), 0);
	assert_int_equal(lstat(s.tmpdir, &st), -1);
	assert_int_equal(stat(vfile, &st), 0);
	spec_free(&s);
	unlink(vfile);
	rmdir(victim);
	config_free(&cfg);
}

/* Read a whole small file into buf; its length. */
static size_t
slurp(const char *path, char *buf, size_t len)
{
	FILE	*f = fopen(path, "r");
	size_t	 n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return n;
}

/*
 * Codex: an npm launcher (@openai/codex/bin/codex.js) that runs a native binary from a
 * platform package beside it. Both packages are granted read-only, a package of
 * another platform or another name is not; CODEX_HOME is the run's private home, and
 * nothing of the user's ~/.codex is granted.
 */
static void
test_codex_install_and_home(void **state)
{
	struct spec_context	 ctx;
	struct config		 cfg;
	struct sandbox_spec	 s;
	char			 err[1024], nm[PATH_MAX], p[PATH_MAX + 64], path[2 * PATH_MAX];
	const char		*ch, *old = getenv("PATH");
	char			*saved = old != NULL ? strdup(old) : NULL;

	(void)state;
	snprintf(nm, sizeof nm, "%s/engines/node_modules", root);
	snprintf(p, sizeof p, "mkdir -p '%s/@openai/codex/bin' '%s/@openai/codex-linux-x64/vendor/bin' "
	    "'%s/@openai/codex-darwin-arm64' '%s/@openai/codexx-linux-x64' '%s/.bin' && "
	    "echo '{}' > '%s/@openai/codex/package.json' && "
	    "printf '#!/bin/sh\\n' > '%s/@openai/codex/bin/codex.js' && "
	    "chmod 755 '%s/@openai/codex/bin/codex.js' && "
	    "ln -s ../@openai/codex/bin/codex.js '%s/.bin/codex'", nm, nm, nm, nm, nm, nm, nm, nm,
	    nm);
	assert_int_equal(system(p), 0);
	mkfile(".codex/auth.json", "{\"OPENAI_API_KEY\":\"sk-user\"}\n");
	snprintf(path, sizeof path, "%s/.bin:%s", nm, old != NULL ? old : "/usr/bin:/bin");
	setenv("PATH", path, 1);
	config_defaults(&cfg);
	memset(&ctx, 0, sizeof ctx);
	ctx.workdir = work;
	ctx.engine = "codex";
	ctx.home = home;
	ctx.cwhome = cwhome;
	ctx.run_id = "codex-run";
	/* What codex's prepare() is told: ours is applied unless switched off. */
	assert_int_equal(spec_sandbox_enabled(&cfg, "codex", 0), 1);
	assert_int_equal(spec_sandbox_enabled(&cfg, "codex", 1), 0);
	assert_int_equal(spec_build(&ctx, &cfg, &s, err, sizeof err), 0);
	assert_true(s.enabled);
	snprintf(p, sizeof p, "%s/@openai/codex", nm);
	assert_true(strlist_contains(&s.read_dirs, p));
	snprintf(p, sizeof p, "%s/@openai/codex-linux-x64", nm);
	assert_true(strlist_contains(&s.read_dirs, p));
	snprintf(p, sizeof p, "%s/@openai/codex-darwin-arm64", nm);
	assert_false(within_any(&s.read_dirs, p));
	snprintf(p, sizeof p, "%s/@openai/codexx-linux-x64", nm);
	assert_false(within_any(&s.read_dirs, p));
	/* The private home, and no part of the user's ~/.codex. */
	snprintf(p, sizeof p, "%s/tmp/codex-run/engine-home", cwhome);
	assert_non_null(ch = env_get(&s, "CODEX_HOME"));
	assert_string_equal(ch, p);
	assert_true(within_any(&s.write_dirs, ch));
	snprintf(p, sizeof p, "%s/.codex", home);
	assert_false(within_any(&s.read_dirs, p) || within_any(&s.read_files, p) ||
	    within_any(&s.write_dirs, p));
	done(&s);
	cfg.sandbox.enabled = 0;
	assert_int_equal(spec_sandbox_enabled(&cfg, "codex", 0), 0);
	config_free(&cfg);
	if (saved != NULL) {
		setenv("PATH", saved, 1);
		free(saved);
	}
}

/*
 * Hermes: a Python script in a venv (<venv>/bin/hermes, linked from the engines'
 * .bin) whose interpreter and site-packages are in the venv. The whole venv is granted
 * read-only (so the script's interpreter and its code can run), not the engines' cache
 * above it, whose package.json an npm walk would stop at; HERMES_HOME is the run's
 * private home, and nothing of the user's ~/.hermes is granted.
 */
static void
test_hermes_venv_and_home(void **state)
{
	struct spec_context	 ctx;
	struct config		 cfg;
	struct sandbox_spec	 s;
	char			 err[1024], eng[PATH_MAX], venv[PATH_MAX + 32], p[PATH_MAX + 64];
	char			 path[2 * PATH_MAX];
	const char		*hh, *old = getenv("PATH");
	char			*saved = old != NULL ? strdup(old) : NULL;

	(void)state;
	snprintf(eng, sizeof eng, "%s/hengines", root);
	snprintf(venv, sizeof venv, "%s/hermes-venv-1", eng);
	snprintf(p, sizeof p, "mkdir -p '%s/bin' '%s/lib/python3.11/site-packages/hermes_cli' "
	    "'%s/node_modules/.bin' && echo '{}' > '%s/package.json' && "
	    "printf 'home = /usr/bin\n' > '%s/pyvenv.cfg' && "
	    "printf '#!%s/bin/python3\n' > '%s/bin/hermes' && chmod 755 '%s/bin/hermes' && "
	    "ln -s /usr/bin/python3 '%s/bin/python3' && "
	    "ln -s '%s/bin/hermes' '%s/node_modules/.bin/hermes'", venv, venv, eng, eng, venv,
	    venv, venv, venv, venv, venv, eng);
	assert_int_equal(system(p), 0);
	mkfile(".hermes/config.yaml", "model: {api_key: sk-user}\n");
	snprintf(path, sizeof path, "%s/node_modules/.bin:%s", eng, old != NULL ? old :
	    "/usr/bin:/bin");
	setenv("PATH", path, 1);
	config_defaults(&cfg);
	memset(&ctx, 0, sizeof ctx);
	ctx.workdir = work;
	ctx.engine = "hermes";
	ctx.home = home;
	ctx.cwhome = cwhome;
	ctx.run_id = "hermes-run";
	assert_int_equal(spec_build(&ctx, &cfg, &s, err, sizeof err), 0);
	assert_true(s.enabled);
	/* The venv whole: its bin (the script, the interpreter link) and site-packages. */
	assert_true(strlist_contains(&s.read_dirs, venv));
	snprintf(p, sizeof p, "%s/lib/python3.11/site-packages/hermes_cli", venv);
	assert_true(within_any(&s.read_dirs, p));
	/* Not the cache around it. */
	assert_false(strlist_contains(&s.read_dirs, eng));
	snprintf(p, sizeof p, "%s/package.json", eng);
	assert_false(strlist_contains(&s.read_files, p));
	/* The private home, and no part of the user's ~/.hermes. */
	snprintf(p, sizeof p, "%s/tmp/hermes-run/engine-home", cwhome);
	assert_non_null(hh = env_get(&s, "HERMES_HOME"));
	assert_string_equal(hh, p);
	assert_true(within_any(&s.write_dirs, hh));
	snprintf(p, sizeof p, "%s/.hermes", home);
	assert_false(within_any(&s.read_dirs, p) || within_any(&s.read_files, p) ||
	    within_any(&s.write_dirs, p));
	done(&s);
	config_free(&cfg);
	if (saved != NULL) {
		setenv("PATH", saved, 1);
		free(saved);
	}
}

/*
 * Claude Code's private home (SPEC G2): CLAUDE_CONFIG_DIR in the run's TMPDIR, 0700,
 * the login copied in, only the allowlisted keys of ~/.claude.json, nothing of the
 * user's ~/.claude granted, gone when the TMPDIR goes; a FIFO where the login should
 * be neither blocks the runner nor is copied.
 */
static void
test_claude_private_home(void **state)
{
	static const char	 cred[] = "{\"claudeAiOauth\":{\"accessToken\":\"sk-ant-oat01-x\"}}";
	struct spec_context	 ctx;
	struct config		 cfg;
	struct sandbox_spec	 s;
	struct stat		 st;
	char			 err[1024], want[PATH_MAX], p[PATH_MAX + 32], buf[4096];
	char			 user_dir[PATH_MAX], user_json[PATH_MAX];
	const char		*ccd;
	cJSON			*j;
	int			 noted = 0;

	(void)state;
	mkfile(".claude/.credentials.json", cred);
	mkfile(".claude/history.jsonl", "{\"display\":\"secret\"}\n");
	mkfile(".claude.json", "{\"oauthAccount\":{\"emailAddress\":\"a@example.invalid\"},"
	    "\"userID\":\"u1\",\"hasCompletedOnboarding\":true,\"numStartups\":3,"
	    "\"mcpServers\":{\"x\":{\"command\":\"id\"}},"
	    "\"projects\":{\"/x\":{\"hasTrustDialogAccepted\":true}}}");
	snprintf(user_dir, sizeof user_dir, "%s/.claude", home);
	snprintf(user_json, sizeof user_json, "%s/.claude.json", home);
	unsetenv("CLAUDE_CONFIG_DIR");
	config_defaults(&cfg);
	memset(&ctx, 0, sizeof ctx);
	ctx.workdir = work;
	ctx.engine = "claude";
	ctx.home = home;
	ctx.cwhome = cwhome;
	ctx.run_id = "claude-run";
	assert_int_equal(spec_build(&ctx, &cfg, &s, err, sizeof err), 0);
	snprintf(want, sizeof want, "%s/tmp/claude-run/engine-home", cwhome);
	ccd = env_get(&s, "CLAUDE_CONFIG_DIR");
	assert_non_null(ccd);
	assert_string_equal(ccd, want);
	assert_int_equal(lstat(ccd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_true(within_any(&s.write_dirs, ccd));
	/* The login, whole and 0600. */
	snprintf(p, sizeof p, "%s/.credentials.json", ccd);
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	slurp(p, buf, sizeof buf);
	assert_string_equal(buf, cred);
	/* The account, and nothing else of ~/.claude.json. */
	snprintf(p, sizeof p, "%s/.claude.json", ccd);
	slurp(p, buf, sizeof buf);
	assert_non_null(j = cJSON_Parse(buf));
	assert_non_null(cJSON_GetObjectItem(j, "oauthAccount"));
	assert_non_null(cJSON_GetObjectItem(j, "userID"));
	assert_non_null(cJSON_GetObjectItem(j, "hasCompletedOnboarding"));
	assert_null(cJSON_GetObjectItem(j, "projects"));
	assert_null(cJSON_GetObjectItem(j, "mcpServers"));
	assert_null(cJSON_GetObjectItem(j, "numStartups"));
	cJSON_Delete(j);
	/* Not one grant reaches the user's own state. */
	assert_false(within_any(&s.read_dirs, user_dir));
	assert_false(within_any(&s.write_dirs, user_dir));
	assert_false(within_any(&s.read_files, user_dir));
	assert_false(within_any(&s.write_files, user_dir));
	assert_false(strlist_contains(&s.read_files, user_json));
	assert_false(strlist_contains(&s.write_files, user_json));
	done(&s);

	/* A FIFO planted as the login: the runner neither blocks nor copies it. */
	snprintf(p, sizeof p, "%s/.credentials.json", user_dir);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(spec_build(&ctx, &cfg, &s, err, sizeof err), 0);
	snprintf(p, sizeof p, "%s/.credentials.json", env_get(&s, "CLAUDE_CONFIG_DIR"));
	assert_int_equal(lstat(p, &st), -1);
	for (size_t i = 0; i < s.notes.n; i++)
		noted |= strstr(s.notes.v[i], "login") != NULL;
	assert_true(noted);
	done(&s);
	config_free(&cfg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tmpdir_fresh_and_removed),
		cmocka_unit_test(test_credential_grant_refused),
		cmocka_unit_test(test_credential_grant_through_symlink_refused),
		cmocka_unit_test(test_context_root_credential_refused),
		cmocka_unit_test(test_readonly_under_tmp_refused),
		cmocka_unit_test(test_missing_dir_dropped_missing_file_kept),
		cmocka_unit_test(test_carving),
		cmocka_unit_test(test_env_allowlist),
		cmocka_unit_test(test_cache_redirects_and_tmpdir),
		cmocka_unit_test(test_off_and_workdir_refusals),
		cmocka_unit_test(test_git_run_grants),
		cmocka_unit_test(test_git_exec_readonly),
		cmocka_unit_test(test_claude_private_home),
		cmocka_unit_test(test_codex_install_and_home),
		cmocka_unit_test(test_hermes_venv_and_home),
		cmocka_unit_test(test_tmpdir_kept_while_survivors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

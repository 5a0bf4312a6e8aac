/*
 * `cw-runner exec` runs one command inside exactly the sandbox a run would get, and
 * `cw-runner spec --json` prints that sandbox. Both build the spec the same way; exec
 * then applies it, waits, ends every descendant, and passes the command's status on.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "landlock.h"
#include "config.h"
#include "paths.h"
#include "proc.h"
#include "sandbox.h"
#include "spec.h"

/* How long descendants get between SIGTERM and SIGKILL once the command is done. */
#define EXEC_GRACE_MS	2000

struct exec_opts {
	const char	*workdir;
	const char	*engine;
	const char	*git_objects;	/* the workdir is a run's repository (SPEC G1) */
	char		 cache_scope[80];	/* "scopes/<name>", or "": private caches */
	struct strlist	 context;
	int		 json;
	int		 plan;		/* spec --plan: the plan for cw-sandbox */
	char		**cmd;		/* after "--" */
};

static volatile sig_atomic_t	exec_child_pgid;

static int
exec_usage(const char *name, const char *msg)
{
	fprintf(stderr, "cw-runner %s: %s\n", name, msg);
	if (strcmp(name, "exec") == 0)
		fprintf(stderr, "usage: cw-runner exec --workdir DIR [--engine NAME] "
		    "[--context DIR:ro]... [--git-objects DIR] [--cache-scope NAME] -- CMD [ARG...]\n");
	else
		fprintf(stderr, "usage: cw-runner spec --json|--plan [--workdir DIR] [--engine NAME] "
		    "[--context DIR:ro]... [--git-objects DIR] [--cache-scope NAME]\n");
	return RUNNER_EXIT_USAGE;
}

/* Parse the shared flags; exec takes the command after "--". -1 on a usage error. */
static int
exec_parse(const char *name, int argc, char **argv, struct exec_opts *o, char *err,
    size_t errlen)
{
	memset(o, 0, sizeof *o);
	for (int i = 1; i < argc; i++) {
		const char	*a = argv[i];

		if (strcmp(a, "--") == 0) {
			o->cmd = argv + i + 1;
			return 0;
		}
		if (strcmp(a, "--json") == 0) {
			o->json = 1;
			continue;
		}
		if (strcmp(a, "--plan") == 0) {
			o->plan = 1;
			continue;
		}
		if (strcmp(a, "--workdir") != 0 && strcmp(a, "--engine") != 0 &&
		    strcmp(a, "--context") != 0 && strcmp(a, "--git-objects") != 0 &&
		    strcmp(a, "--cache-scope") != 0) {
			snprintf(err, errlen, "unknown argument '%s'", a);
			return -1;
		}
		if (i + 1 >= argc) {
			snprintf(err, errlen, "%s needs a value", a);
			return -1;
		}
		const char	*v = argv[++i];

		if (strcmp(a, "--workdir") == 0)
			o->workdir = v;
		else if (strcmp(a, "--engine") == 0)
			o->engine = v;
		else if (strcmp(a, "--cache-scope") == 0) {
			/*
			 * Tool caches kept under <cwhome>/caches/scopes/NAME for every exec
			 * that names NAME (spec_build checks the name); without it each
			 * exec gets caches of its own in its TMPDIR, gone when it ends.
			 */
			if ((size_t)snprintf(o->cache_scope, sizeof o->cache_scope,
			    "scopes/%s", v) >= sizeof o->cache_scope) {
				snprintf(err, errlen, "--cache-scope: at most 64 characters");
				return -1;
			}
		} else if (strcmp(a, "--git-objects") == 0) {
			/* The layout of a daemon run: the workdir borrows this store. */
			if (v[0] != '/') {
				snprintf(err, errlen, "--git-objects must be an absolute path");
				return -1;
			}
			o->git_objects = v;
		}
		else {
			char	 root[PATH_MAX];
			size_t	 len = strlen(v);

			/* Context roots are read-only; ":ro" may be spelled out, nothing else. */
			if (len >= sizeof root) {
				snprintf(err, errlen, "--context path too long");
				return -1;
			}
			strcpy(root, v);
			if (len > 3 && strcmp(root + len - 3, ":ro") == 0)
				root[len - 3] = '\0';
			else if (strchr(root, ':') != NULL) {
				snprintf(err, errlen, "--context %.200s: only read-only context roots "
				    "(DIR or DIR:ro) exist", v);
				return -1;
			}
			if (strlist_add(&o->context, root) == -1) {
				snprintf(err, errlen, "%s", strerror(errno));
				return -1;
			}
		}
	}
	(void)name;
	return 0;
}

/*
 * Build the spec from the default config and the options. Returns 0, or an exit code:
 * usage for a bad config, refused for a spec that cannot be built.
 */
static int
exec_spec(const char *name, const struct exec_opts *o, struct sandbox_spec *s)
{
	struct config		 cfg;
	struct spec_context	 ctx;
	char			 path[PATH_MAX], home[PATH_MAX], cwhome[PATH_MAX];
	char			 cwd[PATH_MAX], err[1024];
	const char		*sb = getenv("CW_SANDBOX");

	if (config_default_path(path, sizeof path) == -1) {
		fprintf(stderr, "cw-runner %s: config path: %s\n", name, strerror(errno));
		return RUNNER_EXIT_USAGE;
	}
	if (config_load(path, 0, &cfg, err, sizeof err) == -1) {
		fprintf(stderr, "cw-runner %s: %s\n", name, err);
		return RUNNER_EXIT_USAGE;
	}
	if (paths_home(home, sizeof home) == -1 ||
	    paths_clockwork_home(cwhome, sizeof cwhome) == -1) {
		fprintf(stderr, "cw-runner %s: cannot find HOME or the Clockwork home: %s\n",
		    name, strerror(errno));
		config_free(&cfg);
		return RUNNER_EXIT_USAGE;
	}
	if (o->workdir == NULL && getcwd(cwd, sizeof cwd) == NULL) {
		fprintf(stderr, "cw-runner %s: getcwd: %s\n", name, strerror(errno));
		config_free(&cfg);
		return RUNNER_EXIT_USAGE;
	}
	memset(&ctx, 0, sizeof ctx);
	ctx.workdir = o->workdir ? o->workdir : cwd;
	ctx.engine = o->engine ? o->engine : "command";
	ctx.home = home;
	ctx.cwhome = cwhome;
	ctx.context_ro = o->context;
	ctx.git_objects = o->git_objects;
	ctx.cache_scope = o->cache_scope[0] != '\0' ? o->cache_scope : NULL;
	ctx.sandbox_off = sb != NULL && strcmp(sb, "off") == 0;
#ifdef __linux__
	/* An exec's /etc is carved while its namespaces are made (apply_sandbox). */
	ctx.defer_carve = strcmp(name, "exec") == 0;
#endif
	if (spec_build(&ctx, &cfg, s, err, sizeof err) == -1) {
		fprintf(stderr, "cw-runner %s: refused: %s\n", name, err);
		config_free(&cfg);
		return RUNNER_EXIT_REFUSED;
	}
	config_free(&cfg);
	return 0;
}

/*
 * The command is over: remove its private TMPDIR (unless survivors of it are still
 * alive, which could reshape it under us), then free the spec.
 */
static void
exec_spec_done(struct sandbox_spec *s, size_t survivors)
{
	char	 cwhome[PATH_MAX], err[PATH_MAX + 128] = "cannot find the Clockwork home";

	if (s->tmpdir != NULL && !s->tmpdir_view &&
	    (paths_clockwork_home(cwhome, sizeof cwhome) == -1 ||
	    spec_remove_tmpdir(s->tmpdir, cwhome, survivors, err, sizeof err) == -1))
		fprintf(stderr, "cw-runner: leaving TMPDIR %s: %s\n", s->tmpdir, err);
	spec_free(s);
}

int
runner_cmd_spec(int argc, char **argv)
{
	struct exec_opts	 o;
	struct sandbox_spec	 s;
	char			 err[256], *text;
	int			 rc;

	if (exec_parse("spec", argc, argv, &o, err, sizeof err) == -1 || o.cmd != NULL) {
		strlist_free(&o.context);
		return exec_usage("spec", o.cmd != NULL ? "spec runs nothing" : err);
	}
	if (o.json == o.plan) {
		strlist_free(&o.context);
		return exec_usage("spec", "one of --json (the spec) or --plan (what cw-sandbox "
		    "is given) is required");
	}
	rc = exec_spec("spec", &o, &s);
	strlist_free(&o.context);
	if (rc != 0)
		return rc;
	if (o.plan) {
		size_t	 len;

		/* The plan's binary records as cw-sandbox reads them (sandbox/plan.h). */
		if (sandbox_plan(&s, NULL, s.enabled ? landlock_abi() : 0, &text, &len, err,
		    sizeof err) == -1) {
			fprintf(stderr, "cw-runner spec: %s\n", err);
			exec_spec_done(&s, 0);
			return RUNNER_EXIT_FAILURE;
		}
		rc = fwrite(text, 1, len, stdout) == len && fflush(stdout) == 0 ?
		    RUNNER_EXIT_OK : RUNNER_EXIT_FAILURE;
		free(text);
		exec_spec_done(&s, 0);
		return rc;
	}
	if ((text = spec_to_json(&s)) == NULL) {
		fprintf(stderr, "cw-runner spec: out of memory\n");
		exec_spec_done(&s, 0);
		return RUNNER_EXIT_FAILURE;
	}
	printf("%s\n", text);
	free(text);
	exec_spec_done(&s, 0);
	return RUNNER_EXIT_OK;
}

/* The command has its own session: pass the terminal's signals on to its group. */
static void
exec_forward(int sig)
{
	if (exec_child_pgid > 0)
		kill(-exec_child_pgid, sig);
}

int
runner_cmd_exec(int argc, char **argv)
{
	struct exec_opts	 o;
	struct sandbox_spec	 s;
	struct sandbox_report	 r;
	struct sandbox_launch	 l;
	struct sigaction	 sa;
	char			 err[1024];
	int			 rc, refused, status = 0, reaped = 0;
	size_t			 survivors = 0;
	pid_t			 pid, w;

	if (exec_parse("exec", argc, argv, &o, err, sizeof err) == -1) {
		strlist_free(&o.context);
		return exec_usage("exec", err);
	}
	if (o.cmd == NULL || o.cmd[0] == NULL || o.workdir == NULL) {
		strlist_free(&o.context);
		return exec_usage("exec", o.workdir == NULL ? "--workdir is required" :
		    "no command after --");
	}
	rc = exec_spec("exec", &o, &s);
	strlist_free(&o.context);
	if (rc != 0)
		return rc;
	if (!s.enabled)
		fprintf(stderr, "cw-runner: SANDBOX DISABLED (%s): the command runs "
		    "unconfined, with every right you have\n", s.disabled_by);
	/* Orphans of the command (setsid, double fork) reparent to us, so we can end them. */
	if (proc_subreaper() == -1) {
		fprintf(stderr, "cw-runner exec: subreaper: %s\n", strerror(errno));
		exec_spec_done(&s, 0);
		return RUNNER_EXIT_FAILURE;
	}

	memset(&l, 0, sizeof l);
	l.argv = o.cmd;
	l.cwd = s.workdir;
	l.fd_in = 0;
	l.fd_out = 1;
	l.fd_err = 2;
	l.new_session = 1;
	pid = apply_sandbox(&s, &l, &r, &refused, err, sizeof err);
	if (pid == -1) {
		if (refused) {
			fprintf(stderr, "cw-runner exec: refused: %s\n", err);
			rc = RUNNER_EXIT_REFUSED;
		} else if (r.exec_errno != 0) {
			fprintf(stderr, "cw-runner exec: %s\n", err);
			rc = r.exec_errno == ENOENT ? 127 : 126;
		} else {
			fprintf(stderr, "cw-runner exec: %s\n", err);
			rc = RUNNER_EXIT_FAILURE;
		}
		sandbox_report_free(&r);
		exec_spec_done(&s, 0);
		return rc;
	}
	if (s.enabled)
		for (size_t i = 0; i < r.not_enforced.n; i++)
			fprintf(stderr, "cw-runner: not enforced: %s\n", r.not_enforced.v[i]);

	exec_child_pgid = pid;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = exec_forward;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);

	while ((w = waitpid(pid, &status, 0)) == -1 && errno == EINTR)
		;
	exec_child_pgid = 0;
	if (w == pid)
		reaped = 1;
	/*
	 * The command is done: nothing it started may outlive it. In its own PID
	 * namespace that holds already: when the namespace's init (the child we reaped)
	 * exits, the kernel kills every other process in it and waits for them before
	 * the init can be reaped. Only without one is the tree looked for (a scan of
	 * every process on the machine, most of a start's cost with CW_SANDBOX=off).
	 */
	if (!(reaped && r.namespaces) && proc_kill_tree(EXEC_GRACE_MS, pid, &status,
	    &reaped, NULL, &survivors, err, sizeof err) == -1)
		fprintf(stderr, "cw-runner exec: ending descendants: %s\n", err);
	sandbox_report_free(&r);
	exec_spec_done(&s, survivors);
	if (!reaped)
		return RUNNER_EXIT_FAILURE;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return RUNNER_EXIT_FAILURE;
}

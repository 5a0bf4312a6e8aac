/*
 * clockworkd: the per-user daemon. Exit codes: 0 clean shutdown, 1 could not start
 * or failed, 2 usage or a bad configuration file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "cgroup.h"
#include "confcheck.h"
#include "config.h"
#include "runimport.h"
#include "server.h"

/*
 * Under LeakSanitizer only: libgit2's regex matching leaks pcre2 match data inside
 * libpcre2 (not ours, and not freed by git_libgit2_shutdown). Only that library is
 * excused; any other leak still fails the sanitizer build.
 */
const char	*__lsan_default_suppressions(void);
__attribute__((used)) const char *
__lsan_default_suppressions(void)
{
	return "leak:libpcre2-8.so\n";
}

static void
clockworkd_usage(FILE *f)
{
	fprintf(f,
	    "usage: clockworkd [--foreground] [--config FILE] [--stop-grace SECONDS]\n"
	    "                  [--runner PATH]\n"
	    "       clockworkd --check-config [--config FILE]\n"
	    "       clockworkd --help | --version\n\n"
	    "  -f, --foreground      stay attached; log to stderr as well as the log file\n"
	    "                        (without it: start-up errors go to stderr, then, once\n"
	    "                        started, stdin, stdout and stderr are let go and the\n"
	    "                        log file is the only log)\n"
	    "  --config FILE         configuration (default $CLOCKWORK_HOME/config.yaml)\n"
	    "  --stop-grace SECONDS  SIGTERM-to-SIGKILL grace when a run is stopped (5)\n"
	    "  --runner PATH         cw-runner to use (default: next to clockworkd)\n"
	    "  --check-config        check the configuration (and its sandbox grants) and\n"
	    "                        exit: 0 good, 2 bad; nothing is started\n\n"
	    "Files under $CLOCKWORK_HOME (default ~/.clockwork, kept 0700): clockworkd.sock\n"
	    "(0600, cwctl's way in), api.token (0600), clockworkd.port, clockworkd.pid,\n"
	    "clockworkd.log, clockwork.db, runs/, worktrees/.\n"
	    "Signals: SIGTERM stops every run and exits; SIGHUP reloads the configuration.\n"
	    "Exit codes: 0 clean shutdown; 1 could not start or failed; 2 usage or a bad\n"
	    "configuration file.\n");
}

/* Detach, and tell the caller whether start-up worked by a pipe, not by waiting. */
static int
clockworkd_background(struct server_options *o)
{
	int	p[2], devnull;
	char	buf[32];
	ssize_t	n;
	pid_t	pid;

	if (pipe2(p, O_CLOEXEC) == -1) {
		perror("clockworkd: pipe");
		return 1;
	}
	switch ((pid = fork())) {
	case -1:
		perror("clockworkd: fork");
		return 1;
	case 0:
		close(p[0]);
		setsid();
		if (chdir("/") == -1)
			_exit(1);
		if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) != -1) {
			dup2(devnull, 0);
			dup2(devnull, 1);
			close(devnull);
		}
		o->ready_fd = p[1];
		/* stderr stays until ready (server_detach()), so start-up errors reach the
		   terminal. */
		_exit(server_main(o));
	}
	close(p[1]);
	while ((n = read(p[0], buf, sizeof buf - 1)) == -1 && errno == EINTR)
		;
	close(p[0]);
	if (n <= 0) {
		int	status = 0;

		fprintf(stderr, "clockworkd: did not start (see the messages above and "
		    "$CLOCKWORK_HOME/clockworkd.log)\n");
		if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 2)
			return 2;
		return 1;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	printf("clockworkd started: pid %d, Inbox on 127.0.0.1:%s\n", (int)pid, buf);
	return 0;
}

/*
 * --check-config: load the configuration as a start would (the file, then its sandbox
 * grants against this home) and say whether it is good, starting nothing.
 */
static int
clockworkd_check_config(const struct server_options *o)
{
	struct config	 cfg;
	char		 path[PATH_MAX], err[1024];

	if (o->config_path != NULL)
		snprintf(path, sizeof path, "%s", o->config_path);
	else if (config_default_path(path, sizeof path) == -1) {
		fprintf(stderr, "clockworkd: cannot find the configuration file: %s\n",
		    strerror(errno));
		return 1;
	}
	memset(&cfg, 0, sizeof cfg);
	if (config_load(path, o->config_path != NULL, &cfg, err, sizeof err) == -1 ||
	    confcheck_grants(&cfg, err, sizeof err) == -1) {
		fprintf(stderr, "clockworkd: %s\n", err);
		config_free(&cfg);
		return 2;
	}
	printf("%s: %s\n", path, cfg.path != NULL ? "ok" : "not there; the defaults stand");
	config_free(&cfg);
	return 0;
}

int
main(int argc, char **argv)
{
	struct server_options	 o = { .ready_fd = -1 };
	char			*end, cgerr[PATH_MAX + 128];
	double			 g;
	int			 check = 0;

	/* The import child (runimport.c), executed by the daemon: not for people. */
	if (argc == 2 && strcmp(argv[1], "--import-child") == 0)
		return runimport_child_main();
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			clockworkd_usage(stdout);
			return 0;
		}
		if (strcmp(a, "--version") == 0) {
			printf("clockworkd %s\n", CW_VERSION);
			return 0;
		}
		if (strcmp(a, "--check-config") == 0)
			check = 1;
		else if (strcmp(a, "--foreground") == 0 || strcmp(a, "-f") == 0)
			o.foreground = 1;
		else if (strcmp(a, "--config") == 0 && i + 1 < argc)
			o.config_path = argv[++i];
		else if (strcmp(a, "--runner") == 0 && i + 1 < argc)
			o.runner_path = argv[++i];
		else if (strcmp(a, "--stop-grace") == 0 && i + 1 < argc) {
			g = strtod(argv[++i], &end);
			if (*end != '\0' || end == argv[i] || g < 0.05 || g > 3600) {
				fprintf(stderr, "clockworkd: --stop-grace: a number of seconds from "
				    "0.05 to 3600\n");
				return 2;
			}
			o.stop_grace_ms = (int)(g * 1000);
		} else {
			fprintf(stderr, "clockworkd: unknown or incomplete argument '%s' (try "
			    "--help)\n", a);
			return 2;
		}
	}
	if (check)
		return clockworkd_check_config(&o);
	/*
	 * In a delegated cgroup v2 subtree (the unit's Delegate=yes, or a scope made with
	 * systemd-run --user --scope -p Delegate=yes), step into a leaf so the runners can
	 * give each run a cgroup of its own beside it. Failing that, the runners fall back
	 * to rlimits (sandbox/runlimits.h), and refuse a run no layer can hold.
	 */
	if (cgroup_delegate(cgerr, sizeof cgerr) == -1)
		fprintf(stderr, "clockworkd: warning: %s: runs' limits fall back to "
		    "rlimits\n", cgerr);
	if (o.foreground)
		return server_main(&o);
	return clockworkd_background(&o);
}

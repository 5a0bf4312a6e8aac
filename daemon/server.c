/*
 * clockworkd's life: start-up in a fixed order (home, log, single-instance lock,
 * configuration, token, store, recovery, API), one libevent loop, and a shutdown that
 * ends every live run and records it as stopped before the loop exits.
 */
#define _GNU_SOURCE
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "api.h"
#include "bus.h"
#include "confcheck.h"
#include "config.h"
#include "daemon.h"
#include "diskguard.h"
#include "httpd.h"
#include "log.h"
#include "notify.h"
#include "parsechild.h"
#include "paths.h"
#include "proctree.h"
#include "recover.h"
#include "runs.h"
#include "schedule.h"
#include "server.h"
#include "store.h"
#include "supervise.h"
#include "telegram.h"
#include "token.h"
#include "worktree.h"

static void
server_exit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon	*d = arg;
	struct run	*r, *next;

	/* The grace has passed and runs are still live: kill what is left, record, go. */
	TAILQ_FOREACH_SAFE(r, &d->runs, entry, next) {
		supervise_kill_tree(&r->procs, r->reaped ? 0 : r->pid);
		store_run_set_status(d->store, r->id, STORE_RUN_STOPPED, STORE_EXIT_STOPPED);
		runs_status_published(d, r->id, r->task_name, STORE_RUN_STOPPED,
		    STORE_EXIT_STOPPED);
		log_warn("run %s: recorded as stopped at shutdown", r->id);
	}
	event_base_loopexit(d->base, NULL);
}

/* On the way out: nothing that came out of a run outlives the daemon's clean exit. */
static void
server_sweep(struct daemon *d)
{
	struct proctree		children = { 0 }, strays = { 0 };
	int			n;

	/* The runners of runs left going (runs_detach_all) are not strays: they go on. */
	if (supervise_orphans(getpid(), &children) == 0)
		for (size_t i = 0; i < children.n; i++)
			if (!proctree_has(&d->detached, children.v[i].pid,
			    children.v[i].start))
				proctree_add(&strays, children.v[i].pid,
				    children.v[i].start);
	if (strays.n > 0) {
		n = supervise_kill_tree(&strays, 0);
		log_warn("ended %d process(es) left over from runs at shutdown", n);
	}
	proctree_free(&children);
	proctree_free(&strays);
	proctree_free(&d->detached);
}

static void
server_signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct daemon	*d = arg;

	switch (sig) {
	case SIGCHLD:
		runs_sigchld(d);
		return;
	case SIGHUP:
		server_reload(d);
		return;
	}
	if (d->shutting_down) {
		log_warn("second signal: exiting now");
		server_exit_cb(-1, 0, d);
		return;
	}
	/*
	 * SPEC R1: live runs are not ended by a restart. Each runner keeps its run going
	 * and waits on its control socket for the next clockworkd; only runs already
	 * ending (their import under way, bounded by its own timeout) are waited for.
	 */
	log_info("%s: shutting down; %zu live run(s) go on without us", strsignal((int)sig),
	    d->n_runs);
	d->shutting_down = 1;
	runs_detach_all(d);
	if (d->n_runs == 0) {
		event_base_loopexit(d->base, NULL);
		return;
	}
	log_info("waiting for %zu run(s) being imported", d->n_runs);
}

/*
 * Once a second while there is a run (and a few seconds after the last, for late
 * orphans), or while the disk is below its floor (queued runs wait for room): the run
 * process trees, the orphans and the disk. Then the timer stops, so an idle daemon
 * does not wake for it; a run event (queued, started, ended: server_run_event) arms it
 * again. With no run nothing writes much to the disk, and a run that would start
 * checks the room first (diskguard_room, runs.c).
 */
static void
server_supervise_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon	*d = arg;

	diskguard_tick(d);
	if (d->n_runs > 0)
		d->ticks_idle = 0;
	else if (d->ticks_idle++ > 5) {
		if (!d->disk_low && d->supervise_sub != NULL)
			evtimer_del(d->ev_supervise);
		return;
	}
	runs_supervise_tick(d);
}

static void
server_run_event(const struct bus_event *e, void *arg)
{
	struct daemon	*d = arg;
	struct timeval	 one = { 1, 0 };

	(void)e;
	if (d->ev_supervise != NULL && !evtimer_pending(d->ev_supervise, NULL)) {
		d->ticks_idle = 0;
		evtimer_add(d->ev_supervise, &one);
	}
}

/* SIGHUP: a bad file keeps the running configuration, and says why. */
void
server_reload(struct daemon *d)
{
	struct config	 cfg;
	char		 err[512];

	memset(&cfg, 0, sizeof cfg);
	if (config_load(d->config_path, 0, &cfg, err, sizeof err) == -1 ||
	    confcheck_grants(&cfg, err, sizeof err) == -1) {
		log_error("reload: %s; keeping the running configuration", err);
		config_free(&cfg);
		return;
	}
	if (cfg.api_port != d->cfg.api_port)
		log_warn("reload: api_port changes at the next start");
	cfg.api_port = d->cfg.api_port;
	config_free(&d->cfg);
	d->cfg = cfg;
	log_info("reload: %s (max_concurrent_runs %d, keep_runs %d)",
	    d->config_path, d->cfg.max_concurrent_runs, d->cfg.keep_runs);
	telegram_reload(d);
	runs_pump_later(d);
}

/*
 * The home holds the token, the database and cwctl's socket: it must be a directory
 * of ours that nobody else can enter, so that the socket's 0600 is not the only fence.
 * One we do not own is refused; one open to group or others (made by hand, say) is
 * closed to them, loudly.
 */
/*
 * The bus keeps the last SERVER_BUS_EVENTS events, at most SERVER_BUS_BYTES of them: a
 * stream that comes back within that gets everything; past it, the journal (events.c).
 * It reserves ids SERVER_BUS_BLOCK at a time: one store write per block.
 */
#define SERVER_BUS_EVENTS	8192
#define SERVER_BUS_BYTES	(4 * 1024 * 1024)
#define SERVER_BUS_BLOCK	65536

static uint64_t
server_bus_reserve(uint64_t need, void *arg)
{
	struct daemon	*d = arg;
	uint64_t	 upto = need + SERVER_BUS_BLOCK;

	if (store_bus_reserve(d->store, (int64_t)upto) == -1) {
		log_error("bus: %s", store_errmsg(d->store));
		return 0;
	}
	return upto;
}

/* Ids go on from the last daemon's: past its reservation and the journal's (bus.h). */
static int
server_bus_new(struct daemon *d)
{
	int64_t		last, reserved;
	uint64_t	first;

	if (store_journal_max_event(d->store, &last) == -1 ||
	    store_bus_reserved(d->store, &reserved) == -1) {
		log_error("cannot read the journal: %s", store_errmsg(d->store));
		return -1;
	}
	first = (uint64_t)(reserved > last ? reserved : last + 1);
	if ((d->bus = bus_new(first, SERVER_BUS_EVENTS, SERVER_BUS_BYTES,
	    server_bus_reserve, d)) == NULL) {
		log_error("cannot make the event bus: out of memory");
		return -1;
	}
	return 0;
}

static int
server_check_home(const char *home)
{
	struct stat	st;

	if (stat(home, &st) == -1) {
		log_error("%s: %s", home, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		log_error("%s is not a directory owned by this user; refusing to start", home);
		return -1;
	}
	if ((st.st_mode & 077) != 0) {
		if (chmod(home, 0700) == -1) {
			log_error("%s is open to group or others (mode %04o) and cannot be "
			    "closed: %s", home, (unsigned)(st.st_mode & 07777), strerror(errno));
			return -1;
		}
		log_warn("%s was open to group or others (mode %04o): now 0700", home,
		    (unsigned)(st.st_mode & 07777));
	}
	return 0;
}

static int
server_lock(const char *home, int *fdp)
{
	char	path[PATH_MAX], buf[32];
	ssize_t	n;
	int	fd;

	snprintf(path, sizeof path, "%s/clockworkd.pid", home);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) == -1) {
		log_error("%s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		n = read(fd, buf, sizeof buf - 1);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		log_error("clockworkd is already running for %s (pid %s)", home,
		    buf[0] ? buf : "?");
		close(fd);
		return -1;
	}
	snprintf(buf, sizeof buf, "%d\n", (int)getpid());
	if (ftruncate(fd, 0) == -1 || pwrite(fd, buf, strlen(buf), 0) == -1) {
		log_error("%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	*fdp = fd;
	return 0;
}

static int
server_find_runner(struct daemon *d, const char *given)
{
	char	exe[PATH_MAX];
	ssize_t	n;

	if (given != NULL) {
		if (paths_canonical(given[0] == '/' ? given : "/", d->runner_path,
		    sizeof d->runner_path) == -1 || given[0] != '/') {
			log_error("--runner needs an absolute path");
			return -1;
		}
	} else {
		if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) == -1) {
			log_error("/proc/self/exe: %s", strerror(errno));
			return -1;
		}
		exe[n] = '\0';
		snprintf(d->runner_path, sizeof d->runner_path, "%s/cw-runner", dirname(exe));
	}
	if (access(d->runner_path, X_OK) == -1)
		log_warn("%s: %s; runs will fail until it is installed", d->runner_path,
		    strerror(errno));
	return 0;
}

/*
 * Started in the background, once start-up has been told to the caller: let go of the
 * terminal's stderr (stdin and stdout went at the fork), so that whoever started us,
 * a shell's $(...) or a pipe, sees it close; from here on the log file is the only log.
 */
static void
server_detach(void)
{
	int	fd;

	log_init("clockworkd", LOG_INFO, 0);
	if ((fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1) {
		log_warn("/dev/null: %s; stderr stays open", strerror(errno));
		return;
	}
	if (dup2(fd, STDERR_FILENO) == -1)
		log_warn("stderr to /dev/null: %s", strerror(errno));
	close(fd);
}

int
server_main(const struct server_options *o)
{
	struct daemon	 d;
	char		 err[1024], path[PATH_MAX];
	int		 lockfd = -1, rc = 1;
	struct timeval	 one = { 1, 0 };

	memset(&d, 0, sizeof d);
	TAILQ_INIT(&d.runs);
	d.foreground = o->foreground;
	d.stop_grace_ms = o->stop_grace_ms > 0 ? o->stop_grace_ms : DAEMON_STOP_GRACE_MS;
	d.started = time(NULL);
	log_init("clockworkd", LOG_INFO, 1);

	if (paths_clockwork_home(d.home, sizeof d.home) == -1) {
		log_error("cannot find the Clockwork home ($CLOCKWORK_HOME must be absolute): "
		    "%s", strerror(errno));
		return 1;
	}
	if (paths_mkdir_p(d.home, 0700) == -1) {
		log_error("%s: %s", d.home, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof path, "%s/clockworkd.log", d.home);
	if (log_open_file(path) == -1)
		log_warn("%s: %s; logging to stderr only", path, strerror(errno));
	if (server_lock(d.home, &lockfd) == -1)
		return 1;
	/* A service gets 1,024 descriptors by default: far too few to be unstarvable. */
	if ((d.nofile = httpd_raise_nofile()) == -1)
		log_warn("RLIMIT_NOFILE: %s", strerror(errno));
	httpd_quiet_libevent();

	if (o->config_path != NULL)
		snprintf(d.config_path, sizeof d.config_path, "%s", o->config_path);
	else if (config_default_path(d.config_path, sizeof d.config_path) == -1) {
		log_error("cannot find the configuration file: %s", strerror(errno));
		goto out;
	}
	if (config_load(d.config_path, o->config_path != NULL, &d.cfg, err,
	    sizeof err) == -1 || confcheck_grants(&d.cfg, err, sizeof err) == -1) {
		log_error("%s", err);
		rc = 2;		/* a bad configuration is a usage error */
		goto out;
	}
	if (server_check_home(d.home) == -1)
		goto out;
	if (token_load_or_create(d.home, d.token, sizeof d.token, err, sizeof err) == -1) {
		log_error("%s", err);
		goto out;
	}
	snprintf(path, sizeof path, "%s/clockwork.db", d.home);
	if (store_open(path, &d.store, err, sizeof err) == -1) {
		log_error("%s", err);
		goto out;
	}
	if (server_bus_new(&d) == -1)
		goto out;
	parsechild_init(NULL);	/* cw-parse next to clockworkd, started at first use */
	if (server_find_runner(&d, o->runner_path) == -1)
		goto out;
	/*
	 * A child subreaper: a process whose parent dies inside a run comes to us instead
	 * of init, so it can be found, attributed and ended (supervise.c).
	 */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		log_warn("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	worktree_init();
	signal(SIGPIPE, SIG_IGN);

	if ((d.base = event_base_new()) == NULL) {
		log_error("cannot create the event loop");
		goto out;
	}
	d.ev_term = evsignal_new(d.base, SIGTERM, server_signal_cb, &d);
	d.ev_int = evsignal_new(d.base, SIGINT, server_signal_cb, &d);
	d.ev_hup = evsignal_new(d.base, SIGHUP, server_signal_cb, &d);
	d.ev_chld = evsignal_new(d.base, SIGCHLD, server_signal_cb, &d);
	if (d.ev_term == NULL || d.ev_int == NULL || d.ev_hup == NULL || d.ev_chld == NULL ||
	    evsignal_add(d.ev_term, NULL) == -1 || evsignal_add(d.ev_int, NULL) == -1 ||
	    evsignal_add(d.ev_hup, NULL) == -1 || evsignal_add(d.ev_chld, NULL) == -1) {
		log_error("cannot install signal handlers");
		goto out;
	}

	diskguard_init(&d);
	if (recover_runs(&d) == -1)
		goto out;
	/* After recovery: a run found dead is ended by then, a live one is left be. */
	runs_mask_old_logs(&d);
	if (api_start(&d, err, sizeof err) == -1) {
		log_error("%s", err);
		goto out;
	}
	d.ev_supervise = event_new(d.base, -1, EV_PERSIST, server_supervise_cb, &d);
	if (d.ev_supervise != NULL)
		evtimer_add(d.ev_supervise, &one);
	{
		struct bus_filter	f;

		memset(&f, 0, sizeof f);
		f.types = 1u << BUS_RUN;
		if ((d.supervise_sub = bus_subscribe(d.bus, &f, server_run_event, &d)) == NULL)
			log_warn("supervise: cannot follow run events; sampling every second");
	}
	schedule_start(&d);
	if (telegram_start(&d) == -1)
		log_error("telegram: cannot start; approvals go to cwctl and the Inbox only");
	if (notify_start(&d) == -1)
		log_error("notify: cannot start desktop notifications");
	runs_pump_later(&d);

	log_info("clockworkd %s started: pid %d, home %s, port %d", CW_VERSION,
	    (int)getpid(), d.home, d.port);
	if (o->ready_fd != -1) {
		char	line[32];

		snprintf(line, sizeof line, "%d\n", d.port);
		if (write(o->ready_fd, line, strlen(line)) == -1)
			log_warn("readiness pipe: %s", strerror(errno));
		close(o->ready_fd);
	}
	if (!d.foreground)
		server_detach();
	if (event_base_dispatch(d.base) == -1)
		log_error("event loop failed");
	else
		rc = 0;
	server_sweep(&d);
	log_info("clockworkd stopped");
out:
	telegram_stop(&d);
	notify_stop(&d);
	api_stop(&d);
	parsechild_stop();
	if (d.ev_term) event_free(d.ev_term);
	if (d.ev_int) event_free(d.ev_int);
	if (d.ev_hup) event_free(d.ev_hup);
	if (d.ev_chld) event_free(d.ev_chld);
	bus_unsubscribe(d.supervise_sub);
	if (d.ev_supervise) event_free(d.ev_supervise);
	if (d.ev_cron) event_free(d.ev_cron);
	if (d.ev_pump) event_free(d.ev_pump);
	if (d.ev_exit) event_free(d.ev_exit);
	if (d.store != NULL)
		store_close(d.store);
	bus_free(d.bus);
	if (d.base != NULL)
		event_base_free(d.base);
	config_free(&d.cfg);
	worktree_shutdown();
	if (lockfd != -1) {
		snprintf(path, sizeof path, "%s/clockworkd.pid", d.home);
		unlink(path);
		close(lockfd);
	}
	log_close();
	return rc;
}

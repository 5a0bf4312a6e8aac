/*
 * clockworkd's core: the one struct daemon passed to every module, and the daemon-wide
 * limits. Each module declares its functions, prefixed with its file's name, in a
 * header of its own (runs.c -> runs.h: runs_*), included only where they are called.
 * Everything runs on one libevent loop in one thread; nothing here locks.
 */
#ifndef CW_DAEMON_H
#define CW_DAEMON_H
#include <sys/queue.h>
#include <limits.h>
#include <stddef.h>
#include <time.h>

#include "config.h"
#include "peerns.h"
#include "proctree.h"

#ifndef TAILQ_FOREACH_SAFE
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = TAILQ_FIRST(head);					\
	    (var) != NULL && ((tvar) = TAILQ_NEXT(var, field), 1);	\
	    (var) = (tvar))
#endif

struct bus;
struct bus_sub;
struct event;
struct event_base;
struct events;
struct httpd;
struct inbox;
struct notify;
struct run;		/* a live run: runs.h */
struct store;
struct telegram;

#define DAEMON_HOME_MAX		1024		/* longer homes are refused */
#define DAEMON_TOKEN_BYTES	32		/* 64 hex characters on disk */
#define DAEMON_MAX_BODY		(1024 * 1024)	/* API request bodies */
#define DAEMON_STOP_GRACE_MS	5000		/* SIGTERM -> SIGKILL */
#define DAEMON_BUDGET_GRACE_MS	2000		/* + stop grace, after the runner's budget */
#define DAEMON_TASK_NAME_MAX	64
#define DAEMON_PROMPT_MAX	(64 * 1024)
#define DAEMON_SOCKET		"clockworkd.sock"	/* in the home: cwctl's way in */
#define DAEMON_UNIX_MAX_CONNS	64		/* on the socket, all reserved for it */
#define DAEMON_TCP_MAX_CONNS	256		/* on the loopback port, at most */
#define DAEMON_TCP_MAX_PER_PEER	64		/* per source address */
#define DAEMON_DEADLINE_MS	10000		/* accept to a whole request */
#define DAEMON_IDLE_SECONDS	30		/* evhttp's read/write timeout */
#define DAEMON_FD_RESERVE	512		/* descriptors kept for runs, store, logs */

TAILQ_HEAD(runs_head, run);

struct daemon {
	struct event_base	*base;
	struct httpd		*httpd;		/* the unix socket and the TCP port */
	struct store		*store;
	struct config		 cfg;
	char			 home[DAEMON_HOME_MAX];
	char			 config_path[PATH_MAX];
	char			 runner_path[PATH_MAX];
	char			 token[DAEMON_TOKEN_BYTES * 2 + 1];
	int			 port;
	char			 sock_path[108];	/* sun_path's size */
	long			 nofile;	/* RLIMIT_NOFILE after raising it */
	int			 foreground;
	int			 stop_grace_ms;
	int			 shutting_down;
	int			 disk_low;	/* below the free-space floor (diskguard.c) */
	int			 ticks_idle;	/* supervise ticks since the last run */
	time_t			 started;
	struct runs_head	 runs;		/* live runs */
	struct proctree	 detached;	/* runners left going at shutdown */
	size_t			 n_runs;
	struct event		*ev_term, *ev_int, *ev_hup, *ev_chld;
	struct event		*ev_supervise;	/* samples run process trees */
	struct bus_sub		*supervise_sub;	/* run events arm ev_supervise */
	struct event		*ev_cron;	/* once a minute */
	struct event		*ev_pump;	/* start queued runs, deferred */
	struct event		*ev_exit;	/* shutdown deadline */
	struct inbox		*inbox;		/* sessions of the Inbox page */
	struct telegram		*telegram;	/* Telegram approvals (telegram.c) */
	struct notify		*notify;	/* desktop notifications (notify.c) */
	struct bus		*bus;		/* what changed, to every surface (bus.h) */
	struct events		*events;	/* GET /api/events streams (events.c) */
	struct peerns		 pidns;		/* ours: the control socket serves no other */
	time_t			 peer_refused_since;	/* this minute of refusals */
	unsigned		 peer_refused_n;	/* refusals in it */
};

#endif

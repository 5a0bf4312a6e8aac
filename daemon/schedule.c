/*
 * Cron schedules (SPEC W3). A timer fires at the start of every minute; each enabled
 * task whose cron expression matches that minute gets a queued run, unless it already
 * has one queued or live (a slow task does not pile up runs). Minutes the daemon was
 * not running for are not caught up. The repositories of existing tasks are searched
 * for jobs files at start and every jobs_rediscover_minutes (jobs.c).
 */
#define _GNU_SOURCE
#include <string.h>

#include <event2/event.h>

#include "cron.h"
#include "daemon.h"
#include "jobs.h"
#include "journal.h"
#include "log.h"
#include "runs.h"
#include "schedule.h"
#include "store.h"

static void
schedule_arm(struct daemon *d)
{
	struct timeval	tv;
	time_t		now = time(NULL);

	tv.tv_sec = 60 - now % 60;
	tv.tv_usec = 0;
	evtimer_add(d->ev_cron, &tv);
}

static void
schedule_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon	*d = arg;
	time_t		 now;

	/*
	 * Repository jobs are looked at again every jobs_rediscover_minutes, before
	 * this minute's runs are queued: a job whose file changed is disabled first.
	 */
	now = time(NULL);
	if (!d->shutting_down && d->cfg.jobs_rediscover_minutes > 0 &&
	    (now / 60) % d->cfg.jobs_rediscover_minutes == 0)
		jobs_discover_all(d);
	schedule_tick(d, now);
	schedule_arm(d);
}

void
schedule_tick(struct daemon *d, time_t now)
{
	struct store_task	*tv;
	struct store_run	*rv;
	struct cron		 c;
	struct tm		 tm;
	size_t			 n, nr;
	char			 err[160], id[STORE_ID_LEN];
	int			 busy;

	if (d->shutting_down || localtime_r(&now, &tm) == NULL)
		return;
	if (store_task_list(d->store, &tv, &n) == -1) {
		log_error("schedule: %s", store_errmsg(d->store));
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (!tv[i].enabled || tv[i].schedule == NULL ||
		    strcmp(tv[i].schedule, "queued") == 0)
			continue;
		if (cron_parse(tv[i].schedule, &c, err, sizeof err) == -1) {
			log_warn("schedule: task %s: %s", tv[i].name, err);
			continue;
		}
		if (!cron_match(&c, &tm))
			continue;
		busy = 0;
		if (store_run_list(d->store, tv[i].id, STORE_RUN_ANY, 5, &rv, &nr) == 0) {
			for (size_t k = 0; k < nr; k++)
				if (!store_run_status_terminal(rv[k].status))
					busy = 1;
			store_run_list_free(rv, nr);
		}
		if (busy) {
			log_info("schedule: task %s is still running; this minute is skipped",
			    tv[i].name);
			continue;
		}
		if (runs_enqueue(d, &tv[i], id, sizeof id, err, sizeof err) == 0) {
			runs_status_published(d, id, tv[i].name, STORE_RUN_QUEUED,
			    STORE_EXIT_NONE);
			journal_audit(d, "scheduler", "run.start", id, NULL);
		} else
			log_error("schedule: task %s: %s", tv[i].name, err);
	}
	store_task_list_free(tv, n);
}

void
schedule_start(struct daemon *d)
{
	jobs_discover_all(d);		/* the repositories of existing tasks, at start */
	if ((d->ev_cron = evtimer_new(d->base, schedule_cb, d)) != NULL)
		schedule_arm(d);
}

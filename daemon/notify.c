/*
 * A desktop notification for each new approval and for the end of each run whose task
 * announces it (config desktop_notifications, off by default; a task's notify_end, on
 * by default), through the session bus's org.freedesktop.Notifications (libdbus).
 *
 * Without a session bus (a server, this test machine) nothing is shown and
 * notify_state() says why; the daemon goes on. The bus is the user's own, on a local
 * socket: connecting and sending a few hundred bytes cannot stall the loop for long,
 * and nothing waits for the notification server's reply.
 *
 * The notifier subscribes to the bus's approval events (bus.h): a notification goes out
 * when an approval is asked, with no timer and no query of the store.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CW_HAVE_DBUS
#include <dbus/dbus.h>
#include "dynlib.h"
#endif

#include "bus.h"
#include "daemon.h"
#include "json.h"
#include "log.h"
#include "notify.h"
#include "store.h"
#include "runend.h"
#include "vis.h"

struct notify {
	struct daemon	*d;
	struct bus_sub	*sub;		/* approval events */
	char		 state[160];
#ifdef CW_HAVE_DBUS
	DBusConnection	*bus;
#endif
};

#ifdef CW_HAVE_DBUS
/*
 * libdbus is loaded when a notification is first to be shown, not linked (dynlib.h:
 * about 1 MiB of the daemon's resident memory otherwise, libsystemd's included).
 */
#define NOTIFY_DBUS_FN(f)	__typeof__(dbus_##f) *f
#define NOTIFY_DBUS_SYM(f)	{ "dbus_" #f, &notify_dbus.f }
static struct {
	NOTIFY_DBUS_FN(bus_get_private);
	NOTIFY_DBUS_FN(connection_close);
	NOTIFY_DBUS_FN(connection_flush);
	NOTIFY_DBUS_FN(connection_get_is_connected);
	NOTIFY_DBUS_FN(connection_send);
	NOTIFY_DBUS_FN(connection_set_exit_on_disconnect);
	NOTIFY_DBUS_FN(connection_unref);
	NOTIFY_DBUS_FN(error_free);
	NOTIFY_DBUS_FN(error_init);
	NOTIFY_DBUS_FN(error_is_set);
	NOTIFY_DBUS_FN(message_iter_append_basic);
	NOTIFY_DBUS_FN(message_iter_close_container);
	NOTIFY_DBUS_FN(message_iter_init_append);
	NOTIFY_DBUS_FN(message_iter_open_container);
	NOTIFY_DBUS_FN(message_new_method_call);
	NOTIFY_DBUS_FN(message_set_no_reply);
	NOTIFY_DBUS_FN(message_unref);
} notify_dbus;

static int
notify_dbus_open(struct notify *n)
{
	const struct dynlib_sym	 syms[] = {
		NOTIFY_DBUS_SYM(bus_get_private),
		NOTIFY_DBUS_SYM(connection_close),
		NOTIFY_DBUS_SYM(connection_flush),
		NOTIFY_DBUS_SYM(connection_get_is_connected),
		NOTIFY_DBUS_SYM(connection_send),
		NOTIFY_DBUS_SYM(connection_set_exit_on_disconnect),
		NOTIFY_DBUS_SYM(connection_unref),
		NOTIFY_DBUS_SYM(error_free),
		NOTIFY_DBUS_SYM(error_init),
		NOTIFY_DBUS_SYM(error_is_set),
		NOTIFY_DBUS_SYM(message_iter_append_basic),
		NOTIFY_DBUS_SYM(message_iter_close_container),
		NOTIFY_DBUS_SYM(message_iter_init_append),
		NOTIFY_DBUS_SYM(message_iter_open_container),
		NOTIFY_DBUS_SYM(message_new_method_call),
		NOTIFY_DBUS_SYM(message_set_no_reply),
		NOTIFY_DBUS_SYM(message_unref),
	};
	char			 err[128];

	if (dynlib_open("libdbus-1.so.3", syms, sizeof syms / sizeof syms[0], err,
	    sizeof err) == NULL) {
		snprintf(n->state, sizeof n->state, "unavailable: %s", err);
		return -1;
	}
	return 0;
}

static int
notify_connect(struct notify *n)
{
	DBusError	 e;

	if (n->bus != NULL && notify_dbus.connection_get_is_connected(n->bus))
		return 0;
	if (n->bus != NULL) {
		notify_dbus.connection_unref(n->bus);
		n->bus = NULL;
	}
	if (getenv("DBUS_SESSION_BUS_ADDRESS") == NULL) {
		snprintf(n->state, sizeof n->state, "unavailable: no session bus");
		return -1;
	}
	if (notify_dbus_open(n) == -1)
		return -1;
	notify_dbus.error_init(&e);
	if ((n->bus = notify_dbus.bus_get_private(DBUS_BUS_SESSION, &e)) == NULL) {
		snprintf(n->state, sizeof n->state, "unavailable: %s",
		    notify_dbus.error_is_set(&e) ? e.message :
		    "cannot reach the session bus");
		notify_dbus.error_free(&e);
		return -1;
	}
	notify_dbus.connection_set_exit_on_disconnect(n->bus, FALSE);
	snprintf(n->state, sizeof n->state, "on");
	return 0;
}

static void
notify_send(struct notify *n, const char *summary, const char *body)
{
	DBusMessage	*m;
	DBusMessageIter	 it, sub;
	const char	*app = "Clockwork", *icon = "dialog-question";
	dbus_uint32_t	 replaces = 0;
	dbus_int32_t	 expire = -1;

	if (notify_connect(n) == -1)
		return;
	if ((m = notify_dbus.message_new_method_call("org.freedesktop.Notifications",
	    "/org/freedesktop/Notifications", "org.freedesktop.Notifications",
	    "Notify")) == NULL)
		return;
	notify_dbus.message_set_no_reply(m, TRUE);
	notify_dbus.message_iter_init_append(m, &it);
	notify_dbus.message_iter_append_basic(&it, DBUS_TYPE_STRING, &app);
	notify_dbus.message_iter_append_basic(&it, DBUS_TYPE_UINT32, &replaces);
	notify_dbus.message_iter_append_basic(&it, DBUS_TYPE_STRING, &icon);
	notify_dbus.message_iter_append_basic(&it, DBUS_TYPE_STRING, &summary);
	notify_dbus.message_iter_append_basic(&it, DBUS_TYPE_STRING, &body);
	notify_dbus.message_iter_open_container(&it, DBUS_TYPE_ARRAY, "s", &sub);
	notify_dbus.message_iter_close_container(&it, &sub);
	notify_dbus.message_iter_open_container(&it, DBUS_TYPE_ARRAY, "{sv}", &sub);
	notify_dbus.message_iter_close_container(&it, &sub);
	notify_dbus.message_iter_append_basic(&it, DBUS_TYPE_INT32, &expire);
	if (!notify_dbus.connection_send(n->bus, m, NULL))
		log_warn("notify: cannot queue a desktop notification");
	notify_dbus.connection_flush(n->bus);
	notify_dbus.message_unref(m);
}
#endif

/*
 * Say whether notifications can be shown: "off" (config), "on", or "unavailable: why".
 * Called when an approval comes and when the status is read, so that a reload that
 * turned them on is reflected without a timer.
 */
static void
notify_update_state(struct notify *n)
{
	if (!n->d->cfg.desktop_notifications)
		snprintf(n->state, sizeof n->state, "off");
	else if (strcmp(n->state, "off") == 0) {
		/* Turned on (by a reload): say now whether they can be shown. */
#ifdef CW_HAVE_DBUS
		if (notify_connect(n) == -1)
			log_info("notify: desktop notifications are on but %s", n->state);
#else
		snprintf(n->state, sizeof n->state, "unavailable: built without libdbus");
#endif
	}
}

/*
 * A run that ended, of a task that announces its runs' ends (notify_end): one
 * notification with its end line (runend.h) and the command to review.
 * The stored run and task are read once, at its end; they are the daemon's own.
 */
static void
notify_run_end(struct notify *n, const struct bus_event *e)
{
	struct store_run	 r;
	struct store_task	 t;
	cJSON			*rep;
	char			*line = NULL, *run = NULL, *task = NULL, *text = NULL;
	int			 announce;

	if (e->run == NULL || store_run_get(n->d->store, e->run, &r) != 1)
		return;
	announce = store_task_get(n->d->store, r.task_id, &t) == 1;
	if (announce && !t.notify_end) {
		store_task_free(&t);
		announce = 0;
	}
	if (announce) {
		rep = r.report != NULL ? json_parse(r.report, strlen(r.report)) : NULL;
		line = runend_line(rep);
		cJSON_Delete(rep);
		run = vis_str(r.id, 0);
		task = vis_str(t.name != NULL ? t.name : "?", 0);
		if (line != NULL && run != NULL && task != NULL &&
		    asprintf(&text, "%s %s\nrun %s\ncwctl run diff %s", task, line, run,
		    run) != -1) {
#ifdef CW_HAVE_DBUS
			notify_send(n, "Clockwork: run finished", text);
#endif
		}
		store_task_free(&t);
	}
	free(text);
	free(line);
	free(run);
	free(task);
	store_run_free(&r);
}

/*
 * An event from the bus: a new pending approval is one notification, and so is the
 * end of a run whose task announces it.
 */
static void
notify_event(const struct bus_event *e, void *arg)
{
	struct notify	*n = arg;
	cJSON		*o;
	const cJSON	*data;
	const char	*id, *tool, *state;
	char		 summary[160], *run;

	notify_update_state(n);
	if (!n->d->cfg.desktop_notifications)
		return;
	if (e->type == BUS_RUN) {
		if (bus_run_ended(e))
			notify_run_end(n, e);
		return;
	}
	if ((o = json_parse(e->json, e->len)) == NULL)
		return;
	data = cJSON_GetObjectItemCaseSensitive(o, "data");
	state = data != NULL ? json_get_string(data, "state") : NULL;
	if (state == NULL || strcmp(state, "pending") != 0) {
		cJSON_Delete(o);
		return;
	}
	id = json_get_string(data, "approval");
	tool = json_get_string(data, "tool");
	snprintf(summary, sizeof summary, "Clockwork: approval needed (%.40s)",
	    tool != NULL ? tool : "?");
	if ((run = vis_str(e->run != NULL ? e->run : "?", 0)) != NULL) {
#ifdef CW_HAVE_DBUS
		char	*text = NULL;

		if (asprintf(&text, "run %s\ncwctl approvals show %s", run,
		    id != NULL ? id : "?") != -1)
			notify_send(n, summary, text);
		free(text);
#else
		(void)id;
#endif
		free(run);
	}
	cJSON_Delete(o);
}

int
notify_start(struct daemon *d)
{
	struct notify		*n;
	struct bus_filter	 f;

	if ((n = calloc(1, sizeof *n)) == NULL)
		return -1;
	n->d = d;
	snprintf(n->state, sizeof n->state, "off");
	/*
	 * Only approvals asked and runs ended from now on: those from before this start
	 * were announced by the previous daemon.
	 */
	memset(&f, 0, sizeof f);
	f.types = 1u << BUS_APPROVAL | 1u << BUS_RUN;
	if (d->bus != NULL && (n->sub = bus_subscribe(d->bus, &f, notify_event, n)) == NULL) {
		free(n);
		return -1;
	}
	d->notify = n;
	notify_update_state(n);
	return 0;
}

void
notify_stop(struct daemon *d)
{
	struct notify	*n = d->notify;

	if (n == NULL)
		return;
	bus_unsubscribe(n->sub);
#ifdef CW_HAVE_DBUS
	if (n->bus != NULL) {
		notify_dbus.connection_close(n->bus);
		notify_dbus.connection_unref(n->bus);
	}
#endif
	free(n);
	d->notify = NULL;
}

const char *
notify_state(struct daemon *d)
{
	if (d->notify == NULL)
		return "off";
	notify_update_state(d->notify);
	return d->notify->state;
}

/*
 * The daemon's event bus: subsystems publish what they have just stored (a run's status,
 * an approval asked or answered, a run's output, a journal entry, a budget pause, a task
 * changed); surfaces subscribe (GET /api/events and the Inbox's stream, events.c;
 * Telegram; the notifier). Nothing polls the store to find out that something changed.
 *
 * Delivery is synchronous, in publish order, on the event loop: a subscriber's function
 * must not block (the streams only append to a buffer). Every event also goes into a
 * ring bounded in count and bytes, so that a stream that reconnects with Last-Event-ID
 * gets what it missed; what fell off the ring is only in the journal (events.c).
 *
 * Event ids increase by one per event and never go back, also across restarts: the
 * bus gives out ids only below a limit its owner has reserved (written to the store,
 * server.c), asking for the next block when it gets there, and the next daemon starts
 * at the reservation. A crash skips at most the rest of one block.
 */
#ifndef CW_BUS_H
#define CW_BUS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include <cjson/cJSON.h>

enum bus_type {
	BUS_RUN = 0,		/* a run was queued, or its status changed */
	BUS_APPROVAL,		/* an approval was asked, answered or expired */
	BUS_LOG,		/* a run's output as stored: {"text"}, or {"transcript": kind} */
	BUS_JOURNAL,		/* a journal entry, as stored */
	BUS_BUDGET,		/* a run was held at its budget, or went on */
	BUS_TASK,		/* a task was added, changed or removed */
	BUS_NTYPES
};
#define BUS_TYPES_ALL	((1u << BUS_NTYPES) - 1)

#define BUS_ID_MAX_LEN	32	/* the run id and task name a filter can name */

struct bus_event {
	uint64_t		 id;
	enum bus_type		 type;
	int64_t			 at_ms;		/* wall clock */
	char			*run;		/* NULL when none */
	char			*task;		/* NULL when none */
	char			*json;		/* the whole event, one line of JSON */
	size_t			 len;
	TAILQ_ENTRY(bus_event)	 entry;
};

/* What a subscriber wants: a mask of types, and a run or a task ("" = any). */
struct bus_filter {
	unsigned	 types;
	char		 run[BUS_ID_MAX_LEN];
	char		 task[128];
};

struct bus;
struct bus_sub;
typedef void	bus_fn(const struct bus_event *, void *arg);

/*
 * Ids may be given out below what the reserve function returns (the new limit, past
 * `need`; 0 when it could not reserve: the bus goes on, and says so once).
 */
typedef uint64_t bus_reserve_fn(uint64_t need, void *arg);

/* The ring keeps at most max_events and max_bytes of event text. */
struct bus	*bus_new(uint64_t first_id, size_t max_events, size_t max_bytes,
		    bus_reserve_fn *, void *arg);
void		 bus_free(struct bus *);

/*
 * The id the next event gets; journal.c stores it with the entry before publishing,
 * so that a stream can be resumed from the journal past the ring.
 */
uint64_t	 bus_next_id(const struct bus *);
/*
 * Publish: data (taken, may be NULL) becomes the event's "data"; task and run may be
 * NULL. Every matching subscriber is called before this returns. Returns the event's
 * id, or 0 when it could not be made (out of memory: logged, nothing delivered) or
 * there is no bus (NULL: data is dropped).
 */
uint64_t	 bus_publish(struct bus *, enum bus_type, const char *task, const char *run,
		    cJSON *data);

/* Subscribers may subscribe and unsubscribe (themselves or others) from a callback. */
struct bus_sub	*bus_subscribe(struct bus *, const struct bus_filter *, bus_fn *, void *arg);
void		 bus_unsubscribe(struct bus_sub *);

/*
 * Hand fn every kept event after `after` that matches. Returns 0 when the ring held
 * everything after `after`, 1 when older events had fallen off it (the caller gets
 * those from the journal), and the oldest kept id in *oldest (0: the ring is empty).
 */
int		 bus_replay(struct bus *, uint64_t after, const struct bus_filter *,
		    bus_fn *, void *arg, uint64_t *oldest);

/* The oldest id the ring holds (the next id when it is empty). */
uint64_t	 bus_oldest_id(const struct bus *);
int		 bus_match(const struct bus_filter *, const struct bus_event *);
/* Does a BUS_RUN event say its run ended (a status past queued, starting, running)? */
int		 bus_run_ended(const struct bus_event *);
const char	*bus_type_name(enum bus_type);
/* A comma-separated list of type names as a mask; -1 with the bad name in bad. */
int		 bus_types_parse(const char *list, unsigned *mask, char *bad, size_t badlen);
/* How many events and bytes the ring holds, and subscribers there are (status, tests). */
void		 bus_stats(const struct bus *, size_t *events, size_t *bytes, size_t *subs);

#endif

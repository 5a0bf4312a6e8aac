/* runimport.c: a run's branch into the user's repository, in a child with a timeout. */
#ifndef CW_RUNIMPORT_H
#define CW_RUNIMPORT_H

#include <cjson/cJSON.h>

struct run;
struct runimport;

struct runimport;
typedef void	(*runimport_done_fn)(struct run *, cJSON *result);
/*
 * Start importing r's sealed work (seal: the runner's report's "seal" object, or NULL);
 * nothing_ran: the run was refused, its directory is only removed. done is called once,
 * from the event loop, with the child's result ({"ok":..., "final_commit", "diffstat",
 * "error", "quarantine"}), which it owns. 0, or -1 (nothing started).
 */
int	runimport_start(struct run *r, const cJSON *seal, int nothing_ran,
	    runimport_done_fn done);
void	runimport_free(struct runimport *);

#endif

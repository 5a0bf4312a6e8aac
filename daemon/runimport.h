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

/*
 * clockworkd --import-child: the import child's side, started by runimport_start()
 * through common/spawn.c: reads the job on stdin, does the import, writes its one
 * result line on stdout and exits. Does not return.
 */
int	runimport_child_main(void) __attribute__((noreturn));

#endif

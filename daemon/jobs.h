/* jobs.c: discovery of repository jobs, enabling, templates (W2). */
#ifndef CW_JOBS_H
#define CW_JOBS_H
#include <stddef.h>

#include <cjson/cJSON.h>

#include "store.h"

struct daemon;

#define JOBS_MODE		"acceptEdits"
#define JOBS_DOLLARS		2.0
#define JOBS_TURNS		50
#define JOBS_SECONDS		3600
/*
 * Floor evaluations for the previews of one discovery or import, all jobs together
 * (each job has its own bound in preview.c too): the previews run on the daemon's
 * loop, so a file of many long prompts must not hold it for long. Past it a preview
 * says its rule check is incomplete.
 */
#define JOBS_PREVIEW_EVALS	4000
/*
 * Read repo's jobs file from its default branch and bring its jobs in as tasks,
 * disabled with a preview. All or nothing: any error leaves the store unchanged.
 * result gets {"repo","commit","created":[],"changed":[],"unchanged":[],
 * "removed":[],"conflicts":[]}. -1: err says why (code: 400 bad input, 500 else).
 */
int	jobs_discover(struct daemon *, const char *repo, const char *actor,
	    cJSON **result, int *code, char *err, size_t errlen);
/* Discover for the repository of every task that has one (start-up and cron). */
void	jobs_discover_all(struct daemon *);
/* A template file's text as one disabled task with a preview, in repo (or none). */
int	jobs_template_import(struct daemon *, const char *file, const char *text,
	    size_t len, const char *repo, const char *actor, cJSON **result, int *code,
	    char *err, size_t errlen);
/* The task's shareable definition, as a jobs document of one job. */
cJSON	*jobs_template_export(const struct store_task *);
/*
 * The explicit enable of an imported task; hash, when given, must be the preview's
 * definition hash (so a page showing an older preview cannot enable a newer one).
 */
int	jobs_enable(struct daemon *, const char *name, const char *hash, const char *actor,
	    int *code, char *err, size_t errlen);
/* A task's definition as its history keeps it. */
cJSON	*jobs_definition(const struct store_task *);
/*
 * Before a run of an imported task starts at base_commit: 0 when the paths its prompt
 * names are the objects the person reviewed; 1 when one changed (the task is then
 * disabled and waits for review again, with a new preview; err names the paths);
 * -1 on error (err says why; the run must not start either).
 */
int	jobs_pins_check(struct daemon *, const struct store_task *, const char *base_commit,
	    char *err, size_t errlen);

#endif

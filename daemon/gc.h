/* gc.c: retention of finished runs' worktrees. */
#ifndef CW_GC_H
#define CW_GC_H
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct daemon;

struct gc_result {
	size_t	pruned, kept;
	size_t	caches;		/* archived tasks whose tool caches were removed */
};
int	gc_run(struct daemon *, int64_t task_id, int force, struct gc_result *,
	    cJSON *pruned_list);

#endif

/*
 * reporules.c: a task repository's Claude permission rules as committed on the ref
 * its runs start from (issue 23): shown with a digest, imported only with it.
 */
#ifndef CW_REPORULES_H
#define CW_REPORULES_H
#include <stddef.h>

#include <cjson/cJSON.h>

#include "clauderules.h"
#include "sha256.h"
#include "store.h"

struct daemon;

#define REPORULES_FILES	2
struct reporules_file {
	char			 path[64];	/* ".claude/settings.json" */
	char			 blob[64];	/* its blob id, when present */
	int			 present;
	struct clauderules	 rules;		/* parsed and mapped */
};
struct reporules {
	char			 ref[512];	/* the ref read */
	char			 commit[64];	/* its commit */
	struct reporules_file	 files[REPORULES_FILES];
	char			 digest[SHA256_HEX];	/* of what is shown */
};
/* base: the task's base branch, NULL for the default branch. err names the file. */
int	reporules_read(const char *repo, const char *base, struct reporules *,
	    char *err, size_t errlen);
void	reporules_free(struct reporules *);
/* {"ref","commit","digest","files":[...],"rules":[{file,list,rule,becomes,...}]} */
cJSON	*reporules_json(const struct reporules *);
/* Import every mapped rule in one transaction, journaled; *n_changed rows changed. */
int	reporules_import(struct daemon *, const struct store_task *,
	    const struct reporules *, const char *actor, size_t *n_changed, char *err,
	    size_t errlen);

#endif

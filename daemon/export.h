/* export.c: the proof-of-work export (SPEC I3). */
#ifndef CW_EXPORT_H
#define CW_EXPORT_H
#include <stddef.h>

#include "store.h"

struct daemon;

struct export_input {
	const char	*run_id, *task, *prompt, *engine, *permission_mode, *status;
	const char	*exit_reason, *repo, *branch, *base_commit, *final_commit;
	const char	*created_at, *ended_at;
	double		 budget_dollars, spent_dollars, spent_seconds;
	int		 budget_turns, budget_seconds, spent_turns, sandboxed;
	const char	*report;	/* JSON text or NULL */
	const char	*diffstat;	/* text or NULL */
	const char	*diff;		/* text or NULL */
	const char	*transcript;	/* NULL: not included */
	const struct store_journal_entry *journal;	/* denials and the like */
	size_t		 n_journal;
	const struct store_approval *approvals;
	size_t		 n_approvals;
};
/* Render the HTML; a newly allocated NUL-terminated string, or NULL (ENOMEM). */
char	*export_render(const struct export_input *);
/* Build the export of run_id from the store, its log and its git branch. */
int	export_run(struct daemon *, const char *run_id, int transcript, const char *actor,
	    char **html, char *err, size_t errlen);

#endif

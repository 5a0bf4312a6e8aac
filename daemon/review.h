/* review.c: review and land a run's work in the user's repository (libgit2). */
#ifndef CW_REVIEW_H
#define CW_REVIEW_H
#include <stddef.h>

#include <cjson/cJSON.h>

struct review_diff {
	char	 tip[72];	/* the branch tip, hex */
	char	*stat;		/* git's --stat text */
	char	*patch;		/* the patch, NULL when not asked for */
	int	 truncated;	/* the patch was cut at max bytes */
	cJSON	*files;		/* [{path, status, insertions, deletions}] */
};
int	review_diff(const char *repo, const char *base, const char *branch,
	    int want_patch, size_t max, struct review_diff *, char *err, size_t errlen);
void	review_diff_free(struct review_diff *);
enum review_mode {
	REVIEW_MERGE = 0,	/* fast-forward when it can, else a merge commit */
	REVIEW_FF_ONLY,
	REVIEW_SQUASH,		/* one new commit on the target with the run's changes */
};
#define REVIEW_OK	 0
#define REVIEW_ERROR	-1	/* libgit2 failed */
#define REVIEW_REFUSED	-2	/* dirty target, no such branch, not a fast-forward */
#define REVIEW_CONFLICT	-3	/* res->conflicts lists the files */
#define REVIEW_AUTOMATION -4	/* res->automation lists them: not accepted */
#define REVIEW_IGNORED	-5	/* res->left_alone: the user's ignored/untracked files */
struct review_merge {
	const char	*result;	/* "fast-forward", "merged", "squashed", "up-to-date" */
	char		 into[256];
	char		 commit[72];	/* the target's new tip */
	cJSON		*conflicts;	/* owned by the caller */
	cJSON		*automation;	/* [{path, status, what}], owned by the caller */
	cJSON		*left_alone;	/* [path], owned by the caller */
};
const char	*review_mode_name(enum review_mode);
int		 review_mode_parse(const char *, enum review_mode *);
int	review_merge(const char *repo, const char *run_id, const char *branch,
	    const char *into, enum review_mode, int accept_automation,
	    struct review_merge *, char *err, size_t errlen);
void	review_merge_free(struct review_merge *);
/* The automation files (common/automation.h) branch changes since base: [{path, status, what}]. */
int	review_automation(const char *repo, const char *base, const char *branch,
	    cJSON **out, char *err, size_t errlen);
int	review_discard(const char *repo, const char *worktree, const char *run_id,
	    const char *branch, char *err, size_t errlen);

#endif

/*
 * What the seal leaves out of a run's commit (issue 27): build outputs the agent's own
 * tests and builds produced (__pycache__/, node_modules/, a Cargo target/, ...) that the
 * repository's .gitignore does not list. The input is git's listing of the run's tree
 * as the sandboxed seal printed it (`git ls-files -z -t -c -o --exclude-standard`, so
 * the repository's ignore rules are already applied): untrusted, checked whole. A path
 * under a directory that holds a tracked file is never left out, nor is a tracked file
 * (a repository that commits its dist/ or target/ keeps doing so). What is left out
 * is named in the run's report and not committed; like everything else the run left
 * uncommitted, it does not reach the checkout the daemon makes from verified objects
 * (SPEC G1, U3: a planted __pycache__ would run in place of the reviewed source).
 */
#ifndef CW_SEALSKIP_H
#define CW_SEALSKIP_H
#include <stddef.h>

#define SEALSKIP_LIST_MAX	(64 * 1024 * 1024)	/* bytes of listing read at most */
#define SEALSKIP_REPORT_MAX	50	/* entries the report names; the total is exact */

struct sealskip_entry {
	char	*path;		/* relative to the top; a directory ends with '/' */
	size_t	 files;		/* untracked files beneath (1 for a file) */
};

struct sealskip {
	struct sealskip_entry	*v;	/* sorted by path, none inside another */
	size_t			 n;
	size_t			 files;	/* every file left out */
};

/*
 * Plan what to leave out from the listing (len bytes, NUL-terminated records "T path").
 * 0, or -1 with err saying what was malformed (the listing is refused whole: the seal
 * then leaves nothing out). out is to be freed with sealskip_free() either way.
 */
int	sealskip_plan(const char *listing, size_t len, struct sealskip *out,
	    char *err, size_t errlen);
/*
 * The rule that leaves out the last component of path (a directory when dir is 1),
 * ignoring context: its name, or NULL when no rule names it. For the tests and the
 * documentation; sealskip_plan() also checks each rule's context.
 */
const char	*sealskip_rule(const char *name, int dir);
void	sealskip_free(struct sealskip *);

#endif

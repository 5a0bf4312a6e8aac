/* jobsgit.c: a repository's jobs file as committed on its default branch (W2). */
#ifndef CW_JOBSGIT_H
#define CW_JOBSGIT_H
#include <stddef.h>

struct jobsgit_file {
	char	 path[64];		/* ".clockwork/jobs.yaml" */
	char	 blob[64];		/* its blob id */
	char	*text;			/* NUL-terminated copy */
	size_t	 len;
};
struct jobsgit_result {
	char			ref[512];	/* the default branch's ref read */
	char			branch[256];	/* its short name */
	char			commit[64];	/* the commit read */
	struct jobsgit_file	files[2];
	size_t			n_files;	/* 0: no jobs file */
};
int	jobsgit_default_branch(const char *repo, char *refname, size_t reflen,
	    char *branch, size_t blen, char *err, size_t errlen);
int	jobsgit_read(const char *repo, struct jobsgit_result *, char *err, size_t errlen);
void	jobsgit_result_free(struct jobsgit_result *);

#endif

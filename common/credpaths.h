/*
 * The credential locations no run may ever read (SPEC S4), in one table. Entries are
 * relative to the user's home, to the Clockwork home, or absolute; a few are patterns.
 */
#ifndef CW_CREDPATHS_H
#define CW_CREDPATHS_H
#include <stddef.h>

enum credpath_base { CRED_HOME, CRED_CWHOME, CRED_ABS };

struct credpath {
	enum credpath_base	 base;
	const char		*path;	/* may hold fnmatch(3) wildcards */
	const char		*what;	/* short label for errors and reports */
};

/*
 * If the canonical absolute path is, or lies inside, a credential location, return
 * that entry's label; else NULL. cwhome may be NULL.
 */
const char	*credpaths_classify(const char *path, const char *home, const char *cwhome);
/* 1 if some credential location lies strictly inside dir (a grant of dir needs carving). */
int		 credpaths_inside(const char *dir, const char *home, const char *cwhome);
const struct credpath *credpaths_table(size_t *count);
/* Absolute form of entry i (wildcards kept). -1 if it does not fit. */
int		 credpaths_absolute(const struct credpath *, const char *home,
		    const char *cwhome, char *out, size_t outlen);

/*
 * The table's absolute forms for one home and Clockwork home, formatted once: the
 * spec builder asks hundreds of questions per start, and formatting every entry for
 * every question was most of its time. credpaths_set_classify and credpaths_set_inside
 * answer exactly as credpaths_classify and credpaths_inside do for the same homes.
 */
struct credpaths_set {
	size_t			 n;
	struct credpaths_entry	*v;
};

/* -1 (errno ENOMEM) if out of memory; the set is then empty and may be freed. */
int		 credpaths_set_init(struct credpaths_set *, const char *home,
		    const char *cwhome);
void		 credpaths_set_free(struct credpaths_set *);
const char	*credpaths_set_classify(const struct credpaths_set *, const char *path);
int		 credpaths_set_inside(const struct credpaths_set *, const char *dir);

#endif

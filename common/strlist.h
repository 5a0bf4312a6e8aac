/* A growable list of owned strings; the one collection type common/ passes around. */
#ifndef CW_STRLIST_H
#define CW_STRLIST_H
#include <stddef.h>

struct strlist {
	char	**v;
	size_t	  n;
	size_t	  cap;
};

/* Append a copy of s. Returns 0, or -1 with errno set (ENOMEM). */
int	strlist_add(struct strlist *, const char *s);
/* Append a copy of s unless an equal string is already there. */
int	strlist_add_unique(struct strlist *, const char *s);
int	strlist_contains(const struct strlist *, const char *s);
/* Append every string of src (unique). */
int	strlist_extend(struct strlist *, const struct strlist *src);
void	strlist_free(struct strlist *);

#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strlist.h"

int
strlist_add(struct strlist *l, const char *s)
{
	char	**nv, *copy;
	size_t	  ncap;

	if (l->n == l->cap) {
		ncap = l->cap ? l->cap * 2 : 8;
		if ((nv = realloc(l->v, ncap * sizeof *nv)) == NULL)
			return -1;
		l->v = nv;
		l->cap = ncap;
	}
	if ((copy = strdup(s)) == NULL)
		return -1;
	l->v[l->n++] = copy;
	return 0;
}

int
strlist_contains(const struct strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

int
strlist_add_unique(struct strlist *l, const char *s)
{
	if (strlist_contains(l, s))
		return 0;
	return strlist_add(l, s);
}

int
strlist_extend(struct strlist *l, const struct strlist *src)
{
	for (size_t i = 0; i < src->n; i++)
		if (strlist_add_unique(l, src->v[i]) == -1)
			return -1;
	return 0;
}

void
strlist_free(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

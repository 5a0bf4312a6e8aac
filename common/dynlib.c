/* A shared library loaded on first use (dynlib.h says why). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "dynlib.h"

void *
dynlib_open(const char *soname, const struct dynlib_sym *syms, size_t n, char *err,
    size_t errlen)
{
	void		*h, *p[64];
	const char	*why;

	if (n > sizeof p / sizeof p[0]) {
		snprintf(err, errlen, "%s: %zu symbols asked for, at most %zu", soname, n,
		    sizeof p / sizeof p[0]);
		return NULL;
	}
	/* A second open of a loaded library only counts a reference: cheap. */
	if ((h = dlopen(soname, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		why = dlerror();
		snprintf(err, errlen, "%s: %s", soname, why != NULL ? why : "cannot load");
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		(void)dlerror();
		if ((p[i] = dlsym(h, syms[i].name)) == NULL) {
			why = dlerror();
			snprintf(err, errlen, "%s: %s: %s", soname, syms[i].name,
			    why != NULL ? why : "not found");
			dlclose(h);
			return NULL;
		}
	}
	/* All or nothing: the slots are written once every symbol is found. */
	for (size_t i = 0; i < n; i++)
		memcpy(syms[i].slot, &p[i], sizeof p[i]);
	return h;
}

/*
 * libcurl by dlopen (curlload.h says why). The library is looked up by the dynamic
 * loader the same way a linked-in one is (its soname, the system's search path), with
 * RTLD_NOW, so that every symbol is bound before the caller narrows itself, as the
 * runner's own -z now binds its own.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "curlload.h"

/* libcurl's ABI: the soname every libcurl 7.x and 8.x keeps. */
#define CURLLOAD_SONAME	"libcurl.so.4"

struct curlload_fns	 curlload_fn;

/* One symbol into *slot (an object pointer, as dlsym gives it, copied bit for bit). */
static int
curlload_sym(void *h, const char *name, void *slot, char *err, size_t errlen)
{
	void	*p;

	(void)dlerror();
	if ((p = dlsym(h, name)) == NULL) {
		const char	*why = dlerror();

		snprintf(err, errlen, "libcurl: %s: %s", name, why ? why : "not found");
		return -1;
	}
	*(void **)slot = p;
	return 0;
}

int
curlload_open(long flags, char *err, size_t errlen)
{
	static void		*h;
	struct curlload_fns	 f;

	if (h == NULL) {
		if ((h = dlopen(CURLLOAD_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
			const char	*why = dlerror();

			snprintf(err, errlen, "libcurl: %s", why ? why : CURLLOAD_SONAME);
			return -1;
		}
		if (curlload_sym(h, "curl_global_init", &f.global_init, err, errlen) == -1 ||
		    curlload_sym(h, "curl_easy_init", &f.easy_init, err, errlen) == -1 ||
		    curlload_sym(h, "curl_easy_setopt", &f.easy_setopt, err, errlen) == -1 ||
		    curlload_sym(h, "curl_easy_perform", &f.easy_perform, err, errlen) == -1 ||
		    curlload_sym(h, "curl_easy_getinfo", &f.easy_getinfo, err, errlen) == -1 ||
		    curlload_sym(h, "curl_easy_cleanup", &f.easy_cleanup, err, errlen) == -1 ||
		    curlload_sym(h, "curl_easy_strerror", &f.easy_strerror, err,
		    errlen) == -1 ||
		    curlload_sym(h, "curl_slist_append", &f.slist_append, err, errlen) == -1 ||
		    curlload_sym(h, "curl_slist_free_all", &f.slist_free_all, err,
		    errlen) == -1) {
			dlclose(h);
			h = NULL;
			return -1;
		}
		curlload_fn = f;
	}
	if (curlload_fn.global_init(flags) != CURLE_OK) {
		snprintf(err, errlen, "libcurl: curl_global_init failed");
		return -1;
	}
	return 0;
}

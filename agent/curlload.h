/*
 * libcurl, loaded with dlopen when cw-agent's entry points start (agent.c, toolhost.c),
 * before the loop narrows itself. It was written so while this code lived in cw-runner,
 * to keep libcurl's thirty libraries out of every sandbox start (docs/performance.md);
 * cw-agent is now the only program that uses it, so it could become an ordinary link.
 */
#ifndef CW_CURLLOAD_H
#define CW_CURLLOAD_H

#include <stddef.h>
#include <curl/curl.h>

/* The libcurl functions the runner calls, resolved by curlload_open(). */
struct curlload_fns {
	CURLcode		 (*global_init)(long);
	CURL			*(*easy_init)(void);
	CURLcode		 (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode		 (*easy_perform)(CURL *);
	CURLcode		 (*easy_getinfo)(CURL *, CURLINFO, ...);
	void			 (*easy_cleanup)(CURL *);
	const char		*(*easy_strerror)(CURLcode);
	struct curl_slist	*(*slist_append)(struct curl_slist *, const char *);
	void			 (*slist_free_all)(struct curl_slist *);
};

/* Filled by curlload_open(); unusable before it returned 0. */
extern struct curlload_fns curlload_fn;

/*
 * Load libcurl (its ABI's soname, every symbol bound now) and curl_global_init(flags).
 * 0, or -1 with the loader's reason in err. Call it before the process is narrowed:
 * the libraries and what the TLS stack reads at its start are loaded here.
 */
int	curlload_open(long flags, char *err, size_t errlen);

#endif

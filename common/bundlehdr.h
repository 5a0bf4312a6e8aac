/*
 * A git bundle's header ("# v2 git bundle" or v3, capabilities, prerequisites, refs, an
 * empty line), which a run wrote and so is untrusted (daemon/runimport.c). Parsed in
 * cw-parse (parser/), never in the daemon: fuzz_bundlehdr.
 */
#ifndef CW_BUNDLEHDR_H
#define CW_BUNDLEHDR_H
#include <stddef.h>

#define BUNDLEHDR_MAX		(64 * 1024)	/* the header, at most */
#define BUNDLEHDR_LINE_MAX	1023		/* one line of it */
#define BUNDLEHDR_BRANCH_MAX	500

/*
 * Read the header from the first len bytes of a bundle (pass min(file, BUNDLEHDR_MAX +
 * 1) bytes). The commit named for refs/heads/<branch> goes in tip (40 or 64 lower-case
 * hex digits; tiplen >= 65); no other ref is looked at. *hdrlen is where the pack
 * starts. 0, or -1 with err naming what is wrong.
 */
int	bundlehdr_parse(const char *buf, size_t len, const char *branch, char *tip,
	    size_t tiplen, size_t *hdrlen, char *err, size_t errlen);

#endif

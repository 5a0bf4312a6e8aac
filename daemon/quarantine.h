/* quarantine.c: refused work kept inert, as a bundle and plain files (SPEC U3). */
#ifndef CW_QUARANTINE_H
#define CW_QUARANTINE_H
#include <stddef.h>

#include <cjson/cJSON.h>

struct quarantine_job {
	const char	*home, *repo, *workdir, *branch, *run_id;
	const char	*tip;		/* the seal's word for the tip, a fallback; or NULL */
	const char	*why;		/* why the import refused, for the README */
};
/*
 * Convert the run's directory into <home>/quarantine/<run>/{run.bundle,files/,
 * README.txt} and remove it; out gets "quarantine", "quarantine_bundle",
 * "quarantine_files" (and "..._error" fields for the parts that failed). 0, or -1
 * with errno when nothing could be moved. For the import child only.
 */
int	quarantine_make(const struct quarantine_job *, cJSON *out);
/*
 * The fallback when no conversion can run: move workdir to <home>/quarantine/<run>/
 * unconverted, its top .git renamed away and its mode 0, with a README; where gets
 * the quarantine folder ("" when workdir was gone). 0, or -1 with errno.
 */
int	quarantine_move_raw(const char *home, const char *run_id, const char *workdir,
	    const char *why, char *where, size_t wherelen);

#endif

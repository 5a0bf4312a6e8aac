/*
 * The entries of a system directory (/etc) that are not world-readable: a file without
 * o+r, a directory without o+r or o+x, a directory deeper than the walk goes. spec.c
 * carves the read grant around them, so that a run reads there only what every user
 * may read, whoever the run's owner is (a root run owns every 0600 file of /etc).
 *
 * Walking /etc costs a listing and an open per directory and a stat per entry, and was
 * the largest single part of a sandbox start. Its outline (which directories hold which
 * entries) is kept in a file under the Clockwork home and checked at the next start
 * entry by entry: every entry is still stat'ed (a chmod changes only the entry's own
 * inode, so nothing cheaper could see it), but no directory is listed or opened. A
 * directory whose identity (device, inode) or modification time differs from the
 * outline's, an entry gone or of another type, or a directory that would now be walked
 * where it was not: the outline is stale and the tree is walked again. The verdict of
 * each entry always comes from the stat of this start, never from the file.
 *
 * A directory is known by its device, inode, and both its modification time (which the
 * user may set back, and tar, rsync and cp -a do) and its change time (which no one
 * can set). A directory changed twice within one tick of the filesystem's clock keeps
 * the first change's times: an outline is therefore written only when every directory
 * in it was last changed, by either time, well before the walk (UNREADABLE_SETTLE_S).
 */
#ifndef CW_UNREADABLE_H
#define CW_UNREADABLE_H
#include <stddef.h>
#include <time.h>

#include "strlist.h"

/* How deep the walk goes; a directory deeper than this counts as not world-readable. */
#define UNREADABLE_DEPTH	12
/* An outline holds only directories last changed at least this long before its walk. */
#define UNREADABLE_SETTLE_S	2
/* The largest outline read back, and the most entries it may hold. */
#define UNREADABLE_FILE_MAX	(4u << 20)
#define UNREADABLE_ENTRIES_MAX	200000u

enum unreadable_how {
	UNREADABLE_WALKED = 1,	/* listed directory by directory */
	UNREADABLE_KEPT,	/* the kept outline held: each entry stat'ed, none listed */
};

/*
 * Add to out the canonical path of every entry below root (a canonical directory)
 * that is not world-readable. outline is the file that keeps the tree's outline
 * between starts (read, and rewritten after a walk when it may be), or NULL to walk
 * every time. *how says which way the answer came. 0; -1 with errno when root cannot
 * be opened (ENOENT, EACCES: the caller grants as before) or when out of memory.
 */
int	unreadable_scan(const char *root, const char *outline, struct strlist *out,
	    enum unreadable_how *how);

/*
 * The same, with now the time the settling rule compares the directories' times with
 * (unreadable_scan passes the clock's; a test passes a later one rather than wait).
 */
int	unreadable_scan_at(const char *root, const char *outline, struct strlist *out,
	    enum unreadable_how *how, time_t now);

/*
 * The outline parser on its own, for the fuzz target: 0 when text is a well-formed
 * outline of root (every name relative, without "." or ".." components, empty
 * components or control characters, short enough to join to root), else -1. n_out,
 * if not NULL, receives how many entries it holds.
 */
int	unreadable_parse_check(const char *text, size_t len, const char *root, size_t *n_out);

#endif

/*
 * Removing a directory tree that something untrusted may have shaped: a run's old
 * working directory, its TMPDIR. The walk goes from a directory descriptor down with
 * openat/unlinkat, never follows a symlink (a link is removed as a link), never opens
 * anything but directories (no FIFO can block it), and never crosses into another
 * filesystem (a mount point below is left, and reported).
 */
#ifndef CW_RMTREE_H
#define CW_RMTREE_H

/*
 * Remove name (and everything below it) from the directory open at parentfd. 0, or -1
 * with errno (the first failure; the walk goes on removing what it can). ENOENT for
 * name is success. Depth is bounded: a deeper tree fails with ELOOP.
 */
int	rmtree_at(int parentfd, const char *name);
/* rmtree_at on an absolute path: its parent is opened without following the last link. */
int	rmtree_path(const char *path);

#endif

/* Path helpers: home and Clockwork-home lookup, ~ expansion, canonicalisation. */
#ifndef CW_PATHS_H
#define CW_PATHS_H
#include <stddef.h>

/* The user's home: $HOME if absolute, else the passwd entry. 0 or -1 (errno). */
int	paths_home(char *out, size_t outlen);
/* Clockwork's root: $CLOCKWORK_HOME if set (must be absolute), else ~/.clockwork. */
int	paths_clockwork_home(char *out, size_t outlen);
/* "~" and "~/x" become home and home/x; anything else is copied. -1/ENAMETOOLONG. */
int	paths_expand_home(const char *in, const char *home, char *out, size_t outlen);
/*
 * Canonical absolute form of path with every symlink resolved. A path that does not
 * exist (yet) is resolved as far as it exists and the rest is appended lexically, so
 * a grant for a file that appears later still lands where its parent really is.
 * Relative paths are refused (EINVAL).
 */
int	paths_canonical(const char *path, char *out, size_t outlen);
/* 1 if path equals dir or lies beneath it (both canonical), else 0. */
int	paths_within(const char *path, const char *dir);
/* mkdir -p with mode for each created component. 0 or -1 (errno). */
int	paths_mkdir_p(const char *path, unsigned mode);
/*
 * mkdir -p of rel beneath the trusted directory root, never following a link below it:
 * a component that is not a directory is removed and made one. 0 or -1 (errno).
 */
int	paths_mkdir_beneath(const char *root, const char *rel, unsigned mode);
/* Write text to a kernel control file in one write. 0 or -1 (errno). */
int	paths_write_control(const char *path, const char *text);

#endif

/*
 * supervise.c: a run's processes as the daemon sees them (its runner's group and
 * everything below), on the shared process tree (common/proctree.c).
 */
#ifndef CW_SUPERVISE_H
#define CW_SUPERVISE_H
#include <stddef.h>
#include <sys/types.h>

struct proctree;

/* Grow set with every live descendant of its members and every member of pgid. */
int	supervise_collect(struct proctree *, pid_t pgid);
/* Signal every live, identity-checked member. Returns how many were signalled. */
int	supervise_signal(const struct proctree *, int sig);
/* Stop every member and its descendants, then SIGKILL them all. Returns the count. */
int	supervise_kill_tree(struct proctree *, pid_t pgid);
/*
 * End and remove a run's cgroup that its runner left (a runner killed hard): the
 * count of processes killed in it, or -1 with err filled when it could not go.
 */
int	supervise_cgroup_end(const char *run_id, char *err, size_t errlen);
/* Children of this process (orphans re-parented to us). */
int	supervise_orphans(pid_t self, struct proctree *out);
int	supervise_save(const struct proctree *, const char *path);
int	supervise_load(struct proctree *, const char *path);

#endif

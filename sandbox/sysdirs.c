/*
 * The system directories every spec grants for reading, and the environment lookup:
 * the part of spec.h that cw-sandbox needs too (the mount view binds each system
 * directory whole, PATH finds the command), in a file of its own so that cw-sandbox
 * links neither the policy nor the configuration.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "paths.h"
#include "spec.h"

/* System directories every toolchain reads; only those that exist are granted. */
static const char *const spec_system_dirs[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
	"/usr/local", "/run/systemd/resolve", "/var/lib/ca-certificates",
	/*
	 * /proc: toolchains read /proc/self, /proc/cpuinfo, /proc/meminfo. Other
	 * processes' /proc/<pid>/environ, mem, fd are guarded by ptrace access checks,
	 * which Landlock restricts to processes inside the same sandbox.
	 */
	"/proc", "/sys",
};

/*
 * The canonical forms of spec_system_dirs ("" where one cannot be resolved), resolved
 * once per process: spec_system grants them, and spec_system_root runs for every
 * grant at every spawn.
 */
const char *
spec_system_canon(size_t i)
{
	static char	 canon[sizeof spec_system_dirs / sizeof spec_system_dirs[0]][PATH_MAX];
	static int	 ready;

	if (!ready) {
		for (size_t j = 0; j < sizeof spec_system_dirs / sizeof spec_system_dirs[0];
		    j++)
			if (paths_canonical(spec_system_dirs[j], canon[j], PATH_MAX) == -1)
				canon[j][0] = '\0';
		ready = 1;
	}
	return canon[i];
}

int
spec_system_root(const char *path, char *root, size_t rootlen)
{
	const char	*canon;

	for (size_t i = 0; i < sizeof spec_system_dirs / sizeof spec_system_dirs[0]; i++) {
		canon = spec_system_canon(i);
		if (canon[0] == '\0' || !paths_within(path, canon))
			continue;
		if ((size_t)snprintf(root, rootlen, "%s", canon) >= rootlen)
			return 0;
		return 1;
	}
	return 0;
}

size_t
spec_system_ndirs(void)
{
	return sizeof spec_system_dirs / sizeof spec_system_dirs[0];
}

const char *
spec_system_dir(size_t i)
{
	return spec_system_dirs[i];
}

const char *
spec_getenv(const struct sandbox_spec *s, const char *name)
{
	size_t	 len = strlen(name);

	for (size_t i = 0; i < s->env.n; i++)
		if (strncmp(s->env.v[i], name, len) == 0 && s->env.v[i][len] == '=')
			return s->env.v[i] + len + 1;
	return NULL;
}

/*
 * cwctl service apparmor [--print] [--bindir DIR] [--dir DIR]: the AppArmor profile
 * that lets cw-sandbox make user namespaces where AppArmor restricts them (Ubuntu 23.10
 * and later: kernel.apparmor_restrict_unprivileged_userns=1). cw-sandbox is the one
 * program of Clockwork that makes them (sandbox/steps.c); the profile is rendered for
 * the cw-sandbox in DIR (default: the directory of this cwctl), written to
 * DIR/clockwork-cw-sandbox (default /etc/apparmor.d) and loaded with apparmor_parser -r.
 * Needs root to write and load; where AppArmor is not active it writes nothing and
 * says so. packaging/apparmor/clockwork-cw-sandbox is this template rendered for
 * /usr/local/bin, kept in step by test/integration/apparmor.sh.
 */
#define _GNU_SOURCE
#include <sys/stat.h>
#include <sys/wait.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cwctl.h"
#include "spawnchild.h"

#define CWCTL_APPARMOR_FILE	"clockwork-cw-sandbox"

/*
 * The lines marked "abi 4.0" are rules AppArmor 4.0 (Ubuntu 24.04) introduced; an older
 * parser (Debian 12's 3.0.8) knows neither them nor abi/4.0, and the test parses the
 * profile there without them (test/integration/apparmor.sh).
 */
const char cwctl_apparmor_profile[] =
"# AppArmor profile for Clockwork's sandbox builder, cw-sandbox.\n"
"#\n"
"# Ubuntu 23.10 and later (kernel.apparmor_restrict_unprivileged_userns=1) let an\n"
"# unconfined program make a user namespace but hold no capability in it, so a normal\n"
"# user's run cannot get its view (a fresh root of bind mounts) and every run is\n"
"# refused. cw-sandbox is the one program of Clockwork that makes a user namespace\n"
"# (cw-runner starts every sandboxed process through it): this profile names it and\n"
"# lets it use user namespaces, as bubblewrap's bwrap-userns-restrict does for bwrap:\n"
"#  - cw-sandbox itself may use the capabilities of the user namespace it makes: it\n"
"#    needs them to build the view, before it executes anything of the run;\n"
"#  - whatever it executes (the run's command) is stacked with cw-sandbox-payload,\n"
"#    which denies every capability, so cw-sandbox is no way around the restriction\n"
"#    for other programs.\n"
"# Both profiles allow everything else: cw-sandbox's own layers (the view, Landlock,\n"
"# seccomp) decide what a run may do; this profile only names the program.\n"
"#\n"
"# Installed from source with: sudo cwctl service apparmor\n"
"# (writes /etc/apparmor.d/" CWCTL_APPARMOR_FILE " for the cw-sandbox next to that\n"
"# cwctl and loads it with apparmor_parser -r). Site additions: local/"
    CWCTL_APPARMOR_FILE ".\n"
"\n"
"abi <abi/4.0>,\n"
"\n"
"include <tunables/global>\n"
"\n"
"profile cw-sandbox @BINDIR@/cw-sandbox flags=(attach_disconnected,mediate_deleted) {\n"
"  allow capability,\n"
"  allow file rwlkm /{**,},\n"
"  allow network,\n"
"  allow unix,\n"
"  allow ptrace,\n"
"  allow signal,\n"
"  allow mqueue,       # abi 4.0\n"
"  allow io_uring,     # abi 4.0\n"
"  allow userns,       # abi 4.0\n"
"  allow mount,\n"
"  allow umount,\n"
"  allow pivot_root,\n"
"  allow dbus,\n"
"  allow px /** -> cw-sandbox//&cw-sandbox-payload,\n"
"\n"
"  include if exists <local/" CWCTL_APPARMOR_FILE ">\n"
"}\n"
"\n"
"profile cw-sandbox-payload flags=(attach_disconnected,mediate_deleted) {\n"
"  allow file rwlkm /{**,},\n"
"  allow network,\n"
"  allow unix,\n"
"  allow ptrace,\n"
"  allow signal,\n"
"  allow mqueue,       # abi 4.0\n"
"  allow io_uring,     # abi 4.0\n"
"  allow userns,       # abi 4.0\n"
"  allow mount,\n"
"  allow umount,\n"
"  allow pivot_root,\n"
"  allow dbus,\n"
"  allow pix /** -> &cw-sandbox-payload,\n"
"\n"
"  audit deny capability,\n"
"\n"
"  include if exists <local/" CWCTL_APPARMOR_FILE "-payload>\n"
"}\n";

/*
 * The profile for the cw-sandbox in bindir, newly allocated; NULL with errno EINVAL
 * when the path holds a character an AppArmor attachment cannot carry unquoted (a
 * space, a glob, a comma).
 */
char *
cwctl_apparmor_render(const char *bindir)
{
	const char	*at, *t = cwctl_apparmor_profile, *key = "@BINDIR@";
	size_t		 n = 0, rl = strlen(bindir), kl = strlen(key);
	char		*out, *o;

	if (bindir[0] != '/' || strspn(bindir, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-") != rl) {
		errno = EINVAL;
		return NULL;
	}
	for (at = t; (at = strstr(at, key)) != NULL; at += kl)
		n++;
	if ((out = malloc(strlen(t) + n * rl + 1)) == NULL)
		return NULL;
	for (o = out; (at = strstr(t, key)) != NULL; t = at + kl) {
		memcpy(o, t, (size_t)(at - t));
		o += at - t;
		memcpy(o, bindir, rl);
		o += rl;
	}
	strcpy(o, t);
	return out;
}

/*
 * 1 when AppArmor is active, restricts unprivileged user namespaces, and no cw-sandbox
 * profile is loaded (or the list of profiles cannot be read: the command that loads it
 * is then worth saying).
 */
int
cwctl_apparmor_needed(void)
{
	char	 line[512];
	FILE	*f;
	int	 loaded = 0;

	if (access("/sys/kernel/security/apparmor", F_OK) == -1 ||
	    (f = fopen("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "re")) == NULL)
		return 0;
	if (fgets(line, sizeof line, f) == NULL || atoi(line) != 1) {
		fclose(f);
		return 0;
	}
	fclose(f);
	if ((f = fopen("/sys/kernel/security/apparmor/profiles", "re")) == NULL)
		return 1;
	while (!loaded && fgets(line, sizeof line, f) != NULL)
		loaded = strncmp(line, "cw-sandbox ", 11) == 0;
	fclose(f);
	return !loaded;
}

static int
cwctl_apparmor_usage(void)
{
	fprintf(stderr, "usage: cwctl service apparmor [--print] [--bindir DIR] [--dir DIR]\n");
	return CWCTL_EXIT_USAGE;
}

/* Load path with apparmor_parser -r (replace); its own messages go to stderr. */
static int
cwctl_apparmor_load(const char *path)
{
	const char	*parsers[] = { "/sbin/apparmor_parser", "/usr/sbin/apparmor_parser" };
	const char	*parser = NULL;
	char		*argv[6], *env[SPAWNCHILD_ENV_MAX], err[512];
	struct spawnchild sp;
	int		 status;

	for (size_t i = 0; i < sizeof parsers / sizeof parsers[0] && parser == NULL; i++)
		if (access(parsers[i], X_OK) == 0)
			parser = parsers[i];
	if (parser == NULL) {
		fprintf(stderr, "cwctl: no apparmor_parser (install the apparmor package); "
		    "%s is written but not loaded\n", path);
		return -1;
	}
	argv[0] = (char *)parser;
	argv[1] = "-r";
	argv[2] = "-W";
	argv[3] = (char *)path;
	argv[4] = NULL;
	memset(&sp, 0, sizeof sp);
	sp.path = parser;
	sp.argv = argv;
	spawnchild_env_tool(env, SPAWNCHILD_ENV_MAX, 0, NULL);
	sp.env = env;
	sp.fds[0] = -1;
	sp.fds[1] = 1;
	sp.fds[2] = 2;
	sp.nfds = 3;
	if ((status = spawnchild_run(&sp, err, sizeof err)) != 0) {
		fprintf(stderr, "cwctl: %s -r -W %s failed (%s); the profile is written but "
		    "not loaded\n", parser, path, status == -1 ? err : "its status is not 0");
		return -1;
	}
	return 0;
}

int
cwctl_apparmor(int argc, char **argv)
{
	char		 exe[PATH_MAX], bindir[PATH_MAX + 16], path[PATH_MAX + 64];
	char		 tmp[PATH_MAX + 80];
	const char	*dir = "/etc/apparmor.d", *given = NULL;
	char		*text;
	ssize_t		 n;
	int		 print = 0;
	FILE		*f;

	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--print") == 0)
			print = 1;
		else if (strcmp(argv[i], "--bindir") == 0 && i + 1 < argc)
			given = argv[++i];
		else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			dir = argv[++i];
		else
			return cwctl_apparmor_usage();
	}
	if (given != NULL)
		snprintf(bindir, sizeof bindir, "%s", given);
	else {
		if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) == -1) {
			fprintf(stderr, "cwctl: cannot find this program's directory: %s\n",
			    strerror(errno));
			return CWCTL_EXIT_FAILURE;
		}
		exe[n] = '\0';
		snprintf(bindir, sizeof bindir, "%s", dirname(exe));
	}
	if ((text = cwctl_apparmor_render(bindir)) == NULL) {
		fprintf(stderr, "cwctl: %s: %s\n", bindir, errno == EINVAL ? "an AppArmor "
		    "profile can name only an absolute path of letters, digits and / . _ + -"
		    : strerror(errno));
		return CWCTL_EXIT_FAILURE;
	}
	if (print) {
		fputs(text, stdout);
		free(text);
		return CWCTL_EXIT_OK;
	}
	if (access("/sys/kernel/security/apparmor", F_OK) == -1) {
		printf("AppArmor is not active on this kernel: nothing restricts cw-sandbox's "
		    "user namespaces, no profile is needed (nothing written)\n");
		free(text);
		return CWCTL_EXIT_OK;
	}
	snprintf(path, sizeof path, "%s/%s", dir, CWCTL_APPARMOR_FILE);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	if ((f = fopen(tmp, "we")) != NULL && fputs(text, f) == EOF) {
		fclose(f);
		f = NULL;
	}
	if (f == NULL || fclose(f) != 0 || chmod(tmp, 0644) == -1 || rename(tmp, path) == -1) {
		fprintf(stderr, "cwctl: %s: %s%s\n", path, strerror(errno), geteuid() != 0 ?
		    " (run it as root: sudo cwctl service apparmor)" : "");
		unlink(tmp);
		free(text);
		return CWCTL_EXIT_FAILURE;
	}
	free(text);
	printf("wrote %s for %s/cw-sandbox\n", path, bindir);
	if (cwctl_apparmor_load(path) == -1)
		return CWCTL_EXIT_FAILURE;
	printf("loaded: cw-sandbox may now make user namespaces (cwctl doctor checks it)\n");
	return CWCTL_EXIT_OK;
}

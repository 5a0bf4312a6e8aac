/*
 * cwctl service install [--print] [--force] | uninstall | status: the service
 * definition that starts clockworkd at login — a systemd user unit on Linux, a launchd
 * agent on macOS — pointing at the clockworkd next to this cwctl, with the Clockwork
 * home, a PATH that finds the engines (this cwctl's directory, then the PATH it was
 * installed from) and, for systemd, an optional environment file for the providers'
 * variables. A different definition already there is replaced only with --force. The
 * files in packaging/ are these templates rendered with PATH=/usr/bin:/bin and no
 * CLOCKWORK_HOME, kept in step by test_api (test_service_files).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "cwctl.h"
#include "enginepick.h"
#include "paths.h"

const char cwctl_service_systemd[] =
"[Unit]\n"
"Description=Clockwork daemon: runs AI coding agents in a sandbox\n"
"Documentation=man:cwctl(1)\n"
"\n"
"[Service]\n"
"Type=simple\n"
"Environment=\"CLOCKWORK_HOME=@CWHOME@\"\n"
"# Where the engines (claude, ...) are found: this PATH is the one install ran with.\n"
"Environment=\"PATH=@PATH@\"\n"
"# The providers' variables (ANTHROPIC_API_KEY=...), one NAME=value a line; optional.\n"
"EnvironmentFile=-@CWHOME@/environment\n"
"ExecStart=@BINDIR@/clockworkd --foreground\n"
"ExecReload=/bin/kill -HUP $MAINPID\n"
"# SIGTERM goes to clockworkd alone, and nothing else is killed when it exits: live\n"
"# runs go on and the next clockworkd re-attaches to them (SPEC R1).\n"
"KillMode=process\n"
"# Each run gets a cgroup with its process and memory limits, made in this subtree.\n"
"Delegate=yes\n"
"TimeoutStopSec=30\n"
"Restart=on-failure\n"
"RestartSec=2\n"
"\n"
"[Install]\n"
"WantedBy=default.target\n";

const char cwctl_service_launchd[] =
"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
"<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" "
"\"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n"
"<plist version=\"1.0\">\n"
"<dict>\n"
"\t<key>Label</key>\n"
"\t<string>dev.clockwork.clockworkd</string>\n"
"\t<key>ProgramArguments</key>\n"
"\t<array>\n"
"\t\t<string>@BINDIR@/clockworkd</string>\n"
"\t\t<string>--foreground</string>\n"
"\t</array>\n"
"\t<key>EnvironmentVariables</key>\n"
"\t<dict>\n"
"@ENVXML@"
"\t</dict>\n"
"\t<key>RunAtLoad</key>\n"
"\t<true/>\n"
"\t<key>KeepAlive</key>\n"
"\t<dict>\n"
"\t\t<key>SuccessfulExit</key>\n"
"\t\t<false/>\n"
"\t</dict>\n"
"\t<key>ProcessType</key>\n"
"\t<string>Background</string>\n"
"</dict>\n"
"</plist>\n";

/* text with every key replaced by value; newly allocated (text is freed). */
static char *
cwctl_service_subst(char *text, const char *key, const char *value)
{
	char	*at, *out;

	while (text != NULL && (at = strstr(text, key)) != NULL) {
		if (asprintf(&out, "%.*s%s%s", (int)(at - text), text, value,
		    at + strlen(key)) == -1)
			out = NULL;
		free(text);
		text = out;
	}
	return text;
}

/* systemd expands % in Environment= and paths: a literal one is %%. */
static char *
cwctl_service_percent(const char *s)
{
	char	*out, *o;

	if ((out = malloc(strlen(s) * 2 + 1)) == NULL)
		return NULL;
	for (o = out; *s != '\0'; s++) {
		if (*s == '%')
			*o++ = '%';
		*o++ = *s;
	}
	*o = '\0';
	return out;
}

/*
 * The template rendered for this cwctl: bindir, the Clockwork home ($CLOCKWORK_HOME, or
 * the default), and PATH = bindir:$PATH. NULL when a value cannot be written into the
 * file (a quote, a newline, or for launchd markup).
 */
char *
cwctl_service_render(const char *tmpl, const char *bindir)
{
	const char	*cwhome = getenv("CLOCKWORK_HOME"), *path = getenv("PATH");
	char		*text, *p = NULL, *h = NULL, *xml = NULL;
	int		 launchd = strstr(tmpl, "<plist") != NULL;

	if (path == NULL || *path == '\0')
		path = "/usr/bin:/bin";
	if (cwhome != NULL && *cwhome == '\0')
		cwhome = NULL;
	if (strpbrk(bindir, "\"\n\\<>&") != NULL || strpbrk(path, "\"\n\\<>&") != NULL ||
	    (cwhome != NULL && strpbrk(cwhome, "\"\n\\<>&") != NULL)) {
		errno = EINVAL;
		return NULL;
	}
	if (asprintf(&p, "%s:%s", bindir, path) == -1)
		return NULL;
	text = strdup(tmpl);
	if (launchd) {
		if (asprintf(&xml, "\t\t<key>PATH</key>\n\t\t<string>%s</string>\n%s%s%s", p,
		    cwhome != NULL ? "\t\t<key>CLOCKWORK_HOME</key>\n\t\t<string>" : "",
		    cwhome != NULL ? cwhome : "", cwhome != NULL ? "</string>\n" : "") == -1)
			xml = NULL;
		text = xml != NULL ? cwctl_service_subst(text, "@ENVXML@", xml) : NULL;
	} else {
		char *pp = cwctl_service_percent(p);

		h = cwhome != NULL ? cwctl_service_percent(cwhome) : strdup("%h/.clockwork");
		text = pp != NULL && h != NULL ? cwctl_service_subst(text, "@PATH@", pp) : NULL;
		text = h != NULL ? cwctl_service_subst(text, "@CWHOME@", h) : NULL;
		free(pp);
	}
	text = cwctl_service_subst(text, "@BINDIR@", bindir);
	free(xml);
	free(h);
	free(p);
	return text;
}

/* The file's contents, or NULL (errno ENOENT when there is none). */
static char *
cwctl_service_read(const char *path)
{
	FILE	*f;
	char	*buf;
	size_t	 n;

	if ((f = fopen(path, "re")) == NULL)
		return NULL;
	if ((buf = malloc(65537)) == NULL) {
		fclose(f);
		return NULL;
	}
	n = fread(buf, 1, 65536, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Write path whole: a temporary file renamed over it. */
static int
cwctl_service_write(const char *path, const char *text)
{
	char	 tmp[PATH_MAX + 128];
	FILE	*f;

	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	if ((f = fopen(tmp, "we")) == NULL)
		return -1;
	fputs(text, f);
	if (fclose(f) != 0 || rename(tmp, path) == -1) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/*
 * The first config.yaml (issue 23), when there is none: engines.default set to the
 * first agent CLI on the PATH the service will run with (this cwctl's directory, then
 * the install's PATH), so that a task named without --engine runs an agent. byok is
 * never written here: its key is added later (cwctl key add), and the daemon itself
 * picks byok when a key is stored and no CLI is found. An existing file is the
 * person's and is not touched.
 */
static void
cwctl_service_first_config(const char *bindir)
{
	char		 conf[PATH_MAX], dir[PATH_MAX], found[PATH_MAX], *path = NULL;
	const char	*e, *env = getenv("PATH");
	FILE		*f;
	int		 fd;

	if (config_default_path(conf, sizeof conf) == -1 ||
	    paths_clockwork_home(dir, sizeof dir) == -1)
		return;
	if (access(conf, F_OK) == 0) {
		printf("%s exists: its engines.default (if any) stands\n", conf);
		return;
	}
	if (asprintf(&path, "%s:%s", bindir, env != NULL ? env : "") == -1)
		return;
	e = enginepick_on_path(path, found, sizeof found);
	free(path);
	if (e == NULL) {
		printf("no agent engine (%s) is on the service's PATH: install one, or set "
		    "engines.default in %s; until then the daemon picks one when a task "
		    "names none (byok, with a key from cwctl key add)\n", enginepick_order(),
		    conf);
		return;
	}
	if (paths_mkdir_p(dir, 0700) == -1 ||
	    (fd = open(conf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) == -1) {
		fprintf(stderr, "cwctl: %s: %s (engines.default not written)\n", conf,
		    strerror(errno));
		return;
	}
	if ((f = fdopen(fd, "w")) == NULL) {
		close(fd);
		return;
	}
	fprintf(f, "# Written by cwctl service install. The engine a task gets when it names\n"
	    "# none: the first of %s found on the service's PATH\n"
	    "# (%s). docs/configuration.md lists the rest.\n"
	    "engines:\n  default: %s\n", enginepick_order(), found, e);
	if (fclose(f) != 0)
		fprintf(stderr, "cwctl: %s: %s\n", conf, strerror(errno));
	else
		printf("wrote %s: engines.default: %s (found %s)\n", conf, e, found);
}

static int
cwctl_service_usage(void)
{
	fprintf(stderr, "usage: cwctl service install [--print] [--force] [--systemd | --launchd]\n"
	    "       cwctl service uninstall | status [--systemd | --launchd]\n"
	    "       cwctl service apparmor [--print] [--bindir DIR] [--dir DIR]   (as root)\n");
	return CWCTL_EXIT_USAGE;
}

int
cwctl_service(int argc, char **argv)
{
	char		 exe[PATH_MAX], home[PATH_MAX], dir[PATH_MAX + 32], path[PATH_MAX + 96];
	char		*text, *old;
	const char	*tmpl, *verb;
	ssize_t		 n;
	int		 print = 0, force = 0, mac;

#ifdef __APPLE__
	mac = 1;
#else
	mac = 0;
#endif
	if (argc < 2)
		return cwctl_service_usage();
	verb = argv[1];
	if (strcmp(verb, "apparmor") == 0)
		return cwctl_apparmor(argc, argv);
	if (strcmp(verb, "install") != 0 && strcmp(verb, "uninstall") != 0 &&
	    strcmp(verb, "status") != 0) {
		fprintf(stderr, "cwctl: service: unknown subcommand '%s'\n", verb);
		return cwctl_service_usage();
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--print") == 0 && strcmp(verb, "install") == 0)
			print = 1;
		else if (strcmp(argv[i], "--force") == 0 && strcmp(verb, "install") == 0)
			force = 1;
		else if (strcmp(argv[i], "--launchd") == 0)
			mac = 1;
		else if (strcmp(argv[i], "--systemd") == 0)
			mac = 0;
		else {
			fprintf(stderr, "cwctl: service %s: unknown option '%s'\n", verb, argv[i]);
			return cwctl_service_usage();
		}
	}
	if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) == -1) {
		fprintf(stderr, "cwctl: cannot find this program's directory: %s\n",
		    strerror(errno));
		return CWCTL_EXIT_FAILURE;
	}
	exe[n] = '\0';
	tmpl = mac ? cwctl_service_launchd : cwctl_service_systemd;
	if ((text = cwctl_service_render(tmpl, dirname(exe))) == NULL) {
		fprintf(stderr, "cwctl: the directory, CLOCKWORK_HOME or PATH holds a character "
		    "the service file cannot carry (a quote, backslash, newline or <>&)\n");
		return CWCTL_EXIT_FAILURE;
	}
	if (print) {
		fputs(text, stdout);
		free(text);
		return CWCTL_EXIT_OK;
	}
	if (paths_home(home, sizeof home) == -1) {
		fprintf(stderr, "cwctl: cannot find your home directory\n");
		free(text);
		return CWCTL_EXIT_FAILURE;
	}
	snprintf(dir, sizeof dir, "%s/%s", home, mac ? "Library/LaunchAgents" :
	    ".config/systemd/user");
	snprintf(path, sizeof path, "%s/%s", dir, mac ? "dev.clockwork.clockworkd.plist" :
	    "clockworkd.service");
	old = cwctl_service_read(path);
	if (strcmp(verb, "status") == 0) {
		if (old == NULL)
			printf("not installed: %s (cwctl service install)\n", path);
		else if (strcmp(old, text) == 0)
			printf("installed: %s, as this cwctl writes it\n", path);
		else
			printf("installed: %s, but it differs from what this cwctl would write "
			    "(cwctl service install --print shows it; --force replaces it)\n", path);
		free(old);
		free(text);
		return CWCTL_EXIT_OK;
	}
	if (strcmp(verb, "uninstall") == 0) {
		free(text);
		if (old == NULL) {
			printf("not installed: %s\n", path);
			return CWCTL_EXIT_OK;
		}
		free(old);
		if (mac)
			printf("first: launchctl unload -w %s\n", path);
		else
			printf("first: systemctl --user disable --now clockworkd\n");
		if (unlink(path) == -1) {
			fprintf(stderr, "cwctl: %s: %s\n", path, strerror(errno));
			return CWCTL_EXIT_FAILURE;
		}
		printf("removed %s\n", path);
		return CWCTL_EXIT_OK;
	}
	if (old != NULL && strcmp(old, text) == 0) {
		printf("already installed: %s\n", path);
		free(old);
		free(text);
		cwctl_service_first_config(exe);
		return CWCTL_EXIT_OK;
	}
	if (old != NULL && !force) {
		fprintf(stderr, "cwctl: %s exists and differs from what this cwctl would "
		    "write; see it with cwctl service install --print, replace it with "
		    "--force\n", path);
		free(old);
		free(text);
		return CWCTL_EXIT_FAILURE;
	}
	free(old);
	if (paths_mkdir_p(dir, 0755) == -1 || cwctl_service_write(path, text) == -1) {
		fprintf(stderr, "cwctl: %s: %s\n", path, strerror(errno));
		free(text);
		return CWCTL_EXIT_FAILURE;
	}
	free(text);
	printf("wrote %s\n", path);
	cwctl_service_first_config(exe);
	/* Only root can load the profile: say the one command (exe is now the bindir). */
	if (!mac && cwctl_apparmor_needed())
		printf("AppArmor restricts user namespaces on this system, and cw-runner has "
		    "no profile yet: every run is refused until you run\n"
		    "  sudo %s/cwctl service apparmor\n", exe);
	if (mac)
		printf("start it with: launchctl load -w %s\n", path);
	else
		printf("provider keys go in %s/environment (NAME=value lines)\n"
		    "start it with: systemctl --user daemon-reload && "
		    "systemctl --user enable --now clockworkd\n",
		    getenv("CLOCKWORK_HOME") != NULL ? getenv("CLOCKWORK_HOME") : "~/.clockwork");
	return CWCTL_EXIT_OK;
}

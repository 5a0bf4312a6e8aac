/*
 * cwctl service install [--print]: write the service definition that starts
 * clockworkd at login — a systemd user unit on Linux, a launchd agent on macOS —
 * pointing at the clockworkd next to this cwctl. The templates are the files in
 * packaging/, kept in step with the text here by test_api (test_service_files).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cwctl.h"
#include "paths.h"

const char cwctl_service_systemd[] =
"[Unit]\n"
"Description=Clockwork daemon: runs AI coding agents in a sandbox\n"
"Documentation=man:cwctl(1)\n"
"\n"
"[Service]\n"
"Type=simple\n"
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

/* The template with @BINDIR@ replaced; newly allocated. */
char *
cwctl_service_render(const char *tmpl, const char *bindir)
{
	const char	*at = strstr(tmpl, "@BINDIR@");
	char		*out = NULL;

	if (at == NULL)
		return strdup(tmpl);
	if (asprintf(&out, "%.*s%s%s", (int)(at - tmpl), tmpl, bindir, at + 8) == -1)
		return NULL;
	if (strstr(out, "@BINDIR@") != NULL) {
		char *again = cwctl_service_render(out, bindir);

		free(out);
		return again;
	}
	return out;
}

int
cwctl_service(int argc, char **argv)
{
	char		 exe[PATH_MAX], home[PATH_MAX], dir[PATH_MAX + 32], path[PATH_MAX + 96];
	char		*text;
	const char	*tmpl;
	ssize_t		 n;
	FILE		*f;
	int		 print = 0, mac;

#ifdef __APPLE__
	mac = 1;
#else
	mac = 0;
#endif
	if (argc < 2 || strcmp(argv[1], "install") != 0)
		goto usage;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--print") == 0)
			print = 1;
		else if (strcmp(argv[i], "--launchd") == 0)
			mac = 1;
		else if (strcmp(argv[i], "--systemd") == 0)
			mac = 0;
		else
			goto usage;
	}
	if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) == -1) {
		fprintf(stderr, "cwctl: cannot find this program's directory: %s\n",
		    strerror(errno));
		return CWCTL_EXIT_FAILURE;
	}
	exe[n] = '\0';
	tmpl = mac ? cwctl_service_launchd : cwctl_service_systemd;
	if ((text = cwctl_service_render(tmpl, dirname(exe))) == NULL)
		return CWCTL_EXIT_FAILURE;
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
	if (paths_mkdir_p(dir, 0755) == -1 || (f = fopen(path, "we")) == NULL) {
		fprintf(stderr, "cwctl: %s: %s\n", path, strerror(errno));
		free(text);
		return CWCTL_EXIT_FAILURE;
	}
	fputs(text, f);
	free(text);
	if (fclose(f) != 0) {
		fprintf(stderr, "cwctl: %s: %s\n", path, strerror(errno));
		return CWCTL_EXIT_FAILURE;
	}
	printf("wrote %s\n", path);
	if (mac)
		printf("start it with: launchctl load -w %s\n", path);
	else
		printf("start it with: systemctl --user daemon-reload && "
		    "systemctl --user enable --now clockworkd\n");
	return CWCTL_EXIT_OK;
usage:
	fprintf(stderr, "usage: cwctl service install [--print] [--systemd | --launchd]\n");
	return CWCTL_EXIT_USAGE;
}

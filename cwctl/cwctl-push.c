/*
 * cwctl run push RUN [--remote R] [--pr] [--json]: send a finished run's branch to a
 * remote, and open a pull request for it.
 *
 * The push runs here, in cwctl, as the person who typed it, not in the daemon: it is
 * their explicit act, with their own git and their own credentials (ssh-agent, a
 * credential helper, gh's login), which reach git through their environment, passed
 * whole (environ). The daemon has none of that and must not need it, and nothing of a
 * run's sandbox is involved: the branch is git objects in the user's repository. Once
 * git says it pushed, the daemon is told (POST /api/runs/ID/pushed), which records and
 * journals it; a push git refused is not recorded.
 */
#define _GNU_SOURCE
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "cwctl.h"
#include "gitremote.h"
#include "json.h"
#include "runreview.h"
#include "spawnchild.h"

extern char **environ;

static int
cwctl_push_usage(void)
{
	fprintf(stderr, "usage: cwctl run push RUN [--remote REMOTE] [--pr] [--json]\n"
	    "  push the run's branch with your own git (default remote: the upstream\n"
	    "  remote of the branch the repository is on, else origin); --pr then opens a\n"
	    "  pull request with gh or glab, or prints the page that opens one\n");
	return CWCTL_EXIT_USAGE;
}

/* Whether name is an executable file in a directory of PATH. */
static int
cwctl_push_on_path(const char *name)
{
	const char	*path = getenv("PATH"), *p, *e;
	char		 f[4096];

	for (p = path; p != NULL && *p != '\0'; p = *e != '\0' ? e + 1 : e) {
		e = strchrnul(p, ':');
		if (e == p)
			continue;
		if (snprintf(f, sizeof f, "%.*s/%s", (int)(e - p), p, name) <
		    (int)sizeof f && access(f, X_OK) == 0)
			return 1;
	}
	return 0;
}

/*
 * A command's first line of output (git config, git remote get-url), or all of it when
 * whole (trailing newlines cut), in repo, with the user's environment; its stderr is
 * the user's. 0 with out, -1 when it failed or said nothing.
 */
static int
cwctl_push_output_all(const char *repo, char *const *argv, char *out, size_t outlen,
    int whole)
{
	struct spawnchild	 s;
	pid_t			 pid;
	ssize_t			 n;
	size_t			 off = 0;
	int			 p[2], status;
	char			 err[256];

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	memset(&s, 0, sizeof s);
	s.path = argv[0];
	s.argv = argv;
	s.env = environ;
	s.cwd = repo;
	s.fds[0] = -1;
	s.fds[1] = p[1];
	s.fds[2] = 2;
	s.nfds = 3;
	if (spawnchild_start(&s, &pid, err, sizeof err) == -1) {
		fprintf(stderr, "cwctl: %s: %s\n", argv[0], err);
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[1]);
	while (off + 1 < outlen && ((n = read(p[0], out + off, outlen - 1 - off)) > 0 ||
	    (n == -1 && errno == EINTR)))
		if (n > 0)
			off += (size_t)n;
	close(p[0]);
	out[off] = '\0';
	if (!whole)
		out[strcspn(out, "\r\n")] = '\0';
	while (off > 0 && (out[off - 1] == '\n' || out[off - 1] == '\r'))
		out[--off] = '\0';
	if (spawnchild_wait(pid, &status) == -1 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0 || out[0] == '\0')
		return -1;
	return 0;
}

static int
cwctl_push_output(const char *repo, char *const *argv, char *out, size_t outlen)
{
	return cwctl_push_output_all(repo, argv, out, outlen, 0);
}

/* Run argv in repo as the user, on the user's terminal (stdout to stderr for --json). */
static int
cwctl_push_run(const char *repo, char *const *argv, int json)
{
	struct spawnchild	s;
	char			err[256];
	int			rc;

	memset(&s, 0, sizeof s);
	s.path = argv[0];
	s.argv = argv;
	s.env = environ;
	s.cwd = repo;
	s.fds[0] = 0;
	s.fds[1] = json ? 2 : 1;
	s.fds[2] = 2;
	s.nfds = 3;
	if ((rc = spawnchild_run(&s, err, sizeof err)) == -1)
		fprintf(stderr, "cwctl: %s: %s\n", argv[0], err);
	return rc;
}

/*
 * The remote a branch of repo goes to: the upstream remote of the branch the
 * repository is on (where the person's own pushes go), else origin.
 */
static void
cwctl_push_default_remote(const char *repo, char *out, size_t outlen)
{
	char	 head[256], key[320];
	char	*sym[] = { "git", "symbolic-ref", "-q", "--short", "HEAD", NULL };
	char	*cfg[] = { "git", "config", "--get", key, NULL };

	if (cwctl_push_output(repo, sym, head, sizeof head) == 0) {
		snprintf(key, sizeof key, "branch.%s.remote", head);
		if (cwctl_push_output(repo, cfg, out, outlen) == 0 && out[0] != '.')
			return;
	}
	snprintf(out, outlen, "origin");
}

/*
 * --pr: gh or glab when installed (the forge's own, by the remote's URL), else the page.
 * glab is given the title and description (the branch's last commit) and never
 * --fill: with --fill, glab mr create also pushes HEAD, the checkout the person is on,
 * to the source branch (gitlab-org/cli MR 4070; --push=false is ignored there before
 * that fix), which would send a branch of the person's own as the run's, or to a
 * remote they did not name. gh pr create with --head pushes nothing.
 */
static int
cwctl_push_pr(const char *repo, const char *remote, const char *branch, int json,
    cJSON *o)
{
	enum gitremote_forge	 f;
	char			 url[1024], page[2048], path[512], ref[320];
	char			 title[520], body[8200];
	char			*get[] = { "git", "remote", "get-url", (char *)remote, NULL };
	char			*subj[] = { "git", "log", "-1", "--format=%s", ref, "--", NULL };
	char			*msg[] = { "git", "log", "-1", "--format=%b", ref, "--", NULL };
	char			*gh[] = { "gh", "pr", "create", "--head", (char *)branch,
				    "--fill", NULL };
	char			*glab[] = { "glab", "mr", "create", "--source-branch",
				    (char *)branch, title, body,
				    "--yes", NULL };
	int			 have_gh, have_glab, rc;

	if (cwctl_push_output(repo, get, url, sizeof url) == -1)
		url[0] = '\0';
	f = gitremote_parse(url, path, sizeof path);
	have_gh = cwctl_push_on_path("gh");
	have_glab = cwctl_push_on_path("glab");
	if (have_gh && (f == GITREMOTE_GITHUB || (f == GITREMOTE_NONE && !have_glab))) {
		json_add_string(o, "pr_tool", "gh");
		rc = cwctl_push_run(repo, gh, json);
	} else if (have_glab && f != GITREMOTE_GITHUB) {
		snprintf(ref, sizeof ref, "refs/heads/%s", branch);
		/*
		 * "--title=..." in one word: the run wrote the message, and a subject
		 * of "-x" must stay a value; a description of "-" opens glab's editor.
		 */
		memcpy(title, "--title=", 8);
		memcpy(body, "--description=", 14);
		if (cwctl_push_output(repo, subj, title + 8, sizeof title - 8) == -1)
			snprintf(title + 8, sizeof title - 8, "%s", branch);
		if (cwctl_push_output_all(repo, msg, body + 14, sizeof body - 14, 1) == -1 ||
		    strcmp(body + 14, "-") == 0)
			snprintf(body + 14, sizeof body - 14, "%s", title + 8);
		json_add_string(o, "pr_tool", "glab");
		rc = cwctl_push_run(repo, glab, json);
	} else if (gitremote_compare_url(url, branch, page, sizeof page) == 0) {
		json_add_string(o, "pr_url", page);
		if (!json)
			printf("open a pull request: %s\n", page);
		return CWCTL_EXIT_OK;
	} else {
		fprintf(stderr, "cwctl: remote %s is not a github.com or gitlab.com "
		    "repository and neither gh nor glab is installed: open the pull "
		    "request on its host\n", cwctl_vis(remote));
		return CWCTL_EXIT_FAILURE;
	}
	if (rc != 0) {
		fprintf(stderr, "cwctl: the branch was pushed, but opening the pull request "
		    "failed (exit %d)\n", rc);
		return CWCTL_EXIT_FAILURE;
	}
	return CWCTL_EXIT_OK;
}

/* Refused when the run is landed or discarded (no branch), or has not ended. */
static int
cwctl_push_refused(const char *id, const cJSON *run)
{
	const cJSON	*rv = cJSON_GetObjectItemCaseSensitive(run, "review");
	const char	*st = json_get_string(rv, "state");
	char		 said[768];

	if (st != NULL && (strcmp(st, "landed") == 0 || strcmp(st, "discarded") == 0)) {
		runreview_said(id, st, json_get_string(rv, "at"),
		    json_get_string(rv, "detail"), said, sizeof said);
		fprintf(stderr, "cwctl: %s: its branch is gone, nothing to push\n",
		    cwctl_vis(said));
		return CWCTL_EXIT_DENIED;
	}
	if (!cJSON_IsObject(rv) && json_get_string(run, "branch") != NULL) {
		fprintf(stderr, "cwctl: run %s is still %s: push once it ends\n",
		    cwctl_vis(id), cwctl_vis(json_get_string(run, "status")));
		return CWCTL_EXIT_BUSY;
	}
	if (json_get_string(run, "branch") == NULL) {
		fprintf(stderr, "cwctl: run %s has no branch to push\n", cwctl_vis(id));
		return CWCTL_EXIT_FAILURE;
	}
	return CWCTL_EXIT_OK;
}

/* argv[0] is "push". */
int
cwctl_run_push(int argc, char **argv)
{
	const char	*id = NULL, *remote_opt = NULL, *branch, *repo;
	char		 path[320], esc[160], remote[256], refspec[600];
	cJSON		*run = NULL, *task = NULL, *b, *o = NULL, *out;
	int		 pr = 0, json = 0, rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--pr") == 0)
			pr = 1;
		else if (strcmp(argv[i], "--remote") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "cwctl: --remote needs a remote's name or URL\n");
				return CWCTL_EXIT_USAGE;
			}
			remote_opt = argv[++i];
			/* git would read "-..." as an option of its own. */
			if (remote_opt[0] == '-' || remote_opt[0] == '\0') {
				fprintf(stderr, "cwctl: --remote '%s' is not a remote\n",
				    remote_opt);
				return CWCTL_EXIT_USAGE;
			}
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "cwctl: run push: unknown option '%s'\n", argv[i]);
			return cwctl_push_usage();
		} else if (id != NULL) {
			fprintf(stderr, "cwctl: run push: one run at a time ('%s')\n", argv[i]);
			return cwctl_push_usage();
		} else
			id = argv[i];
	}
	if (id == NULL) {
		fprintf(stderr, "cwctl: run push: which run? (cwctl runs --review)\n");
		return cwctl_push_usage();
	}
	if (client_escape(id, esc, sizeof esc) == -1)
		return cwctl_push_usage();
	snprintf(path, sizeof path, "/api/runs/%s", esc);
	if ((rc = client_call("GET", path, NULL, &run)) != 0)
		return rc;
	if ((rc = cwctl_push_refused(id, run)) != 0)
		goto out;
	branch = json_get_string(run, "branch");
	if (client_escape(json_get_string(run, "task"), esc, sizeof esc) == -1) {
		rc = CWCTL_EXIT_FAILURE;
		goto out;
	}
	snprintf(path, sizeof path, "/api/tasks/%s", esc);
	if ((rc = client_call("GET", path, NULL, &task)) != 0)
		goto out;
	if ((repo = json_get_string(task, "repo")) == NULL) {
		fprintf(stderr, "cwctl: run %s's task has no repository\n", cwctl_vis(id));
		rc = CWCTL_EXIT_FAILURE;
		goto out;
	}
	if (remote_opt != NULL)
		snprintf(remote, sizeof remote, "%s", remote_opt);
	else
		cwctl_push_default_remote(repo, remote, sizeof remote);
	/* The branch by its full name on both sides: never a tag or another ref. */
	snprintf(refspec, sizeof refspec, "refs/heads/%s:refs/heads/%s", branch, branch);
	{
		char *push[] = { "git", "push", "--", remote, refspec, NULL };

		if (cwctl_push_run(repo, push, json) != 0) {
			fprintf(stderr, "cwctl: git push to %s failed: nothing recorded\n",
			    cwctl_vis(remote));
			rc = CWCTL_EXIT_FAILURE;
			goto out;
		}
	}
	b = cJSON_CreateObject();
	json_add_string(b, "remote", remote);
	json_add_string(b, "branch", branch);
	if (client_escape(id, esc, sizeof esc) == -1) {
		cJSON_Delete(b);
		rc = CWCTL_EXIT_FAILURE;
		goto out;
	}
	snprintf(path, sizeof path, "/api/runs/%s/pushed", esc);
	rc = client_call("POST", path, b, &o);
	cJSON_Delete(b);
	if (rc != 0) {
		fprintf(stderr, "cwctl: the branch was pushed to %s, but clockworkd did not "
		    "record it\n", cwctl_vis(remote));
		goto out;
	}
	out = o;
	if (!json)
		printf("pushed %s to %s\n", cwctl_vis(branch), cwctl_vis(remote));
	if (pr)
		rc = cwctl_push_pr(repo, remote, branch, json, out);
	if (json)
		cwctl_print_json(out);
out:
	cJSON_Delete(o);
	cJSON_Delete(task);
	cJSON_Delete(run);
	return rc;
}

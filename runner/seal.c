#define _GNU_SOURCE	/* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"
#include "seal.h"

#define SEAL_OUT_MAX	4096

/*
 * Run by /bin/sh inside the sandbox: $1 branch, $2 base, $3 bundle path, $4 run id.
 * Command-line -c settings outrank the repository's own config, so a planted
 * fsmonitor, hooks path or signing setting cannot make the seal hang or fail (the run
 * could only hurt itself with them anyway: all of this is sandboxed). Its one line of
 * output: "<tip> <bundle 0|1> <committed 0|1>".
 */
static const char seal_script[] =
	"set -eu\n"
	"branch=$1 base=$2 bundle=$3 run=$4 committed=0\n"
	"g() { git -c core.hooksPath=/dev/null -c core.fsmonitor=false "
	    "-c commit.gpgsign=false -c user.name=Clockwork "
	    "-c user.email=clockwork@localhost \"$@\"; }\n"
	/*
	 * git blocks opening a FIFO wherever it expects a file (index, HEAD, config,
	 * an object), and writes through a symlink planted at a reflog or at
	 * COMMIT_EDITMSG: neither belongs in a git directory, so they go first (find only
	 * lstats them). The timeout remains the backstop.
	 */
	"G=$PWD/.git\n"
	"find \"$G\" -xdev \\( -type p -o -type s -o -type b -o -type c -o -type l \\) "
	    "-delete\n"
	"g rev-parse -q --verify 'HEAD^{commit}' >/dev/null || "
	    "{ echo 'the run left HEAD without a commit' >&2; exit 1; }\n"
	/*
	 * A fresh index from HEAD: the run's own index may be crafted (entries git
	 * refuses, paths that climb out), and what counts is the files as they are.
	 */
	"export GIT_INDEX_FILE=\"$G/clockwork-seal.index\"\n"
	"rm -f \"$GIT_INDEX_FILE\"\n"
	"g read-tree HEAD\n"
	"if [ -n \"$(g status --porcelain --untracked-files=all)\" ]; then\n"
	"  g add -A\n"
	"  if ! g diff --cached --quiet; then\n"
	"    g commit -q --no-verify -m \"clockwork: work left uncommitted at the end of "
	    "run $run\"\n"
	"    committed=1\n"
	"  fi\n"
	"fi\n"
	"tip=$(g rev-parse --verify 'HEAD^{commit}')\n"
	"g update-ref \"refs/heads/$branch\" \"$tip\"\n"
	"rm -f \"$bundle\"\n"
	"if g merge-base --is-ancestor \"$tip\" \"$base\"; then b=0; else\n"
	"  g bundle create -q \"$bundle\" \"refs/heads/$branch\" \"^$base\"; b=1\n"
	"fi\n"
	"echo \"$tip $b $committed\"\n";

static int
seal_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* Read both pipes to their end or the deadline; 0, or -1 when time ran out. */
static int
seal_collect(int outfd, int errfd, char *out, size_t outlen, char *msg, size_t msglen,
    int deadline)
{
	struct pollfd	 pfd[2] = { { outfd, POLLIN, 0 }, { errfd, POLLIN, 0 } };
	char		*bufs[2] = { out, msg };
	size_t		 lens[2] = { outlen, msglen }, got[2] = { 0, 0 };
	char		 sink[512];
	ssize_t		 n;
	int		 open_fds = 2, left;

	while (open_fds > 0) {
		if ((left = deadline - seal_now_ms()) <= 0)
			return -1;
		if (poll(pfd, 2, left) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (int i = 0; i < 2; i++) {
			if (pfd[i].fd < 0 || pfd[i].revents == 0)
				continue;
			if (got[i] + 1 < lens[i])
				n = read(pfd[i].fd, bufs[i] + got[i], lens[i] - 1 - got[i]);
			else
				n = read(pfd[i].fd, sink, sizeof sink);	/* past the cap */
			if (n == -1 && errno == EINTR)
				continue;
			if (n <= 0) {
				pfd[i].fd = -1;
				open_fds--;
				continue;
			}
			if (got[i] + 1 < lens[i])
				got[i] += (size_t)n;
		}
	}
	out[got[0]] = '\0';
	msg[got[1]] = '\0';
	return 0;
}

int
seal_run(struct sandbox_spec *spec, const struct cgroup_run *cg, const char *branch,
    const char *base, const char *run_id, struct seal_result *res, char *err,
    size_t errlen)
{
	struct sandbox_launch	 l;
	struct sandbox_report	 rep;
	char			 bundle[PATH_MAX], out[SEAL_OUT_MAX], msg[1024], *nl, *last;
	char			*argv[] = { "/bin/sh", "-c", (char *)seal_script, "cw-seal",
				    (char *)branch, (char *)base, bundle, (char *)run_id, NULL };
	int			 op[2] = { -1, -1 }, ep[2] = { -1, -1 }, refused, st = 0;
	int			 timed_out, b, c;
	pid_t			 pid;

	memset(res, 0, sizeof *res);
	if ((size_t)snprintf(bundle, sizeof bundle, "%s/.git/%s", spec->workdir,
	    SEAL_BUNDLE_NAME) >= sizeof bundle) {
		snprintf(err, errlen, "seal: bundle path too long");
		return -1;
	}
	if (pipe2(op, O_CLOEXEC) == -1 || pipe2(ep, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "seal: pipe: %s", strerror(errno));
		goto fail;
	}
	memset(&l, 0, sizeof l);
	l.argv = argv;
	l.fd_in = -1;
	l.fd_out = op[1];
	l.fd_err = ep[1];
	l.new_session = 1;
	l.cgroup = cg;
	pid = apply_sandbox(spec, &l, &rep, &refused, msg, sizeof msg);
	sandbox_report_free(&rep);
	close(op[1]);
	close(ep[1]);
	op[1] = ep[1] = -1;
	if (pid == -1) {
		snprintf(err, errlen, "seal: %s", msg);
		goto fail;
	}
	timed_out = seal_collect(op[0], ep[0], out, sizeof out, msg, sizeof msg,
	    seal_now_ms() + SEAL_TIMEOUT_MS) == -1;
	if (timed_out) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	close(op[0]);
	close(ep[0]);
	if (timed_out) {
		snprintf(err, errlen, "seal: git did not finish within %d s",
		    SEAL_TIMEOUT_MS / 1000);
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		if ((nl = strrchr(msg, '\n')) != NULL && nl[1] == '\0')
			*nl = '\0';
		if ((nl = strrchr(msg, '\n')) != NULL)
			memmove(msg, nl + 1, strlen(nl + 1) + 1);	/* git's last word */
		snprintf(err, errlen, "seal: git failed%s%s", msg[0] ? ": " : "", msg);
		return -1;
	}
	/*
	 * The last line is the seal's own (a filter the run configured runs inside the
	 * seal and may write lines before it); the daemon checks the tip anyway.
	 */
	if ((nl = strrchr(out, '\n')) != NULL && nl[1] == '\0')
		*nl = '\0';
	last = (nl = strrchr(out, '\n')) != NULL ? nl + 1 : out;
	if (sscanf(last, "%64[0-9a-f] %d %d", res->tip, &b, &c) != 3 ||
	    strlen(res->tip) < 40) {
		snprintf(err, errlen, "seal: unexpected output from the seal");
		return -1;
	}
	res->bundle = b == 1;
	res->committed = c == 1;
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (op[i] != -1)
			close(op[i]);
		if (ep[i] != -1)
			close(ep[i]);
	}
	return -1;
}

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
#define SEAL_SKIP_MAGIC	":(exclude,literal)"

/*
 * Run by /bin/sh inside the sandbox: $1 branch, $2 base, $3 bundle path, $4 run id,
 * $5 "list" or "seal". Command-line -c settings outrank the repository's own config,
 * so a planted fsmonitor, hooks path or signing setting cannot make the seal hang or
 * fail (the run could only hurt itself with them anyway: all of this is sandboxed).
 * "list" prints git's listing of the tree (tracked and untracked, the repository's
 * ignore rules applied) for sealskip.c; "seal" reads on stdin the pathspecs of what
 * to leave out (NUL-separated, each literal, none tracked) and prints one line:
 * "<tip> <bundle 0|1> <committed 0|1>".
 */
static const char seal_script[] =
	"set -eu\n"
	"branch=$1 base=$2 bundle=$3 run=$4 mode=$5 committed=0\n"
	"unset GIT_LITERAL_PATHSPECS GIT_GLOB_PATHSPECS GIT_NOGLOB_PATHSPECS "
	    "GIT_ICASE_PATHSPECS\n"
	"g() { git -c core.hooksPath=/dev/null -c core.fsmonitor=false "
	    "-c commit.gpgsign=false -c user.name=Clockwork "
	    "-c user.email=clockwork@localhost \"$@\"; }\n"
	"G=$PWD/.git skip=$PWD/.git/clockwork-seal.skip\n"
	/*
	 * stdin first, before anything can write to a pipe the runner does not read yet;
	 * rm first, so that the redirection follows no planted symlink or FIFO.
	 */
	"rm -f \"$skip\"\n"
	"if [ \"$mode\" = seal ]; then cat > \"$skip\"; fi\n"
	/*
	 * git blocks opening a FIFO wherever it expects a file (index, HEAD, config,
	 * an object), and writes through a symlink planted at a reflog or at
	 * COMMIT_EDITMSG: neither belongs in a git directory, so they go first (find only
	 * lstats them). The timeout remains the backstop.
	 */
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
	"if [ \"$mode\" = list ]; then\n"
	"  g ls-files -z -t -c -o --exclude-standard; exit 0\n"
	"fi\n"
	"if [ -n \"$(g status --porcelain --untracked-files=all)\" ]; then\n"
	/* Only exclusions: git adds the implicit "." they subtract from. */
	"  if [ -s \"$skip\" ]; then\n"
	"    g add -A --pathspec-from-file=\"$skip\" --pathspec-file-nul\n"
	"  else g add -A; fi\n"
	"  if ! g diff --cached --quiet; then\n"
	"    g commit -q --no-verify -m \"clockwork: work left uncommitted at the end of "
	    "run $run\"\n"
	"    committed=1\n"
	"  fi\n"
	"fi\n"
	"rm -f \"$skip\"\n"
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

/* What one run of the script gave back. */
struct seal_out {
	char	*out;		/* stdout, NUL-terminated (one NUL past len) */
	size_t	 len;
	int	 over;		/* 1: stdout went past its cap (the rest was read away) */
	char	 msg[1024];	/* the start of stderr */
	int	 status;
};

/*
 * Read both pipes to their end or the deadline, stdout growing up to outmax bytes;
 * 0, or -1 when time ran out or memory did.
 */
static int
seal_collect(int outfd, int errfd, struct seal_out *o, size_t outmax, int deadline)
{
	struct pollfd	 pfd[2] = { { outfd, POLLIN, 0 }, { errfd, POLLIN, 0 } };
	size_t		 cap = 0, got = 0;
	char		 sink[4096], *nb;
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
		if (pfd[0].fd >= 0 && pfd[0].revents != 0) {
			if (!o->over && cap - o->len < sizeof sink + 1 && cap < outmax + 1) {
				cap = cap == 0 ? 65536 : cap * 2;
				if (cap > outmax + 1)
					cap = outmax + 1;
				if ((nb = realloc(o->out, cap)) == NULL)
					return -1;
				o->out = nb;
			}
			if (!o->over && o->len + 1 < cap)
				n = read(outfd, o->out + o->len, cap - 1 - o->len);
			else {
				n = read(outfd, sink, sizeof sink);	/* past the cap */
				if (n > 0)
					o->over = 1;
			}
			if (n == -1 && errno == EINTR)
				continue;
			if (n <= 0) {
				pfd[0].fd = -1;
				open_fds--;
			} else if (!o->over)
				o->len += (size_t)n;
		}
		if (pfd[1].fd >= 0 && pfd[1].revents != 0) {
			if (got + 1 < sizeof o->msg)
				n = read(errfd, o->msg + got, sizeof o->msg - 1 - got);
			else
				n = read(errfd, sink, sizeof sink);
			if (n == -1 && errno == EINTR)
				continue;
			if (n <= 0) {
				pfd[1].fd = -1;
				open_fds--;
			} else if (got + 1 < sizeof o->msg)
				got += (size_t)n;
		}
	}
	if (o->out == NULL && (o->out = malloc(1)) == NULL)
		return -1;
	o->out[o->len] = '\0';
	o->msg[got] = '\0';
	return 0;
}

/* Write all of buf to fd; a reader that went away ends it early (the exit says why). */
static void
seal_feed(int fd, const char *buf, size_t len)
{
	ssize_t	 n;

	while (len > 0) {
		if ((n = write(fd, buf, len)) == -1) {
			if (errno == EINTR)
				continue;
			return;
		}
		buf += n;
		len -= (size_t)n;
	}
}

/*
 * One run of the script in mode ("list" or "seal") in the run's sandbox, in given on
 * stdin. 0 with o filled (its status git's), or -1 with err.
 */
static int
seal_exec(struct sandbox_spec *spec, const struct cgroup_run *cg, const char *mode,
    char *const args[4], const char *in, size_t inlen, size_t outmax,
    struct seal_out *o, char *err, size_t errlen)
{
	struct sandbox_launch	 l;
	struct sandbox_report	 rep;
	char			*argv[] = { "/bin/sh", "-c", (char *)seal_script, "cw-seal",
				    args[0], args[1], args[2], args[3], (char *)mode, NULL };
	char			 msg[1024];
	int			 op[2] = { -1, -1 }, ep[2] = { -1, -1 }, ip[2] = { -1, -1 };
	int			 refused, timed_out;
	pid_t			 pid;

	memset(o, 0, sizeof *o);
	if (pipe2(op, O_CLOEXEC) == -1 || pipe2(ep, O_CLOEXEC) == -1 ||
	    (in != NULL && pipe2(ip, O_CLOEXEC) == -1)) {
		snprintf(err, errlen, "seal: pipe: %s", strerror(errno));
		goto fail;
	}
	memset(&l, 0, sizeof l);
	l.argv = argv;
	l.fd_in = ip[0];
	l.fd_out = op[1];
	l.fd_err = ep[1];
	l.new_session = 1;
	l.cgroup = cg;
	pid = apply_sandbox(spec, &l, &rep, &refused, msg, sizeof msg);
	sandbox_report_free(&rep);
	close(op[1]);
	close(ep[1]);
	op[1] = ep[1] = -1;
	if (ip[0] != -1) {
		close(ip[0]);
		ip[0] = -1;
	}
	if (pid == -1) {
		snprintf(err, errlen, "seal: %s", msg);
		goto fail;
	}
	/* The script reads all of stdin before it writes anything (seal_script). */
	if (ip[1] != -1) {
		seal_feed(ip[1], in, inlen);
		close(ip[1]);
		ip[1] = -1;
	}
	timed_out = seal_collect(op[0], ep[0], o, outmax,
	    seal_now_ms() + SEAL_TIMEOUT_MS) == -1;
	if (timed_out) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	while (waitpid(pid, &o->status, 0) == -1 && errno == EINTR)
		;
	close(op[0]);
	close(ep[0]);
	if (timed_out) {
		free(o->out);
		o->out = NULL;
		snprintf(err, errlen, "seal: git did not finish within %d s (or out of "
		    "memory)", SEAL_TIMEOUT_MS / 1000);
		return -1;
	}
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (op[i] != -1)
			close(op[i]);
		if (ep[i] != -1)
			close(ep[i]);
		if (ip[i] != -1)
			close(ip[i]);
	}
	return -1;
}

/* Fill err from a failed run of the script: git's last word. */
static int
seal_failed(struct seal_out *o, char *err, size_t errlen)
{
	char	*nl, *msg = o->msg;

	if ((nl = strrchr(msg, '\n')) != NULL && nl[1] == '\0')
		*nl = '\0';
	if ((nl = strrchr(msg, '\n')) != NULL)
		msg = nl + 1;
	snprintf(err, errlen, "seal: git failed%s%s", msg[0] ? ": " : "", msg);
	free(o->out);
	o->out = NULL;
	return -1;
}

/*
 * What to leave out (sealskip.c) as the seal's stdin: one literal exclusion pathspec
 * per entry. A listing that cannot be read or planned leaves nothing out and says so
 * in res->skip_error: the run's work is committed whole, as before.
 */
static int
seal_plan_skip(struct sandbox_spec *spec, const struct cgroup_run *cg,
    char *const args[4], struct seal_result *res, char **in, size_t *inlen, char *err,
    size_t errlen)
{
	struct seal_out	 o;
	char		 why[128], *buf, *p;
	size_t		 len = 0;

	*in = NULL;
	*inlen = 0;
	if (seal_exec(spec, cg, "list", args, NULL, 0, SEALSKIP_LIST_MAX, &o, err,
	    errlen) == -1)
		return -1;
	if (!WIFEXITED(o.status) || WEXITSTATUS(o.status) != 0)
		return seal_failed(&o, err, errlen);
	if (o.over) {
		snprintf(res->skip_error, sizeof res->skip_error, "the tree's listing is "
		    "over %d MiB: no build output was left out", SEALSKIP_LIST_MAX >> 20);
		free(o.out);
		return 0;
	}
	if (sealskip_plan(o.out, o.len, &res->skip, why, sizeof why) == -1) {
		snprintf(res->skip_error, sizeof res->skip_error, "git's listing: %s: no "
		    "build output was left out", why);
		sealskip_free(&res->skip);
		free(o.out);
		return 0;
	}
	free(o.out);
	for (size_t i = 0; i < res->skip.n; i++)
		len += sizeof SEAL_SKIP_MAGIC + strlen(res->skip.v[i].path);
	if (len == 0)
		return 0;
	if ((buf = p = malloc(len)) == NULL) {
		snprintf(err, errlen, "seal: out of memory");
		return -1;
	}
	for (size_t i = 0; i < res->skip.n; i++) {
		size_t	 n = strlen(res->skip.v[i].path);

		/* "a/node_modules/" as the pathspec "a/node_modules": all beneath it. */
		if (n > 1 && res->skip.v[i].path[n - 1] == '/')
			n--;
		memcpy(p, SEAL_SKIP_MAGIC, sizeof SEAL_SKIP_MAGIC - 1);
		p += sizeof SEAL_SKIP_MAGIC - 1;
		memcpy(p, res->skip.v[i].path, n);
		p += n;
		*p++ = '\0';
	}
	*in = buf;
	*inlen = (size_t)(p - buf);
	return 0;
}

int
seal_run(struct sandbox_spec *spec, const struct cgroup_run *cg, const char *branch,
    const char *base, const char *run_id, int keep_outputs, struct seal_result *res,
    char *err, size_t errlen)
{
	struct seal_out	 o;
	char		 bundle[PATH_MAX], *nl, *last, *in = NULL;
	char		*args[4] = { (char *)branch, (char *)base, bundle, (char *)run_id };
	size_t		 inlen = 0;
	int		 b, c, rc;

	memset(res, 0, sizeof *res);
	res->kept_outputs = keep_outputs != 0;
	if ((size_t)snprintf(bundle, sizeof bundle, "%s/.git/%s", spec->workdir,
	    SEAL_BUNDLE_NAME) >= sizeof bundle) {
		snprintf(err, errlen, "seal: bundle path too long");
		return -1;
	}
	if (!keep_outputs && seal_plan_skip(spec, cg, args, res, &in, &inlen, err,
	    errlen) == -1)
		goto fail;
	/* An empty stdin when nothing is left out: the script's cat ends at once. */
	rc = seal_exec(spec, cg, "seal", args, in != NULL ? in : "", inlen, SEAL_OUT_MAX,
	    &o, err, errlen);
	free(in);
	if (rc == -1)
		goto fail;
	if (!WIFEXITED(o.status) || WEXITSTATUS(o.status) != 0) {
		seal_failed(&o, err, errlen);
		goto fail;
	}
	/*
	 * The last line is the seal's own (a filter the run configured runs inside the
	 * seal and may write lines before it); the daemon checks the tip anyway.
	 */
	if ((nl = strrchr(o.out, '\n')) != NULL && nl[1] == '\0')
		*nl = '\0';
	last = (nl = strrchr(o.out, '\n')) != NULL ? nl + 1 : o.out;
	if (sscanf(last, "%64[0-9a-f] %d %d", res->tip, &b, &c) != 3 ||
	    strlen(res->tip) < 40) {
		free(o.out);
		snprintf(err, errlen, "seal: unexpected output from the seal");
		goto fail;
	}
	free(o.out);
	res->bundle = b == 1;
	res->committed = c == 1;
	return 0;
fail:
	sealskip_free(&res->skip);
	return -1;
}

void
seal_result_free(struct seal_result *res)
{
	sealskip_free(&res->skip);
}

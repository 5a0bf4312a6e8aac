/*
 * Importing a repository run's work into the user's repository (SPEC G1), the way a
 * server receives a push. Everything the run could write is untrusted here: its
 * repository, its working files, and the bundle its seal wrote (runner/seal.c). So the
 * daemon never reads any of it on its event loop: a child process does the work and
 * sends back one JSON line, and the loop gives up on it after RUNIMPORT_TIMEOUT_S (a
 * FIFO or a crafted object can stall the child, never the daemon).
 *
 * The child:
 *   1. opens the bundle beneath the run's directory one component at a time with
 *      O_NOFOLLOW and O_NONBLOCK, takes it only if it is a regular file under the size
 *      limit, and copies it into <home>/imports (a link or a FIFO is refused);
 *   2. reads the bundle's header for the commit of refs/heads/<branch> (no other ref
 *      is looked at) and feeds the pack behind it to git index-pack --strict in the
 *      user's repository, which is what a server receiving a push with fsckObjects
 *      does: every object is verified, every link must resolve, and tree paths are
 *      checked by git's own rules, warnings counting as errors (no "..", no ".git" in
 *      any spelling, no malformed modes or names). (git fetch from a bundle does not
 *      fsck before git 2.43, hence index-pack directly.) Then exactly that one branch
 *      is set, through libgit2, to that commit; no hook runs. A branch that exists
 *      already (a continued run works on the branch of the run it continues) only
 *      moves forward and never under a checkout (worktree_branch_advance);
 *   3. moves the run's directory aside and removes it (openat/unlinkat, no link
 *      followed), then adopts the same path as a linked worktree of the user's
 *      repository checked out by libgit2 from the verified branch. The worktree a
 *      person opens later has admin state the daemon wrote, not the run.
 * When a step fails, the run's work goes to <home>/quarantine/<run> instead, made inert
 * (quarantine.c): a bundle the daemon wrote and plain files, never the run's own
 * repository (gc skips it; the report says where it is, that it is untrusted, and how
 * to look at it safely).
 */
#define _GNU_SOURCE	/* close_range */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "json.h"
#include "bundlehdr.h"
#include "log.h"
#include "parsechild.h"
#include "paths.h"
#include "procid.h"
#include "proctree.h"
#include "quarantine.h"
#include "review.h"
#include "rmtree.h"
#include "runimport.h"
#include "runs.h"
#include "spawnchild.h"
#include "worktree.h"

#define RUNIMPORT_TIMEOUT_S	600
#define RUNIMPORT_BUNDLE_MAX	(2LL * 1024 * 1024 * 1024)	/* bytes */
#define RUNIMPORT_RESULT_MAX	(64 * 1024)
#define RUNIMPORT_JOB_MAX	(16 * 1024)	/* the job the child reads */
#define RUNIMPORT_JOB_VERSION	1
#define RUNIMPORT_BUNDLE_NAME	"clockwork-run.bundle"	/* runner/seal.h */

struct runimport {
	struct run		*run;
	runimport_done_fn	 done;
	pid_t			 pid;
	int			 fd;
	struct event		*ev_read, *ev_timeout;
	char			*buf;
	size_t			 len;
	int			 finished;
};

/* What the child needs, copied out of the run before the fork. */
struct runimport_job {
	const char	*home, *repo, *workdir, *branch, *run_id, *base;
	const char	*tip;		/* the seal's tip, or NULL */
	int		 bundle;	/* the seal wrote a bundle */
	int		 sealed;	/* the seal succeeded */
	int		 nothing_ran;	/* refused: the directory is the daemon's own */
	long long	 checkout_max;	/* bytes the kept worktree's checkout may add */
};

/*
 * The child's own bounds: a crafted object must not make it take the machine's memory
 * (it runs outside any run's cgroup). Private memory, not the packs git maps.
 */
#define RUNIMPORT_DATA_MAX	(1536LL * 1024 * 1024)
#if defined(__SANITIZE_ADDRESS__)
#define RUNIMPORT_ASAN	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RUNIMPORT_ASAN	1
#endif
#endif

/* ---- the child ---------------------------------------------------------------------- */

static void
runimport_reply(int fd, cJSON *o)
{
	char	*text = json_print(o);
	size_t	 off = 0, len;
	ssize_t	 n;

	if (text == NULL)
		return;
	len = strlen(text);
	while (off < len) {
		n = write(fd, text + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	(void)!write(fd, "\n", 1);
	cJSON_free(text);
}

/*
 * Open <workdir>/.git/<bundle> for reading without following any link and without
 * blocking on a FIFO; only a regular file under the size limit is accepted.
 */
static int
runimport_open_bundle(const char *workdir, char *err, size_t errlen)
{
	struct stat	 st;
	int		 wd, gd, fd;

	if ((wd = open(workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%.400s: %s", workdir, strerror(errno));
		return -1;
	}
	gd = openat(wd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(wd);
	if (gd == -1) {
		snprintf(err, errlen, "%.400s/.git: %s (not the run's repository)", workdir,
		    strerror(errno));
		return -1;
	}
	fd = openat(gd, RUNIMPORT_BUNDLE_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY | O_CLOEXEC);
	close(gd);
	if (fd == -1) {
		snprintf(err, errlen, "the run's bundle: %s%s", strerror(errno),
		    errno == ELOOP ? " (a symbolic link: refused)" : "");
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "the run's bundle is not a regular file: refused");
		close(fd);
		return -1;
	}
	if (st.st_size > RUNIMPORT_BUNDLE_MAX) {
		snprintf(err, errlen, "the run's bundle is %lld bytes, over the limit of %lld",
		    (long long)st.st_size, RUNIMPORT_BUNDLE_MAX);
		close(fd);
		return -1;
	}
	return fd;
}

static int
runimport_copy(int in, const char *to, char *err, size_t errlen)
{
	char		 buf[65536];
	ssize_t		 n, w;
	long long	 total = 0;
	int		 out;

	(void)unlink(to);
	if ((out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) == -1) {
		snprintf(err, errlen, "%.400s: %s", to, strerror(errno));
		return -1;
	}
	while ((n = read(in, buf, sizeof buf)) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* The file may still grow if something of the run survived: bound it. */
		if ((total += n) > RUNIMPORT_BUNDLE_MAX) {
			errno = EFBIG;
			n = -1;
			break;
		}
		for (ssize_t off = 0; off < n; off += w)
			if ((w = write(out, buf + off, (size_t)(n - off))) <= 0) {
				n = -1;
				goto done;
			}
	}
done:
	if (n == -1 || close(out) == -1) {
		snprintf(err, errlen, "copy the run's bundle to %.400s: %s", to,
		    strerror(errno));
		(void)unlink(to);
		return -1;
	}
	return 0;
}

/*
 * Run git with argv, stdin from in (-1: /dev/null), stderr into errpath. Its status or
 * -1. Its environment is fixed (common/spawnchild.c): nothing of the daemon's GIT_* (a
 * GIT_DIR or GIT_CONFIG_PARAMETERS would point it elsewhere) and no terminal prompt.
 */
static int
runimport_git(char *const argv[], int in, const char *errpath)
{
	static char	 prompt[] = "GIT_TERMINAL_PROMPT=0";
	char		*extra[] = { prompt, NULL }, *env[SPAWNCHILD_ENV_MAX], err[512];
	struct spawnchild	 sp;
	int		 efd, rc;

	if ((efd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0600)) == -1)
		return -1;
	spawnchild_env_tool(env, SPAWNCHILD_ENV_MAX, 0, extra);
	memset(&sp, 0, sizeof sp);
	sp.path = argv[0];
	sp.argv = argv;
	sp.env = env;
	sp.fds[0] = in;
	sp.fds[1] = -1;
	sp.fds[2] = efd;
	sp.nfds = 3;
	if ((rc = spawnchild_run(&sp, err, sizeof err)) == -1)
		log_warn("import: %s", err);
	close(efd);
	return rc;
}

/* git's own reason from its stderr in path: its first "error:" line, else its last line. */
static void
runimport_git_error(const char *path, char *out, size_t outlen)
{
	char	 buf[4096], *p, *e, *line;
	ssize_t	 n;
	int	 fd;

	out[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	e = buf + n;
	while (e > buf && (e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	if ((line = strstr(buf, "error: ")) != NULL) {
		if ((p = strchr(line, '\n')) != NULL)
			*p = '\0';
	} else
		line = (p = strrchr(buf, '\n')) != NULL ? p + 1 : buf;
	snprintf(out, outlen, "%.500s", line);
}

/*
 * The bundle's header, parsed by cw-parse (parsechild.h): its first bytes go there and
 * the tip of refs/heads/<branch> and the header's length come back, checked; fd is
 * then left where the pack starts.
 */
static int
runimport_bundle_header(int fd, const char *branch, char *tip, size_t tiplen, char *err,
    size_t errlen)
{
	char	*head;
	size_t	 len = 0, hdrlen;
	ssize_t	 n;
	int	 rc;

	if ((head = malloc(BUNDLEHDR_MAX + 1)) == NULL) {
		snprintf(err, errlen, "the run's bundle header: out of memory");
		return -1;
	}
	while (len < BUNDLEHDR_MAX + 1) {
		if ((n = pread(fd, head + len, BUNDLEHDR_MAX + 1 - len, (off_t)len)) == -1 &&
		    errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	rc = parsechild_bundlehdr(head, len, branch, tip, tiplen, &hdrlen, err, errlen);
	free(head);
	parsechild_stop();	/* the import parses nothing else */
	if (rc == -1)
		return -1;
	if (lseek(fd, (off_t)hdrlen, SEEK_SET) == -1) {
		snprintf(err, errlen, "the run's bundle: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void __attribute__((noreturn))
runimport_child(const struct runimport_job *j, int out)
{
	cJSON			*o = cJSON_CreateObject(), *ds, *autom = NULL;
	struct worktree_stat	 ws;
	char			 dir[PATH_MAX], copy[PATH_MAX + 32], errpath[PATH_MAX + 32];
	char			 old[PATH_MAX + 32], tip[65], final[64], err[1024];
	char			 gitmsg[512];
	struct rlimit		 rl = { RUNIMPORT_DATA_MAX, RUNIMPORT_DATA_MAX };
	int			 fd, rc, over;

	err[0] = '\0';
	/*
	 * Inherited by git index-pack, which the child execs. Not under AddressSanitizer,
	 * whose shadow memory is private memory no such limit leaves room for (the
	 * sanitizer build tests the import's logic, the normal build its bound).
	 */
#if !defined(RUNIMPORT_ASAN)
	if (setrlimit(RLIMIT_DATA, &rl) == -1)
		log_warn("import: cannot bound its memory: %s", strerror(errno));
#else
	(void)rl;
#endif
	snprintf(dir, sizeof dir, "%s/imports", j->home);
	snprintf(copy, sizeof copy, "%s/%s.bundle", dir, j->run_id);
	snprintf(errpath, sizeof errpath, "%s/%s.git-stderr", dir, j->run_id);
	snprintf(old, sizeof old, "%s/%s.old", dir, j->run_id);
	if (paths_mkdir_p(dir, 0700) == -1) {
		snprintf(err, sizeof err, "%.400s: %s", dir, strerror(errno));
		goto fail;
	}
	if (j->nothing_ran) {
		/* Refused before anything ran: the directory is the daemon's own checkout. */
		if (rmtree_path(j->workdir) == -1)
			snprintf(err, sizeof err, "remove %.400s: %s", j->workdir,
			    strerror(errno));
		cJSON_AddBoolToObject(o, "ok", err[0] == '\0');
		cJSON_AddBoolToObject(o, "removed", 1);
		if (err[0] != '\0')
			json_add_string(o, "error", err);
		runimport_reply(out, o);
		_exit(0);
	}
	if (!j->sealed) {
		snprintf(err, sizeof err, "the run was not sealed, so its work cannot be "
		    "imported safely");
		goto fail;
	}
	if (j->bundle) {
		if ((fd = runimport_open_bundle(j->workdir, err, sizeof err)) == -1)
			goto fail;
		rc = runimport_copy(fd, copy, err, sizeof err);
		close(fd);
		if (rc == -1)
			goto fail;
		if ((fd = open(copy, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
			snprintf(err, sizeof err, "%.400s: %s", copy, strerror(errno));
			goto fail;
		}
		if (runimport_bundle_header(fd, j->branch, tip, sizeof tip, err,
		    sizeof err) == -1) {
			close(fd);
			goto fail;
		}
		{
			char *const argv[] = {
				"git", "-C", (char *)j->repo, "-c", "core.hooksPath=/dev/null",
				"index-pack", "--stdin", "--fix-thin", "--strict", NULL
			};

			/* The pack follows the header: git reads it from where we stopped. */
			rc = runimport_git(argv, fd, errpath);
		}
		close(fd);
		(void)unlink(copy);
		if (rc != 0) {
			runimport_git_error(errpath, gitmsg, sizeof gitmsg);
			snprintf(err, sizeof err, "git refused the run's objects%s%s",
			    gitmsg[0] ? ": " : "", gitmsg);
			(void)unlink(errpath);
			goto fail;
		}
		(void)unlink(errpath);
		if (worktree_branch_advance(j->repo, j->branch, tip, err, sizeof err) == -1)
			goto fail;
	} else {
		/*
		 * No bundle: the run added nothing, so its tip must already be the base or
		 * in the base's history. The seal's word for it is not trusted (a run can
		 * write to the seal's output): anything else is refused.
		 */
		if (worktree_contains(j->repo, j->base, j->tip) != 1) {
			snprintf(err, sizeof err, "the run's tip %.64s is not in the history "
			    "of its base %.64s, and it sent no objects", j->tip, j->base);
			goto fail;
		}
		if (worktree_branch_advance(j->repo, j->branch, j->tip, err,
		    sizeof err) == -1)
			goto fail;
	}
	if (worktree_rev(j->repo, j->branch, final, sizeof final, err, sizeof err) == -1)
		goto fail;
	if (worktree_diffstat(j->repo, j->base, final, &ws, err, sizeof err) == -1)
		goto fail;
	/* The run's directory goes; a checkout from verified objects takes its place. */
	over = ws.added_bytes > j->checkout_max || ws.largest > WORKTREE_BLOB_MAX;
	if (rename(j->workdir, old) == -1) {
		snprintf(err, sizeof err, "move %.400s aside: %s", j->workdir,
		    strerror(errno));
		goto fail;
	}
	if (rmtree_path(old) == -1)
		log_warn("import: could not remove all of %s: %s", old, strerror(errno));
	/*
	 * The automation files the run changed (SPEC U3) are listed in the report and
	 * held back in the kept worktree, so that a person's tool opened there (Claude
	 * Code, direnv, an editor) does not act on them until the person chooses.
	 */
	if (review_automation(j->repo, j->base, j->branch, &autom, err, sizeof err) == -1)
		goto fail;
	/*
	 * A checkout over the budget is not made (issue 26, item 6): the branch holds
	 * the work, verified; what it would write (hard links, a sparse file, N copies
	 * of one blob) is the person's to check out, or not.
	 */
	if (over) {
		cJSON	*co = cJSON_AddObjectToObject(o, "checkout");

		cJSON_AddBoolToObject(co, "skipped", 1);
		cJSON_AddNumberToObject(co, "bytes", (double)ws.added_bytes);
		cJSON_AddNumberToObject(co, "largest", (double)ws.largest);
		cJSON_AddNumberToObject(co, "budget", (double)j->checkout_max);
		snprintf(err, sizeof err, "the kept worktree was not checked out: the run's "
		    "branch adds %lld MiB across its files (largest %lld MiB), over the "
		    "checkout budget of %lld MiB (import_checkout_max_mb) or the %lld MiB a "
		    "file may have; the work is on the branch (cwctl run diff)",
		    ws.added_bytes >> 20, ws.largest >> 20, j->checkout_max >> 20,
		    WORKTREE_BLOB_MAX >> 20);
		json_add_string(co, "why", err);
		err[0] = '\0';
		cJSON_AddBoolToObject(o, "ok", 1);
		json_add_string(o, "final_commit", final);
		if ((ds = cJSON_AddObjectToObject(o, "diffstat")) != NULL)
			cJSON_AddNumberToObject(ds, "files_changed", (double)ws.files);
		runimport_reply(out, o);
		_exit(0);
	}
	if (worktree_adopt(j->repo, j->workdir, j->run_id, j->branch, autom, err,
	    sizeof err) == -1) {
		cJSON_AddBoolToObject(o, "ok", 0);
		json_add_string(o, "error", err);
		json_add_string(o, "final_commit", final);
		runimport_reply(out, o);
		_exit(0);
	}
	cJSON_AddBoolToObject(o, "ok", 1);
	json_add_string(o, "final_commit", final);
	if (cJSON_GetArraySize(autom) > 0) {
		cJSON_AddItemToObject(o, "automation", autom);
		autom = NULL;
	}
	if ((ds = cJSON_AddObjectToObject(o, "diffstat")) != NULL) {
		cJSON_AddNumberToObject(ds, "files_changed", (double)ws.files);
		cJSON_AddNumberToObject(ds, "insertions", (double)ws.insertions);
		cJSON_AddNumberToObject(ds, "deletions", (double)ws.deletions);
	}
	runimport_reply(out, o);
	_exit(0);
fail:
	cJSON_AddBoolToObject(o, "ok", 0);
	json_add_string(o, "error", err);
	{
		struct quarantine_job	 q = {
			.home = j->home, .repo = j->repo, .workdir = j->workdir,
			.branch = j->branch, .run_id = j->run_id, .tip = j->tip, .why = err,
		};

		if (quarantine_make(&q, o) == -1)
			json_add_string(o, "quarantine_error", strerror(errno));
	}
	runimport_reply(out, o);
	_exit(0);
}

/* ---- the daemon's side -------------------------------------------------------------- */

static void
runimport_end(struct runimport *im, const char *why)
{
	struct run	*r = im->run;
	cJSON		*res = NULL;

	if (im->finished)
		return;
	im->finished = 1;
	event_del(im->ev_read);
	event_del(im->ev_timeout);
	if (why == NULL && im->len > 0)
		res = json_parse(im->buf, im->len);
	if (res == NULL) {
		res = cJSON_CreateObject();
		cJSON_AddBoolToObject(res, "ok", 0);
		json_add_string(res, "error", why != NULL ? why :
		    "the import ended without a result");
	}
	/*
	 * Whatever is left of the child (and any git it started) ends with it, and it is
	 * reaped here: it has closed its end, so it is exiting or killed now, and a zombie
	 * left for the run's final sweep would be counted as a leftover of the run.
	 */
	if (im->pid > 0) {
		kill(-im->pid, SIGKILL);
		while (waitpid(im->pid, NULL, 0) == -1 && errno == EINTR)
			;
	}
	im->done(r, res);
}

static void
runimport_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct runimport	*im = arg;
	char			 buf[4096];
	ssize_t			 n;

	n = read(fd, buf, sizeof buf);
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		runimport_end(im, NULL);
		return;
	}
	if (im->len + (size_t)n > RUNIMPORT_RESULT_MAX) {
		runimport_end(im, "the import's result was too long");
		return;
	}
	memcpy(im->buf + im->len, buf, (size_t)n);
	im->len += (size_t)n;
	im->buf[im->len] = '\0';
}

static void
runimport_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	runimport_end(arg, "the import did not finish in time (the run's files may be "
	    "shaped to stall it)");
}

/* The job, one JSON line: what runimport_child_main() reads on its stdin. */
static char *
runimport_job_text(const struct runimport_job *j)
{
	cJSON	*o = cJSON_CreateObject();
	char	*text;

	if (o == NULL)
		return NULL;
	cJSON_AddNumberToObject(o, "v", RUNIMPORT_JOB_VERSION);
	cJSON_AddStringToObject(o, "home", j->home);
	cJSON_AddStringToObject(o, "repo", j->repo);
	cJSON_AddStringToObject(o, "workdir", j->workdir);
	cJSON_AddStringToObject(o, "branch", j->branch);
	cJSON_AddStringToObject(o, "run_id", j->run_id);
	cJSON_AddStringToObject(o, "base", j->base);
	if (j->tip != NULL)
		cJSON_AddStringToObject(o, "tip", j->tip);
	cJSON_AddBoolToObject(o, "bundle", j->bundle);
	cJSON_AddBoolToObject(o, "sealed", j->sealed);
	cJSON_AddBoolToObject(o, "nothing_ran", j->nothing_ran);
	cJSON_AddNumberToObject(o, "checkout_max", (double)j->checkout_max);
	cJSON_AddNumberToObject(o, "log_level", (double)log_get_level());
	text = json_print(o);
	cJSON_Delete(o);
	return text;
}

/*
 * Start the import child: clockworkd itself, executed again (common/spawnchild.c) with
 * --import-child, so that it holds nothing of the daemon's (heap, keys, store,
 * sockets): the job on its stdin, its result on its stdout (out), the daemon's stderr
 * and its log file (3, or /dev/null) for its log lines.
 */
static int
runimport_exec(const struct runimport_job *j, int out, pid_t *pid)
{
	char		*argv[] = { "clockworkd", "--import-child", NULL };
	char		 self[PATH_MAX], err[PATH_MAX + 128], *text;
	struct spawnchild	 sp;
	ssize_t		 n;
	size_t		 len, off = 0;
	int		 in[2], rc;

	if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) <= 0) {
		log_warn("import: cannot find clockworkd itself: %s", strerror(errno));
		return -1;
	}
	self[n] = '\0';
	if ((text = runimport_job_text(j)) == NULL)
		return -1;
	len = strlen(text);
	/* A job is a few hundred bytes: it fits the pipe, so it is written before. */
	if (len >= RUNIMPORT_JOB_MAX || pipe2(in, O_CLOEXEC) == -1) {
		cJSON_free(text);
		return -1;
	}
	while (off < len && (n = write(in[1], text + off, len - off)) > 0)
		off += (size_t)n;
	cJSON_free(text);
	close(in[1]);
	if (off < len) {
		close(in[0]);
		return -1;
	}
	memset(&sp, 0, sizeof sp);
	sp.path = self;
	sp.argv = argv;
	sp.env = NULL;
	sp.fds[0] = in[0];
	sp.fds[1] = out;
	sp.fds[2] = 2;
	sp.fds[3] = log_file_fd();
	sp.nfds = 4;
	sp.new_pgrp = 1;
	rc = spawnchild_start(&sp, pid, err, sizeof err);
	close(in[0]);
	if (rc == -1)
		log_warn("import: %s", err);
	return rc;
}

/* Strings of the job, checked: a missing one is the daemon's bug, refused. */
static const char *
runimport_job_string(const cJSON *o, const char *name, int optional)
{
	const char	*v = json_get_string(o, name);

	if (v == NULL && !optional) {
		fprintf(stderr, "clockworkd --import-child: the job has no %s\n", name);
		_exit(2);
	}
	return v;
}

int
runimport_child_main(void)
{
	struct runimport_job	 j;
	char			*buf;
	cJSON			*o;
	size_t			 len = 0;
	ssize_t			 n;
	double			 v;
	int			 b;

	if ((buf = malloc(RUNIMPORT_JOB_MAX)) == NULL)
		_exit(1);
	while (len < RUNIMPORT_JOB_MAX - 1 &&
	    (n = read(0, buf + len, RUNIMPORT_JOB_MAX - 1 - len)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			fprintf(stderr, "clockworkd --import-child: stdin: %s\n",
			    strerror(errno));
			_exit(2);
		}
		len += (size_t)n;
	}
	if ((o = json_parse(buf, len)) == NULL || json_get_number(o, "v", &v) == -1 ||
	    v != RUNIMPORT_JOB_VERSION) {
		fprintf(stderr, "clockworkd --import-child: not an import job of version "
		    "%d on stdin (started by clockworkd only)\n", RUNIMPORT_JOB_VERSION);
		_exit(2);
	}
	free(buf);
	if (json_get_number(o, "log_level", &v) == 0 && v >= LOG_ERROR && v <= LOG_DEBUG)
		log_init("clockworkd", (enum log_level)v, 1);
	(void)log_attach_fd(3);
	memset(&j, 0, sizeof j);
	j.home = runimport_job_string(o, "home", 0);
	j.repo = runimport_job_string(o, "repo", 0);
	j.workdir = runimport_job_string(o, "workdir", 0);
	j.branch = runimport_job_string(o, "branch", 0);
	j.run_id = runimport_job_string(o, "run_id", 0);
	j.base = runimport_job_string(o, "base", 0);
	j.tip = runimport_job_string(o, "tip", 1);
	j.bundle = json_get_bool(o, "bundle", &b) == 0 && b;
	j.sealed = json_get_bool(o, "sealed", &b) == 0 && b;
	j.nothing_ran = json_get_bool(o, "nothing_ran", &b) == 0 && b;
	j.checkout_max = json_get_number(o, "checkout_max", &v) == 0 ? (long long)v : 0;
	runimport_child(&j, 1);	/* does not return */
}

int
runimport_start(struct run *r, const cJSON *seal, int nothing_ran, runimport_done_fn done)
{
	struct runimport	*im;
	struct runimport_job	 j;
	struct timeval		 tv = { RUNIMPORT_TIMEOUT_S, 0 };
	int			 p[2], b = 0;

	memset(&j, 0, sizeof j);
	j.home = r->d->home;
	j.repo = r->repo;
	j.workdir = r->workdir;
	j.branch = r->branch;
	j.run_id = r->id;
	j.base = r->base_commit;
	j.nothing_ran = nothing_ran;
	j.checkout_max = (long long)r->d->cfg.import_checkout_max_mb << 20;
	if (seal != NULL && (j.tip = json_get_string(seal, "tip")) != NULL &&
	    json_get_bool(seal, "bundle", &b) == 0) {
		j.sealed = 1;
		j.bundle = b;
	}
	if ((im = calloc(1, sizeof *im)) == NULL ||
	    (im->buf = malloc(RUNIMPORT_RESULT_MAX + 1)) == NULL) {
		free(im);
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) == -1) {
		free(im->buf);
		free(im);
		return -1;
	}
	if (runimport_exec(&j, p[1], &im->pid) == -1) {
		close(p[0]);
		close(p[1]);
		free(im->buf);
		free(im);
		return -1;
	}
	close(p[1]);
	/*
	 * The import child is the run's: the once-a-second sweep of strays
	 * (runs_supervise_tick) must not take it for one and kill it.
	 */
	{
		struct procid	 pi;

		if (procid_stat(im->pid, &pi) == 0)
			proctree_add(&r->procs, im->pid, pi.start);
	}
	im->run = r;
	im->done = done;
	im->fd = p[0];
	evutil_make_socket_nonblocking(im->fd);
	im->ev_read = event_new(r->d->base, im->fd, EV_READ | EV_PERSIST, runimport_read_cb,
	    im);
	im->ev_timeout = evtimer_new(r->d->base, runimport_timeout_cb, im);
	if (im->ev_read == NULL || im->ev_timeout == NULL) {
		kill(-im->pid, SIGKILL);
		runimport_free(im);
		return -1;
	}
	event_add(im->ev_read, NULL);
	evtimer_add(im->ev_timeout, &tv);
	r->import = im;
	return 0;
}

void
runimport_free(struct runimport *im)
{
	if (im == NULL)
		return;
	if (im->ev_read != NULL)
		event_free(im->ev_read);
	if (im->ev_timeout != NULL)
		event_free(im->ev_timeout);
	if (im->fd != -1)
		close(im->fd);
	free(im->buf);
	free(im);
}

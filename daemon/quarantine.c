/*
 * Quarantine (SPEC U3): where a repository run's work goes when the daemon refuses to
 * import it. The run's directory is a git repository the run shaped: its .git/config
 * can name core.fsmonitor, core.pager, aliases, hooks paths, and any folder of its
 * files can hold another .git. A person who opens that with git (which is what a
 * report about refused work invites) runs the run's code outside any sandbox. So
 * quarantine never holds a repository. It holds, in <home>/quarantine/<run>/:
 *   run.bundle  the run's branch as a git bundle that the daemon wrote itself, with
 *               libgit2, from the run's object store wrapped as a bare object database
 *               (no config file of the run's is read, nothing is run), self-contained
 *               (no prerequisites), so that `git clone` of it into a fresh folder works
 *               with the person's own configuration only;
 *   files/      the run's working files as plain files: regular files and folders
 *               only (no links, FIFOs or devices), no entry named .git in any spelling
 *               at any depth, no automation file (common/automation.h: they are in
 *               the bundle), modes 0600/0700, within a size budget;
 *   README.txt  what this is and how to inspect it safely.
 * The run's directory itself is removed afterwards. All of this runs in the import
 * child (runimport.c), never on the daemon's loop: reading run-controlled files can
 * block or be slow, and the child has a deadline.
 *
 * When the conversion cannot run (the import child was killed at its deadline, a
 * restart found an unsealed run), quarantine_move_raw is the fallback: the directory
 * is moved to <run>/unconverted with its top .git renamed out of git's sight and its
 * mode 0, and the README says what is left (docs/SECURITY.md names the gap).
 */
#define _GNU_SOURCE
#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <git2.h>

#include "automation.h"
#include "json.h"
#include "paths.h"
#include "quarantine.h"
#include "rmtree.h"
#include "worktree.h"

#define QUARANTINE_FILES_MAX	(2LL * 1024 * 1024 * 1024)	/* bytes copied */
#define QUARANTINE_ENTRIES_MAX	200000
#define QUARANTINE_DEPTH_MAX	64

struct quarantine_export {
	long long	 bytes;
	long		 entries, skipped_special, held_back;
	int		 cut;		/* a budget was reached */
	cJSON		*held;		/* automation files held back (first 64) */
};

/* Write all of buf to fd; -1 on error. */
static int
quarantine_write_all(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Copy the regular file name in dirfd to outfd's name in outdir, within the budget. */
static int
quarantine_copy_file(int dirfd, const char *name, int outdir, struct quarantine_export *x)
{
	char	 buf[65536];
	ssize_t	 n;
	int	 in, out, rc = 0;

	struct stat	 st;

	if ((in = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC)) == -1)
		return 0;	/* gone or unreadable: skipped, not fatal */
	/* Swapped for a FIFO or a device since it was looked at: left out. */
	if (fstat(in, &st) == -1 || !S_ISREG(st.st_mode)) {
		x->skipped_special++;
		close(in);
		return 0;
	}
	if ((out = openat(outdir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof buf)) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if ((x->bytes += n) > QUARANTINE_FILES_MAX) {
			x->cut = 1;
			break;
		}
		if (quarantine_write_all(out, buf, (size_t)n) == -1) {
			rc = -1;
			break;
		}
	}
	close(in);
	if (close(out) == -1)
		rc = -1;
	return rc;
}

/*
 * Copy the folder dirfd (at repository path rel) into outdir: regular files and
 * folders, nothing named .git, no automation file. -1 only when writing fails.
 */
static int
quarantine_copy_dir(int dirfd, int outdir, const char *rel, int depth,
    struct quarantine_export *x)
{
	DIR		*d;
	struct dirent	*e;
	struct stat	 st;
	char		 path[PATH_MAX];
	int		 sub, osub, rc = 0;

	if (depth > QUARANTINE_DEPTH_MAX) {
		x->cut = 1;
		close(dirfd);
		return 0;
	}
	if ((d = fdopendir(dirfd)) == NULL) {
		close(dirfd);
		return 0;
	}
	while (rc == 0 && !x->cut && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (strcasecmp(e->d_name, ".git") == 0)
			continue;	/* never a repository, a pointer, a config */
		if (++x->entries > QUARANTINE_ENTRIES_MAX) {
			x->cut = 1;
			break;
		}
		if ((size_t)snprintf(path, sizeof path, "%s%s%s", rel, rel[0] ? "/" : "",
		    e->d_name) >= sizeof path)
			continue;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		if (!S_ISDIR(st.st_mode) && automation_match(path) != NULL) {
			x->held_back++;
			if (cJSON_GetArraySize(x->held) < 64)
				cJSON_AddItemToArray(x->held, cJSON_CreateString(path));
			continue;
		}
		if (S_ISREG(st.st_mode))
			rc = quarantine_copy_file(dirfd, e->d_name, outdir, x);
		else if (S_ISDIR(st.st_mode)) {
			if ((sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC)) == -1)
				continue;
			if (mkdirat(outdir, e->d_name, 0700) == -1 ||
			    (osub = openat(outdir, e->d_name, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC)) == -1) {
				close(sub);
				rc = -1;
				break;
			}
			rc = quarantine_copy_dir(sub, osub, path, depth + 1, x);
			close(osub);
		} else
			x->skipped_special++;
	}
	closedir(d);
	return rc;
}

/* The 40 or 64 hex digits at the start of s into out; -1 when they are not there. */
static int
quarantine_hex(const char *s, char *out, size_t outlen)
{
	size_t	 n = strspn(s, "0123456789abcdef");

	if ((n != 40 && n != 64) || n >= outlen)
		return -1;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

/*
 * The commit the run's repository names for refs/heads/<branch>: its loose ref file,
 * else its packed-refs line (read without following a final link, never blocking).
 */
static int
quarantine_run_tip(int gitfd, const char *branch, char *tip, size_t tiplen)
{
	char	 ref[600], buf[8192], want[620], *line, *save;
	ssize_t	 n;
	int	 fd;

	snprintf(ref, sizeof ref, "refs/heads/%s", branch);
	if ((fd = openat(gitfd, ref, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) != -1) {
		n = read(fd, buf, 128);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			if (quarantine_hex(buf, tip, tiplen) == 0)
				return 0;
		}
	}
	if ((fd = openat(gitfd, "packed-refs", O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	snprintf(want, sizeof want, " %s", ref);
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');

		if (sp != NULL && strcmp(sp, want) == 0 && quarantine_hex(line, tip,
		    tiplen) == 0)
			return 0;
	}
	return -1;
}

static int
quarantine_pack_cb(void *buf, size_t size, void *payload)
{
	return quarantine_write_all(*(int *)payload, buf, size);
}

/*
 * The bundle at out of branch's tip in the run's object store rawgit/objects, with the
 * user's object store (repo's) added: the run borrowed it, and a self-contained bundle
 * needs the history the run started from. libgit2 sees an object database only, so no
 * configuration of the run's is read and nothing is executed.
 */
static int
quarantine_bundle(const char *rawgit, const char *repo_path, const char *branch,
    const char *tip_hint, const char *out, char *err, size_t errlen)
{
	git_odb		*odb = NULL;
	git_repository	*run = NULL, *user = NULL;
	git_packbuilder	*pb = NULL;
	git_revwalk	*walk = NULL;
	git_oid		 tip;
	const git_error	*ge;
	char		 objs[PATH_MAX + 64], uobjs[PATH_MAX + 16], hex[72], hdr[800];
	int		 gitfd, fd = -1, rc = -1;

	worktree_init();
	hex[0] = '\0';
	if ((gitfd = open(rawgit, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) != -1) {
		(void)quarantine_run_tip(gitfd, branch, hex, sizeof hex);
		close(gitfd);
	}
	if (hex[0] == '\0' && (tip_hint == NULL ||
	    quarantine_hex(tip_hint, hex, sizeof hex) == -1)) {
		snprintf(err, errlen, "the run's repository names no commit for its branch");
		return -1;
	}
	snprintf(objs, sizeof objs, "%s/objects", rawgit);
	if (git_repository_open_ext(&user, repo_path, GIT_REPOSITORY_OPEN_NO_SEARCH,
	    NULL) != 0) {
		snprintf(err, errlen, "%s: not a git repository", repo_path);
		goto out;
	}
	snprintf(uobjs, sizeof uobjs, "%sobjects", git_repository_commondir(user));
	if (git_oid_fromstr(&tip, hex) != 0 || git_odb_open(&odb, objs) != 0 ||
	    git_odb_add_disk_alternate(odb, uobjs) != 0 ||
	    git_repository_wrap_odb(&run, odb) != 0 ||
	    git_packbuilder_new(&pb, run) != 0 || git_revwalk_new(&walk, run) != 0 ||
	    git_revwalk_push(walk, &tip) != 0 ||
	    git_packbuilder_insert_walk(pb, walk) != 0)
		goto gerr;
	if ((fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600)) == -1) {
		snprintf(err, errlen, "%.400s: %s", out, strerror(errno));
		goto out;
	}
	snprintf(hdr, sizeof hdr, "# v2 git bundle\n%s refs/heads/%s\n\n", hex, branch);
	if (quarantine_write_all(fd, hdr, strlen(hdr)) == -1 ||
	    git_packbuilder_foreach(pb, quarantine_pack_cb, &fd) != 0 || close(fd) == -1) {
		fd = -1;
		snprintf(err, errlen, "write %.400s: %s", out, strerror(errno));
		(void)unlink(out);
		goto out;
	}
	fd = -1;
	rc = 0;
	goto out;
gerr:
	ge = git_error_last();
	snprintf(err, errlen, "the run's objects cannot be bundled: %s",
	    ge != NULL && ge->message != NULL ? ge->message : "libgit2 error");
out:
	if (fd != -1)
		close(fd);
	git_revwalk_free(walk);
	git_packbuilder_free(pb);
	git_repository_free(run);
	git_odb_free(odb);
	git_repository_free(user);
	return rc;
}

/* <dir>/README.txt: what quarantine holds and how to look at it without running it. */
static void
quarantine_readme(const char *dir, const char *run_id, const char *branch,
    const char *why, int bundle, int files, const struct quarantine_export *x,
    const char *unconverted)
{
	char	 p[PATH_MAX + 16];
	FILE	*f;
	int	 fd;

	snprintf(p, sizeof p, "%s/README.txt", dir);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0600)) == -1 || (f = fdopen(fd, "w")) == NULL) {
		if (fd != -1)
			close(fd);
		return;
	}
	fprintf(f, "Clockwork run %s: its work was NOT imported.\n", run_id);
	fprintf(f, "Why: %s\n\n", why != NULL ? why : "(unknown)");
	fprintf(f, "Everything here was made by the run and is untrusted. This folder holds\n"
	    "no git repository, on purpose: the run's own repository could make git run\n"
	    "its code (core.fsmonitor, core.pager, aliases, hooks) when you look at it.\n\n");
	if (bundle)
		fprintf(f, "run.bundle  branch %s as a git bundle, written by Clockwork\n"
		    "            (not by the run). To inspect it with your own git config:\n"
		    "              git bundle list-heads run.bundle\n"
		    "              git clone --no-checkout run.bundle /tmp/inspect-%s\n"
		    "              git -C /tmp/inspect-%s log -p origin/%s\n"
		    "            Add -c transfer.fsckObjects=true to the clone to have git\n"
		    "            verify every object (a refused import often fails there: that\n"
		    "            is the reason it is here). `git bundle verify run.bundle` run\n"
		    "            inside one of your repositories checks it too. Check out the\n"
		    "            clone only once you have read the diff: it may carry\n"
		    "            automation files (.claude/, .envrc, .vscode/, ...).\n",
		    branch, run_id, run_id, branch);
	if (files) {
		fprintf(f, "files/      the run's working files as plain files: no .git, no links,\n"
		    "            no FIFOs, no exec bits.");
		if (x->held_back > 0)
			fprintf(f, " %ld automation file(s) were held back\n"
			    "            (they make tools run code on open; they are in the bundle):\n",
			    x->held_back);
		else
			fputc('\n', f);
		for (int i = 0; i < cJSON_GetArraySize(x->held); i++)
			fprintf(f, "              %s\n", cJSON_GetArrayItem(x->held, i)->valuestring);
		if (x->skipped_special > 0)
			fprintf(f, "            %ld link(s)/special file(s) were left out.\n",
			    x->skipped_special);
		if (x->cut)
			fprintf(f, "            The copy stopped at its budget (%lld bytes, %d "
			    "entries, depth %d).\n", QUARANTINE_FILES_MAX, QUARANTINE_ENTRIES_MAX,
			    QUARANTINE_DEPTH_MAX);
	}
	if (unconverted != NULL)
		fprintf(f, "unconverted/ the run's directory as it was (Clockwork could not convert it:\n"
		    "            %s). Its top .git was renamed to git-dir.untrusted and the\n"
		    "            folder made unreadable (mode 0). Do not run git, an editor or an\n"
		    "            agent inside it: a nested .git or an automation file in it can\n"
		    "            still run the run's code. Copy out single files with cat.\n"
		    "            To delete it: chmod -R u+rwx unconverted && rm -rf unconverted\n",
		    unconverted);
	fclose(f);
}

int
quarantine_make(const struct quarantine_job *q, cJSON *out)
{
	struct quarantine_export	 x;
	char				 dir[PATH_MAX], raw[PATH_MAX + 32], p[PATH_MAX + 32];
	char				 err[768];
	int				 bundle = 0, files = 0, rfd, ofd;

	memset(&x, 0, sizeof x);
	snprintf(dir, sizeof dir, "%s/quarantine", q->home);
	if (paths_mkdir_p(dir, 0700) == -1)
		return -1;
	if ((size_t)snprintf(dir, sizeof dir, "%s/quarantine/%s", q->home, q->run_id) >=
	    sizeof dir) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* The run's directory is held in imports/ (the daemon's) while it is read. */
	snprintf(raw, sizeof raw, "%s/imports/%s.quarantine", q->home, q->run_id);
	(void)rmtree_path(raw);
	if (rename(q->workdir, raw) == -1)
		return errno == ENOENT ? 0 : -1;
	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		/*
		 * No quarantine folder: the run's directory stays in imports/, which no
		 * report names as a place to look, and the error says where it is.
		 */
		int e = errno;

		snprintf(err, sizeof err, "%.300s: %s; the run's directory is in %.300s "
		    "(untrusted: do not run git there)", dir, strerror(e), raw);
		json_add_string(out, "quarantine_error", err);
		return 0;
	}
	json_add_string(out, "quarantine", dir);
	x.held = cJSON_CreateArray();
	snprintf(p, sizeof p, "%s/run.bundle", dir);
	{
		char rawgit[PATH_MAX + 40];

		snprintf(rawgit, sizeof rawgit, "%s/.git", raw);
		if (quarantine_bundle(rawgit, q->repo, q->branch, q->tip, p, err,
		    sizeof err) == 0) {
			bundle = 1;
			json_add_string(out, "quarantine_bundle", p);
		} else
			json_add_string(out, "quarantine_bundle_error", err);
	}
	snprintf(p, sizeof p, "%s/files", dir);
	if (mkdir(p, 0700) == 0 && (ofd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) != -1) {
		if ((rfd = open(raw, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) != -1 &&
		    quarantine_copy_dir(rfd, ofd, "", 0, &x) == 0) {
			files = 1;
			json_add_string(out, "quarantine_files", p);
			if (x.held_back > 0)
				cJSON_AddItemToObject(out, "quarantine_held_back",
				    cJSON_Duplicate(x.held, 1));
		}
		close(ofd);
	}
	quarantine_readme(dir, q->run_id, q->branch, q->why, bundle, files, &x, NULL);
	cJSON_Delete(x.held);
	if (rmtree_path(raw) == -1)
		json_add_string(out, "quarantine_cleanup_error", strerror(errno));
	return 0;
}

int
quarantine_move_raw(const char *home, const char *run_id, const char *workdir,
    const char *why, char *where, size_t wherelen)
{
	char	 dir[PATH_MAX], raw[PATH_MAX + 16], g[PATH_MAX + 32], u[PATH_MAX + 48];

	where[0] = '\0';
	snprintf(dir, sizeof dir, "%s/quarantine", home);
	if (paths_mkdir_p(dir, 0700) == -1)
		return -1;
	if ((size_t)snprintf(dir, sizeof dir, "%s/quarantine/%s", home, run_id) >=
	    sizeof dir) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (access(workdir, F_OK) == -1 && errno == ENOENT)
		return 0;
	if (mkdir(dir, 0700) == -1 && errno != EEXIST)
		return -1;
	snprintf(raw, sizeof raw, "%s/unconverted", dir);
	if (rename(workdir, raw) == -1)
		return errno == ENOENT ? 0 : -1;
	/* rename acts on the entry itself: a .git that is a link is renamed, not followed. */
	snprintf(g, sizeof g, "%s/.git", raw);
	snprintf(u, sizeof u, "%s/git-dir.untrusted", raw);
	(void)rename(g, u);
	(void)chmod(raw, 0);
	quarantine_readme(dir, run_id, "", why, 0, 0, NULL, why);
	snprintf(where, wherelen, "%s", dir);
	return 0;
}

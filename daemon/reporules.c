/*
 * A task repository's own Claude Code permission rules (issue 23, SPEC A1): data,
 * never trusted by themselves (runs start Claude with --setting-sources "", so the
 * repository's .claude/settings.json is never read by the engine). A person may see
 * them (cwctl task rules T --from-repo) and import what they saw, once:
 *
 *  - The files are read as committed on the ref the task's runs start from (the
 *    task's base branch, else the repository's default branch: jobsgit.c's rule),
 *    through libgit2: never the working tree, which anyone may change between the
 *    showing and the import. .claude must be a directory entry and each settings file
 *    a regular blob (a symbolic link is refused), sized from its header before it is
 *    read; parsing is common/clauderules.c's, bounded.
 *  - The showing carries a digest: SHA-256 over the files' blob ids and the mapped
 *    rules as shown. The import reads everything again and refuses (409
 *    settings_changed, nothing changed) unless the digest is the same, so what is
 *    imported is exactly what the person saw.
 *  - The import is one transaction, journaled (who, which rules, from which commit
 *    and files), and each imported rule keeps where it came from (task_rules.source).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "clauderules.h"
#include "daemon.h"
#include "jobsgit.h"
#include "journal.h"
#include "json.h"
#include "recover.h"
#include "reporules.h"
#include "sha256.h"
#include "store.h"
#include "worktree.h"

static const char *const reporules_names[REPORULES_FILES] = {
	"settings.json", "settings.local.json" };

/* One settings blob (worktree_tree_blob: a regular file, its size checked first). */
static int
reporules_blob(git_repository *repo, const git_tree_entry *e, const char *repo_path,
    struct reporules_file *f, char *err, size_t errlen)
{
	git_blob	*blob = NULL;
	char		 perr[400];
	int		 rc = -1;

	if (worktree_tree_blob(repo, e, repo_path, f->path, CLAUDERULES_MAX_BYTES, &blob,
	    err, errlen) == -1)
		return -1;
	git_oid_tostr(f->blob, sizeof f->blob, git_tree_entry_id(e));
	if (clauderules_parse(f->path, git_blob_rawcontent(blob),
	    (size_t)git_blob_rawsize(blob), &f->rules, perr, sizeof perr) == -1) {
		snprintf(err, errlen, "%s: %s", repo_path, perr);
		goto out;
	}
	f->present = 1;
	rc = 0;
out:
	git_blob_free(blob);
	return rc;
}

/* The digest of what is shown: files by blob id, then every rule as mapped. */
static void
reporules_digest(struct reporules *rr)
{
	struct sha256	 h;
	unsigned char	 d[SHA256_DIGEST];
	char		 line[128];

	sha256_init(&h);
	sha256_update(&h, "clockwork repo-rules v1\n", 24);
	for (size_t i = 0; i < REPORULES_FILES; i++) {
		const struct reporules_file *f = &rr->files[i];
		snprintf(line, sizeof line, "file %s %s\n", f->path,
		    f->present ? f->blob : "-");
		sha256_update(&h, line, strlen(line));
		for (size_t k = 0; k < f->rules.n; k++) {
			const struct clauderules_rule *r = &f->rules.rules[k];
			snprintf(line, sizeof line, "rule %zu %s %s ", i,
			    clauderules_list_name(r->list), clauderules_effect_name(r->effect));
			sha256_update(&h, line, strlen(line));
			sha256_update(&h, r->family, strlen(r->family));
			sha256_update(&h, "\t", 1);
			sha256_update(&h, r->text, strlen(r->text) + 1);
		}
	}
	sha256_final(&h, d);
	for (size_t i = 0; i < SHA256_DIGEST; i++)
		snprintf(rr->digest + 2 * i, 3, "%02x", d[i]);
}

int
reporules_read(const char *repo_path, const char *base, struct reporules *rr,
    char *err, size_t errlen)
{
	git_repository		*repo = NULL;
	git_reference		*ref = NULL;
	git_commit		*commit = NULL;
	git_tree		*root = NULL, *dir = NULL;
	const git_tree_entry	*e;
	char			 branch[256];
	int			 rc = -1;

	memset(rr, 0, sizeof *rr);
	for (size_t i = 0; i < REPORULES_FILES; i++)
		snprintf(rr->files[i].path, sizeof rr->files[i].path, ".claude/%s",
		    reporules_names[i]);
	if (base != NULL) {
		if ((size_t)snprintf(rr->ref, sizeof rr->ref, "refs/heads/%s", base) >=
		    sizeof rr->ref) {
			snprintf(err, errlen, "base %.64s: name too long", base);
			return -1;
		}
	} else if (jobsgit_default_branch(repo_path, rr->ref, sizeof rr->ref, branch,
	    sizeof branch, err, errlen) == -1)
		return -1;
	if (worktree_open(repo_path, &repo, err, errlen) == -1)
		return -1;
	if (git_reference_lookup(&ref, repo, rr->ref) != 0 ||
	    git_reference_peel((git_object **)&commit, ref, GIT_OBJECT_COMMIT) != 0 ||
	    git_commit_tree(&root, commit) != 0) {
		snprintf(err, errlen, "%s: %s: cannot read its commit (the ref the task's runs "
		    "start from)", repo_path, rr->ref);
		goto out;
	}
	git_oid_tostr(rr->commit, sizeof rr->commit, git_commit_id(commit));
	/* 0: no .claude, or a file of that name: no settings, nothing to import. */
	if ((rc = worktree_tree_dir(repo, root, repo_path, ".claude", &dir, err,
	    errlen)) != 1)
		goto out;
	rc = 0;
	for (size_t i = 0; i < REPORULES_FILES && rc == 0; i++)
		if ((e = git_tree_entry_byname(dir, reporules_names[i])) != NULL &&
		    reporules_blob(repo, e, repo_path, &rr->files[i], err, errlen) == -1)
			rc = -1;
out:
	if (rc == 0)
		reporules_digest(rr);
	else
		reporules_free(rr);
	git_tree_free(dir);
	git_tree_free(root);
	git_commit_free(commit);
	git_reference_free(ref);
	git_repository_free(repo);
	return rc;
}

void
reporules_free(struct reporules *rr)
{
	for (size_t i = 0; i < REPORULES_FILES; i++)
		clauderules_free(&rr->files[i].rules);
}

cJSON *
reporules_json(const struct reporules *rr)
{
	cJSON	*o = cJSON_CreateObject(), *fa, *ra, *e;

	json_add_string(o, "ref", rr->ref);
	json_add_string(o, "commit", rr->commit);
	json_add_string(o, "digest", rr->digest);
	fa = cJSON_AddArrayToObject(o, "files");
	ra = cJSON_AddArrayToObject(o, "rules");
	for (size_t i = 0; i < REPORULES_FILES; i++) {
		const struct reporules_file *f = &rr->files[i];
		e = cJSON_CreateObject();
		json_add_string(e, "path", f->path);
		json_add_string(e, "blob", f->present ? f->blob : NULL);
		cJSON_AddItemToArray(fa, e);
		for (size_t k = 0; k < f->rules.n; k++) {
			const struct clauderules_rule *r = &f->rules.rules[k];
			e = cJSON_CreateObject();
			json_add_string(e, "file", f->path);
			json_add_string(e, "list", clauderules_list_name(r->list));
			json_add_string(e, "rule", r->text);
			json_add_string(e, "becomes", clauderules_effect_name(r->effect));
			json_add_string(e, "family", r->effect != CLAUDERULES_NONE ? r->family :
			    NULL);
			if (r->effect == CLAUDERULES_TASK_ALLOW)
				json_add_string(e, "max_risk", "ordinary");
			json_add_string(e, "note", r->note);
			cJSON_AddItemToArray(ra, e);
		}
	}
	return o;
}

int
reporules_import(struct daemon *d, const struct store_task *t,
    const struct reporules *rr, const char *actor, size_t *n_changed, char *err,
    size_t errlen)
{
	char	 source[700], shortc[13];
	cJSON	*au, *im;
	int	 changed;

	*n_changed = 0;
	snprintf(shortc, sizeof shortc, "%.12s", rr->commit);
	if (store_begin(d->store) == -1) {
		snprintf(err, errlen, "%s", store_errmsg(d->store));
		return -1;
	}
	au = cJSON_CreateObject();
	cJSON_AddNumberToObject(au, "task_id", (double)t->id);
	json_add_string(au, "ref", rr->ref);
	json_add_string(au, "commit", rr->commit);
	json_add_string(au, "digest", rr->digest);
	im = cJSON_AddArrayToObject(au, "rules");
	for (size_t i = 0; i < REPORULES_FILES; i++) {
		const struct reporules_file *f = &rr->files[i];
		if (f->present) {
			cJSON *fo = cJSON_CreateObject();
			json_add_string(fo, "blob", f->blob);
			cJSON_AddItemToObject(au, f->path, fo);
		}
		for (size_t k = 0; k < f->rules.n; k++) {
			const struct clauderules_rule *r = &f->rules.rules[k];
			const char *kind = r->effect == CLAUDERULES_TASK_ALLOW ? "allow" : "ask";
			cJSON *e;
			if (r->effect == CLAUDERULES_NONE)
				continue;
			snprintf(source, sizeof source, "%s@%s: %s", f->path, shortc, r->text);
			if (store_task_rule_import(d->store, t->id, kind, r->family, "ordinary",
			    source, actor, &changed) == -1) {
				int saved = errno;
				snprintf(err, errlen, "%s (importing %s)", store_errmsg(d->store),
				    r->family);
				store_rollback(d->store);
				cJSON_Delete(au);
				errno = saved;
				return -1;
			}
			*n_changed += (size_t)changed;
			e = cJSON_CreateObject();
			json_add_string(e, "file", f->path);
			json_add_string(e, "rule", r->text);
			json_add_string(e, "kind", kind);
			json_add_string(e, "family", r->family);
			cJSON_AddBoolToObject(e, "changed", changed);
			cJSON_AddItemToArray(im, e);
		}
	}
	if (store_commit(d->store) == -1) {
		snprintf(err, errlen, "%s", store_errmsg(d->store));
		store_rollback(d->store);
		cJSON_Delete(au);
		return -1;
	}
	/* Live runs of the task honour the new rules at once (an ask most of all). */
	cJSON_ArrayForEach(im, cJSON_GetObjectItemCaseSensitive(au, "rules")) {
		const char *kind = json_get_string(im, "kind");
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(im, "changed")))
			runs_task_rule_added(d, t->id, json_get_string(im, "family"),
			    strcmp(kind, "allow") == 0 ? "ordinary" : NULL);
	}
	journal_audit(d, actor, "task.rules_import", t->name, au);
	return 0;
}

/*
 * gitremote.c: where a person opens a pull or merge request for a branch they pushed,
 * derived from the remote's URL (cwctl run push --pr without gh or glab).
 */
#ifndef CW_GITREMOTE_H
#define CW_GITREMOTE_H
#include <stddef.h>

enum gitremote_forge {
	GITREMOTE_NONE = 0,	/* not a github.com or gitlab.com repository */
	GITREMOTE_GITHUB,
	GITREMOTE_GITLAB,
};

/*
 * The forge and "owner/repo" (a GitLab group path may be deeper) of a remote URL in
 * any form git takes for those hosts: https://[user[:secret]@]host/o/r[.git][/],
 * ssh://[user@]host[:port]/o/r[.git], git://host/o/r, and the scp form
 * [user@]host:o/r[.git]. Userinfo is dropped (a token in an https remote is never
 * part of what is printed). GITREMOTE_NONE for anything else, or a path with bytes
 * outside [A-Za-z0-9._-/] (so nothing odd reaches a printed URL).
 */
enum gitremote_forge gitremote_parse(const char *url, char *path, size_t pathlen);

/*
 * The web page that opens a pull request (GitHub: the compare page) or a merge request
 * (GitLab: merge_requests/new) for branch of the repository at url. 0 with out, -1
 * when url is not such a repository or out is too small.
 */
int	gitremote_compare_url(const char *url, const char *branch, char *out,
	    size_t outlen);

#endif

/*
 * A pull request's web page from a git remote URL (gitremote.h). The URL is the
 * user's own git configuration, but it is printed for them to open: anything that is
 * not plainly a github.com or gitlab.com repository path gets no URL at all.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gitremote.h"

static enum gitremote_forge
gitremote_host(const char *h, size_t n)
{
	if (n == 10 && strncasecmp(h, "github.com", n) == 0)
		return GITREMOTE_GITHUB;
	if (n == 10 && strncasecmp(h, "gitlab.com", n) == 0)
		return GITREMOTE_GITLAB;
	return GITREMOTE_NONE;
}

enum gitremote_forge
gitremote_parse(const char *url, char *path, size_t pathlen)
{
	enum gitremote_forge	 f;
	const char		*host, *end, *p, *s, *at;
	size_t			 n, segs = 0;

	if (url == NULL || pathlen == 0)
		return GITREMOTE_NONE;
	path[0] = '\0';
	if ((s = strstr(url, "://")) != NULL) {
		n = (size_t)(s - url);
		if (!((n == 5 && strncasecmp(url, "https", 5) == 0) ||
		    (n == 4 && strncasecmp(url, "http", 4) == 0) ||
		    (n == 3 && strncasecmp(url, "ssh", 3) == 0) ||
		    (n == 3 && strncasecmp(url, "git", 3) == 0) ||
		    (n == 7 && strncasecmp(url, "git+ssh", 7) == 0)))
			return GITREMOTE_NONE;
		host = s + 3;
		if ((p = strchr(host, '/')) == NULL)
			return GITREMOTE_NONE;
		/* Userinfo ends at the last '@' before the path. */
		for (at = host; (s = memchr(at, '@', (size_t)(p - at))) != NULL; at = s + 1)
			host = s + 1;
		end = memchr(host, ':', (size_t)(p - host));	/* a port */
		if (end == NULL)
			end = p;
		p++;
	} else {
		/* scp form: [user@]host:path, with no '/' before the ':'. */
		if ((p = strchr(url, ':')) == NULL ||
		    memchr(url, '/', (size_t)(p - url)) != NULL)
			return GITREMOTE_NONE;
		host = url;
		if ((at = memchr(url, '@', (size_t)(p - url))) != NULL)
			host = at + 1;
		end = p;
		p++;
	}
	if ((f = gitremote_host(host, (size_t)(end - host))) == GITREMOTE_NONE)
		return GITREMOTE_NONE;
	while (*p == '/')
		p++;
	n = strlen(p);
	while (n > 0 && p[n - 1] == '/')
		n--;
	if (n >= 4 && strncmp(p + n - 4, ".git", 4) == 0)
		n -= 4;
	if (n == 0 || n >= pathlen)
		return GITREMOTE_NONE;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '/') {
			/* No empty segment, no "." or ".." segment. */
			if (i == 0 || p[i - 1] == '/')
				return GITREMOTE_NONE;
			segs++;
			continue;
		}
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789._-", p[i]) == NULL)
			return GITREMOTE_NONE;
	}
	for (s = p; s < p + n; s = end + 1) {
		if ((end = memchr(s, '/', (size_t)(p + n - s))) == NULL)
			end = p + n;
		if ((end - s == 1 && s[0] == '.') ||
		    (end - s == 2 && s[0] == '.' && s[1] == '.'))
			return GITREMOTE_NONE;
	}
	/* GitHub: exactly owner/repo. GitLab: a group path, then the project. */
	if (segs == 0 || (f == GITREMOTE_GITHUB && segs != 1))
		return GITREMOTE_NONE;
	memcpy(path, p, n);
	path[n] = '\0';
	return f;
}

/* Percent-encode s into out at *off; keep_slash keeps '/' (a URL path). -1: no room. */
static int
gitremote_encode(const char *s, int keep_slash, char *out, size_t outlen, size_t *off)
{
	static const char	 hex[] = "0123456789ABCDEF";
	unsigned char		 c;

	for (; *s != '\0'; s++) {
		c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
		    c == '~' || (keep_slash && c == '/')) {
			if (*off + 1 >= outlen)
				return -1;
			out[(*off)++] = (char)c;
		} else {
			if (*off + 3 >= outlen)
				return -1;
			out[(*off)++] = '%';
			out[(*off)++] = hex[c >> 4];
			out[(*off)++] = hex[c & 15];
		}
	}
	out[*off] = '\0';
	return 0;
}

int
gitremote_compare_url(const char *url, const char *branch, char *out, size_t outlen)
{
	enum gitremote_forge	 f;
	char			 path[512];
	size_t			 off;
	int			 n;

	if (branch == NULL || *branch == '\0' || outlen == 0 ||
	    (f = gitremote_parse(url, path, sizeof path)) == GITREMOTE_NONE)
		return -1;
	if (f == GITREMOTE_GITHUB)
		n = snprintf(out, outlen, "https://github.com/%s/compare/", path);
	else
		n = snprintf(out, outlen, "https://gitlab.com/%s/-/merge_requests/new?"
		    "merge_request%%5Bsource_branch%%5D=", path);
	if (n < 0 || (size_t)n >= outlen)
		goto small;
	off = (size_t)n;
	if (gitremote_encode(branch, f == GITREMOTE_GITHUB, out, outlen, &off) == -1)
		goto small;
	if (f == GITREMOTE_GITHUB) {
		if (off + sizeof "?expand=1" > outlen)
			goto small;
		memcpy(out + off, "?expand=1", sizeof "?expand=1");
	}
	return 0;
small:
	out[0] = '\0';
	return -1;
}

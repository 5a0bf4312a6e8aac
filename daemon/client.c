/*
 * cwctl's HTTP client (see client.h), over the daemon's unix socket in the Clockwork
 * home ($CLOCKWORK_HOME/clockworkd.sock). No token is sent: the daemon takes the
 * kernel's word on who we are (SO_PEERCRED), and names us by uid and pid in its audit
 * log. A missing socket or a refused connection means the daemon is not running,
 * which is exit 4 with one line on how to start it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "client.h"
#include "cwctl.h"
#include "json.h"
#include "paths.h"

#define CLIENT_MAX_ANSWER	(64 * 1024 * 1024)
#define CLIENT_SUN_PATH		108	/* sizeof sockaddr_un.sun_path */

struct client_buf {
	char	*p;
	size_t	 len;
	int	 overflow;
};

static size_t
client_write_cb(char *data, size_t size, size_t n, void *arg)
{
	struct client_buf	*b = arg;
	size_t			 add = size * n;
	char			*np;

	if (b->len + add > CLIENT_MAX_ANSWER) {
		b->overflow = 1;
		return 0;
	}
	if ((np = realloc(b->p, b->len + add + 1)) == NULL)
		return 0;
	b->p = np;
	memcpy(b->p + b->len, data, add);
	b->len += add;
	b->p[b->len] = '\0';
	return add;
}

static void
client_not_running(const char *home)
{
	fprintf(stderr, "cwctl: clockworkd is not running for %s; start it with "
	    "'clockworkd' (or 'clockworkd --foreground', or 'cwctl service install')\n",
	    home);
}

int
client_escape(const char *s, char *out, size_t outlen)
{
	static const char	hex[] = "0123456789ABCDEF";
	size_t			o = 0;

	for (; *s != '\0'; s++) {
		unsigned char	c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~') {
			if (o + 1 >= outlen)
				return -1;
			out[o++] = (char)c;
		} else {
			if (o + 3 >= outlen)
				return -1;
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return 0;
}

/* Returns 0 with *status set, 4 when no daemon answers, 1 on other failures. */
static int
client_do(const char *method, const char *path, const cJSON *body, long *status,
    cJSON **out, char *err, size_t errlen, char *home, size_t homelen)
{
	char			 sock[PATH_MAX], url[PATH_MAX];
	struct curl_slist	*h = NULL;
	struct client_buf	 b = { 0 };
	char			*text = NULL;
	CURL			*c;
	CURLcode		 cc;
	int			 rc = 1;

	*status = 0;
	*out = NULL;
	if (paths_clockwork_home(home, homelen) == -1) {
		snprintf(err, errlen, "cannot find the Clockwork home: %s", strerror(errno));
		return 1;
	}
	if ((size_t)snprintf(sock, sizeof sock, "%s/clockworkd.sock", home) >=
	    CLIENT_SUN_PATH) {
		snprintf(err, errlen, "%.400s: longer than a unix socket path may be", sock);
		return 1;
	}
	if (access(sock, F_OK) == -1 && errno == ENOENT)
		return 4;
	/* The host part is only for the request line: the socket decides who answers. */
	snprintf(url, sizeof url, "http://localhost%s", path);
	if ((c = curl_easy_init()) == NULL) {
		snprintf(err, errlen, "cannot initialise libcurl");
		return 1;
	}
	curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, sock);
	h = curl_slist_append(h, "X-Clockwork-Client: cwctl");
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Expect:");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, client_write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (body != NULL) {
		text = json_print(body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, text != NULL ? text : "{}");
	} else if (strcmp(method, "POST") == 0)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
	cc = curl_easy_perform(c);
	if (cc == CURLE_COULDNT_CONNECT) {
		rc = 4;
		goto out;
	}
	if (cc != CURLE_OK) {
		snprintf(err, errlen, "%s %s: %s", method, path, curl_easy_strerror(cc));
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	if (b.len > 0 && (*out = json_parse(b.p, b.len)) == NULL) {
		snprintf(err, errlen, "%s %s: the answer is not JSON (HTTP %ld)", method, path,
		    *status);
		goto out;
	}
	rc = 0;
out:
	cJSON_free(text);
	free(b.p);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return rc;
}

int
client_call_quiet(const char *method, const char *path, const cJSON *body, long *status,
    cJSON **out)
{
	char	err[512], home[PATH_MAX];
	int	rc;

	rc = client_do(method, path, body, status, out, err, sizeof err, home, sizeof home);
	if (rc != 0)
		*status = 0;
	return rc;
}

int
client_call(const char *method, const char *path, const cJSON *body, cJSON **out)
{
	char		 err[512], home[PATH_MAX];
	const cJSON	*e;
	const char	*msg, *code;
	long		 status;
	int		 rc;

	rc = client_do(method, path, body, &status, out, err, sizeof err, home,
	    sizeof home);
	if (rc == 4) {
		client_not_running(home);
		return CWCTL_EXIT_NODAEMON;
	}
	if (rc != 0) {
		fprintf(stderr, "cwctl: %s\n", err);
		return CWCTL_EXIT_FAILURE;
	}
	if (status >= 200 && status < 300)
		return CWCTL_EXIT_OK;
	e = cJSON_GetObjectItemCaseSensitive(*out, "error");
	msg = json_get_string(e, "message");
	code = json_get_string(e, "code");
	fprintf(stderr, "cwctl: %s\n", msg != NULL ? msg : "the daemon refused the request");
	rc = CWCTL_EXIT_FAILURE;
	if (status == 409 && code != NULL && (strcmp(code, "already_answered") == 0 ||
	    strcmp(code, "run_ended") == 0 || strcmp(code, "settings_changed") == 0))
		rc = CWCTL_EXIT_DENIED;
	if (status == 401 || status == 403)
		rc = CWCTL_EXIT_DENIED;
	if (status == 409 && code != NULL && strcmp(code, "no_conversation") == 0)
		rc = CWCTL_EXIT_NO_CONVERSATION;
	if (status == 409 && code != NULL && (strcmp(code, "run_active") == 0 ||
	    strcmp(code, "branch_held") == 0))
		rc = CWCTL_EXIT_BUSY;
	if (status == 409 && code != NULL && (strcmp(code, "branch_gone") == 0 ||
	    strcmp(code, "branch_checked_out") == 0 || strcmp(code, "worktree_dirty") == 0))
		rc = CWCTL_EXIT_BRANCH;
	cJSON_Delete(*out);
	*out = NULL;
	return rc;
}

void
client_print_json(const cJSON *v)
{
	char	*t = cJSON_Print(v);

	if (t != NULL) {
		printf("%s\n", t);
		cJSON_free(t);
	}
}

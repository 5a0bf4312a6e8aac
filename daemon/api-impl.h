/*
 * Inside the API (api.c): the request every route handler gets and the helpers they
 * share, for handler files beside api.c (api-jobs.c). Routes are listed only in
 * api.c's table; nothing outside the daemon's API includes this.
 */
#ifndef CW_API_IMPL_H
#define CW_API_IMPL_H
#include <stddef.h>

#include <cjson/cJSON.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "store.h"

#define API_MAX_SEGS	6

struct api_req {
	struct daemon		*d;
	struct evhttp_request	*req;
	enum evhttp_cmd_type	 method;
	const char		*seg[API_MAX_SEGS];
	size_t			 nseg;
	struct evkeyvalq	 query;
	char			 actor[64];
	int			 inbox;		/* through the Inbox's gateway, on its session */
	char			 pathbuf[512];
	char			 segbuf[512];	/* seg[] points into it */
};

/* api.c: answer with {"error":{"code","message"}}, or with body (which is taken). */
void	 api_error(struct api_req *, int code, const char *ecode, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));
void	 api_ok(struct api_req *, int code, cJSON *body);
/* The body as a JSON object; answers 400/413 itself and returns NULL when it is not. */
cJSON	*api_body(struct api_req *);
const char *api_param(struct api_req *, const char *key);
/*
 * JSON text secret-masked and parsed; JSON null when absent or unparseable. For what is
 * read from repositories at request time (jobs files), not for records: those are
 * masked once, when they enter the daemon.
 */
cJSON	*api_masked_json(const char *text);
/* 0 and *t filled, or -1 after answering 404/500. */
int	 api_task_lookup(struct api_req *, const char *name, struct store_task *t);
int	 api_run_lookup(struct api_req *, const char *id, struct store_run *r);

/* api-jobs.c */
/* Only the listed keys in body; else 400 naming the first other one (-1). */
int	 api_body_keys(struct api_req *, const cJSON *body, const char *const *keys,
	    size_t n);
/* In a new transaction: before's definition into its history if after changes it. */
int	 api_jobs_history_record(struct api_req *, const struct store_task *before,
	    const struct store_task *after);
void	 api_jobs_discover(struct api_req *);
void	 api_jobs_list(struct api_req *);
void	 api_jobs_show(struct api_req *);
void	 api_jobs_enable(struct api_req *);
void	 api_jobs_template_import(struct api_req *);
void	 api_jobs_template_export(struct api_req *);
void	 api_jobs_task_history(struct api_req *);
void	 api_jobs_run_retry(struct api_req *);
void	 api_jobs_run_continue(struct api_req *);

/* api-summary.c: GET /api/runs/ID/summary, what the review page says of a run. */
void	 api_summary_run(struct api_req *);

#endif

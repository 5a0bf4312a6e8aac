/*
 * The end of a run in one line, for the notices that announce it (the desktop's,
 * notify.c; the task's chat, telegram.c): how it ended and what its work changed, from
 * its stored report (masked when it was stored; made visible here).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "runend.h"
#include "vis.h"

char *
runend_line(const cJSON *report)
{
	const cJSON	*ds = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(report, "git"), "diffstat");
	const char	*st = json_get_string(report, "status");
	const char	*why = json_get_string(report, "exit_reason");
	char		 buf[256], *v, *w;
	double		 files = 0, ins = 0, del = 0;
	size_t		 off;

	v = vis_str(st != NULL ? st : "ended", 0);
	w = why != NULL && st != NULL && strcmp(why, st) != 0 ? vis_str(why, 0) : NULL;
	off = (size_t)snprintf(buf, sizeof buf, "finished: %.32s%s%.32s%s",
	    v != NULL ? v : "?", w != NULL ? " (" : "", w != NULL ? w : "",
	    w != NULL ? ")" : "");
	free(v);
	free(w);
	if (off >= sizeof buf)
		off = sizeof buf - 1;
	json_get_number(ds, "files_changed", &files);
	json_get_number(ds, "insertions", &ins);
	json_get_number(ds, "deletions", &del);
	if (ds == NULL)
		snprintf(buf + off, sizeof buf - off, ", no change to review");
	else if (files < 1)
		snprintf(buf + off, sizeof buf - off, ", no files changed");
	else
		snprintf(buf + off, sizeof buf - off, ", %.0f file%s changed (+%.0f -%.0f)",
		    files, files == 1 ? "" : "s", ins, del);
	return strdup(buf);
}


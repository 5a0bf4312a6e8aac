/*
 * The daemon's decoders of cw-parse's replies (daemon/parsechild.c) and the message
 * header check (common/parsemsg.c) over arbitrary bytes: a child that was taken over
 * may send anything. The first byte picks the decoder; each decodes or refuses, never
 * crashes or reads past the payload, and what it accepts keeps the bounds it promises.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bundlehdr.h"
#include "parsechild.h"
#include "parsemsg.h"
#include "tgapi.h"
#include "transcript.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jobspec		 js;
	struct tgapi_reply	 tr;
	cJSON			*entries, *e;
	size_t			 used, hdrlen;
	char			 tip[65], err[PARSECHILD_ERR_MAX + 1];
	const char		*why;
	uint32_t		 seq;
	int			 type;

	if (size < 1)
		return 0;
	switch (data[0] % 6) {
	case 0:
		if (parsechild_decode_transcript(data + 1, size - 1, 1 << 20, &entries,
		    &used) == 0) {
			if (used > 1 << 20)
				abort();
			cJSON_ArrayForEach(e, entries)
				if (transcript_check(e) == -1)
					abort();
			cJSON_Delete(entries);
		}
		break;
	case 1:
		if (parsechild_decode_jobspec(data + 1, size - 1, &js) == 0) {
			if (js.n_jobs > JOBSPEC_MAX_JOBS)
				abort();
			for (size_t i = 0; i < js.n_jobs; i++)
				if (!jobspec_name_valid(js.jobs[i].name) ||
				    strlen(js.jobs[i].prompt) > JOBSPEC_MAX_PROMPT)
					abort();
			jobspec_free(&js);
		}
		break;
	case 2:
		if (parsechild_decode_tgreply(data + 1, size - 1, &tr) == 0) {
			if (tr.n_updates > TGAPI_UPDATES_MAX ||
			    strlen(tr.description) >= sizeof tr.description)
				abort();
			for (size_t i = 0; i < tr.n_updates; i++)
				if (tr.updates[i].ours && tr.updates[i].approval_id[0] == '\0')
					abort();
			tgapi_reply_free(&tr);
		}
		break;
	case 3:
		if (parsechild_decode_bundlehdr(data + 1, size - 1, 4096, tip, sizeof tip,
		    &hdrlen) == 0 && (hdrlen > 4096 || (strlen(tip) != 40 &&
		    strlen(tip) != 64)))
			abort();
		break;
	case 4:
		if (parsechild_decode_error(data + 1, size - 1, err, sizeof err) == 0 &&
		    strlen(err) > PARSECHILD_ERR_MAX)
			abort();
		break;
	default:
		if (size - 1 >= PARSEMSG_HEADER && parsemsg_header_check(data + 1, &type,
		    &used, &seq, &why) == 0 && used > PARSEMSG_MAX)
			abort();
		break;
	}
	return 0;
}

/*
 * cw-parse's handlers (parser/parsework.c), the parsers that moved out of the daemon,
 * over arbitrary input, each followed by the daemon's decoder of its reply
 * (daemon/parsechild.c). The first byte picks the parser: a transcript's JSONL, a job
 * file (JSON or YAML), a Telegram reply, a bundle header. Whatever the input, the
 * handler never crashes, and a reply it gives is one the daemon's decoder accepts whole
 * (the two sides agree on the format and on every bound).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parsechild.h"
#include "parsemsg.h"
#include "parsework.h"
#include "tgapi.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct parsemsg_buf	 req = { 0 }, out = { 0 };
	struct jobspec		 js;
	struct tgapi_reply	 tr;
	cJSON			*entries;
	size_t			 used, hdrlen;
	char			 tip[65], err[PARSECHILD_ERR_MAX + 1];
	int			 which, type, rtype = -1, ok = 0;

	if (size < 1)
		return 0;
	which = data[0] % 5;
	data++;
	size--;
	switch (which) {
	case 0:
		type = PARSEMSG_TRANSCRIPT;
		parsemsg_put_u64(&req, size / 2);
		parsemsg_put_str(&req, (const char *)data, size);
		break;
	case 1:
	case 2:
		type = PARSEMSG_JOBSPEC;
		parsemsg_put_str(&req, "fuzz.yaml", (size_t)-1);
		parsemsg_put_u8(&req, which == 1 ? JOBSPEC_JSON : JOBSPEC_YAML);
		parsemsg_put_str(&req, (const char *)data, size);
		break;
	case 3:
		type = PARSEMSG_TGREPLY;
		parsemsg_put_str(&req, (const char *)data, size);
		break;
	default:
		type = PARSEMSG_BUNDLEHDR;
		parsemsg_put_str(&req, "clockwork/t/r", (size_t)-1);
		parsemsg_put_str(&req, (const char *)data, size);
		break;
	}
	if (parsework_handle(type, req.p, req.len, 0, &rtype, &out) == -1)
		abort();	/* a well-formed request is always answered */
	if (out.failed)
		goto done;
	if (rtype == PARSEMSG_ERROR) {
		if (parsechild_decode_error(out.p, out.len, err, sizeof err) == -1)
			abort();
		goto done;
	}
	switch (rtype) {
	case PARSEMSG_TRANSCRIPT_OK:
		ok = parsechild_decode_transcript(out.p, out.len, size, &entries, &used);
		if (ok == 0)
			cJSON_Delete(entries);
		break;
	case PARSEMSG_JOBSPEC_OK:
		if ((ok = parsechild_decode_jobspec(out.p, out.len, &js)) == 0)
			jobspec_free(&js);
		break;
	case PARSEMSG_TGREPLY_OK:
		if ((ok = parsechild_decode_tgreply(out.p, out.len, &tr)) == 0)
			tgapi_reply_free(&tr);
		break;
	case PARSEMSG_BUNDLEHDR_OK:
		ok = parsechild_decode_bundlehdr(out.p, out.len, size, tip, sizeof tip,
		    &hdrlen);
		break;
	default:
		abort();
	}
	if (ok != 0)
		abort();	/* the daemon would refuse what its child honestly sent */
done:
	parsemsg_buf_free(&req);
	parsemsg_buf_free(&out);
	return 0;
}

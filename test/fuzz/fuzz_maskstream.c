/*
 * libFuzzer target for the streaming masker (common/maskstream.c): a secret from a table
 * is put into the fuzzer's text at a position it picks, and the whole is fed to a stream
 * in chunks whose sizes it picks too.
 *  - Fed in chunks only, what comes out put together must equal masking the whole at
 *    once (mask_secrets_buf), byte for byte.
 *  - With maskstream_idle() calls between chunks (a quiet stream), the output may
 *    differ from the whole's, but any part of the secret that masking the whole hides
 *    must not be in it.
 * Input: byte 0 picks the secret, bytes 1-2 its position, byte 3 the chunking seed and
 * (low bit) whether idle() is called; the rest is the text.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mask.h"
#include "maskstream.h"

/* Each secret, and a part of it that no masked text may hold. */
static const struct {
	const char	*text;
	const char	*core;
} fuzz_secrets[] = {
	{ "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi6ZTjw\n"
	  "q4zV1Pj8HYMdkI0Yw8Rz4OAL0Yp1EefF0mCcGxd3\n-----END RSA PRIVATE KEY-----",
	  "HYMdkI0Yw8Rz4OAL" },
	{ "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9u\n"
	  "-----END OPENSSH PRIVATE KEY-----", "ZXktdjEAAAAABG5v" },
	{ "ghp_BkdfQ1y3GQsMpSscDlkrCaqx9vJupc94tnwl", "SscDlkrCaqx9vJup" },
	{ "sk-ant-api03-PtYgjmUhBel31iEl2hpChYgCfrL1spNxnyVmihA", "hpChYgCfrL1spNxn" },
	{ "AKIAIOSFODNN7EXAMPLQ", "IOSFODNN7EXAMPLQ" },
	{ "486703003:AAqBlIFXZ53Ncqe28_ajY75FnCttn6kfaqD", "Ncqe28_ajY75FnCt" },
	{ "Authorization: Bearer xQ9vT2mLp8Rk4Wz7Yb3N", "mLp8Rk4Wz7Yb3N" },
	{ "export DB_PASSWORD=hunter2Qx9vT2mLp8", "hunter2Qx9vT2mLp8" },
	{ "\"api_key\": \"Zq9XkP3mLw7RtY2vAb\"", "Zq9XkP3mLw7RtY2v" },
	{ "https://deploy:s3cr3tPassW0rd99@git.example.com/x", "s3cr3tPassW0rd99" },
	{ "xoxb-201171708835-5206144313210-xqZKm4bV3AyAVHny", "5206144313210-xq" },
};

#define FUZZ_NSECRETS	(sizeof fuzz_secrets / sizeof fuzz_secrets[0])

static int
fuzz_holds(const char *p, size_t n, const char *s)
{
	return memmem(p, n, s, strlen(s)) != NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct maskstream	*ms;
	const char		*sec, *core, *text;
	char			*in, *whole, *out, *part;
	size_t			 tlen, slen, ilen, pos, wlen, olen = 0, plen, off, n;
	uint32_t		 rng;
	int			 idle;

	if (size < 4)
		return 0;
	sec = fuzz_secrets[data[0] % FUZZ_NSECRETS].text;
	core = fuzz_secrets[data[0] % FUZZ_NSECRETS].core;
	text = (const char *)data + 4;
	tlen = size - 4;
	pos = ((size_t)data[1] | (size_t)data[2] << 8) % (tlen + 1);
	rng = (uint32_t)data[3] * 2654435761u + 1;
	idle = data[3] & 1;
	slen = strlen(sec);
	ilen = tlen + slen;
	if ((in = malloc(ilen + 1)) == NULL || (out = malloc(3 * ilen + 64)) == NULL)
		abort();
	memcpy(in, text, pos);
	memcpy(in + pos, sec, slen);
	memcpy(in + pos + slen, text + pos, tlen - pos);
	if ((whole = mask_secrets_buf(in, ilen, &wlen)) == NULL)
		abort();
	if ((ms = maskstream_new()) == NULL)
		abort();
	for (off = 0; off < ilen; off += n) {
		rng = rng * 1103515245u + 12345u;
		n = 1 + (rng >> 16) % 64;
		if (n > ilen - off)
			n = ilen - off;
		if ((part = maskstream_feed(ms, in + off, n, &plen)) == NULL)
			abort();
		memcpy(out + olen, part, plen);
		olen += plen;
		free(part);
		if (idle && (rng >> 8) % 3 == 0) {
			if ((part = maskstream_idle(ms, &plen)) == NULL)
				abort();
			memcpy(out + olen, part, plen);
			olen += plen;
			free(part);
		}
	}
	if ((part = maskstream_end(ms, &plen)) == NULL)
		abort();
	memcpy(out + olen, part, plen);
	olen += plen;
	free(part);
	if (maskstream_held(ms) != 0)
		abort();
	maskstream_free(ms);
	if (!idle && (olen != wlen || memcmp(out, whole, wlen) != 0))
		abort();	/* chunks alone must not change what is masked */
	if (!fuzz_holds(whole, wlen, core) && fuzz_holds(out, olen, core))
		abort();	/* a secret the whole hides came out through a cut */
	free(whole);
	free(out);
	free(in);
	return 0;
}

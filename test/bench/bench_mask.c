/*
 * Throughput of secret masking (common/mask.c) in MB/s over generated inputs:
 * a mixed agent log (stream-json events, shell output, a secret every few lines),
 * a secret-dense log, plain prose, and worst cases built to defeat a naive scanner.
 * Usage: bench_mask [MIB] [RUNS]; prints one line per input with the median of RUNS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mask.h"

static const char *const mixed[] = {
	"{\"type\":\"assistant\",\"message\":{\"id\":\"msg_01\",\"usage\":{\"input_tokens\":1832,\"output_tokens\":211}}}\n",
	"2026-11-30T00:00:00Z INFO run 42 step 7: running `npm test` in /home/u/.clockwork/worktrees/t/42\n",
	"{\"type\":\"tool_use\",\"name\":\"Bash\",\"input\":{\"command\":\"git diff --stat HEAD~1\"}}\n",
	" src/parser.c | 42 +++++++++++++-------\n 1 file changed, 27 insertions(+), 15 deletions(-)\n",
	"export GITHUB_TOKEN=ghp_BkdfQ1y3GQsMpSscDlkrCaqx9vJupc94tnwl\n",
	"PASS test/parser.test.js (1.204 s)\n  parser\n    ok handles empty input (3 ms)\n",
	"commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: Dev <dev@example.com>\n",
	"curl -s -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eMqG3omjMyXHC' https://api.example.com\n",
	"The function returns the key for the given id, or NULL when the table is empty.\n",
	"{\"type\":\"result\",\"total_cost_usd\":0.0421,\"num_turns\":6,\"session_id\":\"123e4567-e89b-12d3-a456-426614174000\"}\n",
};

static const char *const dense[] = {
	"sk-ant-api03-PtYgjmUhBel31iEl2hpChYgCfrL1spNxnyVmihA_2O76UMFxFkM_R5Kjp1vRt-1fjORS_6ilI8ihN5KXSc7Tvo_hBKqFYAA\n",
	"AWS_SECRET_ACCESS_KEY=Akg05rK/gqv81RKMGHZEM9YpvujA+C5Q52ryFlwR AKIA7ZBKA74ZTJ2WYUHV\n",
	"{\"client_secret\": \"Zq9-xx_77Lp\", \"password\": \"hunter2\"}\n",
	"https://api.telegram.org/bot486703003:AAqBlIFXZ53Ncqe28_ajY75FnCttn6kfaqD/getUpdates\n",
	"xoxb-201171708835-5206144313210-xqZKm4bV3AyAVHnyrvWdFrK9 postgres://app:Sup3rS3cret@db/app\n",
};

static const char *const prose[] = {
	"Masking runs over every report, export and log line that a person sees; it is a "
	"single pass with hand-written detectors, so its cost grows with the text and no "
	"more. Tokens, passwords and keys are replaced by markers that keep a short prefix.\n",
};

static char *
bench_fill(const char *const *lines, size_t nlines, size_t size, size_t *len)
{
	char	*p = malloc(size);
	size_t	 n, k = 0;

	if (p == NULL)
		return NULL;
	*len = 0;
	for (;;) {
		n = strlen(lines[k++ % nlines]);
		if (*len + n > size)
			break;
		memcpy(p + *len, lines[(k - 1) % nlines], n);
		*len += n;
	}
	return p;
}

static char *
bench_repeat(const char *unit, size_t size)
{
	char	*p = malloc(size);
	size_t	 i, n = strlen(unit);

	if (p == NULL)
		return NULL;
	for (i = 0; i < size; i++)
		p[i] = unit[i % n];
	return p;
}

static int
bench_cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int
bench_run(const char *label, const char *in, size_t len, int runs)
{
	struct timespec	 t0, t1;
	double		*mbs;
	size_t		 outlen;
	char		*out;
	int		 r;

	if ((mbs = calloc(runs, sizeof *mbs)) == NULL)
		return -1;
	for (r = 0; r < runs; r++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		out = mask_secrets_buf(in, len, &outlen);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (out == NULL) {
			free(mbs);
			return -1;
		}
		free(out);
		mbs[r] = len / 1e6 / ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	}
	qsort(mbs, runs, sizeof *mbs, bench_cmp);
	printf("%-28s %8.1f MiB  median %7.1f MB/s  min %7.1f MB/s\n", label,
	    len / 1048576.0, mbs[runs / 2], mbs[0]);
	free(mbs);
	return 0;
}

int
main(int argc, char **argv)
{
	static const char *const worst[] = { "sk-ant-a", "xoxb-a-", "-----BEGIN ",
	    "Bearer ", "KEY=", "://a", "123456789:" };
	size_t	 size, len, i;
	int	 runs;
	char	*in, label[64];

	size = (argc > 1 ? strtoul(argv[1], NULL, 10) : 16) << 20;
	runs = argc > 2 ? atoi(argv[2]) : 5;
	if (size == 0 || runs <= 0) {
		fprintf(stderr, "usage: bench_mask [MIB] [RUNS]\n");
		return 2;
	}
	if ((in = bench_fill(mixed, 10, size, &len)) == NULL ||
	    bench_run("mixed agent log", in, len, runs) == -1)
		return 1;
	free(in);
	if ((in = bench_fill(dense, 5, size, &len)) == NULL ||
	    bench_run("secret-dense log", in, len, runs) == -1)
		return 1;
	free(in);
	if ((in = bench_fill(prose, 1, size, &len)) == NULL ||
	    bench_run("plain prose", in, len, runs) == -1)
		return 1;
	free(in);
	for (i = 0; i < sizeof worst / sizeof worst[0]; i++) {
		if ((in = bench_repeat(worst[i], size)) == NULL)
			return 1;
		snprintf(label, sizeof label, "worst: \"%s\"*", worst[i]);
		if (bench_run(label, in, size, runs) == -1)
			return 1;
		free(in);
	}
	return 0;
}

/*
 * The cost of parsing in cw-parse (daemon/parsechild.c) against parsing in the daemon:
 *   inproc       json_parse + transcript_check of one engine line, in this process
 *   wire         wiremsg_decode of one runner "say" line, in this process
 *   child/1      one line per call to the child (a round trip on the pipes)
 *   child/batch  a transcript read's worth of lines (TRANSCRIPTS_CHUNK) in one call
 *   start        a child started and its first call answered (what a child per job,
 *                or a restart after a death, costs), against a warm call
 * Usage: bench_parse CW-PARSE [RUNS]; medians of RUNS, in microseconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "parsechild.h"
#include "transcript.h"
#include "transcripts.h"
#include "wiremsg.h"

static const char LINE[] = "{\"k\":\"tool\",\"tool\":\"Bash\",\"id\":\"toolu_01ABCDEF\","
    "\"command\":\"git diff --stat HEAD~1 && npm test -- --runInBand parser\"}";
static const char WIRE[] = "{\"v\":1,\"type\":\"say\",\"entry\":{\"k\":\"tool\","
    "\"tool\":\"Bash\",\"id\":\"toolu_01ABCDEF\",\"command\":\"git diff --stat HEAD~1 && "
    "npm test -- --runInBand parser\"}}";

static double
now_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int
cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return v[n / 2];
}

int
main(int argc, char **argv)
{
	int		 runs = argc > 2 ? atoi(argv[2]) : 5, per = 20000;
	double		*v, t;
	char		*batch, err[1200], one[sizeof LINE + 1];
	size_t		 blen = 0, used, nlines = 0;
	cJSON		*e;
	struct wiremsg	 m;

	if (argc < 2) {
		fprintf(stderr, "usage: bench_parse CW-PARSE [RUNS]\n");
		return 64;
	}
	if (runs < 1)
		runs = 1;
	parsechild_init(argv[1]);
	v = calloc((size_t)runs, sizeof *v);
	snprintf(one, sizeof one, "%s\n", LINE);
	batch = malloc(TRANSCRIPTS_CHUNK + sizeof LINE + 1);
	while (blen + sizeof LINE <= TRANSCRIPTS_CHUNK) {
		memcpy(batch + blen, LINE, sizeof LINE - 1);
		blen += sizeof LINE - 1;
		batch[blen++] = '\n';
		nlines++;
	}

	for (int r = 0; r < runs; r++) {
		t = now_us();
		for (int i = 0; i < per; i++) {
			e = json_parse(LINE, sizeof LINE - 1);
			if (e == NULL || transcript_check(e) == -1)
				return 1;
			cJSON_Delete(e);
		}
		v[r] = (now_us() - t) / per;
	}
	printf("inproc       %8.2f us/record   (json_parse + transcript_check)\n",
	    median(v, runs));
	for (int r = 0; r < runs; r++) {
		t = now_us();
		for (int i = 0; i < per; i++) {
			if (wiremsg_decode(WIRE, sizeof WIRE - 1, &m, err, sizeof err) == -1)
				return 1;
			wiremsg_free(&m);
		}
		v[r] = (now_us() - t) / per;
	}
	printf("wire         %8.2f us/line     (wiremsg_decode of a runner's say line)\n",
	    median(v, runs));
	/* Warm the child. */
	if (parsechild_transcript(one, sizeof LINE, 1 << 20, &e, &used, err,
	    sizeof err) == -1) {
		fprintf(stderr, "bench_parse: %s\n", err);
		return 1;
	}
	cJSON_Delete(e);
	for (int r = 0; r < runs; r++) {
		int	n = per / 10;

		t = now_us();
		for (int i = 0; i < n; i++) {
			if (parsechild_transcript(one, sizeof LINE, 1 << 20, &e, &used,
			    err, sizeof err) == -1 || cJSON_GetArraySize(e) != 1)
				return 1;
			cJSON_Delete(e);
		}
		v[r] = (now_us() - t) / n;
	}
	printf("child/1      %8.2f us/record   (one line per call: a round trip)\n",
	    median(v, runs));
	for (int r = 0; r < runs; r++) {
		t = now_us();
		if (parsechild_transcript(batch, blen, TRANSCRIPTS_CHUNK, &e, &used, err,
		    sizeof err) == -1 || (size_t)cJSON_GetArraySize(e) != nlines)
			return 1;
		cJSON_Delete(e);
		v[r] = (now_us() - t) / (double)nlines;
	}
	printf("child/batch  %8.2f us/record   (%zu lines, %zu bytes per call)\n",
	    median(v, runs), nlines, blen);
	for (int r = 0; r < runs; r++) {
		parsechild_stop();
		t = now_us();
		if (parsechild_transcript(one, sizeof LINE, 1 << 20, &e, &used, err,
		    sizeof err) == -1)
			return 1;
		cJSON_Delete(e);
		v[r] = now_us() - t;
	}
	printf("start        %8.0f us          (exec, narrowing and a first call)\n",
	    median(v, runs));
	parsechild_stop();
	free(batch);
	free(v);
	return 0;
}

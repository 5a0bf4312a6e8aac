/*
 * Deny-list throughput: floor_evaluate over the test corpus (test/floor_corpus.h),
 * repeated for a fixed wall-clock time. Prints evaluations per second overall, the
 * allowed and denied rows apart, and the slowest row. Never a timed test. The policy
 * is the corpus's: the default configuration's rules (the starter rules) and a worktree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floor.h"
#include "../floor_corpus.h"

static double
bench_floor_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	struct floor_policy	 pol;
	struct floor_result	 r;
	size_t			 n = sizeof floor_corpus / sizeof floor_corpus[0];
	double			 secs = argc > 1 ? atof(argv[1]) : 2.0;
	double			 t0, t, per[2] = { 0, 0 }, worst = 0;
	unsigned long		 evals = 0, cnt[2] = { 0, 0 };
	size_t			 worst_i = 0;

	struct config		 cfg;

	if (config_defaults(&cfg) == -1) {
		fprintf(stderr, "bench_floor: out of memory\n");
		return 1;
	}
	memset(&pol, 0, sizeof pol);
	pol.home = FLOOR_CORPUS_HOME;
	pol.cwhome = FLOOR_CORPUS_HOME "/.clockwork";
	pol.worktree = FLOOR_CORPUS_WORKTREE;
	pol.rules = cfg.rules;
	pol.n_rules = cfg.n_rules;
	t0 = bench_floor_now();
	while (bench_floor_now() - t0 < secs) {
		for (size_t i = 0; i < n; i++) {
			double s = bench_floor_now();
			if (floor_evaluate(floor_corpus[i].command, &pol, &r) == -1) {
				fprintf(stderr, "bench_floor: out of memory\n");
				return 1;
			}
			t = bench_floor_now() - s;
			per[r.verdict == FLOOR_DENY] += t;
			cnt[r.verdict == FLOOR_DENY]++;
			if (t > worst) {
				worst = t;
				worst_i = i;
			}
		}
		evals += n;
	}
	t = bench_floor_now() - t0;
	printf("floor: %zu corpus commands, %lu evaluations in %.2f s\n", n, evals, t);
	printf("floor: %.0f evaluations/s (mean %.1f us)\n", evals / t, t / evals * 1e6);
	printf("floor: allowed rows mean %.1f us, denied rows mean %.1f us\n",
	    cnt[0] ? per[0] / cnt[0] * 1e6 : 0.0, cnt[1] ? per[1] / cnt[1] * 1e6 : 0.0);
	printf("floor: slowest single evaluation %.1f us: %.60s\n", worst * 1e6,
	    floor_corpus[worst_i].command);
	config_free(&cfg);
	return 0;
}

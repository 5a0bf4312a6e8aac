/*
 * The daemon's transcript files (daemon/transcripts.c): every string of an entry is
 * masked with its key kept, a malformed entry is not written, the run's cap holds
 * (with one note saying so), and reads return whole entries from an offset.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "json.h"
#include "parsechild.h"
#include "runs.h"
#include "transcript.h"
#include "transcripts.h"

#define GH	"ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"

struct fx {
	struct daemon	 d;
	struct run	 r;
	char		 dir[64];
};

static int
setup(void **state)
{
	struct fx	*f = calloc(1, sizeof *f);
	char		 runs[128];

	snprintf(f->dir, sizeof f->dir, "/tmp/cw-test-transcripts.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(runs, sizeof runs, "%s/runs", f->dir);
	assert_int_equal(mkdir(runs, 0700), 0);
	snprintf(f->d.home, sizeof f->d.home, "%s", f->dir);
	f->r.d = &f->d;
	snprintf(f->r.id, sizeof f->r.id, "run-1");
	f->r.log_max = 4096;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx	*f = *state;
	char		 cmd[160];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static cJSON *
read_all(struct fx *f, long long off, long long *next)
{
	char	 path[256];
	cJSON	*e = NULL;

	transcripts_path(f->d.home, f->r.id, path, sizeof path);
	assert_int_equal(transcripts_read(path, off, TRANSCRIPTS_CHUNK, &e, next), 0);
	return e;
}

static void
test_masked_with_keys(void **state)
{
	struct fx	*f = *state;
	long long	 next;
	cJSON		*all, *e;

	transcripts_append(&f->r, transcript_tool("Bash", "t1",
	    "git clone https://" GH "@github.com/o/r.git", NULL, NULL));
	transcripts_append(&f->r, transcript_ask("ap-1", "Bash", "echo " GH, 0));
	all = read_all(f, 0, &next);
	assert_int_equal(cJSON_GetArraySize(all), 2);
	e = cJSON_GetArrayItem(all, 0);
	assert_string_equal(json_get_string(e, "command"),
	    "git clone https://ghp_[MASKED]@github.com/o/r.git");
	assert_string_equal(json_get_string(e, "tool"), "Bash");
	assert_null(strstr(json_get_string(cJSON_GetArrayItem(all, 1), "command"), GH));
	cJSON_Delete(all);
	/* From the end: nothing more. */
	all = read_all(f, next, &next);
	assert_int_equal(cJSON_GetArraySize(all), 0);
	cJSON_Delete(all);
}

static void
test_bad_entry_and_cap(void **state)
{
	struct fx	*f = *state;
	long long	 next;
	cJSON		*all, *bad;
	char		 big[1500];
	int		 n;

	bad = cJSON_Parse("{\"k\":\"usage\",\"dollars\":\"lots\",\"turns\":1}");
	transcripts_append(&f->r, bad);
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	for (int i = 0; i < 10; i++)
		transcripts_append(&f->r, transcript_text(big));
	all = read_all(f, 0, &next);
	n = cJSON_GetArraySize(all);
	/* 4096 bytes hold two of these, then the one note past the cap. */
	assert_int_equal(n, 3);
	assert_string_equal(json_get_string(cJSON_GetArrayItem(all, 2), "k"), "note");
	assert_non_null(strstr(json_get_string(cJSON_GetArrayItem(all, 2), "text"), "capped"));
	cJSON_Delete(all);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_masked_with_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_entry_and_cap, setup, teardown),
	};

	/* transcripts_read parses in cw-parse, the one this tree built. */
	parsechild_init(CW_BIN_DIR "/cw-parse");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

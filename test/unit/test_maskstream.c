/*
 * The streaming masker (common/maskstream.c): a secret cut by a chunk boundary at every
 * possible byte is masked as if it came whole; a private key over several lines and
 * chunks is swallowed up to its END line and the text after it kept; a quiet stream gives
 * out the start of an open line but not the word that may still become a secret; a line
 * longer than the hold is cut without letting a secret through; a key with no END line
 * stops swallowing at its bound.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mask.h"
#include "maskstream.h"

#define GH	"ghp_BkdfQ1y3GQsMpSscDlkrCaqx9vJupc94tnwl"
#define PEM	"-----BEGIN RSA PRIVATE KEY-----\n" \
		"MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi6ZTjwMmb2DyEuRAcfBeJDYkzT\n" \
		"q4zV1Pj8HYMdkI0Yw8Rz4OAL0Yp1EefF0mCcGxd3VGDLTC8nQBvG3Ay4Cr0hQs7G\n" \
		"-----END RSA PRIVATE KEY-----"

/* Output accumulated over a test. */
struct acc {
	char	*p;
	size_t	 len;
};

static void
acc_add(struct acc *a, char *part, size_t n)
{
	assert_non_null(part);
	a->p = realloc(a->p, a->len + n + 1);
	assert_non_null(a->p);
	memcpy(a->p + a->len, part, n);
	a->len += n;
	a->p[a->len] = '\0';
	free(part);
}

static void
feed(struct maskstream *ms, struct acc *a, const char *s, size_t n)
{
	size_t	 len;
	char	*part = maskstream_feed(ms, s, n, &len);

	acc_add(a, part, len);
}

static void
idle(struct maskstream *ms, struct acc *a)
{
	size_t	 len;
	char	*part = maskstream_idle(ms, &len);

	acc_add(a, part, len);
}

static void
end(struct maskstream *ms, struct acc *a)
{
	size_t	 len;
	char	*part = maskstream_end(ms, &len);

	acc_add(a, part, len);
	assert_int_equal(maskstream_held(ms), 0);
}

/* Every cut of text into two chunks gives what masking it whole gives. */
static void
check_every_cut(const char *text)
{
	size_t	 n = strlen(text), wlen;
	char	*whole = mask_secrets_buf(text, n, &wlen);

	assert_non_null(whole);
	for (size_t cut = 0; cut <= n; cut++) {
		struct maskstream	*ms = maskstream_new();
		struct acc		 a = { NULL, 0 };

		assert_non_null(ms);
		feed(ms, &a, text, cut);
		feed(ms, &a, text + cut, n - cut);
		end(ms, &a);
		if (a.len != wlen || memcmp(a.p, whole, wlen) != 0)
			fail_msg("cut at %zu of %s:\n got  %s\n want %s", cut, text, a.p, whole);
		free(a.p);
		maskstream_free(ms);
	}
	free(whole);
}

static void
test_split_every_byte(void **state)
{
	(void)state;
	check_every_cut("token " GH " done\n");
	check_every_cut("before\n" PEM "\nafter the key\n");
	check_every_cut("x: " PEM " tail\nnext\n");
	check_every_cut("export DB_PASSWORD=hunter2Qx9vT2mLp8\nls\n");
	check_every_cut("curl -H 'Authorization: Bearer xQ9vT2mLp8Rk4Wz7Yb3N' https://u:s3cr3tPassW0rd9@h/\n");
	check_every_cut("{\"api_key\": \"Zq9XkP3mLw7RtY2vAb\", \"n\": 1}\n");
	check_every_cut("bot486703003:AAqBlIFXZ53Ncqe28_ajY75FnCttn6kfaqD/getMe\n");
}

/* One byte per chunk: the key body never comes out, the text around it does. */
static void
test_pem_byte_by_byte(void **state)
{
	const char		*text = "before\n" PEM "\nafter the key\n";
	struct maskstream	*ms = maskstream_new();
	struct acc		 a = { NULL, 0 };

	(void)state;
	for (size_t i = 0; text[i] != '\0'; i++)
		feed(ms, &a, text + i, 1);
	assert_string_equal(a.p, "before\n[MASKED:private-key]\nafter the key\n");
	end(ms, &a);
	maskstream_free(ms);
	free(a.p);
}

/*
 * A quiet stream gives out what it can of an open line: the start, not the last word
 * (which may still become a secret) nor an assignment waiting for its value.
 */
static void
test_idle(void **state)
{
	struct maskstream	*ms = maskstream_new();
	struct acc		 a = { NULL, 0 };
	char			 pad[700];

	(void)state;
	memset(pad, 'w', sizeof pad - 1);
	for (size_t i = 7; i < sizeof pad - 1; i += 8)
		pad[i] = ' ';
	pad[sizeof pad - 1] = '\0';
	feed(ms, &a, pad, strlen(pad));
	feed(ms, &a, " token ghp_BkdfQ1y3GQsMp", 24);
	assert_int_equal(a.len, 0);
	idle(ms, &a);
	assert_true(a.len > 0 && a.len < strlen(pad));
	assert_null(strstr(a.p, "ghp_"));
	feed(ms, &a, "SscDlkrCaqx9vJupc94tnwl done\n", 29);
	assert_non_null(strstr(a.p, " token ghp_[MASKED] done\n"));
	assert_null(strstr(a.p, "SscDlkr"));
	end(ms, &a);
	free(a.p);

	/* Too short to cut: nothing goes out, and the value still gets masked. */
	a.p = NULL;
	a.len = 0;
	feed(ms, &a, "export DB_PASSWORD=", 19);
	idle(ms, &a);
	assert_int_equal(a.len, 0);
	feed(ms, &a, "hunter2Qx9vT2mLp8\n", 18);
	assert_string_equal(a.p, "export DB_PASSWORD=[MASKED]\n");
	maskstream_free(ms);
	free(a.p);
}

/* A line longer than the hold is cut, and a token near the cut does not leak. */
static void
test_long_line(void **state)
{
	struct maskstream	*ms = maskstream_new();
	struct acc		 a = { NULL, 0 };
	size_t			 n = MASKSTREAM_HOLD_MAX + 4096;
	char			*big = malloc(n);

	(void)state;
	assert_non_null(big);
	for (size_t i = 0; i < n; i++)
		big[i] = (i % 9 == 8) ? ' ' : 'a' + (char)(i % 7);
	/* The token straddles the end of the first chunk, which forces a cut. */
	big[MASKSTREAM_HOLD_MAX - 11] = ' ';
	memcpy(big + MASKSTREAM_HOLD_MAX - 10, GH, strlen(GH));
	big[MASKSTREAM_HOLD_MAX - 10 + strlen(GH)] = ' ';
	feed(ms, &a, big, MASKSTREAM_HOLD_MAX + 1);
	assert_true(a.len > 0);
	assert_true(maskstream_held(ms) >= MASKSTREAM_TAIL);
	feed(ms, &a, big + MASKSTREAM_HOLD_MAX + 1, n - MASKSTREAM_HOLD_MAX - 1);
	feed(ms, &a, "\n", 1);
	end(ms, &a);
	assert_null(memmem(a.p, a.len, "SscDlkr", 7));
	assert_non_null(memmem(a.p, a.len, "ghp_[MASKED]", 12));
	free(big);
	free(a.p);
	maskstream_free(ms);
}

/*
 * A BEGIN line with no END: the key's lines are swallowed up to the bound, then
 * swallowing stops at a line end and what follows shows again.
 */
static void
test_pem_unterminated(void **state)
{
	struct maskstream	*ms = maskstream_new();
	struct acc		 a = { NULL, 0 };
	char			 line[65];
	int			 kept;

	(void)state;
	memset(line, 'K', 63);
	line[63] = '\n';
	line[64] = '\0';
	feed(ms, &a, "-----BEGIN PRIVATE KEY-----\n", 28);
	for (size_t i = 0; i < MASKSTREAM_PEM_MAX / 64 + 4; i++)
		feed(ms, &a, line, 64);
	feed(ms, &a, "visible again\n", 14);
	end(ms, &a);
	/* At most the lines past the bound (a "key" longer than any key) show. */
	kept = 0;
	for (const char *p = a.p; (p = strstr(p, "KKKK")) != NULL; p += 63)
		kept++;
	assert_true(kept <= 5);
	assert_int_equal(strncmp(a.p, "[MASKED:private-key]", 20), 0);
	assert_non_null(strstr(a.p, "\nvisible again\n"));
	free(a.p);
	maskstream_free(ms);
}

/* The end of a stream masks what is left, a key cut off included. */
static void
test_end(void **state)
{
	struct maskstream	*ms = maskstream_new();
	struct acc		 a = { NULL, 0 };

	(void)state;
	feed(ms, &a, "last " GH, strlen("last " GH));
	assert_int_equal(a.len, 0);
	end(ms, &a);
	assert_string_equal(a.p, "last ghp_[MASKED]");
	free(a.p);
	a.p = NULL;
	a.len = 0;
	feed(ms, &a, "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg", 43);
	end(ms, &a);
	assert_string_equal(a.p, "[MASKED:private-key]");
	free(a.p);
	maskstream_free(ms);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_every_byte),
		cmocka_unit_test(test_pem_byte_by_byte),
		cmocka_unit_test(test_idle),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_pem_unterminated),
		cmocka_unit_test(test_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Terminal escaping (common/vis.c), bounded records (common/record.c) and SHA-256
 * (common/sha256.c): OSC 52 and CSI sequences, a fake daemon line, bidi and
 * zero-width marks, invalid UTF-8, JSON mode staying JSON; commands masked before
 * they are cut, with the hash of the whole; lists that stop keeping but keep counting.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "record.h"
#include "sha256.h"
#include "vis.h"
#include "wire.h"

static void
expect_vis(const char *in, int flags, const char *want)
{
	char	*v = vis_str(in, flags);

	assert_non_null(v);
	if (strcmp(v, want) != 0)
		fail_msg("vis(%s): got '%s', want '%s'", in, v, want);
	free(v);
}

static void
test_vis_controls(void **state)
{
	(void)state;
	expect_vis("plain text 123", 0, "plain text 123");
	expect_vis("\033]52;c;aGk=\007", 0, "\\e]52;c;aGk=\\x07");
	expect_vis("\r\033[2K[clockworkd] run ended", 0, "\\r\\e[2K[clockworkd] run ended");
	expect_vis("a\nb\tc", 0, "a\\nb\\tc");
	expect_vis("a\nb\tc", VIS_KEEP_NL | VIS_KEEP_TAB, "a\nb\tc");
	expect_vis("back\\slash", 0, "back\\\\slash");
	expect_vis("del\x7f", 0, "del\\x7f");
	expect_vis("\x01\x1f", 0, "\\x01\\x1f");
}

static void
test_vis_unicode(void **state)
{
	(void)state;
	expect_vis("caf\xc3\xa9 \xe2\x9c\x93", 0, "caf\xc3\xa9 \xe2\x9c\x93");	/* kept */
	expect_vis("rm -rf /\xe2\x80\xae#txt.", 0, "rm -rf /\\u202e#txt.");	/* RLO */
	expect_vis("a\xe2\x80\x8b" "b", 0, "a\\u200bb");			/* ZWSP */
	expect_vis("\xe2\x81\xa6x\xe2\x81\xa9", 0, "\\u2066x\\u2069");		/* isolates */
	expect_vis("\xef\xbb\xbf", 0, "\\ufeff");
	expect_vis("\xc2\x9b" "31m", 0, "\\u009b31m");				/* 8-bit CSI */
	expect_vis("\xf3\xa0\x80\x81", 0, "\\U000e0001");			/* tag */
	expect_vis("\xc0\xaf", 0, "\\xc0\\xaf");				/* overlong */
	expect_vis("\xed\xa0\x80", 0, "\\xed\\xa0\\x80");			/* surrogate */
	expect_vis("\xe2\x80", 0, "\\xe2\\x80");				/* short */
	expect_vis("\xff", 0, "\\xff");
}

static void
test_vis_json(void **state)
{
	cJSON	*o, *back;
	char	*t, *v;

	(void)state;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "c", "x\033]52;c;aGk=\007 \xe2\x80\xae \xf3\xa0\x80\x81 \\ \"");
	t = cJSON_PrintUnformatted(o);
	v = vis_str(t, VIS_JSON);
	assert_null(strstr(v, "\xe2\x80\xae"));
	assert_null(strchr(v, 0x1b));
	/* Still JSON, and the same text. */
	back = cJSON_Parse(v);
	assert_non_null(back);
	assert_string_equal(json_get_string(back, "c"), json_get_string(o, "c"));
	cJSON_Delete(back);
	cJSON_Delete(o);
	cJSON_free(t);
	free(v);
	expect_vis("\"\xff\"", VIS_JSON, "\"\\ufffd\"");
}

static void
test_vis_expansion(void **state)
{
	char	in[256], *v;
	size_t	n;

	(void)state;
	for (int i = 0; i < 256; i++)
		in[i] = (char)i;
	for (int f = 0; f < 8; f++) {
		v = vis_buf(in, sizeof in, f, &n);
		assert_non_null(v);
		assert_true(n <= sizeof in * VIS_MAX_EXPANSION);
		assert_int_equal(strlen(v), n);
		free(v);
	}
}

static void
test_sha256(void **state)
{
	char		hex[SHA256_HEX];
	char		*big;
	struct sha256	c;
	unsigned char	d[SHA256_DIGEST];

	(void)state;
	sha256_hex("", 0, hex);
	assert_string_equal(hex,
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha256_hex("abc", 3, hex);
	assert_string_equal(hex,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	assert_string_equal(hex,
	    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* A million 'a', fed in odd pieces. */
	big = malloc(1000000);
	memset(big, 'a', 1000000);
	sha256_init(&c);
	for (size_t off = 0; off < 1000000; off += 999)
		sha256_update(&c, big + off, 1000000 - off < 999 ? 1000000 - off : 999);
	sha256_final(&c, d);
	for (int i = 0; i < SHA256_DIGEST; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	assert_string_equal(hex,
	    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(big);
}

static void
test_record_command(void **state)
{
	cJSON		*o;
	char		*cmd, hex[SHA256_HEX];
	const char	*kept;
	double		 bytes;
	size_t		 n = 3 * 1024 * 1024;

	(void)state;
	o = cJSON_CreateObject();
	record_add_command(o, "git push -f origin main");
	assert_string_equal(json_get_string(o, "command"), "git push -f origin main");
	assert_null(cJSON_GetObjectItem(o, "command_sha256"));
	cJSON_Delete(o);

	/* 3 MiB with a secret straddling the cut: masked first, then cut. */
	cmd = malloc(n + 1);
	memset(cmd, 'x', n);
	memcpy(cmd, "echo ", 5);
	cmd[CW_RECORD_MAX_COMMAND - 30] = ' ';
	memcpy(cmd + CW_RECORD_MAX_COMMAND - 29, "ghp_" "BkdfQ1y3GQsMpSscDlkrCaqx9vJupc94tnwl", 40);
	cmd[CW_RECORD_MAX_COMMAND + 11] = ' ';
	cmd[n] = '\0';
	o = cJSON_CreateObject();
	record_add_command(o, cmd);
	kept = json_get_string(o, "command");
	assert_true(strlen(kept) <= CW_RECORD_MAX_COMMAND);
	assert_null(strstr(kept, "BkdfQ1y3"));
	assert_non_null(cJSON_GetObjectItem(o, "command_truncated"));
	assert_int_equal(json_get_number(o, "command_bytes", &bytes), 0);
	assert_true(bytes > CW_RECORD_MAX_COMMAND);
	assert_int_equal(strlen(json_get_string(o, "command_sha256")), 64);
	cJSON_Delete(o);
	free(cmd);
	(void)hex;
}

static void
test_record_cut_utf8(void **state)
{
	/* "é" is 2 bytes: a cut at 2 must not split the second one. */
	(void)state;
	assert_int_equal(record_cut("a\xc3\xa9z", 4, 2), 1);
	assert_int_equal(record_cut("a\xc3\xa9z", 4, 3), 3);
	assert_int_equal(record_cut("abc", 3, 10), 3);
}

static void
test_record_list(void **state)
{
	struct record_list	 l;
	cJSON			*o, *it;
	double			 count, omitted;

	(void)state;
	assert_int_equal(record_list_init(&l, 3, 1024 * 1024), 0);
	for (int i = 0; i < 10; i++) {
		it = cJSON_CreateObject();
		cJSON_AddNumberToObject(it, "i", i);
		record_list_add(&l, it);
	}
	o = record_list_json(&l);
	json_get_number(o, "count", &count);
	json_get_number(o, "omitted", &omitted);
	assert_int_equal((int)count, 10);
	assert_int_equal((int)omitted, 7);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "list")), 3);
	cJSON_Delete(o);
	record_list_free(&l);

	/* The byte bound holds too. */
	assert_int_equal(record_list_init(&l, 1000, 100), 0);
	for (int i = 0; i < 10; i++) {
		it = cJSON_CreateObject();
		cJSON_AddStringToObject(it, "s", "0123456789012345678901234567890123456789");
		record_list_add(&l, it);
	}
	assert_true(l.bytes <= 100);
	assert_int_equal((int)l.count, 10);
	assert_true(cJSON_GetArraySize(l.items) < 10);
	record_list_free(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vis_controls),
		cmocka_unit_test(test_vis_unicode),
		cmocka_unit_test(test_vis_json),
		cmocka_unit_test(test_vis_expansion),
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_record_command),
		cmocka_unit_test(test_record_cut_utf8),
		cmocka_unit_test(test_record_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Telegram's pure parts and the secret store: the Bot API envelope and updates
 * (daemon/tgapi.c) with what a press must carry to count, the chat and user checks'
 * building blocks, the approval message's text (its input as stored, masked when it
 * entered the daemon; made visible, cut, time left);
 * named secrets in a 0600 file (common/secret.c) that refuse a file others could read
 * or a link; literal secrets masked in text and log lines (common/mask.c).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mask.h"
#include "secret.h"
#include "tgapi.h"

static void
test_reply_envelope(void **state)
{
	struct tgapi_reply	 r;
	const char		*bad[] = { "", "[]", "{\"result\":[]}", "{\"ok\":1}", "nope" };

	(void)state;
	assert_int_equal(tgapi_reply_parse("{\"ok\":true,\"result\":[]}", 23, &r), 0);
	assert_true(r.ok);
	assert_true(cJSON_IsArray(r.result));
	tgapi_reply_free(&r);
	const char *err = "{\"ok\":false,\"error_code\":429,\"description\":\"Too Many "
	    "Requests: retry after 7\",\"parameters\":{\"retry_after\":7}}";
	assert_int_equal(tgapi_reply_parse(err, strlen(err), &r), 0);
	assert_false(r.ok);
	assert_int_equal(r.error_code, 429);
	assert_int_equal(r.retry_after, 7);
	assert_null(r.result);
	assert_string_equal(r.description, "Too Many Requests: retry after 7");
	tgapi_reply_free(&r);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(tgapi_reply_parse(bad[i], strlen(bad[i]), &r), -1);
}

static int
parse_update(const char *json, struct tgapi_press *p)
{
	cJSON	*u = cJSON_Parse(json);
	int	 rc;

	assert_non_null(u);
	rc = tgapi_update_parse(u, p);
	cJSON_Delete(u);
	return rc;
}

static void
test_update_press(void **state)
{
	struct tgapi_press	 p;

	(void)state;
	assert_int_equal(parse_update("{\"update_id\":1001,\"callback_query\":{\"id\":\"q1\","
	    "\"from\":{\"id\":5001,\"is_bot\":false,\"first_name\":\"A\",\"username\":"
	    "\"alice_1\"},\"chat_instance\":\"x\",\"message\":{\"message_id\":7,\"date\":0,"
	    "\"chat\":{\"id\":-100123,\"type\":\"supergroup\"}},\"data\":"
	    "\"cw1:d:ap-0123456789ab\"}}", &p), 0);
	assert_int_equal(p.update_id, 1001);
	assert_true(p.is_press && p.ours);
	assert_false(p.allow);
	assert_string_equal(p.approval_id, "ap-0123456789ab");
	assert_string_equal(p.query_id, "q1");
	assert_int_equal(p.from_id, 5001);
	assert_string_equal(p.from_username, "alice_1");
	assert_int_equal(p.chat_id, -100123);
	assert_string_equal(p.chat_type, "supergroup");
	assert_int_equal(p.message_id, 7);

	/* Not ours, not a press, or no update id at all. */
	assert_int_equal(parse_update("{\"update_id\":5,\"callback_query\":{\"id\":\"q\","
	    "\"from\":{\"id\":1},\"data\":\"cw1:x:ap-1\"}}", &p), 0);
	assert_true(p.is_press);
	assert_false(p.ours);
	assert_int_equal(p.chat_id, 0);
	assert_int_equal(parse_update("{\"update_id\":6,\"callback_query\":{\"id\":\"q\","
	    "\"from\":{\"id\":1},\"data\":\"cw1:a:ap-1;rm\"}}", &p), 0);
	assert_false(p.ours);
	assert_int_equal(parse_update("{\"update_id\":7,\"message\":{\"text\":\"hi\"}}",
	    &p), 0);
	assert_false(p.is_press);
	assert_int_equal(parse_update("{\"callback_query\":{}}", &p), -1);
	assert_int_equal(parse_update("{\"update_id\":1.5}", &p), -1);
	/* A user name that is not Telegram's alphabet is dropped, not printed. */
	assert_int_equal(parse_update("{\"update_id\":8,\"callback_query\":{\"id\":\"q\","
	    "\"from\":{\"id\":2,\"username\":\"x\\u001b[2J\"},\"data\":\"cw1:a:ap-1\"}}",
	    &p), 0);
	assert_string_equal(p.from_username, "");
	assert_true(p.ours && p.allow);
	assert_false(p.for_task);
	/* "Always for this task": an allow that is also remembered. */
	assert_int_equal(parse_update("{\"update_id\":9,\"callback_query\":{\"id\":\"q\","
	    "\"from\":{\"id\":2},\"data\":\"cw1:t:ap-1\"}}", &p), 0);
	assert_true(p.ours && p.allow && p.for_task);
}

static void
test_checks(void **state)
{
	char	 d[TGAPI_DATA_MAX + 1];
	cJSON	*kb;
	char	*t;

	(void)state;
	assert_true(tgapi_user_allowed("[7001,7002]", 7002));
	assert_false(tgapi_user_allowed("[7001,7002]", 7003));
	assert_false(tgapi_user_allowed(NULL, 7001));
	assert_false(tgapi_user_allowed("[]", 7001));
	assert_false(tgapi_user_allowed("not json", 7001));
	assert_true(tgapi_chat_is_group("group", 5));
	assert_true(tgapi_chat_is_group("private", -5));
	assert_true(tgapi_chat_is_group(NULL, 5));
	assert_true(tgapi_chat_is_group("channel", 5));
	assert_false(tgapi_chat_is_group("private", 5));
	assert_int_equal(tgapi_button_data(d, sizeof d, 1, "ap-0123456789ab"), 0);
	assert_string_equal(d, "cw1:a:ap-0123456789ab");
	memset(d, 0, sizeof d);
	{
		char	 longid[80];

		memset(longid, 'a', sizeof longid - 1);
		longid[sizeof longid - 1] = '\0';
		assert_int_equal(tgapi_button_data(d, sizeof d, 0, longid), -1);
	}
	kb = tgapi_keyboard("ap-1", 1);
	t = cJSON_PrintUnformatted(kb);
	assert_string_equal(t, "{\"inline_keyboard\":[[{\"text\":\"Approve\","
	    "\"callback_data\":\"cw1:a:ap-1\"},{\"text\":\"Always for this task\","
	    "\"callback_data\":\"cw1:t:ap-1\"},{\"text\":\"Deny\",\"callback_data\":"
	    "\"cw1:d:ap-1\"}]]}");
	cJSON_free(t);
	cJSON_Delete(kb);
	/* A budget question: nothing to remember, no "Always for this task". */
	kb = tgapi_keyboard("ap-2", 0);
	t = cJSON_PrintUnformatted(kb);
	assert_null(strstr(t, "cw1:t:"));
	assert_non_null(strstr(t, "cw1:a:ap-2"));
	cJSON_free(t);
	cJSON_Delete(kb);
}

static void
test_message_text(void **state)
{
	struct store_telegram_item	 it = { 0 };
	char				*t, *big, *input;
	size_t				 n = 5000;

	(void)state;
	it.approval_id = "ap-1";
	it.run_id = "run-1";
	it.task = "nightly";
	it.tool = "Bash";
	it.state = "pending";
	it.deadline = "2030-01-01T00:10:05.000Z";
	/* As stored: masked when it entered the daemon (runs.c), so shown as it is. */
	it.input = "{\"command\":\"echo ghp_[MASKED] \\u001b]52;c;eA==\\u0007\"}";
	t = tgapi_message_text(&it, 1893456000);	/* 2030-01-01T00:00:00Z */
	assert_non_null(t);
	assert_non_null(strstr(t, "Approval needed: Bash"));
	assert_non_null(strstr(t, "run: run-1\ntask: nightly\napproval: ap-1"));
	assert_non_null(strstr(t, "time left: 10m 05s"));
	assert_non_null(strstr(t, "echo ghp_[MASKED] "));
	assert_null(strchr(t, '\033'));
	assert_null(strchr(t, '\a'));
	assert_non_null(strstr(t, "\\e]52;c;eA==\\x07"));
	/* Issue 17: the risk level comes first; an approval from before has none. */
	assert_true(strncmp(t, "Risk: ordinary\nApproval needed", 30) == 0);
	free(t);
	it.risk = "destructive";
	it.risk_rule = "config.rm_root";
	t = tgapi_message_text(&it, 1893456000);
	assert_non_null(t);
	assert_true(strncmp(t, "Risk: destructive (config.rm_root)\nApproval needed: Bash",
	    56) == 0);
	free(t);
	it.risk = NULL;
	it.risk_rule = NULL;

	it.state = "allowed";
	it.answered_by = "inbox";
	t = tgapi_message_text(&it, 1893456000);
	assert_non_null(strstr(t, "Approved by inbox"));
	assert_null(strstr(t, "time left"));
	free(t);

	/* A long command is cut, says so, and points at the whole. */
	big = malloc(n + 1);
	memset(big, 'x', n);
	big[n] = '\0';
	assert_true(asprintf(&input, "{\"command\":\"%s\"}", big) > 0);
	it.input = input;
	it.state = "pending";
	it.deadline = NULL;
	t = tgapi_message_text(&it, 0);
	assert_true(strlen(t) < TGAPI_TEXT_MAX);
	assert_non_null(strstr(t, "bytes: cwctl approvals show ap-1)"));
	assert_non_null(strstr(t, "time left: until the run's time budget ends"));
	free(t);
	free(input);
	free(big);

	/*
	 * Issue 26 item 9: a network ask shows its host whole, first, however long, with
	 * the risk the proxy gave a loopback address.
	 */
	{
		char	 host[200];

		snprintf(host, sizeof host, "registry.npmjs.org.%.60s.%.60s.evil-exfil.example",
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
		assert_true(asprintf(&input, "{\"host\":\"%s\",\"port\":443,\"method\":"
		    "\"CONNECT\",\"question\":\"allow this host?\"}", host) > 0);
		it.tool = "network";
		it.input = input;
		it.risk = "outside_worktree";
		it.risk_rule = "network.private_address";
		t = tgapi_message_text(&it, 0);
		assert_non_null(t);
		assert_non_null(strstr(t, "Approval needed: network\n\nCONNECT "));
		assert_non_null(strstr(t, host));
		assert_non_null(strstr(t, ":443\n\nallow this host?"));
		assert_null(strstr(t, "\u2026"));
		assert_true(strncmp(t, "Risk: outside_worktree (network.private_address)", 48) == 0);
		free(t);
		free(input);
	}
}

static void
test_secret_file(void **state)
{
	char		 dir[] = "/tmp/cw-secret.XXXXXX", path[256], err[256];
	char		*v = NULL;
	struct stat	 sb;
	enum secret_backend where;

	(void)state;
	setenv("CW_SECRET_BACKEND", "file", 1);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(secret_get(dir, "telegram.bot_token", &v, err, sizeof err), 0);
	assert_int_equal(secret_set(dir, "telegram.bot_token", "123:abc", &where, err,
	    sizeof err), 0);
	assert_int_equal(where, SECRET_BACKEND_FILE);
	snprintf(path, sizeof path, "%s/secrets/telegram.bot_token", dir);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(secret_get(dir, "telegram.bot_token", &v, err, sizeof err), 1);
	assert_string_equal(v, "123:abc");
	secret_free(v);
	assert_int_equal(secret_set(dir, "telegram.bot_token", "456:def", NULL, err,
	    sizeof err), 0);
	assert_int_equal(secret_get(dir, "telegram.bot_token", &v, err, sizeof err), 1);
	assert_string_equal(v, "456:def");
	secret_free(v);

	/* A file others could read is refused, not used. */
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(secret_get(dir, "telegram.bot_token", &v, err, sizeof err), -1);
	assert_non_null(strstr(err, "mode 0600"));
	/* So is a link put in its place. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("/etc/hostname", path), 0);
	assert_int_equal(secret_get(dir, "telegram.bot_token", &v, err, sizeof err), -1);
	assert_int_equal(unlink(path), 0);

	/* Names are checked: no path can be spelt. */
	assert_int_equal(secret_set(dir, "../api.token", "x", NULL, err, sizeof err), -1);
	assert_int_equal(secret_set(dir, ".hidden", "x", NULL, err, sizeof err), -1);
	assert_int_equal(secret_set(dir, "Upper", "x", NULL, err, sizeof err), -1);
	assert_int_equal(secret_set(dir, "provider.anthropic", "sk", NULL, err,
	    sizeof err), 0);
	assert_int_equal(secret_remove(dir, "provider.anthropic", err, sizeof err), 1);
	assert_int_equal(secret_remove(dir, "provider.anthropic", err, sizeof err), 0);
	snprintf(path, sizeof path, "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

static void
test_mask_literal(void **state)
{
	char	 line[] = "GET /bot7000000001:plainsecret-token/getUpdates and again "
		    "plainsecret-token.";
	char	*m;

	(void)state;
	assert_int_equal(mask_literal_add("short"), -1);
	assert_int_equal(mask_literal_add("plainsecret-token"), 0);
	m = mask_secrets("x plainsecret-token y");
	assert_string_equal(m, "x " MASK_LITERAL_MARK " y");
	free(m);
	mask_literals_inplace(line);
	assert_null(strstr(line, "plainsecret"));
	assert_non_null(strstr(line, "again " MASK_LITERAL_MARK "."));
	mask_literal_remove("plainsecret-token");
	m = mask_secrets("x plainsecret-token y");
	assert_string_equal(m, "x plainsecret-token y");
	free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reply_envelope),
		cmocka_unit_test(test_update_press),
		cmocka_unit_test(test_checks),
		cmocka_unit_test(test_message_text),
		cmocka_unit_test(test_secret_file),
		cmocka_unit_test(test_mask_literal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

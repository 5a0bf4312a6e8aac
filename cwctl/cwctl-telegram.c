/*
 * cwctl telegram set-token: read the bot token from stdin (never argv, where every
 *     process could read it) and hand it to clockworkd, which keeps it in the secret
 *     store (common/secret.h), outside the database and out of every run's reach.
 * cwctl telegram remove-token: forget it; Telegram delivery stops.
 * cwctl telegram test CHAT_ID: send a test message to a chat and say whether it went.
 * cwctl telegram status [--json]: the poller's state, and the last problem it had.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "clock.h"
#include "cwctl.h"
#include "json.h"

#define CWCTL_TELEGRAM_TOKEN_MAX	512
#define CWCTL_TELEGRAM_TEST_SECONDS	30

static int
cwctl_telegram_usage(void)
{
	fprintf(stderr, "usage: cwctl telegram set-token < FILE\n"
	    "       cwctl telegram remove-token\n"
	    "       cwctl telegram test CHAT_ID\n"
	    "       cwctl telegram status [--json]\n");
	return CWCTL_EXIT_USAGE;
}

static void
cwctl_telegram_print(const cJSON *o)
{
	const char	*s;
	int		 b = 0;
	double		 n = 0;

	json_get_bool(o, "token_set", &b);
	printf("token:    %s", b ? "set" : "not set (cwctl telegram set-token)");
	if ((s = json_get_string(o, "secret_backend")) != NULL)
		printf(" (secret store: %s)", cwctl_vis(s));
	printf("\n");
	b = 0;
	json_get_bool(o, "polling", &b);
	printf("polling:  %s\n", b ? "yes" : "no");
	if ((s = json_get_string(o, "api_base_for_tests")) != NULL)
		printf("api base: %s (test stand-in)\n", cwctl_vis(s));
	if ((s = json_get_string(o, "error")) != NULL)
		printf("problem:  %s\n", cwctl_vis(s));
	json_get_number(o, "messages_sent", &n);
	printf("messages: %.0f sent", n);
	json_get_number(o, "presses", &n);
	printf(", %.0f presses", n);
	json_get_number(o, "presses_refused", &n);
	printf(" (%.0f refused)\n", n);
}

static int
cwctl_telegram_test(const char *chat)
{
	cJSON		*b, *o = NULL, *t;
	char		*end;
	long long	 id;
	int64_t		 until = clock_mono_ms() + CWCTL_TELEGRAM_TEST_SECONDS * 1000;
	int		 rc, done = 0, ok = 0;
	const char	*desc;

	errno = 0;
	id = strtoll(chat, &end, 10);
	if (errno != 0 || *end != '\0' || end == chat || id == 0)
		return cwctl_telegram_usage();
	b = cJSON_CreateObject();
	cJSON_AddNumberToObject(b, "chat_id", (double)id);
	if ((rc = client_send("POST", "/api/telegram/test", b, &o)) != 0)
		return rc;
	/* The daemon sends it on its loop; its outcome appears in the status. */
	for (;;) {
		t = cJSON_GetObjectItemCaseSensitive(o, "test");
		json_get_bool(t, "done", &done);
		if (done || clock_mono_ms() >= until)
			break;
		cJSON_Delete(o);
		o = NULL;
		usleep(200 * 1000);
		if ((rc = client_call("GET", "/api/telegram", NULL, &o)) != 0)
			return rc;
	}
	json_get_bool(t, "ok", &ok);
	desc = json_get_string(t, "description");
	if (!done)
		fprintf(stderr, "cwctl: no answer from the Bot API within %d s\n",
		    CWCTL_TELEGRAM_TEST_SECONDS);
	else if (ok)
		printf("test message sent to chat %lld\n", id);
	else
		fprintf(stderr, "cwctl: the test message to chat %lld failed: %s\n", id,
		    desc != NULL ? cwctl_vis(desc) : "?");
	cJSON_Delete(o);
	return done && ok ? CWCTL_EXIT_OK : CWCTL_EXIT_FAILURE;
}

int
cwctl_telegram(int argc, char **argv)
{
	char	 tok[CWCTL_TELEGRAM_TOKEN_MAX + 2];
	cJSON	*b, *o = NULL;
	int	 rc, json = 0;

	if (argc < 2)
		return cwctl_telegram_usage();
	if (strcmp(argv[1], "set-token") == 0) {
		if (argc != 2)
			return cwctl_telegram_usage();
		if (cwctl_read_secret("token", "Paste the bot token from @BotFather, "
		    "then Enter: ", tok, sizeof tok) == -1)
			return CWCTL_EXIT_FAILURE;
		b = cJSON_CreateObject();
		json_add_string(b, "token", tok);
		explicit_bzero(tok, sizeof tok);
		if ((rc = client_send("POST", "/api/telegram/token", b, &o)) != 0)
			return rc;
		printf("bot token stored\n");
		cJSON_Delete(o);
		return CWCTL_EXIT_OK;
	}
	if (strcmp(argv[1], "remove-token") == 0) {
		if (argc != 2)
			return cwctl_telegram_usage();
		if ((rc = client_call("DELETE", "/api/telegram/token", NULL, &o)) != 0)
			return rc;
		printf("bot token removed\n");
		cJSON_Delete(o);
		return CWCTL_EXIT_OK;
	}
	if (strcmp(argv[1], "test") == 0) {
		if (argc != 3)
			return cwctl_telegram_usage();
		return cwctl_telegram_test(argv[2]);
	}
	if (strcmp(argv[1], "status") == 0) {
		for (int i = 2; i < argc; i++) {
			if (strcmp(argv[i], "--json") != 0)
				return cwctl_telegram_usage();
			json = 1;
		}
		if ((rc = client_call("GET", "/api/telegram", NULL, &o)) != 0)
			return rc;
		if (json)
			cwctl_print_json(o);
		else
			cwctl_telegram_print(o);
		cJSON_Delete(o);
		return CWCTL_EXIT_OK;
	}
	return cwctl_telegram_usage();
}

/*
 * cwctl key add NAME --provider anthropic|openai [--base-url URL] [--model M]
 *     reads the key from stdin (never argv, where every process could read it) and
 *     keeps it in the secret store (common/keys.h), outside the database.
 * cwctl key list [--json]   the names, providers, base URLs and models; never a key.
 * cwctl key rm NAME
 * A task names its key: cwctl task add ... --engine byok --key NAME.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cwctl.h"
#include "json.h"
#include "keys.h"
#include "paths.h"

static int
cwctl_key_usage(void)
{
	fprintf(stderr, "usage: cwctl key add NAME --provider anthropic|openai "
	    "[--base-url URL] [--model M] < KEYFILE\n"
	    "       cwctl key list [--json]\n"
	    "       cwctl key rm NAME\n");
	return CWCTL_EXIT_USAGE;
}

static int
cwctl_key_url_ok(const char *s)
{
	if ((strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0) ||
	    strlen(s) > 2048)
		return 0;
	for (const char *c = s; *c != '\0'; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f || *c == '"' || *c == '\\')
			return 0;
	return 1;
}

static int
cwctl_key_add(const char *home, int argc, char **argv)
{
	struct key_entry	 e;
	enum secret_backend	 where;
	char			 buf[KEYS_VALUE_MAX + 2], err[512];
	int			 i, rc;

	memset(&e, 0, sizeof e);
	if (argc < 3)
		return cwctl_key_usage();
	e.name = argv[2];
	for (i = 3; i < argc; i++) {
		if (strcmp(argv[i], "--provider") == 0 && i + 1 < argc)
			e.provider = argv[++i];
		else if (strcmp(argv[i], "--base-url") == 0 && i + 1 < argc)
			e.base_url = argv[++i];
		else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc)
			e.model = argv[++i];
		else {
			fprintf(stderr, "cwctl: key add: unexpected argument '%s' (the key "
			    "itself is read from stdin)\n", argv[i]);
			return CWCTL_EXIT_USAGE;
		}
	}
	if (!keys_name_valid(e.name)) {
		fprintf(stderr, "cwctl: key add: NAME must be 1-%d of a-z 0-9 _ -\n",
		    KEYS_NAME_MAX);
		return CWCTL_EXIT_USAGE;
	}
	if (!keys_provider_valid(e.provider)) {
		fprintf(stderr, "cwctl: key add: --provider must be anthropic or openai\n");
		return CWCTL_EXIT_USAGE;
	}
	if (e.base_url != NULL && !cwctl_key_url_ok(e.base_url)) {
		fprintf(stderr, "cwctl: key add: --base-url must be an http:// or https:// "
		    "URL without spaces or quotes\n");
		return CWCTL_EXIT_USAGE;
	}
	if (e.model != NULL && (e.model[0] == '\0' || strlen(e.model) > 256 ||
	    strpbrk(e.model, " \t\r\n\"\\") != NULL)) {
		fprintf(stderr, "cwctl: key add: --model must be a model name\n");
		return CWCTL_EXIT_USAGE;
	}
	if (cwctl_read_secret("key", "Paste the provider key, then Enter: ", buf,
	    sizeof buf) == -1)
		return CWCTL_EXIT_USAGE;
	e.key = buf;
	rc = keys_add(home, &e, &where, err, sizeof err);
	explicit_bzero(buf, sizeof buf);
	if (rc == -1) {
		fprintf(stderr, "cwctl: key add: %s\n", err);
		return CWCTL_EXIT_FAILURE;
	}
	printf("key %s stored (%s)\n", e.name, secret_backend_name(where));
	return CWCTL_EXIT_OK;
}

static int
cwctl_key_list(const char *home, int json)
{
	cJSON		*a, *it;
	char		 err[512];
	const char	*s;

	if ((a = keys_list(home, err, sizeof err)) == NULL) {
		fprintf(stderr, "cwctl: key list: %s\n", err);
		return CWCTL_EXIT_FAILURE;
	}
	if (json) {
		cwctl_print_json(a);
		cJSON_Delete(a);
		return CWCTL_EXIT_OK;
	}
	if (cJSON_GetArraySize(a) == 0)
		printf("no keys (cwctl key add NAME --provider anthropic < KEYFILE)\n");
	else
		printf("%-20s %-10s %-30s %s\n", "NAME", "PROVIDER", "MODEL", "BASE URL");
	cJSON_ArrayForEach(it, a) {
		const char *m = json_get_string(it, "model");

		s = json_get_string(it, "base_url");
		printf("%-20s %-10s %-30s %s\n", cwctl_vis(json_get_string(it, "name")),
		    cwctl_vis(json_get_string(it, "provider")),
		    m != NULL ? cwctl_vis(m) : "-", s != NULL ? cwctl_vis(s) :
		    "(the provider's)");
	}
	cJSON_Delete(a);
	return CWCTL_EXIT_OK;
}

int
cwctl_key(int argc, char **argv)
{
	char	 home[PATH_MAX], err[512];
	int	 rc;

	if (argc < 2)
		return cwctl_key_usage();
	if (paths_clockwork_home(home, sizeof home) == -1) {
		fprintf(stderr, "cwctl: cannot find the Clockwork home\n");
		return CWCTL_EXIT_FAILURE;
	}
	if (strcmp(argv[1], "add") == 0)
		return cwctl_key_add(home, argc, argv);
	if (strcmp(argv[1], "list") == 0) {
		if (argc > 3 || (argc == 3 && strcmp(argv[2], "--json") != 0))
			return cwctl_key_usage();
		return cwctl_key_list(home, argc == 3);
	}
	if (strcmp(argv[1], "rm") == 0 && argc == 3) {
		if ((rc = keys_remove(home, argv[2], err, sizeof err)) == -1) {
			fprintf(stderr, "cwctl: key rm: %s\n", err);
			return CWCTL_EXIT_FAILURE;
		}
		if (rc == 0) {
			fprintf(stderr, "cwctl: key rm: no key named %s\n", argv[2]);
			return CWCTL_EXIT_FAILURE;
		}
		printf("key %s removed\n", argv[2]);
		return CWCTL_EXIT_OK;
	}
	return cwctl_key_usage();
}

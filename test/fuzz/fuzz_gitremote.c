/*
 * libFuzzer target for the pull request page derived from a git remote URL
 * (common/gitremote.c): any bytes as a URL and a branch; a URL given is NUL-terminated
 * within its buffer, starts with one of the two forges' https origins and holds no byte
 * outside printable ASCII, no space, quote, '<', '>' or backslash.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gitremote.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		*url, *branch, out[300], path[256];
	const uint8_t	*nl;
	size_t		 n;

	if ((url = malloc(size + 1)) == NULL)
		return 0;
	memcpy(url, data, size);
	url[size] = '\0';
	/* The first line is the URL, the rest the branch. */
	nl = memchr(data, '\n', size);
	n = nl != NULL ? (size_t)(nl - data) : size;
	url[n] = '\0';
	branch = nl != NULL ? url + n + 1 : (char *)"b";
	(void)gitremote_parse(url, path, sizeof path);
	if (gitremote_compare_url(url, branch, out, sizeof out) == 0) {
		if (memchr(out, '\0', sizeof out) == NULL)
			abort();
		if (strncmp(out, "https://github.com/", 19) != 0 &&
		    strncmp(out, "https://gitlab.com/", 19) != 0)
			abort();
		for (const char *p = out; *p != '\0'; p++)
			if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f ||
			    strchr("\"'<>\\`", *p) != NULL)
				abort();
	}
	free(url);
	return 0;
}

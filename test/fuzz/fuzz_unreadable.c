/*
 * libFuzzer target: the outline of a system directory kept between sandbox starts
 * (runner/unreadable.c), read back from the Clockwork home. A damaged or hostile file
 * must be refused whole, never crash the runner, and never yield a name that could
 * leave the root when the runner stats it: the parser's answer is checked here against
 * the rules it claims, line by line.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unreadable.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*root = "/etc";
	size_t		 n = 0;
	char		*text, *line, *next;

	if (size > 262144 || (text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (unreadable_parse_check(text, size, root, &n) == 0) {
		/* Accepted: every record past the two first names a safe relative path. */
		size_t	 records = 0;

		line = text;
		for (int i = 0; line != NULL && *line != '\0'; i++, line = next) {
			char	*name;

			if ((next = strchr(line, '\n')) != NULL)
				*next++ = '\0';
			if (i < 2)
				continue;
			name = line + 2;
			if (line[0] == 'D') {
				/* The name is what follows the sixth number. */
				name = line + 2;
				for (int k = 0; k < 6; k++)
					name = strchr(name, ' ') + 1;
			}
			if (name[0] == '/' || strstr(name, "//") != NULL ||
			    strcmp(name, "..") == 0 || strncmp(name, "../", 3) == 0 ||
			    strstr(name, "/../") != NULL || strstr(name, "/./") != NULL ||
			    strncmp(name, "./", 2) == 0 || strcmp(name, ".") == 0 ||
			    (strlen(name) >= 3 && strcmp(name + strlen(name) - 3, "/..") == 0))
				abort();
			records++;
		}
		if (records != n)
			abort();
	}
	free(text);
	return 0;
}

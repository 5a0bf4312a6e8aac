/* A git bundle's header (common/bundlehdr.h). */
#include <stdio.h>
#include <string.h>

#include "bundlehdr.h"

int
bundlehdr_parse(const char *buf, size_t len, const char *branch, char *tip, size_t tiplen,
    size_t *hdrlen, char *err, size_t errlen)
{
	char		 line[BUNDLEHDR_LINE_MAX + 1], want[BUNDLEHDR_BRANCH_MAX + 16];
	size_t		 n = 0, lines = 0, i;

	tip[0] = '\0';
	*hdrlen = 0;
	if (branch == NULL || strlen(branch) > BUNDLEHDR_BRANCH_MAX) {
		snprintf(err, errlen, "the branch name is over %d bytes", BUNDLEHDR_BRANCH_MAX);
		return -1;
	}
	snprintf(want, sizeof want, "refs/heads/%s", branch);
	for (i = 0;; i++) {
		if (i >= BUNDLEHDR_MAX) {
			snprintf(err, errlen, "the run's bundle header is over 64 KiB");
			return -1;
		}
		if (i >= len) {
			snprintf(err, errlen, "the run's bundle ends inside its header");
			return -1;
		}
		if (buf[i] != '\n') {
			if (n >= BUNDLEHDR_LINE_MAX) {
				snprintf(err, errlen, "the run's bundle has a header line over "
				    "%d bytes", BUNDLEHDR_LINE_MAX + 1);
				return -1;
			}
			/* A NUL would end the line early for strcmp: not a header's. */
			if (buf[i] == '\0') {
				snprintf(err, errlen, "the run's bundle header holds a NUL");
				return -1;
			}
			line[n++] = buf[i];
			continue;
		}
		line[n] = '\0';
		if (lines++ == 0) {
			if (strcmp(line, "# v2 git bundle") != 0 &&
			    strcmp(line, "# v3 git bundle") != 0) {
				snprintf(err, errlen, "the run's bundle is not a git bundle");
				return -1;
			}
		} else if (n == 0)
			break;
		else if (line[0] != '-' && line[0] != '@') {
			char	*sp = strchr(line, ' ');

			if (sp != NULL && strcmp(sp + 1, want) == 0 &&
			    (size_t)(sp - line) < tiplen && (sp - line == 40 || sp - line == 64) &&
			    strspn(line, "0123456789abcdef") == (size_t)(sp - line)) {
				memcpy(tip, line, (size_t)(sp - line));
				tip[sp - line] = '\0';
			}
		}
		n = 0;
	}
	if (tip[0] == '\0') {
		snprintf(err, errlen, "the run's bundle has no %s", want);
		return -1;
	}
	*hdrlen = i + 1;
	return 0;
}

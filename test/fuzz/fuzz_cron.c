/* libFuzzer target: cron_parse over arbitrary text, and cron_next on what it accepts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cron.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cron	 c;
	char		 err[160];
	char		*s;

	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (cron_parse(s, &c, err, sizeof err) == 0) {
		/* Anything accepted must match some minute within the search window. */
		(void)cron_next(&c, (time_t)1796000000);
	}
	free(s);
	return 0;
}

/* libFuzzer target: config_parse on arbitrary bytes must fail cleanly or succeed. */
#include <stddef.h>
#include <stdint.h>

#include "config.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config	 cfg;
	char		 err[512];

	if (config_parse("fuzz.yaml", (const char *)data, size, &cfg, err, sizeof err) == 0)
		config_free(&cfg);
	return 0;
}

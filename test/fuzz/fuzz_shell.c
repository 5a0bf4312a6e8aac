/*
 * libFuzzer target for the shell parser (common/shell.c): any bytes, any length up to
 * the floor's bound, must parse or fail cleanly, without leaks, overreads or blowups.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shell_list	 l = { 0 };
	char			 err[128];
	char			*copy;

	if (size > 256 * 1024)
		return 0;
	/* An exact-size copy, so reading past the end is caught by ASan. */
	if ((copy = malloc(size ? size : 1)) == NULL)
		return 0;
	memcpy(copy, data, size);
	(void)shell_parse(copy, size, "/home/fuzz", 0, &l, err, sizeof err);
	shell_list_free(&l);
	free(copy);
	return 0;
}

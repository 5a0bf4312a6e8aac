/*
 * Bounded records of what a run did (denials, approvals), shared by cw-runner and
 * clockworkd. A run controls the text in these records and can make as many as it
 * likes, so every one is kept small and every list is capped (docs/SECURITY.md,
 * "Bounded records"). The caps live in common/wire.h beside the line limit they serve.
 */
#ifndef CW_RECORD_H
#define CW_RECORD_H
#include <stddef.h>

#include <cjson/cJSON.h>

/*
 * Add the command to obj as a record keeps it: masked (mask_secrets), then cut to
 * CW_RECORD_MAX_COMMAND bytes on a UTF-8 boundary. Adds "command", and when it was cut
 * "command_truncated": true, "command_bytes" (the masked command's whole length) and
 * "command_sha256" (of the whole masked command). Masking comes first so that a cut
 * never leaves half a secret unmasked. Returns 0, or -1 on ENOMEM (the command is
 * then replaced by a marker saying it was withheld).
 */
int	record_add_command(cJSON *obj, const char *command);
/* Length of s cut to at most max bytes without splitting a UTF-8 sequence. */
size_t	record_cut(const char *s, size_t len, size_t max);
/* Add s under name, cut to max bytes (record_cut), with name_truncated when cut. */
void	record_add_string(cJSON *obj, const char *name, const char *s, size_t max);
/*
 * A bounded list: items are kept while there are fewer than max_items and their
 * printed size stays under max_bytes; every item is counted.
 */
struct record_list {
	cJSON	*items;		/* array */
	size_t	 count;		/* every record, kept or not */
	size_t	 bytes;		/* printed bytes of the kept items */
	size_t	 max_items, max_bytes;
};
int	record_list_init(struct record_list *, size_t max_items, size_t max_bytes);
/* Take ownership of item: keep it (1) or drop it (0); the count grows either way. */
int	record_list_add(struct record_list *, cJSON *item);
/* {"count":N,"list":[kept...],"omitted":M}: a new object. */
cJSON	*record_list_json(const struct record_list *);
void	record_list_free(struct record_list *);

#endif

/*
 * The Anthropic Messages API, as Clockwork's own agent speaks it: the request body
 * (tools, streaming, prompt caching with cache_control on the system prompt and the
 * last tool), the reading of a streamed answer (the SSE events message_start,
 * content_block_start/delta/stop, message_delta, message_stop, ping, error) into one
 * assistant turn, the reading of a whole (non-streamed) answer, and of an error body.
 * Everything read here came from the network: every field is checked for its type and
 * bounded, and a malformed answer is an error, never a crash.
 */
#ifndef CW_ANTHROPIC_H
#define CW_ANTHROPIC_H
#include <stddef.h>

#include <cjson/cJSON.h>

#define ANTHROPIC_VERSION	"2023-06-01"	/* the anthropic-version header */
#define ANTHROPIC_MAX_BLOCKS	256		/* content blocks in one turn */
#define ANTHROPIC_MAX_TEXT	(1024 * 1024)	/* one block's text or tool input */

struct provider_usage {
	long	input, output, cache_write, cache_read;	/* tokens */
};

/* One assistant turn as it is read. */
struct anthropic_turn {
	cJSON			*content;	/* the blocks, as the API names them */
	char			 stop_reason[32];
	struct provider_usage	 usage;
	int			 started;	/* message_start seen */
	int			 done;		/* message_stop seen: the turn is whole */
	char			 err_type[64];	/* an error event, e.g. overloaded_error */
	char			 err_msg[512];
};

void	anthropic_turn_init(struct anthropic_turn *);
void	anthropic_turn_free(struct anthropic_turn *);
/* One SSE event. 0, or -1 when it is malformed or out of order (err_msg says why). */
int	anthropic_stream_event(struct anthropic_turn *, const char *event,
	    const char *data, size_t len);
/* A whole (non-streamed) answer. 0, or -1 with err_msg. */
int	anthropic_parse_message(struct anthropic_turn *, const char *body, size_t len);
/* An error body {"type":"error","error":{"type":..,"message":..}}: 0 when it is one. */
int	anthropic_parse_error(const char *body, size_t len, char *type, size_t typelen,
	    char *msg, size_t msglen);
/*
 * The request body. messages and tools are borrowed (duplicated into the result);
 * system may be NULL.
 */
cJSON	*anthropic_request(const char *model, long max_tokens, const char *system,
	    const cJSON *tools, const cJSON *messages, int stream);

#endif

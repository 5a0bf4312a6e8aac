/*
 * The bridge's /mcp JSON-RPC handling (bridge_mcp_handle) over arbitrary bodies: it
 * must answer, run unasked (the default approvals.ask with one remembered family) or
 * hold, never crash, and held approvals are expired every round so the pending limit
 * is exercised without unbounded growth.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "autoallow.h"
#include "bridge.h"
#include "floor.h"

static struct bridge		*fuzz_b;
static struct event_base	*fuzz_base;
static struct floor_policy	 fuzz_pol = { .home = "/home/fuzz",
				    .worktree = "/home/fuzz/wt" };
static int			 fuzz_round;

static void
fuzz_emit(void *arg, cJSON *msg)
{
	cJSON_Delete(msg);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bridge_config	 c;
	char			 err[256], *reply = NULL, *copy;

	if (fuzz_b == NULL) {
		memset(&c, 0, sizeof c);
		c.run_id = "fuzz";
		c.token = "t";
		c.policy = &fuzz_pol;
		c.emit = fuzz_emit;
		/* The default policy on a sandboxed run: the auto-allow path is reached. */
		c.ask_set = 1;
		c.ask = AUTOALLOW_ASK_DEFAULT;
		fuzz_base = event_base_new();
		if ((fuzz_b = bridge_new(fuzz_base, &c, err, sizeof err)) == NULL)
			abort();
		bridge_set_sandboxed(fuzz_b, 1);
		if (bridge_add_rule(fuzz_b, "npm test", FLOOR_RISK_ORDINARY) == -1)
			abort();
	}
	if ((copy = malloc(size ? size : 1)) == NULL)
		return 0;
	memcpy(copy, data, size);
	(void)bridge_mcp_handle(fuzz_b, copy, size, NULL, &reply);
	cJSON_free(reply);
	free(copy);
	if (++fuzz_round % 32 == 0)
		bridge_expire(fuzz_b, "fuzz", "timeout");
	return 0;
}

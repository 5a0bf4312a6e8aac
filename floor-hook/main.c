/*
 * cw-floor-hook: a Claude Code PreToolUse hook. It forwards the hook's JSON to the
 * runner's bridge and exits 0 (allow), 0 with a permissionDecision "ask" JSON on
 * stdout (the policy asks a person: Claude Code then consults the approval tool, even
 * for the commands acceptEdits would run on its own), or 2 (deny, reason on stderr).
 *
 * The run token comes from a file (--token-file, 0400 in the run's private state), never
 * from argv: any process that can read /proc/<pid>/cmdline would see an argument.
 *
 * Exit codes: 0 the bridge allowed the call; 2 everything else: a deny, a usage error,
 * a token file that cannot be read or holds no valid token, input that is oversized
 * or not a JSON object, a bridge that cannot be reached or does not answer within
 * CW_HOOK_TIMEOUT_MS, an answer that is not an unmistakable allow. Claude Code blocks a call only on 2, so no failure may exit otherwise.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "hook.h"
#include "wire.h"

static char	hook_in[CW_HOOK_MAX_INPUT + 1];

static int
main_deny(const char *why)
{
	fprintf(stderr, "Clockwork floor: %s\n", why);
	return HOOK_EXIT_DENY;
}

/*
 * The policy asks a person: tell Claude Code so on stdout (exit 0 with the JSON), and
 * it consults the approval tool. An output that cannot be written whole is a deny:
 * exit 0 with half of it would let acceptEdits run the call unasked.
 */
static int
main_ask(const char *why)
{
	char	 out[HOOK_MAX_ASK_OUTPUT];
	int	 n;
	size_t	 done = 0;
	ssize_t	 w;

	if ((n = hook_ask_output(out, sizeof out, why)) == -1)
		return main_deny("cannot build the ask answer");
	while (done < (size_t)n) {
		w = write(1, out + done, (size_t)n - done);
		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return main_deny("cannot write the ask answer");
		done += (size_t)w;
	}
	return HOOK_EXIT_ALLOW;
}

/* Read all of stdin, at most CW_HOOK_MAX_INPUT bytes, within timeout_ms in total. */
static long
main_read_input(int timeout_ms)
{
	struct pollfd	pfd = { .fd = 0, .events = POLLIN };
	int64_t		deadline = clock_mono_ms() + timeout_ms, left;
	size_t		got = 0;
	ssize_t		n;
	int		r;

	for (;;) {
		if ((left = deadline - clock_mono_ms()) <= 0)
			return -1;
		r = poll(&pfd, 1, (int)left);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		n = read(0, hook_in + got, sizeof hook_in - got);
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n == -1)
			return -1;
		if (n == 0)
			return (long)got;
		got += (size_t)n;
		if (got > CW_HOOK_MAX_INPUT)
			return -2;
	}
}

int
main(int argc, char **argv)
{
	const char	*token_file;
	char		 err[PATH_MAX + 128], reason[1024], token[HOOK_MAX_TOKEN + 2];
	char		 ctlreason[256];
	long		 len;
	int		 port, rc, ctl;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0) {
			printf("usage: cw-floor-hook --port PORT --token-file PATH < hook.json\n"
			    "exit codes: 0 allow (with a permissionDecision \"ask\" JSON on "
			    "stdout when a person must answer); 2 deny or any error (reason on "
			    "stderr)\n");
			return HOOK_EXIT_ALLOW;
		}
		if (strcmp(argv[i], "--version") == 0) {
			printf("cw-floor-hook %s\n", CW_VERSION);
			return HOOK_EXIT_ALLOW;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	if (hook_args(argc, argv, &port, &token_file, err, sizeof err) == -1 ||
	    hook_token_read(token_file, token, sizeof token, err, sizeof err) == -1)
		return main_deny(err);
	if ((len = main_read_input(CW_HOOK_TIMEOUT_MS)) == -2)
		return main_deny("hook input is larger than the limit");
	if (len < 0)
		return main_deny("cannot read the hook input");
	if (hook_input_ok(hook_in, (size_t)len) == -1)
		return main_deny("hook input is not a JSON object");
	/*
	 * A control character the JSON decodes to is refused here, whatever the bridge
	 * says; the bridge is still asked, so that it records and journals the deny.
	 */
	ctl = hook_input_controls(hook_in, (size_t)len, ctlreason, sizeof ctlreason);
	rc = hook_check(port, token, hook_in, (size_t)len, CW_HOOK_TIMEOUT_MS, reason,
	    sizeof reason);
	if (ctl == -1)
		return main_deny(ctlreason);
	if (rc == HOOK_ASK)
		return main_ask(reason);
	if (rc != HOOK_EXIT_ALLOW)
		return main_deny(reason);
	return HOOK_EXIT_ALLOW;
}

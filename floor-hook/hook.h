/*
 * cw-floor-hook's request handling, kept apart from main() so that the unit tests and
 * the fuzz target run exactly this code. libc only: no JSON library, no allocator
 * beyond the caller's buffers.
 */
#ifndef CW_HOOK_H
#define CW_HOOK_H
#include <stddef.h>

/* Exit codes: Claude Code blocks a tool call only on 2, so every failure is 2. */
#define HOOK_EXIT_ALLOW	0
#define HOOK_EXIT_DENY	2

/*
 * Not an exit code: the bridge's policy would ask a person about the call. The hook
 * then exits 0 with hook_ask_output() on stdout, which makes Claude Code consult its
 * permission prompt tool (the bridge's approval tool) instead of its own acceptEdits
 * shortcut. Far from 0..2 so that it can never be returned as an exit code by mistake.
 */
#define HOOK_ASK	100

#define HOOK_MAX_ANSWER	(64 * 1024)	/* bytes of the bridge's answer we read */
#define HOOK_MAX_ASK_OUTPUT	1024	/* bytes of the "ask" JSON, newline included */
#define HOOK_MAX_TOKEN	128

/*
 * Parse argv: --port N --token-file PATH (absolute). Returns 0, or -1 with a message in
 * err. The token itself is never on the command line, where every process that can
 * read /proc/<pid>/cmdline would see it.
 */
int	hook_args(int argc, char **argv, int *port, const char **token_file, char *err,
	    size_t errlen);
/* 0 when token is 1..HOOK_MAX_TOKEN printable ASCII without spaces (an HTTP header). */
int	hook_token_ok(const char *token);
/*
 * Read the run token from path: a regular file (no link, no FIFO) holding the token and
 * at most one trailing newline. Returns 0, or -1 with a message in err.
 */
int	hook_token_read(const char *path, char *token, size_t tokenlen, char *err,
	    size_t errlen);
/* 0 when buf looks like one JSON object (starts with '{', ends with '}', no NUL). */
int	hook_input_ok(const char *buf, size_t len);
/*
 * 0 when the JSON text decodes to no control character that could cut or hide part of
 * a command (ctlchar.h); -1 with the reason filled otherwise.
 */
int	hook_input_controls(const char *buf, size_t len, char *reason, size_t reasonlen);
/* The request head for a body of bodylen bytes; its length, or -1 if out is short. */
int	hook_request_head(char *out, size_t outlen, int port, const char *token,
	    size_t bodylen);
/*
 * Judge the bridge's raw HTTP answer: for status 200 and a body whose one top-level
 * "decision" is exactly "allow", HOOK_EXIT_ALLOW; exactly "ask", HOOK_ASK (the
 * bridge's reason in reason); anything else is HOOK_EXIT_DENY with a reason (the
 * bridge's, or what was wrong) in reason, always NUL-terminated.
 */
int	hook_parse_answer(const char *resp, size_t len, char *reason, size_t reasonlen);
/*
 * The PreToolUse output that asks: {"hookSpecificOutput":{"hookEventName":
 * "PreToolUse","permissionDecision":"ask","permissionDecisionReason":REASON}} and a
 * newline. REASON is reason made plain ASCII (a quote and a backslash escaped, any
 * other byte outside 0x20..0x7e a '?'), cut to fit: the output is always valid JSON
 * whatever the bridge sent. Returns its length, or -1 if outlen is below
 * HOOK_MAX_ASK_OUTPUT.
 */
int	hook_ask_output(char *out, size_t outlen, const char *reason);
/*
 * The whole check: POST body to 127.0.0.1:port/floor within timeout_ms and judge the
 * answer. Returns HOOK_EXIT_ALLOW, HOOK_ASK or HOOK_EXIT_DENY; reason is filled on
 * deny and ask.
 */
int	hook_check(int port, const char *token, const char *body, size_t len,
	    int timeout_ms, char *reason, size_t reasonlen);

#endif

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

#endif

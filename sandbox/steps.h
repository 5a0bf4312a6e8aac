/*
 * cw-sandbox's steps (steps.c): build the sandbox the plan describes and exec argv in
 * it. Never returns: the process becomes the command, or exits having told the runner
 * (PLAN_MSGFD) why not.
 */
#ifndef CW_STEPS_H
#define CW_STEPS_H
#include "plan.h"

void	steps_run(const struct plan *, char *const argv[]) __attribute__((noreturn));

#endif

/* The byok engine's tool host, inside the run's sandbox: see toolhost.c. */
#ifndef CW_TOOLHOST_H
#define CW_TOOLHOST_H

/* 1 when a shell command runs without asking in acceptEdits mode (after the floor). */
int	toolhost_allowed_command(const char *cmd);

#endif

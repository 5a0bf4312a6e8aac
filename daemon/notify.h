/* notify.c: a desktop notification of each new approval (desktop_notifications). */
#ifndef CW_NOTIFY_H
#define CW_NOTIFY_H

struct daemon;

int	notify_start(struct daemon *);
void	notify_stop(struct daemon *);
/* Where notifications stand: "off", "on", or why they cannot be shown. */
const char *notify_state(struct daemon *);

#endif

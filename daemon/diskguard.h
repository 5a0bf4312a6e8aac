/* diskguard.c: a full disk ends the run that fills it and never wedges the queue. */
#ifndef CW_DISKGUARD_H
#define CW_DISKGUARD_H

struct daemon;

/* At start: make the reserve, or note that the disk is already below the floor. */
void	diskguard_init(struct daemon *);
/* Once a second: the floor, the reserve, and the run to stop when below it. */
void	diskguard_tick(struct daemon *);
/* Before a queued run starts: 1 when there is room, 0 when the queue must wait. */
int	diskguard_room(struct daemon *);
/* Bytes under path (blocks, links not followed), counted to a bound. */
long long diskguard_du(const char *path);

#endif

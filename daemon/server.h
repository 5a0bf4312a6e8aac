/* server.c: start-up, signals, shutdown. */
#ifndef CW_SERVER_H
#define CW_SERVER_H

struct daemon;

struct server_options {
	int		 foreground;
	const char	*config_path;	/* NULL: the default */
	const char	*runner_path;	/* NULL: cw-runner next to clockworkd */
	int		 stop_grace_ms;
	int		 ready_fd;	/* written "ok\n" once serving, or -1 */
};
int	server_main(const struct server_options *);
void	server_reload(struct daemon *);

#endif

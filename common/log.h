/*
 * Logging for the long-running programs (clockworkd, cw-runner). Library code in
 * common/ does not log errors it returns; the caller that can explain does.
 */
#ifndef CW_LOG_H
#define CW_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Name the program, set the threshold and whether lines also go to stderr. */
void	log_init(const char *progname, enum log_level, int to_stderr);
/* Also append to path (0600, created if missing). Returns 0 or -1 with errno. */
int	log_open_file(const char *path);
void	log_close(void);
/* A child's side (clockworkd --import-child): log to fd, opened by the parent, if it
 * is a regular file (then not to stderr). 0, or -1 (nothing changed). */
int	log_attach_fd(int fd);
/* The log file's descriptor, to hand to a child, or -1. */
int	log_file_fd(void);
enum log_level	log_get_level(void);
void	log_set_level(enum log_level);
/* Parse "error", "warn", "info", "debug". Returns -1 on anything else. */
int	log_level_parse(const char *);
void	log_msg(enum log_level, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

#define log_error(...)	log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	log_msg(LOG_DEBUG, __VA_ARGS__)

#endif

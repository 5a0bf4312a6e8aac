/*
 * A shell tokenizer and parser for the subset of sh/bash that agents' Bash calls use,
 * written for the floor (floor.h): it turns a command line into the simple commands the
 * shell would run, with words expanded as far as can be known offline. Nothing is
 * executed. Command substitutions, backticks, process substitutions and the shell
 * commands inside them are returned as simple commands of their own.
 *
 * What cannot be known offline (a variable other than HOME, the output of a command
 * substitution, $1, $@, arithmetic) is replaced by a marker byte, so a caller can treat
 * that part of the word as "anything": SHELL_UNKNOWN inside quotes (one field),
 * SHELL_UNKNOWN_SPLIT outside them (may split into several words, flags included).
 */
#ifndef CW_SHELL_H
#define CW_SHELL_H
#include <stddef.h>

#define SHELL_UNKNOWN		'\001'
#define SHELL_UNKNOWN_SPLIT	'\002'

#define SHELL_MAX_DEPTH		32	/* nested (), {}, $(), ``, heredoc parses */
#define SHELL_MAX_WORDS		65536	/* words across all commands of one parse */
#define SHELL_MAX_HEREDOCS	64	/* pending at one newline */

enum shell_redir_kind {
	SHELL_REDIR_IN,		/* <  <> */
	SHELL_REDIR_OUT,	/* >  >>  >|  &>  &>>  >&FILE */
	SHELL_REDIR_DUP,	/* >&N  <&N  >&-: word is a descriptor, not a path */
	SHELL_REDIR_HERESTRING,	/* <<< word: data */
	SHELL_REDIR_HEREDOC,	/* << DELIM: word is the body, data */
};

struct shell_redir {
	enum shell_redir_kind	 kind;
	char			*word;
};

struct shell_cmd {
	char			**argv;		/* expanded words, assignments removed */
	size_t			  argc;
	char			**assigns;	/* NAME=value prefixes, value expanded */
	size_t			  nassigns;
	struct shell_redir	 *redirs;
	size_t			  nredirs;
	int			  depth;	/* nesting level it was found at */
	long			  pipe_in;	/* the simple command piped in, or -1 */
};

struct shell_list {
	struct shell_cmd	*v;
	size_t			 n;
	size_t			 cap;
};

/*
 * Parse len bytes of src. home expands ~ and $HOME (NULL: both unknown). depth is the
 * nesting level the text was found at (0 for a top-level command; the floor passes more
 * when it parses the string given to sh -c), so the bound holds across re-parses.
 * Returns 0, or -1 with err filled (syntax error, a bound exceeded) or errno ENOMEM;
 * commands parsed before an error are left in out and freed by shell_list_free.
 */
int	shell_parse(const char *src, size_t len, const char *home, int depth,
	    struct shell_list *out, char *err, size_t errlen);
void	shell_list_free(struct shell_list *);

#endif

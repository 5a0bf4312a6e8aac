/* cwctl's verbs, one file each (cwctl-<verb>.c), registered in cwctl.c's table. */
#ifndef CW_CWCTL_H
#define CW_CWCTL_H

/* Exit codes (documented in cwctl --help and docs/cwctl.1). */
#define CWCTL_EXIT_OK		0
#define CWCTL_EXIT_FAILURE	1	/* the thing asked for failed */
#define CWCTL_EXIT_USAGE	2
#define CWCTL_EXIT_DENIED	3	/* policy check: denied; approve/deny: refused;
					   run --wait: the run was refused; task rules
					   --import-repo: the settings changed since shown;
					   run merge|land|discard|push: the run was
					   merged, landed or discarded already */
#define CWCTL_EXIT_NODAEMON	4	/* clockworkd is not running */
#define CWCTL_EXIT_AUTOMATION	5	/* run merge: automation files not accepted */
#define CWCTL_EXIT_NO_CONVERSATION 6	/* run continue: the earlier run's conversation
					   cannot be resumed (--fresh starts anew) */
#define CWCTL_EXIT_BUSY		7	/* run continue|retry: the run has not ended, or
					   another run holds its branch: try again later */
#define CWCTL_EXIT_BRANCH	8	/* run continue: its branch cannot be worked on as
					   it is (gone, checked out outside Clockwork,
					   uncommitted changes in its kept worktree) */

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

/* One option of a command (cwctl-opts.c): arg NULL for a flag, else its value's name. */
struct cwctl_opt {
	const char	*name;
	const char	*arg;
	const char	*help;
};
/* One command: a verb, or a verb's subcommand (sub NULL: the verb on its own). */
struct cwctl_cmd {
	const char		*verb;
	const char		*sub;
	const char		*alias;		/* another name for sub, or NULL */
	int			 nargs;		/* positional arguments needed, at least */
	int			 flags;
#define CWCTL_CMD_STOP	0x1			/* options end at the first argument */
	const char		*complete;	/* positionals' completion: TASK, RUN,
						   APPROVAL (from the daemon) and words */
	const struct cwctl_opt	*opts;		/* ends with a NULL name */
};
const struct cwctl_cmd *cwctl_opts_cmds(size_t *);
const struct cwctl_cmd *cwctl_opts_find(int argc, char **argv);
int	cwctl_opts_check(int argc, char **argv);
void	cwctl_opts_help(FILE *, int argc, char **argv);
int	cwctl_opts_dump(void);

/* Terminal-safe printing of text from runs (cwctl.c, common/vis.h). */
const char *cwctl_vis(const char *s);		/* NULL stays NULL */
int	cwctl_read_secret(const char *what, const char *prompt, char *buf, size_t len);
const char *cwctl_vis_json(const char *s);	/* for JSON text: stays JSON */
void	cwctl_print_json(const cJSON *);

int	cwctl_policy(int argc, char **argv);	/* cwctl-policy.c */
int	cwctl_sandbox(int argc, char **argv);	/* cwctl-sandbox.c */
int	cwctl_doctor(int argc, char **argv);	/* cwctl-doctor.c */
int	cwctl_apparmor(int argc, char **argv);	/* cwctl-apparmor.c: service apparmor */
char	*cwctl_apparmor_render(const char *bindir);	/* the profile for bindir/cw-sandbox */
int	cwctl_apparmor_needed(void);	/* restricted here, and no cw-sandbox profile loaded */
int	cwctl_status(int argc, char **argv);	/* cwctl-status.c */
int	cwctl_task(int argc, char **argv);	/* cwctl-task.c */
/* task rules|unrule|ask (cwctl-task-rules.c); argv[0] is the subcommand. */
int	cwctl_task_rules(int argc, char **argv);
void	cwctl_task_rules_print(const cJSON *);
int	cwctl_run(int argc, char **argv);	/* cwctl-run.c */
int	cwctl_runs(int argc, char **argv);	/* cwctl-run.c: run list */
void	cwctl_hint_run(const char *id);	/* cwctl-hint.c: on a terminal, what to type next */
int	cwctl_run_review(int argc, char **argv);	/* cwctl-review.c: diff, merge, land, discard */
int	cwctl_run_push(int argc, char **argv);	/* cwctl-push.c: run push */
int	cwctl_approvals(int argc, char **argv);	/* cwctl-approvals.c */
/* cwctl-approvals.c: one pending approval, with the commands that answer it. */
void	cwctl_approvals_announce(FILE *, const cJSON *approval, const char *indent);
void	cwctl_approvals_left(const cJSON *approval, char *buf, size_t len);
int	cwctl_approve(int argc, char **argv);	/* cwctl-approve.c */
int	cwctl_network(int argc, char **argv);	/* cwctl-network.c */
int	cwctl_deny(int argc, char **argv);	/* cwctl-deny.c */
int	cwctl_answer(int argc, char **argv, int allow);	/* cwctl-approve.c */
int	cwctl_inbox(int argc, char **argv);	/* cwctl-inbox.c */
int	cwctl_telegram(int argc, char **argv);	/* cwctl-telegram.c */
int	cwctl_journal(int argc, char **argv);	/* cwctl-journal.c */
int	cwctl_key(int argc, char **argv);	/* cwctl-key.c */
int	cwctl_gc(int argc, char **argv);	/* cwctl-gc.c */
int	cwctl_service(int argc, char **argv);	/* cwctl-service.c */
int	cwctl_jobs(int argc, char **argv);	/* cwctl-jobs.c */
int	cwctl_template(int argc, char **argv);	/* cwctl-template.c */
int	cwctl_completion(int argc, char **argv);	/* cwctl-completion.c */
const char *cwctl_verb(size_t);	/* cwctl.c: the i-th verb of the table, NULL past its end */
extern const char cwctl_service_systemd[], cwctl_service_launchd[];
char	*cwctl_service_render(const char *tmpl, const char *bindir);

#endif

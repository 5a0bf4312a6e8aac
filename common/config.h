/*
 * ~/.clockwork/config.yaml (or $CLOCKWORK_HOME/config.yaml). A missing file means the
 * defaults; a present file is parsed strictly: unknown keys, wrong types and bad values
 * are errors naming the file, line and field.
 */
#ifndef CW_CONFIG_H
#define CW_CONFIG_H
#include <stddef.h>

#include "policy.h"
#include "strlist.h"

#define CONFIG_DEFAULT_DOLLARS		2.0
#define CONFIG_DEFAULT_TURNS		50
#define CONFIG_DEFAULT_SECONDS		3600
/*
 * The budget pause (issue 23): how long a run held at its budget waits for a person's
 * answer, 0 (no pause: the budget ends the run at once) or a value in [MIN, MAX]: a
 * wait shorter than MIN leaves no one time to answer, one past MAX keeps a held run's
 * processes and memory for days.
 */
#define CONFIG_DEFAULT_BUDGET_WAIT	3600
#define CONFIG_BUDGET_WAIT_MIN		5
#define CONFIG_BUDGET_WAIT_MAX		86400
#define CONFIG_MAX_DOLLARS_MAX		1000
#define CONFIG_DEFAULT_PORT		7420
#define CONFIG_DEFAULT_CONCURRENCY	2
#define CONFIG_DEFAULT_DISK_FLOOR_MB	256
#define CONFIG_DEFAULT_CHECKOUT_MAX_MB	2048
#define CONFIG_DEFAULT_KEEP_RUNS	5
#define CONFIG_DEFAULT_JOBS_MINUTES	15	/* repository jobs looked at again */
#define CONFIG_DEFAULT_ARCHIVE_DAYS	30	/* archived tasks' branches, unmerged */
#define CONFIG_DEFAULT_RUN_LOG		(64L * 1024 * 1024)	/* a run's live log, bytes */
#define CONFIG_MIN_RUN_LOG		4096L
#define CONFIG_MAX_RUN_LOG		(1024L * 1024 * 1024 * 1024)
/* A run's cgroup (SPEC R2): processes (tasks) and memory; 0 means no limit. */
#define CONFIG_DEFAULT_LIMIT_PROCESSES	4096
#define CONFIG_DEFAULT_LIMIT_MEMORY_MB	8192
#define CONFIG_MIN_LIMIT_PROCESSES	16
#define CONFIG_MIN_LIMIT_MEMORY_MB	16
/* approvals.*: how many approvals one run may ask for (common/asklimit.h). */
#define CONFIG_DEFAULT_APPROVALS_PER_RUN	200
#define CONFIG_DEFAULT_APPROVALS_PER_MINUTE	30
#define CONFIG_MAX_APPROVALS			100000

struct config_engine {
	char		*name;
	struct policy	 sandbox;
	char		*base_url;	/* the provider's base URL, or NULL (engine default) */
	char		*model;		/* or NULL */
	char		*key_env;	/* the daemon's variable holding the key, or NULL
					   (the engine's own, common/engines.c) */
	struct strlist	 network_allow;	/* engines.<name>.network.allow: egress rules */
};

/*
 * prices.<model>: dollars per million tokens, for engines that count their own spend
 * from the provider's reported usage (byok). A model with no price cannot run under a
 * dollar budget.
 */
struct config_price {
	char	*model;
	double	 per_mtok[4];	/* input, output, cache_write, cache_read */
};
#define CONFIG_PRICE_MAX	10000.0	/* $ per million tokens: beyond is a typo */

/* A configurable (non-floor) deny rule; floor rules are built in and not listed here. */
struct config_rule {
	char	*id;
	char	*match;		/* fnmatch(3) pattern over the normalised simple command */
	char	*reason;
	int	 enabled;
	char	*builtin;	/* a starter rule's matcher (floor.h), match NULL */
	int	 from_file;	/* named in the config file (not only a default) */
};

struct config {
	char			*path;		/* file it came from, or NULL for defaults */
	struct policy		 sandbox;	/* the global policy */
	struct config_engine	*engines;
	size_t			 n_engines;
	char			*engine_default; /* engines.default, or NULL: picked from
						    what is installed (daemon/tasks.c) */
	double			 budget_dollars;
	int			 budget_turns;
	int			 budget_seconds;
	int			 budget_wait;	/* budgets.wait, s; 0: no pause */
	double			 max_dollars;	/* budgets.max_dollars; 0: no ceiling */
	int			 limit_processes;	/* per run; 0 = none */
	int			 limit_memory_mb;	/* per run; 0 = none */
	/*
	 * limits.allow_unenforced: run even where no layer (cgroup, rlimit) can hold a
	 * limit; every report then lists what was not enforced. Default false: refused.
	 */
	int			 limit_allow_unenforced;
	struct strlist		 protected_branches;
	int			 api_port;	/* 0 = pick a free port */
	int			 max_concurrent_runs;
	int			 disk_free_floor_mb;	/* below it no run starts (diskguard) */
	int			 import_checkout_max_mb; /* a kept worktree's checkout may add */
	int			 keep_runs;	/* worktrees kept per task */
	int			 jobs_rediscover_minutes; /* 0: at start and on request only */
	int			 archive_retention_days; /* archived tasks' runs */
	long			 run_log_max_bytes; /* a run's live log; then it is cut */
	int			 approvals_max_per_run;	/* approvals.max_per_run */
	int			 approvals_per_minute;	/* approvals.per_minute */
	unsigned		 approvals_ask;	/* approvals.ask: autoallow.h's mask */
	struct config_rule	*rules;
	size_t			 n_rules;
	int			 desktop_notifications;	/* new approvals on the desktop */
	int			 network_open;	/* network: open (SPEC N1's loud opt-out) */
	struct strlist		 network_allow;	/* network.allow: egress rules (netrule.h) */
	struct config_price	*prices;
	size_t			 n_prices;
};

/* Fill cfg with the built-in defaults. */
int	config_defaults(struct config *cfg);
/*
 * Load path over the defaults into cfg, which is overwritten, never read or freed (to
 * reload, load into a fresh struct and swap). On error cfg is untouched. A missing file is not an error (defaults stand) unless
 * must_exist. On error: -1 and err holds one line "FILE:LINE: FIELD: what is wrong".
 */
int	config_load(const char *path, int must_exist, struct config *cfg, char *err,
	    size_t errlen);
/* Parse YAML text already in memory; name is used in messages (the fuzz entry point). */
int	config_parse(const char *name, const char *text, size_t len, struct config *cfg,
	    char *err, size_t errlen);
/* The default location: $CLOCKWORK_HOME/config.yaml or ~/.clockwork/config.yaml. */
int	config_default_path(char *out, size_t outlen);
void	config_free(struct config *cfg);
/* The engine's policy, or NULL when the config names none for it. */
const struct policy *config_engine_policy(const struct config *, const char *engine);
/* The engines.<name> section, or NULL when the configuration has none. */
/* The price of model, or NULL when the configuration gives none. */
const struct config_price *config_price(const struct config *, const char *model);
const struct config_engine *config_engine(const struct config *, const char *engine);

#endif

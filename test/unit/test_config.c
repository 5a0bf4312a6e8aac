/* config.yaml: good files load, bad files fail with FILE:LINE: FIELD and change nothing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "autoallow.h"
#include "config.h"
#include "floor.h"

static int
parse(const char *text, struct config *cfg, char *err, size_t errlen)
{
	return config_parse("test.yaml", text, strlen(text), cfg, err, errlen);
}

static void
test_defaults(void **state)
{
	struct config	 cfg;
	char		 err[512];

	(void)state;
	assert_int_equal(parse("", &cfg, err, sizeof err), 0);
	assert_true(cfg.budget_dollars == 2.0);
	assert_int_equal(cfg.budget_turns, 50);
	assert_int_equal(cfg.budget_seconds, 3600);
	assert_int_equal(cfg.budget_wait, 3600);	/* a budget pauses an hour, then ends */
	assert_true(cfg.max_dollars == 0);		/* no hard ceiling */
	assert_int_equal(cfg.limit_processes, 4096);
	assert_int_equal(cfg.limit_memory_mb, 8192);
	assert_int_equal(cfg.limit_allow_unenforced, 0);
	assert_null(cfg.engine_default);	/* picked from what is installed */
	assert_int_equal(cfg.max_concurrent_runs, 2);
	assert_int_equal(cfg.jobs_rediscover_minutes, 15);
	assert_true(cfg.run_log_max_bytes == 64L * 1024 * 1024);
	assert_int_equal(cfg.desktop_notifications, 0);
	assert_int_equal(cfg.protected_branches.n, 2);
	assert_string_equal(cfg.protected_branches.v[0], "main");
	assert_string_equal(cfg.protected_branches.v[1], "master");
	assert_int_equal(cfg.sandbox.enabled, POLICY_UNSET);
	assert_true(policy_enabled(&cfg.sandbox));
	config_free(&cfg);
}

static void
test_full_file(void **state)
{
	struct config		 cfg;
	const struct policy	*claude;
	char			 err[512];
	const char		*text =
	    "api_port: 7555\n"
	    "max_concurrent_runs: 4\n"
	    "keep_runs: 3\n"
	    "jobs_rediscover_minutes: 0\n"
	    "run_log_max_bytes: 1048576\n"
	    "desktop_notifications: true\n"
	    "protected_branches: [main, release/1.x]\n"
	    "budgets:\n"
	    "  dollars: 0.5\n"
	    "  turns: 10\n"
	    "  seconds: 600\n"
	    "  wait: 120\n"
	    "  max_dollars: 5\n"
	    "limits:\n"
	    "  processes: 512\n"
	    "  memory_mb: 0\n"
	    "  allow_unenforced: true\n"
	    "sandbox:\n"
	    "  enabled: true\n"
	    "  read_dirs: [~/src/shared, /opt/tools]\n"
	    "  write_dirs: []\n"
	    "  read_files: [~/.gitconfig]\n"
	    "  env: [ANTHROPIC_API_KEY, GOFLAGS]\n"
	    "  features: [ssh]\n"
	    "engines:\n"
	    "  default: codex\n"
	    "  claude:\n"
	    "    base_url: http://127.0.0.1:8080/v1\n"
	    "    model: claude-sonnet-4-5\n"
	    "    key_env: MY_ANTHROPIC_KEY\n"
	    "    sandbox:\n"
	    "      write_files: [~/.claude.json, ~/.claude.json.lock]\n"
	    "      features: [ssh-keys]\n"
	    "rules:\n"
	    "  - id: no-curl-pipe\n"
	    "    match: \"curl *\"\n"
	    "    reason: piping downloads is not allowed here\n"
	    "  - id: no-rm-rf\n"
	    "    match: \"rm -rf /*\"\n"
	    "    enabled: false\n";

	(void)state;
	assert_int_equal(parse(text, &cfg, err, sizeof err), 0);
	assert_int_equal(cfg.api_port, 7555);
	assert_int_equal(cfg.max_concurrent_runs, 4);
	assert_int_equal(cfg.keep_runs, 3);
	assert_int_equal(cfg.jobs_rediscover_minutes, 0);
	assert_int_equal(cfg.run_log_max_bytes, 1048576);
	assert_int_equal(cfg.desktop_notifications, 1);
	assert_string_equal(cfg.protected_branches.v[1], "release/1.x");
	assert_true(cfg.budget_dollars == 0.5);
	assert_int_equal(cfg.budget_turns, 10);
	assert_int_equal(cfg.budget_seconds, 600);
	assert_int_equal(cfg.budget_wait, 120);
	assert_true(cfg.max_dollars == 5);
	assert_int_equal(cfg.limit_processes, 512);
	assert_int_equal(cfg.limit_memory_mb, 0);
	assert_int_equal(cfg.limit_allow_unenforced, 1);
	assert_int_equal(cfg.sandbox.enabled, 1);
	assert_int_equal(cfg.sandbox.read_dirs.n, 2);
	assert_string_equal(cfg.sandbox.read_files.v[0], "~/.gitconfig");
	assert_int_equal(cfg.sandbox.env.n, 2);
	assert_int_equal(cfg.sandbox.ssh, 1);
	assert_int_equal(cfg.sandbox.ssh_keys, 0);
	claude = config_engine_policy(&cfg, "claude");
	assert_non_null(claude);
	assert_string_equal(config_engine(&cfg, "claude")->base_url, "http://127.0.0.1:8080/v1");
	assert_string_equal(config_engine(&cfg, "claude")->model, "claude-sonnet-4-5");
	assert_string_equal(config_engine(&cfg, "claude")->key_env, "MY_ANTHROPIC_KEY");
	assert_null(config_engine(&cfg, "codex"));
	/* engines.default is not an engine section of its own. */
	assert_string_equal(cfg.engine_default, "codex");
	assert_null(config_engine(&cfg, "default"));
	assert_int_equal(cfg.n_engines, 1);
	assert_int_equal(claude->write_files.n, 2);
	assert_int_equal(claude->ssh_keys, 1);
	assert_null(config_engine_policy(&cfg, "codex"));
	/* The starter rules come first, then the file's own. */
	size_t nst;
	floor_starters(&nst);
	assert_int_equal(cfg.n_rules, nst + 2);
	assert_string_equal(cfg.rules[nst].id, "no-curl-pipe");
	assert_int_equal(cfg.rules[nst].enabled, 1);
	assert_int_equal(cfg.rules[nst + 1].enabled, 0);
	assert_string_equal(cfg.rules[nst + 1].reason, "blocked by a configured rule");
	config_free(&cfg);
}

/* Each bad file must fail with exactly this "file:line: field" prefix. */
static const struct {
	const char	*text;
	const char	*prefix;
} bad[] = {
	{ "api_port: 70000\n", "test.yaml:1: api_port: 70000 is out of range" },
	{ "api_port: seven\n", "test.yaml:1: api_port: expected an integer" },
	{ "api_port: \"7420\"\n", "test.yaml:1: api_port: expected an integer" },
	{ "colour: blue\n", "test.yaml:1: colour: unknown key" },
	{ "budgets:\n  dollars: 2\n  minutes: 5\n", "test.yaml:3: budgets.minutes: unknown key" },
	{ "budgets:\n  dollars: -1\n", "test.yaml:2: budgets.dollars: -1 is out of range" },
	{ "budgets:\n  turns: 1.5\n", "test.yaml:2: budgets.turns: expected an integer" },
	{ "budgets:\n  seconds: 0\n", "test.yaml:2: budgets.seconds: 0 is out of range" },
	{ "budgets: 5\n", "test.yaml:1: budgets: expected a mapping" },
	{ "budgets:\n  wait: 4\n", "test.yaml:2: budgets.wait: must be 0 (a budget ends the run at once) or from 5 to 86400 seconds" },
	{ "budgets:\n  wait: 86401\n", "test.yaml:2: budgets.wait: 86401 is out of range" },
	{ "budgets:\n  max_dollars: -2\n", "test.yaml:2: budgets.max_dollars: -2 is out of range" },
	{ "budgets:\n  dollars: 3\n  max_dollars: 2\n", "test.yaml:2: budgets.max_dollars: the hard ceiling ($2.00) is below budgets.dollars ($3.00)" },
	{ "limits: 64\n", "test.yaml:1: limits: expected a mapping" },
	{ "limits:\n  pids: 64\n", "test.yaml:2: limits.pids: unknown key" },
	{ "limits:\n  processes: -1\n", "test.yaml:2: limits.processes: -1 is out of range" },
	{ "limits:\n  processes: 8\n", "test.yaml:2: limits.processes: 8 is too low" },
	{ "limits:\n  processes: many\n", "test.yaml:2: limits.processes: expected an integer" },
	{ "limits:\n  memory_mb: 1.5\n", "test.yaml:2: limits.memory_mb: expected an integer" },
	{ "limits:\n  memory_mb: 4\n", "test.yaml:2: limits.memory_mb: 4 is too low" },
	{ "limits:\n  allow_unenforced: yes\n",
	    "test.yaml:2: limits.allow_unenforced: expected true or false, got 'yes'" },
	{ "limits:\n  allow_unenforced: \"true\"\n",
	    "test.yaml:2: limits.allow_unenforced: expected true or false" },
	{ "limits:\n  memory_mb: 99999999\n",
	    "test.yaml:2: limits.memory_mb: 99999999 is out of range" },
	{ "sandbox:\n  enabled: yes\n", "test.yaml:2: sandbox.enabled: expected true or false" },
	{ "sandbox:\n  read_dirs: relative/path\n", "test.yaml:2: sandbox.read_dirs: expected a list" },
	{ "sandbox:\n  read_dirs:\n    - /ok\n    - relative\n", "test.yaml:4: sandbox.read_dirs[1]: 'relative' is not an absolute or ~ path" },
	{ "sandbox:\n  env: [GOOD, 'bad-name']\n", "test.yaml:2: sandbox.env[1]: 'bad-name' is not an environment variable name" },
	{ "sandbox:\n  features: [ssh, telepathy]\n", "test.yaml:2: sandbox.features: unknown feature 'telepathy'" },
	{ "sandbox:\n  bypass: true\n", "test.yaml:2: sandbox.bypass: unknown key" },
	{ "engines:\n  gpt9:\n    sandbox: {}\n", "test.yaml:2: engines.gpt9: unknown engine" },
	{ "engines:\n  default: gpt9\n", "test.yaml:2: engines.default: 'gpt9' is not an engine Clockwork can run (one of: command, claude, codex, opencode, hermes, byok)" },
	{ "engines:\n  default: [claude]\n", "test.yaml:2: engines.default: expected a string" },
	{ "engines:\n  default: claude\n  default: codex\n", "test.yaml:3: engines.default: given twice" },
	{ "engines:\n  claude:\n    permission_mode: bypassPermissions\n", "test.yaml:3: engines.claude.permission_mode: unknown key" },
	{ "engines:\n  claude:\n    base_url: ftp://x\n", "test.yaml:3: engines.claude.base_url: expected an http:// or https:// URL" },
	{ "engines:\n  claude:\n    base_url: \"http://a b\"\n", "test.yaml:3: engines.claude.base_url: a URL may not hold spaces" },
	{ "engines:\n  claude:\n    model: \"a;b\"\n", "test.yaml:3: engines.claude.model: 'a;b' is not a model name" },
	{ "engines:\n  claude:\n    key_env: 1KEY\n", "test.yaml:3: engines.claude.key_env: '1KEY' is not an environment variable name" },
	{ "engines:\n  codex:\n    model: a\n    model: b\n", "test.yaml:4: engines.codex.model: given twice" },
	{ "engines:\n  claude:\n    sandbox:\n      write_files: [x]\n", "test.yaml:4: engines.claude.sandbox.write_files[0]: 'x' is not an absolute or ~ path" },
	{ "protected_branches: [main, '-x']\n", "test.yaml:1: protected_branches[1]: '-x' is not a branch name" },
	{ "rules:\n  - id: a\n", "test.yaml:2: rules[0]: a rule needs both id and match" },
	{ "rules:\n  - id: a\n    match: x\n  - id: a\n    match: y\n", "test.yaml:4: rules[1].id: rule id 'a' used twice" },
	{ "rules:\n  - id: a\n    match: x\n    action: allow\n", "test.yaml:4: rules[0].action: unknown key" },
	{ "max_concurrent_runs: 0\n", "test.yaml:1: max_concurrent_runs: 0 is out of range" },
	{ "jobs_rediscover_minutes: 1441\n",
	    "test.yaml:1: jobs_rediscover_minutes: 1441 is out of range" },
	{ "run_log_max_bytes: 100\n", "test.yaml:1: run_log_max_bytes: 100 is out of range" },
	{ "run_log_max_bytes: 64M\n", "test.yaml:1: run_log_max_bytes: expected an integer" },
	{ "desktop_notifications: maybe\n", "test.yaml:1: desktop_notifications: expected true or false" },
	{ "- just\n- a list\n", "test.yaml:1: (top level): expected a mapping" },
	{ "network: closed\n", "test.yaml:1: network: 'closed' is not allowlist or open" },
	{ "network:\n  allow: [example.com]\n",
	    "test.yaml:2: network.allow[0]: 'example.com' is not host:port" },
	{ "network:\n  allow: [\"example.com:0\"]\n", "test.yaml:2: network.allow[0]:" },
	{ "network:\n  allow: [\"*.com:443\"]\n", "test.yaml:2: network.allow[0]:" },
	{ "network:\n  allow: [\"127.1:80\"]\n", "test.yaml:2: network.allow[0]:" },
	{ "network:\n  mode: [open]\n", "test.yaml:2: network.mode:" },
	/* fuzz/config's crash: a mapping as the mode, with an allow list inside it. */
	{ "network:\n mode: #[python]\n  allow: [node, \"*:443\"]\n",
	    "test.yaml:3: network.mode: expected allowlist or open" },
	{ "network:\n  ask: true\n", "test.yaml:2: network.ask: unknown key" },
	{ "engines:\n  claude:\n    network: open\n",
	    "test.yaml:3: engines.claude.network: expected a list of rules or a mapping (allow)" },
	{ "prices: [1]\n", "test.yaml:1: prices: expected a mapping of model names" },
	{ "prices:\n  m1: {input: 1}\n", "test.yaml:2: prices.m1: input and output are required" },
	{ "prices:\n  m1: {input: 1, output: 2, cache: 3}\n", "test.yaml:2: prices.m1.cache: unknown key" },
	{ "prices:\n  m1: {input: -1, output: 2}\n", "test.yaml:2: prices.m1.input: -1 is out of range" },
	{ "prices:\n  m1: {input: 1, output: 20000}\n", "test.yaml:2: prices.m1.output: 20000 is out of range" },
	{ "prices:\n  m1: {input: one, output: 2}\n", "test.yaml:2: prices.m1.input: expected a number" },
	{ "prices:\n  m1: {input: 1, output: 2}\n  m1: {input: 1, output: 2}\n", "test.yaml:3: prices.m1: given twice" },
	{ "prices:\n  'a b': {input: 1, output: 2}\n", "test.yaml:2: prices.a b: 'a b' is not a model name" },
	{ "sandbox: [unclosed\n", "test.yaml:2: (syntax):" },
	{ "a: b\n\tc: d\n", "test.yaml:2: (syntax):" },
};

/* Starter rules: on by default; named by id alone they can be switched off or changed. */
static void
test_starter_rules(void **state)
{
	struct config	 cfg;
	char		 err[512];
	const char	*text = "rules:\n"
	    "  - id: sudo\n    enabled: false\n"
	    "  - id: chmod_777\n    reason: ask first\n"
	    "  - id: rm_root\n    match: 'rm -rf /*'\n";
	size_t		 nst, i;
	const struct config_rule *r;

	(void)state;
	floor_starters(&nst);
	assert_true(nst >= 7);
	assert_int_equal(config_defaults(&cfg), 0);
	assert_int_equal(cfg.n_rules, nst);
	for (i = 0; i < nst; i++) {
		assert_int_equal(cfg.rules[i].enabled, 1);
		assert_string_equal(cfg.rules[i].id, cfg.rules[i].builtin);
		assert_non_null(floor_starter_find(cfg.rules[i].id));
	}
	config_free(&cfg);
	assert_int_equal(config_parse("test.yaml", text, strlen(text), &cfg, err,
	    sizeof err), 0);
	assert_int_equal(cfg.n_rules, nst);
	for (i = 0, r = NULL; i < nst; i++) {
		r = &cfg.rules[i];
		if (strcmp(r->id, "sudo") == 0)
			assert_int_equal(r->enabled, 0);
		else if (strcmp(r->id, "chmod_777") == 0) {
			assert_int_equal(r->enabled, 1);
			assert_string_equal(r->reason, "ask first");
			assert_string_equal(r->builtin, "chmod_777");
		} else if (strcmp(r->id, "rm_root") == 0) {
			assert_null(r->builtin);
			assert_string_equal(r->match, "rm -rf /*");
		} else
			assert_int_equal(r->from_file, 0);
	}
	config_free(&cfg);
	text = "rules:\n  - id: sudo\n    enabled: false\n  - id: sudo\n    enabled: true\n";
	assert_int_equal(config_parse("test.yaml", text, strlen(text), &cfg, err,
	    sizeof err), -1);
	assert_string_equal(err, "test.yaml:4: rules[1].id: rule id 'sudo' used twice");
}

static void
test_bad_files(void **state)
{
	struct config	 cfg;
	char		 err[512];

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&cfg, 0xAB, sizeof cfg);
		err[0] = '\0';
		if (parse(bad[i].text, &cfg, err, sizeof err) != -1)
			fail_msg("bad file %zu was accepted: %s", i, bad[i].text);
		if (strncmp(err, bad[i].prefix, strlen(bad[i].prefix)) != 0)
			fail_msg("bad file %zu: got '%s', want prefix '%s'", i, err,
			    bad[i].prefix);
		/* The caller's struct is untouched on error. */
		assert_int_equal(((unsigned char *)&cfg)[0], 0xAB);
		assert_null(strchr(err, '\n'));
	}
}

/* prices.<model>: dollars per million tokens, looked up by model name. */
static void
test_prices(void **state)
{
	struct config			 cfg;
	const struct config_price	*p;
	char				 err[512];

	(void)state;
	assert_int_equal(parse("prices:\n"
	    "  claude-sonnet-4-5: {input: 3, output: 15, cache_write: 3.75, cache_read: 0.3}\n"
	    "  openai/gpt-4o: {input: 2.5, output: 10}\n", &cfg, err, sizeof err), 0);
	assert_int_equal(cfg.n_prices, 2);
	assert_non_null(p = config_price(&cfg, "claude-sonnet-4-5"));
	assert_true(p->per_mtok[0] == 3 && p->per_mtok[1] == 15 &&
	    p->per_mtok[2] == 3.75 && p->per_mtok[3] == 0.3);
	assert_non_null(p = config_price(&cfg, "openai/gpt-4o"));
	/* Cache prices not given are 0: nothing is charged for what is not priced. */
	assert_true(p->per_mtok[0] == 2.5 && p->per_mtok[1] == 10 &&
	    p->per_mtok[2] == 0 && p->per_mtok[3] == 0);
	assert_null(config_price(&cfg, "claude-opus"));
	assert_null(config_price(&cfg, NULL));
	config_free(&cfg);
}

static void
test_network(void **state)
{
	struct config			 cfg;
	const struct config_engine	*ce;
	char				 err[512];

	(void)state;
	/* The default is the allowlist, with no global rule. */
	assert_int_equal(parse("", &cfg, err, sizeof err), 0);
	assert_int_equal(cfg.network_open, 0);
	assert_int_equal(cfg.network_allow.n, 0);
	config_free(&cfg);
	assert_int_equal(parse("network: open\n", &cfg, err, sizeof err), 0);
	assert_int_equal(cfg.network_open, 1);
	config_free(&cfg);
	assert_int_equal(parse("network:\n  mode: allowlist\n  allow:\n"
	    "    - registry.npmjs.org:443\n    - \"*.github.com:*\"\n    - \"[::1]:8080\"\n"
	    "engines:\n  claude:\n    network:\n      allow: [\"10.0.0.5:3128\"]\n",
	    &cfg, err, sizeof err), 0);
	assert_int_equal(cfg.network_open, 0);
	assert_int_equal(cfg.network_allow.n, 3);
	assert_string_equal(cfg.network_allow.v[1], "*.github.com:*");
	assert_non_null(ce = config_engine(&cfg, "claude"));
	assert_int_equal(ce->network_allow.n, 1);
	assert_string_equal(ce->network_allow.v[0], "10.0.0.5:3128");
	config_free(&cfg);

	/* Rule sets by name (issue 30): a list alone is the allowlist with those rules. */
	assert_int_equal(parse("network: [python, rust, go, java, node, \"h.example:443\"]\n"
	    "engines:\n  codex:\n    network: [go]\n", &cfg, err, sizeof err), 0);
	assert_int_equal(cfg.network_open, 0);
	assert_int_equal(cfg.network_allow.n, 6);
	assert_string_equal(cfg.network_allow.v[3], "java");
	assert_non_null(ce = config_engine(&cfg, "codex"));
	assert_string_equal(ce->network_allow.v[0], "go");
	config_free(&cfg);
	assert_int_equal(parse("network:\n  allow: [node]\n", &cfg, err, sizeof err), 0);
	assert_string_equal(cfg.network_allow.v[0], "node");
	config_free(&cfg);
	/* An unknown set is refused, naming the field and the sets there are. */
	assert_int_equal(parse("network: [python, pythn]\n", &cfg, err, sizeof err), -1);
	assert_non_null(strstr(err, "network[1]"));
	assert_non_null(strstr(err, "'pythn'"));
	assert_non_null(strstr(err, "python, rust, go, java, node"));
	assert_int_equal(parse("network:\n  allow: [Rust]\n", &cfg, err, sizeof err), -1);
	assert_non_null(strstr(err, "network.allow[0]"));
}

static void
test_load_files(void **state)
{
	char		 dir[] = "/tmp/cwcfgXXXXXX", path[600], err[512];
	struct config	 cfg;
	FILE		*f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/config.yaml", dir);

	/* Missing file: defaults, unless it must exist. */
	assert_int_equal(config_load(path, 0, &cfg, err, sizeof err), 0);
	assert_int_equal(cfg.budget_turns, 50);
	config_free(&cfg);
	assert_int_equal(config_load(path, 1, &cfg, err, sizeof err), -1);
	assert_non_null(strstr(err, path));

	f = fopen(path, "w");
	assert_non_null(f);
	fputs("budgets:\n  turns: 7\n", f);
	fclose(f);
	assert_int_equal(config_load(path, 1, &cfg, err, sizeof err), 0);
	assert_int_equal(cfg.budget_turns, 7);
	assert_string_equal(cfg.path, path);
	config_free(&cfg);

	f = fopen(path, "w");
	fputs("budgets:\n  turns: lots\n", f);
	fclose(f);
	assert_int_equal(config_load(path, 0, &cfg, err, sizeof err), -1);
	assert_true(strncmp(err, path, strlen(path)) == 0);
	assert_non_null(strstr(err, ":2: budgets.turns:"));

	/* CLOCKWORK_HOME moves the default location. */
	setenv("CLOCKWORK_HOME", dir, 1);
	assert_int_equal(config_default_path(err, sizeof err), 0);
	assert_string_equal(err, path);
	unlink(path);
	rmdir(dir);
}

/* approvals.ask: a list of risks, all, none; bad input named by file:line: field. */
static void
test_approvals_ask(void **state)
{
	struct config	 cfg;
	char		 err[512];

	(void)state;
	assert_int_equal(config_defaults(&cfg), 0);
	assert_int_equal(cfg.approvals_ask, AUTOALLOW_ASK_DEFAULT);
	config_free(&cfg);
	assert_int_equal(parse("approvals:\n  ask: [destructive, fetch_exec]\n", &cfg,
	    err, sizeof err), 0);
	assert_int_equal(cfg.approvals_ask, AUTOALLOW_BIT(FLOOR_RISK_DESTRUCTIVE) |
	    AUTOALLOW_BIT(FLOOR_RISK_FETCH_EXEC));
	config_free(&cfg);
	assert_int_equal(parse("approvals:\n  ask: all\n", &cfg, err, sizeof err), 0);
	assert_int_equal(cfg.approvals_ask, AUTOALLOW_ASK_ALL);
	config_free(&cfg);
	assert_int_equal(parse("approvals:\n  ask: none\n  max_per_run: 5\n", &cfg,
	    err, sizeof err), 0);
	assert_int_equal(cfg.approvals_ask, AUTOALLOW_ASK_NONE);
	assert_int_equal(cfg.approvals_max_per_run, 5);
	config_free(&cfg);
	assert_int_equal(parse("approvals:\n  max_per_run: 5\n  ask:\n    - outside_worktree\n"
	    "    - risky\n", &cfg, err, sizeof err), -1);
	assert_non_null(strstr(err, "test.yaml:4: approvals.ask: 'risky' is not a risk"));
	assert_int_equal(parse("approvals:\n  ask: []\n", &cfg, err, sizeof err), -1);
	assert_non_null(strstr(err, ":2: approvals.ask: an empty list"));
	assert_int_equal(parse("approvals:\n  ask: [all, destructive]\n", &cfg, err, sizeof err), -1);
	assert_non_null(strstr(err, ":2: approvals.ask: 'all' stands alone"));
	assert_int_equal(parse("approvals:\n  ask: {a: 1}\n", &cfg, err, sizeof err), -1);
	assert_non_null(strstr(err, ":2: approvals.ask: expected a list of risks"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_starter_rules),
		cmocka_unit_test(test_full_file),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_network),
		cmocka_unit_test(test_prices),
		cmocka_unit_test(test_load_files),
		cmocka_unit_test(test_approvals_ask),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

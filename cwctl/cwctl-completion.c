/*
 * cwctl completion bash|zsh: a completion script for the shell, on standard output
 * (eval "$(cwctl completion bash)", or save it where the shell loads completions).
 * Verbs, subcommands and options are written from the tables cwctl itself parses
 * with (cwctl.c's verbs, cwctl-opts.c's commands), so nothing can be left out; run,
 * task and approval ids come from the daemon, through cwctl, so a daemon that is not
 * running only means fewer completions.
 */
#include <stdio.h>
#include <string.h>

#include "cwctl.h"

static const char cwctl_completion_head[] =
"# bash completion for cwctl (cwctl completion bash)\n"
"_cwctl_runs() { cwctl run list --json 2>/dev/null | sed -n 's/^[[:space:]]*\"id\":[[:space:]]*\"\\([^\"]*\\)\".*/\\1/p'; }\n"
"_cwctl_tasks() { cwctl task list --json 2>/dev/null | sed -n 's/^[[:space:]]*\"name\":[[:space:]]*\"\\([^\"]*\\)\".*/\\1/p'; }\n"
"_cwctl_approvals() { cwctl approvals --json 2>/dev/null | sed -n 's/^[[:space:]]*\"id\":[[:space:]]*\"\\(ap-[^\"]*\\)\".*/\\1/p'; }\n"
"_cwctl() {\n"
"  local cur=${COMP_WORDS[COMP_CWORD]} verb=${COMP_WORDS[1]:-} sub=${COMP_WORDS[2]:-} words\n"
"  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
"    words='";

/* zsh runs the bash function through its bashcompinit layer: one list to keep. */
static const char cwctl_completion_zsh[] =
"# zsh completion for cwctl (cwctl completion zsh)\n"
"autoload -U +X compinit && compinit\n"
"autoload -U +X bashcompinit && bashcompinit\n";

/* A command's options and its positionals' words (TASK, RUN, APPROVAL: the daemon's). */
static void
cwctl_completion_words(const struct cwctl_cmd *c)
{
	const char	*p, *e;
	size_t		 n;

	for (const struct cwctl_opt *o = c->opts; o->name != NULL; o++)
		printf("%s ", o->name);
	printf("--help");
	for (p = c->complete; p != NULL && *p != '\0'; p = e + strspn(e, " ")) {
		n = strcspn(p, " ");
		e = p + n;
		if (n == 4 && strncmp(p, "TASK", n) == 0)
			printf(" $(_cwctl_tasks)");
		else if (n == 3 && strncmp(p, "RUN", n) == 0)
			printf(" $(_cwctl_runs)");
		else if (n == 8 && strncmp(p, "APPROVAL", n) == 0)
			printf(" $(_cwctl_approvals)");
		else
			printf(" %.*s", (int)n, p);
	}
}

static void
cwctl_completion_verb(const char *verb)
{
	const struct cwctl_cmd	*cmds, *bare = NULL;
	size_t			 n, subs = 0;

	cmds = cwctl_opts_cmds(&n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(cmds[i].verb, verb) != 0)
			continue;
		if (cmds[i].sub == NULL)
			bare = &cmds[i];
		else
			subs++;
	}
	printf("    %s)\n", verb);
	if (subs == 0) {
		printf("      words=\"");
		if (bare != NULL)
			cwctl_completion_words(bare);
		printf("\" ;;\n");
		return;
	}
	printf("      if [ \"$COMP_CWORD\" -eq 2 ]; then words=\"");
	for (size_t i = 0; i < n; i++)
		if (strcmp(cmds[i].verb, verb) == 0 && cmds[i].sub != NULL)
			printf("%s ", cmds[i].sub);
	if (bare != NULL)
		cwctl_completion_words(bare);
	else
		printf("--help");
	printf("\"\n      else case $sub in\n");
	for (size_t i = 0; i < n; i++) {
		if (strcmp(cmds[i].verb, verb) != 0 || cmds[i].sub == NULL)
			continue;
		printf("        %s%s%s) words=\"", cmds[i].sub, cmds[i].alias != NULL ? "|" :
		    "", cmds[i].alias != NULL ? cmds[i].alias : "");
		cwctl_completion_words(&cmds[i]);
		printf("\" ;;\n");
	}
	if (bare != NULL) {
		printf("        *) words=\"");
		cwctl_completion_words(bare);
		printf("\" ;;\n");
	}
	printf("      esac; fi ;;\n");
}

int
cwctl_completion(int argc, char **argv)
{
	const char	*v;

	if (argc != 2 || (strcmp(argv[1], "bash") != 0 && strcmp(argv[1], "zsh") != 0)) {
		fprintf(stderr, "usage: cwctl completion bash|zsh\n");
		return CWCTL_EXIT_USAGE;
	}
	if (strcmp(argv[1], "zsh") == 0)
		fputs(cwctl_completion_zsh, stdout);
	fputs(cwctl_completion_head, stdout);
	for (size_t i = 0; (v = cwctl_verb(i)) != NULL; i++)
		printf("%s ", v);
	printf("--help --version'\n  else\n    case $verb in\n");
	for (size_t i = 0; (v = cwctl_verb(i)) != NULL; i++)
		cwctl_completion_verb(v);
	printf("    esac\n  fi\n"
	    "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
	    "}\n"
	    "complete -o default -F _cwctl cwctl\n");
	return CWCTL_EXIT_OK;
}

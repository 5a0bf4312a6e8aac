/*
 * cwctl completion bash|zsh: a completion script for the shell, on standard output
 * (eval "$(cwctl completion bash)", or save it where the shell loads completions).
 * Verbs and options are completed from the script; run and task names from the daemon,
 * through cwctl itself, so a daemon that is not running only means fewer completions.
 */
#include <stdio.h>
#include <string.h>

#include "cwctl.h"

static const char cwctl_completion_bash[] =
"# bash completion for cwctl (cwctl completion bash)\n"
"_cwctl_runs() { cwctl run list --json 2>/dev/null | sed -n 's/^[[:space:]]*\"id\":[[:space:]]*\"\\([^\"]*\\)\".*/\\1/p'; }\n"
"_cwctl_tasks() { cwctl task list --json 2>/dev/null | sed -n 's/^[[:space:]]*\"name\":[[:space:]]*\"\\([^\"]*\\)\".*/\\1/p'; }\n"
"_cwctl() {\n"
"  local cur=${COMP_WORDS[COMP_CWORD]} verb=${COMP_WORDS[1]:-} sub=${COMP_WORDS[2]:-} words\n"
"  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
"    words='status task run runs approvals approve deny inbox journal gc service policy doctor sandbox completion --help --version'\n"
"  else\n"
"    case $verb in\n"
"    task)\n"
"      if [ \"$COMP_CWORD\" -eq 2 ]; then words='add list show enable disable rm rules unrule ask'\n"
"      else case $sub in\n"
"        add) words='--prompt --prompt-file --command --repo --engine --key --mode --dollars --turns --seconds --processes --memory-mb --schedule --disabled --json' ;;\n"
"        ask) if [ \"$COMP_CWORD\" -eq 4 ]; then words='all none default outside_worktree,fetch_exec,destructive'; else words=\"$(_cwctl_tasks)\"; fi ;;\n"
"        *) words=\"$(_cwctl_tasks) --json\" ;;\n"
"      esac; fi ;;\n"
"    run)\n"
"      if [ \"$COMP_CWORD\" -eq 2 ]; then words='start list show stop logs export diff merge land push discard'\n"
"      else case $sub in\n"
"        start) words=\"$(_cwctl_tasks) --wait --json\" ;;\n"
"        list) words='--task --status --review --limit --json' ;;\n"
"        logs) words=\"$(_cwctl_runs) -f --raw --json\" ;;\n"
"        diff) words=\"$(_cwctl_runs) --stat --json\" ;;\n"
"        merge|land) words=\"$(_cwctl_runs) --into --squash --ff-only --accept-automation --json\" ;;\n"
"        push) words=\"$(_cwctl_runs) --remote --pr --json\" ;;\n"
"        export) words=\"$(_cwctl_runs) --transcript -o\" ;;\n"
"        *) words=\"$(_cwctl_runs) --json\" ;;\n"
"      esac; fi ;;\n"
"    runs) words='--review --task --status --limit --json' ;;\n"
"    approvals) words='show --run --task --watch --json' ;;\n"
"    approve|deny) words=\"$(cwctl approvals --json 2>/dev/null | sed -n 's/^[[:space:]]*\"id\":[[:space:]]*\"\\(ap-[^\"]*\\)\".*/\\1/p') --for-task --message --json\" ;;\n"
"    inbox) words='--open --revoke' ;;\n"
"    journal) words='--run --audit --json' ;;\n"
"    gc) words='--task --force --json' ;;\n"
"    service) words='install apparmor --print --systemd --launchd --bindir --dir' ;;\n"
"    doctor) words='--json' ;;\n"
"    policy) words='check --json --' ;;\n"
"    sandbox) words='exec --workdir --engine --' ;;\n"
"    completion) words='bash zsh' ;;\n"
"    esac\n"
"  fi\n"
"  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
"}\n"
"complete -o default -F _cwctl cwctl\n";

/* zsh runs the bash function through its bashcompinit layer: one list to keep. */
static const char cwctl_completion_zsh[] =
"# zsh completion for cwctl (cwctl completion zsh)\n"
"autoload -U +X compinit && compinit\n"
"autoload -U +X bashcompinit && bashcompinit\n";

int
cwctl_completion(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "bash") != 0 && strcmp(argv[1], "zsh") != 0)) {
		fprintf(stderr, "usage: cwctl completion bash|zsh\n");
		return CWCTL_EXIT_USAGE;
	}
	if (strcmp(argv[1], "zsh") == 0)
		fputs(cwctl_completion_zsh, stdout);
	fputs(cwctl_completion_bash, stdout);
	return CWCTL_EXIT_OK;
}

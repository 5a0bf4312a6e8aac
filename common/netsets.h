/*
 * The egress rule sets Clockwork ships (issue 30): one word that a task, network.allow
 * or engines.<name>.network.allow names instead of the hosts of a package registry
 * (`cwctl network TASK --allow rust`, `network: [python, go]`). Each set's hosts were
 * found by running the tool through a run's proxy and reading what it asked for
 * (docs/configuration.md, "Rule sets"); a set name is kept as written and expanded
 * where a run's rules are built, so a task follows the set of the Clockwork it runs on.
 */
#ifndef CW_NETSETS_H
#define CW_NETSETS_H

/* The set's rules ("host:port"), NULL-terminated; NULL when name is no set. */
const char *const	*netsets_find(const char *name);
/* The names of every set, for messages: "python, rust, go, java, node". */
const char		*netsets_names(void);

#endif

/*
 * The shipped egress rule sets: see netsets.h. Every host below was seen asked for by
 * the tool itself, in a real run through the run's proxy (the test/toolchain scripts print
 * each run's connections); a host is added only when a build failed without it.
 */
#include <stddef.h>
#include <string.h>

#include "netsets.h"

static const char *const netsets_python[] = {
	"pypi.org:443",			/* the simple index (pip, uv, poetry) */
	"files.pythonhosted.org:443",	/* the wheels and sdists it links */
	NULL,
};
static const char *const netsets_rust[] = {
	"index.crates.io:443",		/* the sparse index, cargo's default since 1.70 */
	"static.crates.io:443",		/* the .crate files (config.json's "dl") */
	NULL,
};
static const char *const netsets_go[] = {
	/*
	 * GOPROXY's default: modules and zips, and the checksum database too: go asks
	 * the proxy for <proxy>/sumdb/sum.golang.org/... first, so `go get` of a module
	 * not in go.sum never asked sum.golang.org itself.
	 */
	"proxy.golang.org:443",
	NULL,
};
static const char *const netsets_java[] = {
	"repo.maven.apache.org:443",	/* Maven Central, Maven's and Gradle's default */
	NULL,
};
static const char *const netsets_node[] = {
	"registry.npmjs.org:443",	/* packuments and tarballs (npm, pnpm, yarn 1) */
	NULL,
};

static const struct netsets_entry {
	const char		*name;
	const char *const	*rules;
} netsets_table[] = {
	{ "python", netsets_python },
	{ "rust", netsets_rust },
	{ "go", netsets_go },
	{ "java", netsets_java },
	{ "node", netsets_node },
};

const char *const *
netsets_find(const char *name)
{
	for (size_t i = 0; i < sizeof netsets_table / sizeof netsets_table[0]; i++)
		if (strcmp(netsets_table[i].name, name) == 0)
			return netsets_table[i].rules;
	return NULL;
}

const char *
netsets_names(void)
{
	return "python, rust, go, java, node";
}

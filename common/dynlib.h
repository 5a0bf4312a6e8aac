/*
 * A shared library loaded when it is first needed, not linked (issue 24). Linked in,
 * libcurl, libsecret (GLib) and libdbus cost clockworkd some 7 MiB of resident memory
 * from its first instruction, mapped, relocated and run through their constructors,
 * though a daemon without Telegram, a session bus or desktop notifications never
 * calls them (docs/performance.md). Each user keeps a table of the symbols it calls.
 *
 * The library is looked up as a linked one would be (its soname, the loader's search
 * path) with RTLD_NOW, so every symbol is bound when dynlib_open() returns.
 */
#ifndef CW_DYNLIB_H
#define CW_DYNLIB_H
#include <stddef.h>

/* One symbol to resolve: its name, and where its address goes (a function pointer). */
struct dynlib_sym {
	const char	*name;
	void		*slot;
};

/*
 * Open soname once (later calls return the same handle) and fill every slot of syms;
 * the handle, or NULL with err naming the library and the symbol or the loader's
 * reason. A failure leaves the slots untouched and the library closed.
 */
void	*dynlib_open(const char *soname, const struct dynlib_sym *syms, size_t n,
	    char *err, size_t errlen);

#endif

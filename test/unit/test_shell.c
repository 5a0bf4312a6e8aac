/*
 * The shell parser on its own: quoting, escapes, expansions, the commands found inside
 * substitutions, redirections and heredocs, and the bounds that turn hostile input
 * into a parse error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

#define HOME	"/home/agent"

static struct shell_list	 l;
static char			 err[256];

static int
parse(const char *s)
{
	shell_list_free(&l);
	return shell_parse(s, strlen(s), HOME, 0, &l, err, sizeof err);
}

/* The words of command i joined with '|' (markers shown as ? and *). */
static const char *
words(size_t i)
{
	static char	 buf[4096];
	size_t		 n = 0;

	buf[0] = '\0';
	if (i >= l.n)
		return "(none)";
	for (size_t k = 0; k < l.v[i].argc; k++) {
		if (k > 0)
			buf[n++] = '|';
		for (const char *s = l.v[i].argv[k]; *s && n + 2 < sizeof buf; s++)
			buf[n++] = *s == SHELL_UNKNOWN ? '?' :
			    *s == SHELL_UNKNOWN_SPLIT ? '*' : *s;
	}
	buf[n] = '\0';
	return buf;
}

/* Commands with at least one word, as a count. */
static size_t
ncmds(void)
{
	size_t	 n = 0;

	for (size_t i = 0; i < l.n; i++)
		n += l.v[i].argc > 0;
	return n;
}

static int
find(const char *joined)
{
	for (size_t i = 0; i < l.n; i++)
		if (strcmp(words(i), joined) == 0)
			return (int)i;
	return -1;
}

static void
test_shell_quotes(void **state)
{
	(void)state;
	assert_int_equal(parse("echo 'a b' \"c d\" e\\ f"), 0);
	assert_string_equal(words(0), "echo|a b|c d|e f");
	assert_int_equal(parse("echo \"a\\\"b\\\\c\\$d\\`e\\x\""), 0);
	assert_string_equal(words(0), "echo|a\"b\\c$d`e\\x");
	assert_int_equal(parse("g'i't pu\"sh\" -\\f"), 0);
	assert_string_equal(words(0), "git|push|-f");
	assert_int_equal(parse("echo 'it'\\''s'"), 0);
	assert_string_equal(words(0), "echo|it's");
	assert_int_equal(parse("echo $'n\\x70m\\t\\101'"), 0);
	assert_string_equal(words(0), "echo|npm\tA");
	assert_int_equal(parse("echo a\\\nb"), 0);	/* line continuation */
	assert_string_equal(words(0), "echo|ab");
	assert_int_equal(parse("echo '' \"\""), 0);
	assert_int_equal(l.v[0].argc, 3);
	assert_int_equal(parse("echo 'open"), -1);
	assert_non_null(strstr(err, "single quote"));
	assert_int_equal(parse("echo \"open"), -1);
	assert_int_equal(parse("echo $'open"), -1);
}

static void
test_shell_expansion(void **state)
{
	(void)state;
	assert_int_equal(parse("cat ~/x ~ ~user/y a~/b \"~/q\""), 0);
	assert_string_equal(words(0), "cat|" HOME "/x|" HOME "|~user/y|a~/b|~/q");
	assert_int_equal(parse("cat $HOME/.ssh ${HOME}/.aws \"$HOME\""), 0);
	assert_string_equal(words(0), "cat|" HOME "/.ssh|" HOME "/.aws|" HOME);
	/* Unknown: marked, quoted (one field, ?) or not (may split, *). */
	assert_int_equal(parse("echo $FOO \"$FOO\" ${BAR:-x} $1 \"$@\" $PWD/a"), 0);
	assert_string_equal(words(0), "echo|*|?|*|*|?|*/a");
	assert_int_equal(parse("echo '$HOME' \\$HOME $"), 0);
	assert_string_equal(words(0), "echo|$HOME|$HOME|$");
	assert_int_equal(parse("A=~/k B=x:~/y cmd --k=~/z"), 0);
	assert_string_equal(words(0), "cmd|--k=~/z");
	assert_int_equal(l.v[0].nassigns, 2);
	assert_string_equal(l.v[0].assigns[0], "A=" HOME "/k");
	assert_string_equal(l.v[0].assigns[1], "B=x:" HOME "/y");
	assert_int_equal(parse("git push origin {main,dev} x{1..3}"), 0);
	assert_string_equal(words(0), "git|push|origin|*|x*");
	assert_int_equal(parse("echo {} {a} a{b"), 0);
	assert_string_equal(words(0), "echo|{}|{a}|a{b");
	/* No home known: ~ and $HOME are unknown too. */
	shell_list_free(&l);
	assert_int_equal(shell_parse("cat ~/.ssh", 10, NULL, 0, &l, err, sizeof err), 0);
	assert_string_equal(words(0), "cat|*/.ssh");
}

static void
test_shell_operators(void **state)
{
	(void)state;
	assert_int_equal(parse("a 1 && b 2 || c 3; d 4 & e 5 | f 6 |& g\nh"), 0);
	assert_int_equal(ncmds(), 8);
	assert_string_equal(words(0), "a|1");
	assert_string_equal(words(7), "h");
	assert_true(find("f|6") >= 0);
	assert_int_equal(l.v[find("f|6")].pipe_in, find("e|5"));
	assert_int_equal(l.v[find("a|1")].pipe_in, -1);
	assert_int_equal(parse("(a; b) && { c; d; } | e"), 0);
	assert_int_equal(ncmds(), 5);
	assert_int_equal(parse("ls # git push -f\n# npm publish\necho ok#not"), 0);
	assert_int_equal(ncmds(), 2);
	assert_string_equal(words(1), "echo|ok#not");
	assert_int_equal(parse("if [ -f x ]; then make; elif y; then z; else w; fi"), 0);
	assert_true(find("make") >= 0 && find("[|-f|x|]") >= 0 && find("w") >= 0);
	assert_int_equal(parse("for f in a b; do cat \"$f\"; done"), 0);
	assert_true(find("cat|?") >= 0);
	assert_int_equal(parse("while read x; do echo $x; done < in.txt"), 0);
	assert_true(find("echo|*") >= 0);
	assert_int_equal(parse("case $x in a|b) one;; (c) two;& *) three;;& esac"), 0);
	assert_true(find("one") >= 0 && find("two") >= 0 && find("three") >= 0);
	assert_int_equal(parse("f() { inner; }; function g { other; }; f"), 0);
	assert_true(find("inner") >= 0 && find("other") >= 0);
	assert_int_equal(parse("arr=(a ~/b) x"), 0);
	assert_int_equal(parse("[[ $a =~ ^(x|y)$ && -f ~/k ]] && z"), 0);
	assert_string_equal(words(0), "[[|*|=~|^|x|y|$|-f|" HOME "/k|]]");
	assert_true(find("z") >= 0);
	assert_int_equal(parse("[[ a"), -1);
	assert_int_equal(parse("! true"), 0);
	assert_string_equal(words(0), "true");
	assert_int_equal(parse("ls )"), -1);
	assert_int_equal(parse("(ls"), -1);
	assert_int_equal(parse("{ ls; "), -1);
	assert_int_equal(parse("echo ("), -1);
	assert_int_equal(parse("case x in a) b"), -1);
}

static void
test_shell_substitution(void **state)
{
	(void)state;
	assert_int_equal(parse("echo $(git push -f) \"`npm publish`\" <(cat a) $((1+$(id)))"), 0);
	assert_string_equal(words(0), "echo|*|?|*|*");
	assert_true(find("git|push|-f") >= 0);
	assert_true(find("npm|publish") >= 0);
	assert_true(find("cat|a") >= 0);
	assert_true(find("id") >= 0);
	/* Nested, and backticks with their own escaping. */
	assert_int_equal(parse("a $(b $(c \"$(d)\"))"), 0);
	assert_true(find("d") >= 0 && find("c|?") >= 0);
	assert_int_equal(parse("a `b \\`c\\``"), 0);
	assert_true(find("c") >= 0 && find("b|*") >= 0);
	assert_true(l.v[find("c")].depth > l.v[find("b|*")].depth);
	/* ${X:-$(cmd)} runs cmd. */
	assert_int_equal(parse("echo ${X:-$(rm -rf y)}"), 0);
	assert_true(find("rm|-rf|y") >= 0);
	/* Quoted: data. */
	assert_int_equal(parse("echo '$(npm publish)' \"\\$(x)\""), 0);
	assert_int_equal(ncmds(), 1);
	assert_int_equal(parse("echo $(ls"), -1);
	assert_int_equal(parse("echo `ls"), -1);
	assert_int_equal(parse("echo ${X"), -1);
}

static void
test_shell_redirections(void **state)
{
	const struct shell_cmd	*c;

	(void)state;
	assert_int_equal(parse("cmd <in >out 2>err >>app &>both >|clob 2>&1 >&f <&0 3<>rw"), 0);
	c = &l.v[0];
	assert_string_equal(words(0), "cmd");
	assert_int_equal(c->nredirs, 10);
	assert_int_equal(c->redirs[0].kind, SHELL_REDIR_IN);
	assert_string_equal(c->redirs[0].word, "in");
	assert_int_equal(c->redirs[1].kind, SHELL_REDIR_OUT);
	assert_string_equal(c->redirs[2].word, "err");
	assert_int_equal(c->redirs[3].kind, SHELL_REDIR_OUT);
	assert_string_equal(c->redirs[4].word, "both");
	assert_string_equal(c->redirs[5].word, "clob");
	assert_int_equal(c->redirs[6].kind, SHELL_REDIR_DUP);
	assert_int_equal(c->redirs[7].kind, SHELL_REDIR_OUT);	/* >&file */
	assert_string_equal(c->redirs[7].word, "f");
	assert_int_equal(c->redirs[8].kind, SHELL_REDIR_DUP);
	assert_int_equal(c->redirs[9].kind, SHELL_REDIR_IN);
	assert_int_equal(parse("cat > ~/x"), 0);
	assert_string_equal(l.v[0].redirs[0].word, HOME "/x");
	assert_int_equal(parse("cat <<< 'npm publish'"), 0);
	assert_int_equal(l.v[0].redirs[0].kind, SHELL_REDIR_HERESTRING);
	assert_int_equal(parse("echo >"), -1);
	assert_int_equal(parse("echo > ;"), -1);
	/* A group's redirections hang on an empty command of their own. */
	assert_int_equal(parse("{ a; } > out"), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.v[1].argc, 0);
	assert_string_equal(l.v[1].redirs[0].word, "out");
}

static void
test_shell_heredoc(void **state)
{
	(void)state;
	assert_int_equal(parse("cat <<EOF > f\nnpm publish\n$(id -u)\nEOF\necho after"), 0);
	assert_string_equal(words(0), "cat");
	assert_int_equal(l.v[0].redirs[0].kind, SHELL_REDIR_HEREDOC);
	assert_non_null(strstr(l.v[0].redirs[0].word, "npm publish\n"));
	assert_string_equal(l.v[0].redirs[1].word, "f");
	assert_true(find("id|-u") >= 0);		/* unquoted: expanded, so it runs */
	assert_true(find("echo|after") >= 0);
	assert_int_equal(find("npm|publish"), -1);	/* the body is data */
	assert_int_equal(parse("cat <<'EOF'\n$(id)\nEOF"), 0);
	assert_int_equal(find("id"), -1);		/* quoted: no expansion */
	assert_int_equal(parse("cat <<-\"E\" ; other\n\tbody\n\tE\nlast"), 0);
	assert_true(find("other") >= 0 && find("last") >= 0);
	assert_string_equal(l.v[0].redirs[0].word, "body\n");
	assert_int_equal(parse("a <<X; b <<Y\n1\nX\n2\nY\nc"), 0);
	assert_string_equal(l.v[0].redirs[0].word, "1\n");
	assert_string_equal(l.v[find("b")].redirs[0].word, "2\n");
	assert_true(find("c") >= 0);
	/* Cut off by the end of input: read to the end, as bash does. */
	assert_int_equal(parse("cat <<EOF\nabc"), 0);
	assert_string_equal(l.v[0].redirs[0].word, "abc\n");
}

static void
test_shell_bounds(void **state)
{
	char	*s;
	size_t	 i, n = 200000;

	(void)state;
	s = malloc(n + 16);
	assert_non_null(s);
	/* Nesting past the bound. */
	for (i = 0; i < 100; i++)
		memcpy(s + i * 2, "$(", 2);
	s[200] = '\0';
	assert_int_equal(parse(s), -1);
	assert_non_null(strstr(err, "nesting"));
	for (i = 0; i < 100; i++)
		s[i] = '(';
	s[100] = '\0';
	assert_int_equal(parse(s), -1);
	for (i = 0; i < 100; i++)
		s[i] = '`';
	s[100] = '\0';
	assert_int_equal(parse(s), 0);		/* pairs of empty backticks */
	/* Exactly at the bound is fine. */
	s[0] = '\0';
	for (i = 0; i < SHELL_MAX_DEPTH; i++)
		strcat(s, "$(");
	strcat(s, "x");
	for (i = 0; i < SHELL_MAX_DEPTH; i++)
		strcat(s, ")");
	assert_int_equal(parse(s), 0);
	/* The depth passed in counts. */
	shell_list_free(&l);
	assert_int_equal(shell_parse("(x)", 3, HOME, SHELL_MAX_DEPTH, &l, err, sizeof err), -1);
	/* Too many words. */
	for (i = 0; i < n; i += 2)
		memcpy(s + i, "a ", 2);
	s[n] = '\0';
	assert_int_equal(parse(s), -1);
	assert_non_null(strstr(err, "words"));
	/* Long adversarial runs stay linear: these must return quickly. */
	memset(s, '{', n);
	s[n] = '\0';
	assert_int_equal(parse(s), 0);
	memset(s, '\\', n);
	assert_int_equal(parse(s), 0);
	memset(s, '<', n);
	assert_int_equal(parse(s), -1);
	for (i = 0; i + 3 < n; i += 3)
		memcpy(s + i, "<<a", 3);
	s[i] = '\0';
	assert_int_equal(parse(s), -1);		/* too many pending heredocs */
	/* NUL bytes inside the length are just bytes. */
	shell_list_free(&l);
	assert_int_equal(shell_parse("a\0b c", 5, HOME, 0, &l, err, sizeof err), 0);
	free(s);
}

static int
teardown(void **state)
{
	(void)state;
	shell_list_free(&l);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shell_quotes),
		cmocka_unit_test(test_shell_expansion),
		cmocka_unit_test(test_shell_operators),
		cmocka_unit_test(test_shell_substitution),
		cmocka_unit_test(test_shell_redirections),
		cmocka_unit_test(test_shell_heredoc),
		cmocka_unit_test(test_shell_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}

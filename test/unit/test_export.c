/*
 * The proof-of-work renderer (daemon/export.c): script and markup payloads in every
 * field that comes from a run (prompt, report, diff, log, journal, approvals) come out
 * as inert escaped text; secrets come out masked; the file references nothing outside
 * itself; the transcript appears only when it is given.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "export.h"
#include "store.h"

#define ANT	"sk-ant-api03-PtYgjmUhBel31iEl2hpChYgCfrL1spNxnyVmihA_2O76UMFxFkM_R5Kjp1vRt-1fjORS_6ilI8ihN5KXSc7Tvo_hBKqFYAA"
#define GHP	"ghp_BkdfQ1y3GQsMpSscDlkrCaqx9vJupc94tnwl"
#define XSS1	"<script>alert(1)</script>"
#define XSS2	"\"><img src=x onerror=alert(1)>"
#define XSS3	"<a href=\"javascript:alert(1)\">click</a>"
#define XSS4	"'><link rel=stylesheet href=http://evil.example/x.css><iframe src=//evil.example>"
#define ALL	XSS1 " " XSS2 " " XSS3 " " XSS4 " " ANT " " GHP

static struct export_input
payload_input(void)
{
	static struct store_journal_entry	j;
	static struct store_approval		a;
	struct export_input			in;

	memset(&j, 0, sizeof j);
	j.kind = "floor_deny";
	j.ts = "2026-11-30T00:00:00.000Z";
	j.data = "{\"command\":\"" XSS1 " token " GHP "\"}";
	memset(&a, 0, sizeof a);
	a.tool = "Bash" XSS2;
	a.input = "{\"command\":\"curl -H 'x-api-key: " ANT "' " XSS3 "\"}";
	a.state = STORE_APPROVAL_DENIED;
	a.answered_by = "inbox" XSS1;
	a.message = "no " XSS4;
	memset(&in, 0, sizeof in);
	in.run_id = "20261130-000000-deadbeef";
	in.task = "task" XSS2;
	in.prompt = "Do it " ALL;
	in.engine = "claude" XSS1;
	in.permission_mode = "acceptEdits";
	in.status = "completed";
	in.branch = "clockwork/t/" XSS2;
	in.report = "{\"summary\":\"" XSS1 " " GHP "\",\"sandboxed\":true}";
	in.diffstat = " a.txt | 1 +\n" XSS2;
	in.diff = "+echo " ALL "\n";
	in.transcript = "log line " ALL "\n";
	in.sandboxed = 1;
	in.journal = &j;
	in.n_journal = 1;
	in.approvals = &a;
	in.n_approvals = 1;
	return in;
}

static void
assert_inert(const char *html)
{
	/* Tags and attributes, not words: the payloads stay visible as escaped text. */
	const char	*bad[] = { "<script", "<img", "<link", "<iframe", "<a ", "src=http",
	    "href=\"", "src=\"", "onerror=alert(1)>", "javascript:alert(1)\">",
	    "PtYgjmUhBel31iEl2hpChYgCfrL1", "BkdfQ1y3GQsMpSscDlkrCaqx9vJupc94tnwl" };

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (strcasestr(html, bad[i]) != NULL) {
			print_error("found \"%s\" at: %.120s\n", bad[i],
			    strcasestr(html, bad[i]));
			fail();
		}
}

static void
test_payloads_escaped_and_masked(void **state)
{
	struct export_input	 in = payload_input();
	char			*html = export_render(&in);

	(void)state;
	assert_non_null(html);
	assert_inert(html);
	/* The payloads are there, as text a reader can see. */
	assert_non_null(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	assert_non_null(strstr(html, "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"));
	assert_non_null(strstr(html, "javascript:alert(1)"));
	/* The secrets are masked, not dropped: the provider prefix says what was there. */
	assert_non_null(strstr(html, "sk-ant-"));
	assert_non_null(strstr(html, "Transcript"));
	assert_non_null(strstr(html, "log line"));
	free(html);
}

static void
test_self_contained(void **state)
{
	struct export_input	 in = payload_input();
	char			*html = export_render(&in), *p;
	int			 styles = 0;

	(void)state;
	assert_non_null(html);
	assert_non_null(strstr(html, "<meta http-equiv=\"Content-Security-Policy\" "
	    "content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"));
	/* URLs appear only as escaped text, never where markup would load them. */
	assert_null(strstr(html, "=\"http"));
	assert_null(strstr(html, "=\"//"));
	/* Every tag in the file is one of the template's own: no input opened a tag. */
	for (p = html; (p = strchr(p, '<')) != NULL; p++) {
		static const char *ok[] = { "!DOCTYPE html>", "html", "head>", "meta ",
		    "title>", "style>", "body>", "h1>", "h2>", "table>", "tr>", "th>",
		    "td>", "td class=", "pre>", "p>", "p class=", "br>", "small>",
		    "footer>" };
		const char	*t = p[1] == '/' ? p + 2 : p + 1;
		int		 found = 0;

		for (size_t i = 0; i < sizeof ok / sizeof ok[0] && !found; i++)
			found = strncmp(t, ok[i], strlen(ok[i])) == 0;
		if (!found) {
			print_error("unexpected tag: %.40s\n", p);
			fail();
		}
	}
	assert_null(strstr(html, "url("));
	assert_null(strstr(html, "@import"));
	for (p = html; (p = strstr(p, "<style")) != NULL; p++)
		styles++;
	assert_int_equal(styles, 1);
	free(html);
}

static void
test_transcript_only_when_asked(void **state)
{
	struct export_input	 in = payload_input();
	char			*html;

	(void)state;
	in.transcript = NULL;
	html = export_render(&in);
	assert_non_null(html);
	assert_null(strstr(html, "log line"));
	assert_non_null(strstr(html, "Not included in this export"));
	assert_inert(html);
	free(html);
}

static void
test_empty_run(void **state)
{
	struct export_input	 in;
	char			*html;

	(void)state;
	memset(&in, 0, sizeof in);
	in.sandboxed = 0;
	html = export_render(&in);
	assert_non_null(html);
	assert_non_null(strstr(html, "NO: the sandbox was turned off"));
	assert_non_null(strstr(html, "(no report)"));
	free(html);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_payloads_escaped_and_masked),
		cmocka_unit_test(test_self_contained),
		cmocka_unit_test(test_transcript_only_when_asked),
		cmocka_unit_test(test_empty_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

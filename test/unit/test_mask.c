/*
 * Secret masking (common/mask.c): a table of real-looking secrets that must be gone,
 * a table of look-alikes that must come out byte-identical, idempotence for every row,
 * secrets in context (JSON, shell, URLs, punctuation, NUL bytes), and multi-megabyte
 * and adversarial inputs that a quadratic scanner could not finish in time.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mask.h"

/* Fake key material, random but shaped like the real thing. */
#define ANT	"PtYgjmUhBel31iEl2hpChYgCfrL1spNxnyVmihA_2O76UMFxFkM_R5Kjp1vRt-1fjORS_6ilI8ihN5KXSc7Tvo_hBKqFYAA"
#define OAT	"Y_kv5ZJr3J1TWDtkwtDDb-xHKas1VOqg6YYZYn9ZhyiA4uoRgnatmUdjAWtGSU8po-799NksnRH9ucAUsdMlHUvTCQCyEAA"
#define PROJ	"ZDz_TddJ8HyS5SUkCnD8zRA9a9SkpXz9w3QlY7Zkuvqdt7s8Stqcbnr3yBdGBLEPH1qhT61qtcT3BlbkFJ4xatws8phP9nhFyJfm5di4PzJ59FHz5r1pY4OjE2jBMptUsGr7CmY-uCu3ZR1zTOlUcR64cXQL"
#define SVC	"ioDnkHIfxIq2HZt_PlJhx2jIclHkCiHp6bR1IqfEouHgxzNNAL5wIScGebcy"
#define LEGACY	"GEp7CgQ0PBQFI14zGtSnT3BlbkFJovm14TUOizwd1iaeOV4q"
#define GH1	"BkdfQ1y3GQsMpSscDlkrCaqx9vJupc94tnwl"
#define GH2	"avyfErGPmpGXafq0fjzLczbttOofL9H2WjQ5"
#define GH3	"TY4MyWuUFjsUNPjc01T5GOBUSZGi6HWGK10Z"
#define GH4	"b0RLZ5TR9SPofbciOx9gy1CJdObOIRpFqaDZ"
#define GH5	"eV7G5IfQHeVVEqZe2qpUWnoVPDF2yeE6RsXc"
#define PAT	"NOPmeMjvqPVStNKiaEdFrR_gSnRFsTHsDDDXh5Jmtf7EbsDe0G9Cryn687neLfjVHq8xiM0OGr4hTxoF54"
#define AWSSEC	"Akg05rK/gqv81RKMGHZEM9YpvujA+C5Q52ryFlwR"
#define SLACK	"201171708835-5206144313210-xqZKm4bV3AyAVHnyrvWdFrK9"
#define TG	"486703003:AAqBlIFXZ53Ncqe28_ajY75FnCttn6kfaqD"
#define JWT	"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eMqG3omjMyXHCabM6JOF8EFd0Nhcy-1kGD2VD-eR.1UYzaLiA-zNyD7CHLn-xC_1hsYgBds1ghxY5OokvQyx"
#define HOOK	"T73CTYXV2/BKGAFRFW0H9/9WnywX0t0ZBfdTEmxI6CmuxV"
#define NPM	"5EbOApZOXzcycDeZ6dqmVe5Mvxrv99NcqVTS"
#define GLPAT	"OJMaidDn87XG3_q_xbMt"
#define PEMBODY	"MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi6ZTjwMmb2DyEuRAcfBeJDYkzT\n" \
		"q4zV1Pj8HYMdkI0Yw8Rz4OAL0Yp1EefF0mCcGxd3VGDLTC8nQBvG3Ay4Cr0hQs7G\n" \
		"7Vqt9Zb0Xc4e2d6YQEEfzkNzmyQ7b3lG3pQ1d2fT0dGf6lYjVhZpD5w==\n"

struct row {
	const char	*in;
	const char	*want;
	const char	*gone;	/* key material that must not survive */
};

static const struct row secrets[] = {
	/* Anthropic */
	{ "key is sk-ant-api03-" ANT ".", "key is sk-ant-[MASKED].", ANT },
	{ "{\"auth\":\"sk-ant-oat01-" OAT "\"}", "{\"auth\":\"sk-ant-[MASKED]\"}", OAT },
	{ "curl -H \"x-api-key: sk-ant-admin01-" ANT "\" https://api.anthropic.com",
	  "curl -H \"x-api-key: [MASKED]\" https://api.anthropic.com", ANT },
	{ "ANTHROPIC_API_KEY=sk-ant-api03-" ANT " claude -p hi",
	  "ANTHROPIC_API_KEY=[MASKED] claude -p hi", ANT },
	/* OpenAI */
	{ "using sk-proj-" PROJ " now", "using sk-proj-[MASKED] now", PROJ },
	{ "(sk-svcacct-" SVC ")", "(sk-svcacct-[MASKED])", SVC },
	{ "admin: sk-admin-" SVC ";", "admin: sk-admin-[MASKED];", SVC },
	{ "old key 'sk-" LEGACY "'", "old key 'sk-[MASKED]'", LEGACY },
	/* GitHub */
	{ "git clone https://ghp_" GH1 "@github.com/o/r.git",
	  "git clone https://ghp_[MASKED]@github.com/o/r.git", GH1 },
	{ "gho_" GH2, "gho_[MASKED]", GH2 },
	{ "[ghu_" GH3 "]", "[ghu_[MASKED]]", GH3 },
	{ "https://x-access-token:ghs_" GH4 "@github.com/o/r",
	  "https://x-access-token:[MASKED]@github.com/o/r", GH4 },
	{ "refresh=ghr_" GH5 "&grant=1", "refresh=ghr_[MASKED]&grant=1", GH5 },
	{ "gh auth login --with-token <<< github_pat_" PAT,
	  "gh auth login --with-token <<< github_pat_[MASKED]", PAT },
	/* AWS */
	{ "id AKIA7ZBKA74ZTJ2WYUHV, region", "id AKIA[MASKED], region", "7ZBKA74ZTJ2WYUHV" },
	{ "<ASIAAUVZHMASQXEZYEX3>", "<ASIA[MASKED]>", "AUVZHMASQXEZYEX3" },
	{ "role AROARDRGDSJPR3UMX3BZ", "role AROA[MASKED]", "RDRGDSJPR3UMX3BZ" },
	{ "aws_secret_access_key = " AWSSEC "\n", "aws_secret_access_key = [MASKED:aws-secret]\n", AWSSEC },
	{ "export AWS_SECRET_ACCESS_KEY=" AWSSEC, "export AWS_SECRET_ACCESS_KEY=[MASKED:aws-secret]", AWSSEC },
	{ "{\"SecretAccessKey\": \"" AWSSEC "\"}", "{\"SecretAccessKey\": \"[MASKED:aws-secret]\"}", AWSSEC },
	{ "  secret_access_key: '" AWSSEC "'", "  secret_access_key: '[MASKED:aws-secret]'", AWSSEC },
	{ "\"AccessKeyId\": \"ASIAAUVZHMASQXEZYEX3\"", "\"AccessKeyId\": \"[MASKED]\"", "AUVZHMASQXEZYEX3" },
	/* Slack */
	{ "slack xoxb-" SLACK " ok", "slack xoxb-[MASKED] ok", SLACK },
	{ "\"xoxp-" SLACK "\"", "\"xoxp-[MASKED]\"", SLACK },
	{ "xapp-1-A0123ABCDEF-" SLACK, "xapp-[MASKED]", SLACK },
	{ "xoxs-" SLACK, "xoxs-[MASKED]", SLACK },
	{ "post to https://hooks.slack.com/services/" HOOK " done",
	  "post to https://hooks.slack.com/services/[MASKED] done", HOOK },
	/* Telegram */
	{ "bot token " TG ".", "bot token [MASKED:telegram-token].", "AAqBlIFXZ53Ncqe28" },
	{ "GET https://api.telegram.org/bot" TG "/getUpdates",
	  "GET https://api.telegram.org/bot[MASKED:telegram-token]/getUpdates", "AAqBlIFXZ53Ncqe28" },
	/* Authorization headers and bearer tokens */
	{ "curl -H 'Authorization: Bearer " JWT "' https://x",
	  "curl -H 'Authorization: Bearer [MASKED]' https://x", "eMqG3omjMyXHCabM6JOF8" },
	{ "Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==\r\n",
	  "Authorization: Basic [MASKED]\r\n", "dXNlcjpwYXNzd29yZDEyMw" },
	{ "sent Bearer " JWT " to api", "sent Bearer [MASKED] to api", "eMqG3omjMyXHCabM6JOF8" },
	{ "{\"headers\":{\"Authorization\":\"Bearer abc123DEF456ghi789\"}}",
	  "{\"headers\":{\"Authorization\":\"Bearer [MASKED]\"}}", "abc123DEF456ghi789" },
	{ "{\"cmd\":\"curl -H \\\"Authorization: token ghp_" GH1 "\\\"\"}",
	  "{\"cmd\":\"curl -H \\\"Authorization: token [MASKED]\\\"\"}", GH1 },
	{ "Proxy-Authorization: s3cr3tcred", "Proxy-Authorization: [MASKED]", "s3cr3tcred" },
	/* PEM private keys */
	{ "-----BEGIN RSA PRIVATE KEY-----\n" PEMBODY "-----END RSA PRIVATE KEY-----\nafter",
	  "[MASKED:private-key]\nafter", "MIIEpAIBAAKCAQEA" },
	{ "x\n-----BEGIN OPENSSH PRIVATE KEY-----\n" PEMBODY "-----END OPENSSH PRIVATE KEY-----",
	  "x\n[MASKED:private-key]", "q4zV1Pj8HYMdkI0Y" },
	{ "-----BEGIN EC PRIVATE KEY-----\n" PEMBODY "-----END EC PRIVATE KEY-----",
	  "[MASKED:private-key]", "7Vqt9Zb0Xc4e2d6Y" },
	{ "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" PEMBODY "-----END ENCRYPTED PRIVATE KEY-----",
	  "[MASKED:private-key]", "MIIEpAIBAAKCAQEA" },
	{ "-----BEGIN DSA PRIVATE KEY-----\n" PEMBODY "-----END DSA PRIVATE KEY-----",
	  "[MASKED:private-key]", "MIIEpAIBAAKCAQEA" },
	{ "cat id_rsa\n-----BEGIN PRIVATE KEY-----\n" PEMBODY "MIIEvgIBADANBg",
	  "cat id_rsa\n[MASKED:private-key]", "MIIEvgIBADANBg" },
	{ "{\"type\":\"service_account\",\"private_key\":\"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkq\\n-----END PRIVATE KEY-----\\n\",\"x\":1}",
	  "{\"type\":\"service_account\",\"private_key\":\"[MASKED:private-key]\\n\",\"x\":1}", "MIIEvQIBADANBgkq" },
	/* Assignments */
	{ "API_KEY=abc123def456", "API_KEY=[MASKED]", "abc123def456" },
	{ "export GITHUB_TOKEN=\"ghp_" GH1 "\"", "export GITHUB_TOKEN=\"[MASKED]\"", GH1 },
	{ "DB_PASSWORD: hunter2-Correct\n", "DB_PASSWORD: [MASKED]\n", "hunter2" },
	{ "{\"client_id\":\"abc\",\"client_secret\": \"Zq9-xx_77Lp\"}",
	  "{\"client_id\":\"abc\",\"client_secret\": \"[MASKED]\"}", "Zq9-xx_77Lp" },
	{ "mysql --password=s3cr3t! db", "mysql --password=[MASKED] db", "s3cr3t!" },
	{ "npm publish --token abc123xyz", "npm publish --token [MASKED]", "abc123xyz" },
	{ "psql postgres://app:Sup3rS3cret@db:5432/app",
	  "psql postgres://app:[MASKED]@db:5432/app", "Sup3rS3cret" },
	{ "GET /cb?code=1&access_token=qwe123RTY&x=1", "GET /cb?code=1&access_token=[MASKED]&x=1", "qwe123RTY" },
	{ "const cfg = { apiKey: 'abcd1234efgh' };", "const cfg = { apiKey: '[MASKED]' };", "abcd1234efgh" },
	{ "MYSQL_PWD=tops3cret mysql", "MYSQL_PWD=[MASKED] mysql", "tops3cret" },
	{ "'password' => 'p4ssw0rd',", "'password' => '[MASKED]',", "p4ssw0rd" },
	{ "(SESSION_SECRET=k3y;)", "(SESSION_SECRET=[MASKED];)", "k3y" },
	{ "db.passwd=letmein", "db.passwd=[MASKED]", "letmein" },
	{ "KEY=abc-----BEGIN PRIVATE KEY-----\n" PEMBODY "-----END PRIVATE KEY-----",
	  "KEY=[MASKED][MASKED:private-key]", "MIIEpAIBAAKCAQEA" },
	{ "x-ghp_" GH1 "-TOKEN=true", "x-ghp_[MASKED]-TOKEN=true", GH1 },
	{ "headers = {\"Authorization\": f\"Bearer abc123DEF456\"}",
	  "headers = {\"Authorization\": f\"Bearer [MASKED]\"}", "abc123DEF456" },
	{ "DB_PASSWORD=correct.horse.battery9", "DB_PASSWORD=[MASKED]", "horse" },
	{ "password: correct.horse.battery9", "password: [MASKED]", "horse" },
	{ "PASSWORD=password ./migrate", "PASSWORD=[MASKED] ./migrate", "=password" },
	{ "ghp_" GH1 "_TOKEN=abc", "ghp_[MASKED]_TOKEN=[MASKED]", GH1 },
	/* Other public-prefix tokens */
	{ "//registry.npmjs.org/:_authToken=npm_" NPM, "//registry.npmjs.org/:_authToken=[MASKED]", NPM },
	{ "npm_" NPM, "npm_[MASKED]", NPM },
	{ "glpat-" GLPAT " ", "glpat-[MASKED] ", GLPAT },
};

static const char *const lookalikes[] = {
	"task-sk-list is done",
	"use a ghp_ token here",
	"ghp_abc123",
	"THEQUICKBROWNFOXJUMP over",
	"AKIA alone, and AKIA7ZBKA74ZTJ2WYUHVX too long",
	"API_KEY=",
	"API_KEY=\n",
	"echo $API_KEY",
	"export GITHUB_TOKEN",
	"commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
	"id: 123e4567-e89b-12d3-a456-426614174000",
	"\"data\": \"SGVsbG8sIHdvcmxkISBUaGlzIGlzIGp1c3QgdGV4dC4=\"",
	"Please enter your password to continue.",
	"the Bearer of bad news",
	"Bearer token authentication is described in RFC 6750",
	"{\"input_tokens\": 1234, \"output_tokens\": 56, \"max_tokens\": 4096}",
	"json.dumps(x, sort_keys=True)",
	"API_KEY=<your-api-key>",
	"API_KEY=${API_KEY}",
	"env: PWD=/home/user/project OLDPWD=/home/user",
	"if password_hash == stored:",
	"https://github.com/org/repo.git",
	"git@github.com:org/repo.git",
	"http://localhost:8080/api?x=1",
	"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
	"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYI\n-----END PUBLIC KEY-----",
	"xoxb-your-token-here",
	"12:34:56 build finished",
	"1234567890:short",
	"sk-proj-readme-and-docs",
	"def get_api_key(self) -> str:",
	"def f(api_key: str, token: Optional[str] = None):",
	"token = get_token()",
	"api_key = os.environ[\"API_KEY\"]",
	"secretary: Jane",
	"keyboard: us",
	"MONKEYS=3",
	"password123 is a terrible password",
	"\"token_type\": \"Bearer\"",
	"Authorization: Bearer",
	"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	"token: ${{ secrets.GITHUB_TOKEN }}",
	"primary_key=True",
	"keys: [a, b]",
	"GITHUB_TOKEN: \"\"",
	"TOKEN=$(cat ~/.token)",
	"https://hooks.slack.com/services/",
	"sk-ant-api03-short",
	"ssh://git@github.com/org/repo",
	"already API_KEY=[MASKED] and sk-ant-[MASKED] and [MASKED:private-key]",
	"json={\"user\": username, \"password\": password}",
	"    self.api_key = api_key",
	"const secret = process.env.JWT_SECRET;",
	"client = Client(api_key=api_key, timeout=30)",
};

static char *
mask_n(const char *in, size_t len, size_t *outlen)
{
	char	*out = mask_secrets_buf(in, len, outlen);

	assert_non_null(out);
	return out;
}

static void
assert_idempotent(const char *once, size_t len)
{
	size_t	 len2;
	char	*twice = mask_n(once, len, &len2);

	if (len2 != len || memcmp(once, twice, len) != 0)
		fail_msg("not idempotent:\n  once:  %s\n  twice: %s", once, twice);
	free(twice);
}

static void
test_mask_secret_table(void **state)
{
	size_t	 i, n = sizeof secrets / sizeof secrets[0];
	char	*out;

	(void)state;
	assert_true(n >= 40);
	for (i = 0; i < n; i++) {
		out = mask_secrets(secrets[i].in);
		assert_non_null(out);
		if (strcmp(out, secrets[i].want) != 0)
			fail_msg("row %zu:\n  in:   %s\n  got:  %s\n  want: %s", i,
			    secrets[i].in, out, secrets[i].want);
		assert_null(strstr(out, secrets[i].gone));
		assert_non_null(strstr(out, "[MASKED"));
		assert_idempotent(out, strlen(out));
		free(out);
	}
}

static void
test_mask_lookalikes(void **state)
{
	size_t	 i, n = sizeof lookalikes / sizeof lookalikes[0];
	char	*out;

	(void)state;
	assert_true(n >= 25);
	for (i = 0; i < n; i++) {
		out = mask_secrets(lookalikes[i]);
		assert_non_null(out);
		if (strcmp(out, lookalikes[i]) != 0)
			fail_msg("look-alike %zu changed:\n  in:  %s\n  got: %s", i,
			    lookalikes[i], out);
		assert_idempotent(out, strlen(out));
		free(out);
	}
}

/* Markers must never be re-matched, alone or in any of the contexts they land in. */
static void
test_mask_markers_stable(void **state)
{
	static const char *const markers[] = { "[MASKED]", "[MASKED:aws-secret]",
	    "[MASKED:private-key]", "[MASKED:telegram-token]", "sk-ant-[MASKED]",
	    "sk-proj-[MASKED]", "sk-[MASKED]", "ghp_[MASKED]", "github_pat_[MASKED]",
	    "AKIA[MASKED]", "xoxb-[MASKED]", "Bearer [MASKED]",
	    "Authorization: Bearer [MASKED]", "API_KEY=[MASKED]", "\"token\": \"[MASKED]\"",
	    "https://u:[MASKED]@h", "https://hooks.slack.com/services/[MASKED]",
	    "bot[MASKED:telegram-token]/x", "--password [MASKED]" };
	size_t	 i;
	char	*out;

	(void)state;
	for (i = 0; i < sizeof markers / sizeof markers[0]; i++) {
		out = mask_secrets(markers[i]);
		assert_non_null(out);
		assert_string_equal(out, markers[i]);
		free(out);
	}
}

/* No marker keeps more than the public prefix: nothing of the body survives. */
static void
test_mask_prefix_only(void **state)
{
	char	*out;

	(void)state;
	out = mask_secrets("sk-ant-api03-" ANT);
	assert_string_equal(out, "sk-ant-[MASKED]");
	free(out);
	out = mask_secrets("ghp_" GH1);
	assert_string_equal(out, "ghp_[MASKED]");
	free(out);
	out = mask_secrets(TG);
	assert_null(strstr(out, "486703003"));
	free(out);
}

static void
test_mask_in_context(void **state)
{
	const char	*json = "{\"type\":\"tool_use\",\"input\":{\"command\":"
	    "\"OPENAI_API_KEY=sk-proj-" PROJ " python run.py && curl -H "
	    "\\\"Authorization: Bearer " JWT "\\\" https://hooks.slack.com/services/" HOOK
	    "\"},\"note\":\"AKIA7ZBKA74ZTJ2WYUHV;xoxb-" SLACK "\"}";
	const char	*want = "{\"type\":\"tool_use\",\"input\":{\"command\":"
	    "\"OPENAI_API_KEY=[MASKED] python run.py && curl -H "
	    "\\\"Authorization: Bearer [MASKED]\\\" https://hooks.slack.com/services/[MASKED]"
	    "\"},\"note\":\"AKIA[MASKED];xoxb-[MASKED]\"}";
	const char	*punct = "(ghp_" GH1 "),{ghp_" GH2 "};'sk-ant-api03-" ANT "'!";
	const char	*pwant = "(ghp_[MASKED]),{ghp_[MASKED]};'sk-ant-[MASKED]'!";
	char		*out;

	(void)state;
	out = mask_secrets(json);
	assert_string_equal(out, want);
	assert_idempotent(out, strlen(out));
	free(out);
	out = mask_secrets(punct);
	assert_string_equal(out, pwant);
	free(out);
}

/* NUL bytes neither end the scan nor hide a secret; the length is exact. */
static void
test_mask_nul_bytes(void **state)
{
	static const char	in[] = "a\0ghp_" GH1 "\0API_KEY=abc123\0\0Bearer " JWT "\0z";
	static const char	want[] = "a\0ghp_[MASKED]\0API_KEY=[MASKED]\0\0Bearer [MASKED]\0z";
	size_t			 outlen;
	char			*out;

	(void)state;
	out = mask_n(in, sizeof in - 1, &outlen);
	assert_int_equal(outlen, sizeof want - 1);
	assert_memory_equal(out, want, outlen);
	assert_int_equal(out[outlen], '\0');
	assert_idempotent(out, outlen);
	free(out);
	out = mask_n("", 0, &outlen);
	assert_int_equal(outlen, 0);
	free(out);
}

/*
 * Inputs the fuzzer found not idempotent in earlier versions: a value left in place
 * next to a key block, and tokens hidden in an assignment's name.
 */
static void
test_mask_fuzz_regressions(void **state)
{
	static const struct {
		const char	*in;
		size_t		 len;
	} cases[] = {
#define C(s) { s, sizeof s - 1 }
		C("KEY= $AP-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIB\n-----END RSA PRIVATE KEY-----\n"),
		C("b-xoxb-21708835---password=Bearer //21708835---password=Bearer //axqZKp7088"),
		C("[SKED:-xapp-Authorization:\x01\x00\x002 &&&app-Authorization: &&&&\x00"),
		C("KEY=$A KEY=[MASKED]x KEY=abc[MASKED] TOKEN-ghp_" GH1 "-x=abc"),
#undef C
	};
	size_t	 i, outlen;
	char	*out;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		out = mask_n(cases[i].in, cases[i].len, &outlen);
		assert_idempotent(out, outlen);
		free(out);
	}
	out = mask_secrets("KEY= $AP-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIB\n");
	assert_string_equal(out, "KEY= $AP[MASKED:private-key]");
	free(out);
	out = mask_secrets("-xapp-Authorization: x1");
	assert_string_equal(out, "-xapp-[MASKED]: [MASKED]");
	free(out);
}

/* A 4 MiB log with a secret every few lines: every one masked, the rest intact. */
static void
test_mask_large_log(void **state)
{
	static const char *const lines[] = {
		"2026-11-30T00:00:00Z INFO run 42 started in /home/u/.clockwork/worktrees/t/42\n",
		"{\"type\":\"assistant\",\"message\":{\"usage\":{\"input_tokens\":12,\"output_tokens\":7}}}\n",
		"$ git log --oneline | head -3\n9fceb02 fix the parser\n",
		"export GITHUB_TOKEN=ghp_" GH1 "\n",
		"error: could not read Username for 'https://github.com': terminal prompts disabled\n",
		"curl -s -H 'Authorization: Bearer " JWT "' https://api.example.com/v1\n",
	};
	size_t	 cap = 4u << 20, len = 0, k = 0, nsecret = 0, outlen, n;
	char	*in, *out, *p;

	(void)state;
	in = malloc(cap);
	assert_non_null(in);
	while (1) {
		n = strlen(lines[k % 6]);
		if (len + n > cap)
			break;
		memcpy(in + len, lines[k % 6], n);
		len += n;
		if (k % 6 == 3 || k % 6 == 5)
			nsecret++;
		k++;
	}
	out = mask_n(in, len, &outlen);
	assert_true(outlen < len);
	for (n = 0, p = out; (p = memmem(p, out + outlen - p, "[MASKED]", 8)) != NULL; p++)
		n++;
	assert_int_equal(n, nsecret);
	assert_null(memmem(out, outlen, GH1, strlen(GH1)));
	assert_null(memmem(out, outlen, "eMqG3omjMyX", 11));
	assert_non_null(memmem(out, outlen, "\"input_tokens\":12", 17));
	assert_idempotent(out, outlen);
	free(in);
	free(out);
}

/*
 * Inputs built to make a backtracking or rescanning matcher quadratic: long runs of
 * almost-matching prefixes. No timing here (speed is bench_mask's job): a quadratic
 * scanner would need hours for these 26 MiB and ctest's timeout fails the test.
 */
static void
test_mask_adversarial(void **state)
{
	static const char *const units[] = { "sk-ant-a", "xoxb-a-", "github_pat_a",
	    "-----BEGIN ", "Bearer ", "KEY=", "a=", "://a", "u:", "123456789:",
	    "AKIA", "\"token\":\"", "--token ", "[MASKED", "-----BEGIN PRIVATE KEY-----",
	    "aaaa", "\\\"", "sk-", "a-TOKEN=b ", "KEY=\"${", "Authorization: Bearer ",
	    "x-ghp_", "bot1234567890:", "KEY=a[", "KEY=[MASKED]", "\"token\": \"[MASKED]" };
	size_t	 len = 1u << 20, u, i, n, outlen;
	char	*in, *out;

	(void)state;
	in = malloc(len);
	assert_non_null(in);
	for (u = 0; u < sizeof units / sizeof units[0]; u++) {
		n = strlen(units[u]);
		for (i = 0; i < len; i++)
			in[i] = units[u][i % n];
		out = mask_n(in, len, &outlen);
		assert_idempotent(out, outlen);
		assert_true(outlen <= 3 * len + 64);
		free(out);
	}
	free(in);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mask_secret_table),
		cmocka_unit_test(test_mask_lookalikes),
		cmocka_unit_test(test_mask_markers_stable),
		cmocka_unit_test(test_mask_prefix_only),
		cmocka_unit_test(test_mask_in_context),
		cmocka_unit_test(test_mask_nul_bytes),
		cmocka_unit_test(test_mask_fuzz_regressions),
		cmocka_unit_test(test_mask_large_log),
		cmocka_unit_test(test_mask_adversarial),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

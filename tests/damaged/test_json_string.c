/* test_json_string.c: the JSON string rule of the tools and the renderer (jitmap_json_string,
 * used through tools/json.h) on every kind of byte a JIT's symbol names or a core's paths may
 * hold: each string comes out as ASCII-only JSON whose value is the input with each byte that
 * begins no well-formed UTF-8 character replaced by U+FFFD. The table pins the rule at the
 * edges of Table 3-7 of the Unicode standard. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/json.h"

static int failed;

#define CHECK(cond, ...)                                                                    \
	do {                                                                                \
		if (!(cond)) {                                                              \
			failed++;                                                           \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                \
			fprintf(stderr, __VA_ARGS__);                                       \
			fputc('\n', stderr);                                                \
		}                                                                           \
	} while (0)

static const struct {
	const char *in, *out;
} strings[] = {
	{"plain", "\"plain\""},
	{"", "\"\""},
	{"q\"b\\", "\"q\\\"b\\\\\""},
	{"\x01\n\x1f\x7f", "\"\\u0001\\n\\u001f\\u007f\""},
	{"caf\xc3\xa9", "\"caf\\u00e9\""},                       /* UTF-8, escaped */
	{"f\xff" "n", "\"f\\ufffdn\""},                           /* one byte, one U+FFFD */
	{"\xe2\x82" "x", "\"\\ufffd\\ufffdx\""},                 /* a cut sequence: per byte */
	{"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},          /* a surrogate */
	{"\xf0\x9f\x98\x80!", "\"\\ud83d\\ude00!\""},             /* U+1F600, a surrogate pair */
	/* Table 3-7's edges */
	{"\xc2\x80", "\"\\u0080\""},                              /* the first two-byte character */
	{"\xdf\xbf", "\"\\u07ff\""},
	{"\xc0\x80", "\"\\ufffd\\ufffd\""},                      /* overlong NUL */
	{"\xc1\xbf", "\"\\ufffd\\ufffd\""},                      /* overlong */
	{"\xc2", "\"\\ufffd\""},                                  /* cut short by the NUL */
	{"\xc2\x41", "\"\\ufffdA\""},                             /* not a continuation */
	{"\xe0\xa0\x80", "\"\\u0800\""},
	{"\xe0\x9f\xbf", "\"\\ufffd\\ufffd\\ufffd\""},          /* overlong U+07FF */
	{"\xed\x9f\xbf", "\"\\ud7ff\""},
	{"\xef\xbf\xbd", "\"\\ufffd\""},                          /* U+FFFD itself */
	{"\xf0\x90\x80\x80", "\"\\ud800\\udc00\""},               /* U+10000 */
	{"\xf0\x8f\xbf\xbf", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""}, /* overlong */
	{"\xf4\x8f\xbf\xbf", "\"\\udbff\\udfff\""},               /* U+10FFFF */
	{"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""}, /* above U+10FFFF */
	{"\xf5\x80\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""},
	{"\x80", "\"\\ufffd\""},                                  /* a stray continuation byte */
	{"\xf0\x90\x80", "\"\\ufffd\\ufffd\\ufffd\""},          /* cut short by the NUL */
};

static char *render(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		abort();
	json_string(f, s);
	fclose(f);
	return buf;
}

int main(void)
{
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
		char *got = render(strings[i].in);
		CHECK(!strcmp(got, strings[i].out), "case %zu: %s, want %s", i, got, strings[i].out);
		free(got);
	}
	/* Every byte value, alone and before every other: printable ASCII out, quoted, with each
	 * backslash starting an escape JSON knows; and a NULL string is "". */
	for (unsigned a = 1; a < 256; a++)
		for (unsigned b = 0; b < 256; b++) {
			const char in[3] = {(char)a, (char)b, 0};
			char *got = render(in);
			const size_t n = strlen(got);
			CHECK(n >= 2 && got[0] == '"' && got[n - 1] == '"', "bytes %02x %02x: %s", a, b,
			      got);
			for (size_t k = 1; k + 1 < n; k++) {
				const unsigned char c = (unsigned char)got[k];
				CHECK(c >= 0x20 && c < 0x7f, "bytes %02x %02x: %s", a, b, got);
				if (c == '\\') {
					CHECK(k + 2 < n && strchr("\"\\nrtbfu", got[k + 1]),
					      "bytes %02x %02x: %s", a, b, got);
					k++;
				} else {
					CHECK(c != '"', "bytes %02x %02x: %s", a, b, got);
				}
			}
			free(got);
		}
	char *null = render(NULL);
	CHECK(!strcmp(null, "\"\""), "NULL: %s", null);
	free(null);
	printf("json_string: %s\n", failed ? "FAILED" : "ok");
	return failed ? 1 : 0;
}

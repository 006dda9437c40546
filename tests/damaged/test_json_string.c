/* test_json_string.c: the tools' JSON string rule (tools/json.h) on every kind of byte a JIT's
 * symbol names or a core's paths may hold: each string must come out as valid JSON whose
 * value is the input with each byte that begins no well-formed UTF-8 character replaced by
 * U+FFFD. The table pins json_utf8_len at the edges of Table 3-7 of the Unicode standard. */
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
	const char *bytes;
	size_t len; /* json_utf8_len of the first byte */
} lengths[] = {
	{"a", 1},
	{"\x7f", 1},
	{"\xc2\x80", 2},             /* U+0080, the first two-byte character */
	{"\xdf\xbf", 2},             /* U+07FF */
	{"\xc0\x80", 0},             /* overlong NUL */
	{"\xc1\xbf", 0},             /* overlong */
	{"\xc2", 0},                 /* cut short (the NUL) */
	{"\xc2\x41", 0},             /* not a continuation */
	{"\xe0\xa0\x80", 3},         /* U+0800 */
	{"\xe0\x9f\xbf", 0},         /* overlong U+07FF */
	{"\xed\x9f\xbf", 3},         /* U+D7FF */
	{"\xed\xa0\x80", 0},         /* U+D800, a surrogate */
	{"\xef\xbf\xbd", 3},         /* U+FFFD */
	{"\xe2\x82", 0},             /* cut short */
	{"\xf0\x90\x80\x80", 4},     /* U+10000 */
	{"\xf0\x8f\xbf\xbf", 0},     /* overlong */
	{"\xf4\x8f\xbf\xbf", 4},     /* U+10FFFF */
	{"\xf4\x90\x80\x80", 0},     /* above U+10FFFF */
	{"\xf5\x80\x80\x80", 0},
	{"\xff", 0},
	{"\x80", 0},                 /* a stray continuation byte */
	{"\xf0\x90\x80", 0},         /* cut short by the NUL */
};

static const struct {
	const char *in, *out;
} strings[] = {
	{"plain", "\"plain\""},
	{"", "\"\""},
	{"q\"b\\", "\"q\\\"b\\\\\""},
	{"\x01\n\x1f", "\"\\u0001\\u000a\\u001f\""},
	{"caf\xc3\xa9", "\"caf\xc3\xa9\""},                 /* UTF-8 passes through */
	{"f\xff" "n", "\"f\\ufffdn\""},                     /* one byte, one U+FFFD */
	{"\xe2\x82" "x", "\"\\ufffd\\ufffdx\""},           /* a cut sequence: per byte */
	{"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},    /* a surrogate */
	{"\xf0\x9f\x98\x80!", "\"\xf0\x9f\x98\x80!\""},     /* U+1F600 */
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
	for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		const size_t n = json_utf8_len((const unsigned char *)lengths[i].bytes);
		CHECK(n == lengths[i].len, "json_utf8_len of case %zu is %zu, want %zu", i, n,
		      lengths[i].len);
	}
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
		char *got = render(strings[i].in);
		CHECK(!strcmp(got, strings[i].out), "case %zu: %s, want %s", i, got, strings[i].out);
		free(got);
	}
	/* Every byte value, alone and after a lead byte: the output is ASCII or well-formed
	 * UTF-8, and a NULL string is "". */
	for (unsigned a = 1; a < 256; a++)
		for (unsigned b = 0; b < 256; b++) {
			const char in[3] = {(char)a, (char)b, 0};
			char *got = render(in);
			for (const unsigned char *p = (const unsigned char *)got; *p;) {
				const size_t n = json_utf8_len(p);
				CHECK(n && *p >= 0x20, "bytes %02x %02x: %s", a, b, got);
				p += n ? n : 1;
			}
			free(got);
		}
	char *null = render(NULL);
	CHECK(!strcmp(null, "\"\""), "NULL: %s", null);
	free(null);
	printf("json_string: %s\n", failed ? "FAILED" : "ok");
	return failed ? 1 : 0;
}

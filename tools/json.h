/* json.h: the JSON strings the tools write (jitmap-dump, jitmap-stack).
 *
 * Their strings come from untrusted bytes (a JIT's symbol names, paths in a core): JSON must
 * stay valid whatever they hold. The rule is json_utf8_len's: a well-formed UTF-8 character
 * passes through, any other byte becomes U+FFFD (one per byte), quotes, backslashes and
 * control characters are escaped. */
#ifndef JITMAP_TOOLS_JSON_H
#define JITMAP_TOOLS_JSON_H

#include <stddef.h>
#include <stdio.h>

/* How many bytes at `s` form one well-formed UTF-8 character (RFC 3629, Table 3-7 of the
 * Unicode standard: no overlong forms, no surrogates, nothing above U+10FFFF): 1 to 4, or 0
 * when the byte at `s` begins none (a stray continuation byte, a sequence cut short, by a NUL
 * too). Reads no byte past a NUL. */
static inline size_t json_utf8_len(const unsigned char *s)
{
	const unsigned char c = s[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf; /* the range of the second byte */
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return 0; /* 0x80-0xc1 (continuations, overlong leads), 0xf5-0xff */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* `s` as a JSON string (json_utf8_len's rule); NULL as "". */
static inline void json_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	fputc('"', out);
	while (*p) {
		const size_t n = json_utf8_len(p);
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(out, "\\u%04x", *p);
		else if (n)
			fwrite(p, 1, n, out);
		else
			fputs("\\ufffd", out);
		p += n ? n : 1;
	}
	fputc('"', out);
}

static inline void json_string_or_null(FILE *out, const char *s)
{
	if (s)
		json_string(out, s);
	else
		fputs("null", out);
}

#endif /* JITMAP_TOOLS_JSON_H */

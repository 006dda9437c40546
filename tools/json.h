/* json.h: the JSON strings the tools write (jitmap-dump, jitmap-stack).
 *
 * Their strings come from untrusted bytes (a JIT's symbol names, paths in a core): JSON must
 * stay valid whatever they hold. The rule is the library's, the one its renderer uses for the
 * objects of `info stackmap -json` (jitmap_json_string, jitmap/frame.h): ASCII out, each byte
 * that begins no well-formed UTF-8 character replaced by U+FFFD. */
#ifndef JITMAP_TOOLS_JSON_H
#define JITMAP_TOOLS_JSON_H

#include <stdio.h>
#include <stdlib.h>

#include <jitmap/frame.h>

/* `s` as a JSON string; NULL as "". */
static inline void json_string(FILE *out, const char *s)
{
	char small[256];
	const size_t n = jitmap_json_string(s ? s : "", small, sizeof(small));
	if (n < sizeof(small)) {
		fputs(small, out);
		return;
	}
	char *big = malloc(n + 1);
	if (big && jitmap_json_string(s, big, n + 1) == n)
		fputs(big, out);
	else
		fputs("\"\"", out);
	free(big);
}

static inline void json_string_or_null(FILE *out, const char *s)
{
	if (s)
		json_string(out, s);
	else
		fputs("null", out);
}

#endif /* JITMAP_TOOLS_JSON_H */

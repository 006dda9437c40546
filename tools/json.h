/* json.h: the JSON strings the tools write (jitmap-dump, jitmap-stack). */
#ifndef JITMAP_TOOLS_JSON_H
#define JITMAP_TOOLS_JSON_H

#include <stdio.h>

/* `s` as a JSON string: quotes and backslashes escaped, control characters as \u00XX, other
 * bytes as they are (UTF-8 passes through). */
static inline void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
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

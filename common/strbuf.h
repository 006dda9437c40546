/* strbuf.h (internal): a growing string for the renderer, with the JSON string rule.
 *
 * Every write appends; a failed allocation marks the buffer failed and later writes do
 * nothing, so a renderer writes straight through and checks once at the end. */
#ifndef JITMAP_STRBUF_H
#define JITMAP_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jitmap__buf {
	char *p;
	size_t len, cap;
	bool failed;
};

void jitmap__buf_put(struct jitmap__buf *b, const char *s, size_t n);
void jitmap__buf_puts(struct jitmap__buf *b, const char *s);
/* ASCII `s` left-aligned in `width` columns (printf's "%-*s" without printf: a dump prints
 * millions of these). */
void jitmap__buf_pad(struct jitmap__buf *b, const char *s, size_t width);
/* `v` in decimal, left-aligned in `width` columns ("%-*" PRIu64). */
void jitmap__buf_u64(struct jitmap__buf *b, uint64_t v, size_t width);
/* `v` in decimal in `d`, NUL-terminated, without printf: returns where its first digit is. */
#define JITMAP__U64_DIGITS 21
const char *jitmap__u64_digits(uint64_t v, char d[JITMAP__U64_DIGITS]);
void jitmap__buf_printf(struct jitmap__buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* `s` as a JSON string (jitmap_json_string's rule); NULL writes null. */
void jitmap__buf_json(struct jitmap__buf *b, const char *s);
/* `s` as text: bytes that are not UTF-8 become U+FFFD; NULL writes `null_text`. */
void jitmap__buf_text(struct jitmap__buf *b, const char *s, const char *null_text);
/* `s` as text (as above), at most `max_chars` characters, padded with spaces to `width`
 * characters (Python's "%-*s" % s[:max], counting characters, not bytes). */
void jitmap__buf_text_padded(struct jitmap__buf *b, const char *s, size_t width,
			     size_t max_chars);
/* Spaces. */
void jitmap__buf_indent(struct jitmap__buf *b, unsigned n);
/* The string, NUL-terminated (the buffer gives it away: free() it), or NULL with errno
 * ENOMEM when a write failed (the buffer is freed). */
char *jitmap__buf_finish(struct jitmap__buf *b);
void jitmap__buf_free(struct jitmap__buf *b);

/* The next code point of UTF-8 `s` (at most `n` bytes): its length in *len (1 for a byte that
 * does not start a valid sequence, which gives U+FFFD), never 0 for n > 0. Overlong forms,
 * surrogates and values above U+10FFFF are not valid. */
uint32_t jitmap__utf8_next(const unsigned char *s, size_t n, size_t *len);

#endif /* JITMAP_STRBUF_H */

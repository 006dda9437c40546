/* strbuf.c: the renderer's growing strings, and the one rule for writing any bytes as a JSON
 * string (RFC 8259: a JSON text is UTF-8; names that come from a damaged image's string table
 * may be anything, and must still give JSON every parser accepts). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "strbuf.h"
#include "jitmap/frame.h"

static bool reserve(struct jitmap__buf *b, size_t more)
{
	if (b->failed)
		return false;
	if (more > SIZE_MAX / 2 - b->len) {
		b->failed = true;
		return false;
	}
	const size_t need = b->len + more + 1;
	if (need <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->failed = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void jitmap__buf_put(struct jitmap__buf *b, const char *s, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

void jitmap__buf_puts(struct jitmap__buf *b, const char *s)
{
	jitmap__buf_put(b, s, strlen(s));
}

void jitmap__buf_pad(struct jitmap__buf *b, const char *s, size_t width)
{
	const size_t n = strlen(s);
	if (!reserve(b, n > width ? n : width))
		return;
	memcpy(b->p + b->len, s, n);
	if (n < width)
		memset(b->p + b->len + n, ' ', width - n);
	b->len += n > width ? n : width;
	b->p[b->len] = 0;
}

const char *jitmap__u64_digits(uint64_t v, char d[JITMAP__U64_DIGITS])
{
	size_t n = JITMAP__U64_DIGITS;
	d[--n] = 0;
	do
		d[--n] = (char)('0' + v % 10);
	while (v /= 10);
	return d + n;
}

void jitmap__buf_u64(struct jitmap__buf *b, uint64_t v, size_t width)
{
	char d[JITMAP__U64_DIGITS];
	jitmap__buf_pad(b, jitmap__u64_digits(v, d), width);
}

void jitmap__buf_printf(struct jitmap__buf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	const int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = true;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		jitmap__buf_put(b, small, (size_t)n);
		return;
	}
	if (!reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void jitmap__buf_indent(struct jitmap__buf *b, unsigned n)
{
	static const char spaces[] = "                                ";
	while (n) {
		const unsigned k = n < sizeof(spaces) - 1 ? n : (unsigned)sizeof(spaces) - 1;
		jitmap__buf_put(b, spaces, k);
		n -= k;
	}
}

char *jitmap__buf_finish(struct jitmap__buf *b)
{
	if (b->failed || !reserve(b, 0)) {
		jitmap__buf_free(b);
		errno = ENOMEM;
		return NULL;
	}
	b->p[b->len] = 0;
	char *p = b->p;
	*b = (struct jitmap__buf){0};
	return p;
}

void jitmap__buf_free(struct jitmap__buf *b)
{
	free(b->p);
	*b = (struct jitmap__buf){0};
}

/* -- UTF-8 -- */

uint32_t jitmap__utf8_next(const unsigned char *s, size_t n, size_t *len)
{
	*len = 1;
	if (!n)
		return 0xfffd;
	const unsigned c = s[0];
	if (c < 0x80)
		return c;
	size_t k;
	uint32_t v, min;
	if (c >= 0xc2 && c <= 0xdf) {
		k = 2, v = c & 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		k = 3, v = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		k = 4, v = c & 0x07, min = 0x10000;
	} else {
		return 0xfffd;
	}
	if (n < k)
		return 0xfffd;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0xfffd;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0xfffd;
	*len = k;
	return v;
}

static void put_utf8(struct jitmap__buf *b, uint32_t v)
{
	char out[4];
	size_t n;
	if (v < 0x80) {
		out[0] = (char)v, n = 1;
	} else if (v < 0x800) {
		out[0] = (char)(0xc0 | v >> 6), out[1] = (char)(0x80 | (v & 0x3f)), n = 2;
	} else if (v < 0x10000) {
		out[0] = (char)(0xe0 | v >> 12), out[1] = (char)(0x80 | ((v >> 6) & 0x3f));
		out[2] = (char)(0x80 | (v & 0x3f)), n = 3;
	} else {
		out[0] = (char)(0xf0 | v >> 18), out[1] = (char)(0x80 | ((v >> 12) & 0x3f));
		out[2] = (char)(0x80 | ((v >> 6) & 0x3f)), out[3] = (char)(0x80 | (v & 0x3f)), n = 4;
	}
	jitmap__buf_put(b, out, n);
}

void jitmap__buf_text(struct jitmap__buf *b, const char *s, const char *null_text)
{
	if (!s) {
		jitmap__buf_puts(b, null_text);
		return;
	}
	jitmap__buf_text_padded(b, s, 0, SIZE_MAX);
}

void jitmap__buf_text_padded(struct jitmap__buf *b, const char *s, size_t width,
			     size_t max_chars)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p), chars = 0;
	while (n && chars < max_chars) {
		/* Runs of valid UTF-8 are copied as they are. */
		size_t len;
		const uint32_t v = jitmap__utf8_next(p, n, &len);
		if (v == 0xfffd && !(len == 3 && p[0] == 0xef))
			put_utf8(b, 0xfffd);
		else
			jitmap__buf_put(b, (const char *)p, len);
		p += len;
		n -= len;
		chars++;
	}
	for (; chars < width; chars++)
		jitmap__buf_put(b, " ", 1);
}

/* -- JSON strings -- */

void jitmap__buf_json(struct jitmap__buf *b, const char *s)
{
	if (!s) {
		jitmap__buf_puts(b, "null");
		return;
	}
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	jitmap__buf_put(b, "\"", 1);
	while (n) {
		/* A run of plain ASCII at once. */
		size_t run = 0;
		while (run < n && p[run] >= 0x20 && p[run] < 0x7f && p[run] != '"' && p[run] != '\\')
			run++;
		if (run) {
			jitmap__buf_put(b, (const char *)p, run);
			p += run;
			n -= run;
			continue;
		}
		size_t len;
		const uint32_t v = jitmap__utf8_next(p, n, &len);
		p += len;
		n -= len;
		switch (v) {
		case '"': jitmap__buf_puts(b, "\\\""); break;
		case '\\': jitmap__buf_puts(b, "\\\\"); break;
		case '\n': jitmap__buf_puts(b, "\\n"); break;
		case '\r': jitmap__buf_puts(b, "\\r"); break;
		case '\t': jitmap__buf_puts(b, "\\t"); break;
		case '\b': jitmap__buf_puts(b, "\\b"); break;
		case '\f': jitmap__buf_puts(b, "\\f"); break;
		default:
			if (v >= 0x10000) {
				const uint32_t u = v - 0x10000;
				jitmap__buf_printf(b, "\\u%04x\\u%04x", 0xd800 | (u >> 10),
						   0xdc00 | (u & 0x3ff));
			} else {
				jitmap__buf_printf(b, "\\u%04x", v);
			}
		}
	}
	jitmap__buf_put(b, "\"", 1);
}

size_t jitmap_json_string(const char *s, char *buf, size_t len)
{
	struct jitmap__buf b = {0};
	jitmap__buf_json(&b, s);
	if (b.failed) {
		jitmap__buf_free(&b);
		if (len)
			buf[0] = 0;
		return 0;
	}
	const size_t n = b.len;
	if (len) {
		const size_t k = n < len - 1 ? n : len - 1;
		memcpy(buf, b.p, k);
		buf[k] = 0;
	}
	jitmap__buf_free(&b);
	return n;
}

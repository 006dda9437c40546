/* perfmap_text.c: perf maps (/tmp/perf-PID.map): lines of START SIZE NAME, in hexadecimal,
 * each naming a code object (perf's tools/perf/Documentation/jit-interface.txt). A line that
 * is not one is a problem of the file, and the rest is read. */
#include "jitmap/perfmap.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A hexadecimal number at *p (0x optional): 1, 0 when there is none, -1 when it has more than
 * 16 digits. */
static int hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	if (end - s > 2 && s[0] == '0' && (s[1] | 0x20) == 'x' && hexval(s[2]) >= 0)
		s += 2;
	uint64_t x = 0;
	int digits = 0, d;
	for (; s < end && (d = hexval(*s)) >= 0; s++, digits++) {
		if (x >> 60)
			return -1;
		x = x << 4 | (uint64_t)d;
	}
	if (!digits)
		return 0;
	*p = s;
	*v = x;
	return 1;
}

static const char *skip_blanks(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* One line of the map's text (f->text): its name stays there until looked up. False only
 * when out of memory. */
static bool perf_map_line(struct jitmap__pm_file *f, const char *s, const char *end, unsigned line,
			  size_t *added)
{
	while (end > s && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	s = skip_blanks(s, end);
	if (s == end)
		return true; /* an empty line */
	uint64_t lo, size;
	const char *p = s;
	int r = hex(&p, end, &lo);
	if (r <= 0 || p == end || (*p != ' ' && *p != '\t')) {
		jitmap__pm_problem(f, "%s:%u: %s", f->path, line,
				   r < 0 ? "START has more than 16 hexadecimal digits" :
				   r == 0 ? "not START SIZE NAME (START is not hexadecimal)" :
					    "not START SIZE NAME (nothing after START)");
		return true;
	}
	p = skip_blanks(p, end);
	r = hex(&p, end, &size);
	if (r <= 0 || (p != end && *p != ' ' && *p != '\t')) {
		jitmap__pm_problem(f, "%s:%u: %s", f->path, line,
				   r < 0 ? "SIZE has more than 16 hexadecimal digits" :
					   "not START SIZE NAME (SIZE is not hexadecimal)");
		return true;
	}
	p = skip_blanks(p, end);
	if (p == end) {
		jitmap__pm_problem(f, "%s:%u: not START SIZE NAME (no NAME)", f->path, line);
		return true;
	}
	if (jitmap__pm_range_check(f, lo, size, "%s:%u", f->path, line))
		return true;
	if (jitmap__pm_add_entry(f, lo, size, (uint32_t)(p - f->text), line))
		return false;
	f->e[f->ne - 1].nlen = (uint32_t)(end - p);
	(*added)++;
	return true;
}

int jitmap__pm_perf_map_take(struct jitmap__pm_file *f, char *text, size_t len, size_t mapped)
{
	f->text = text;
	f->text_len = len;
	f->text_mapped = mapped;
	size_t lines = 1;
	for (const char *s = text; len && (s = memchr(s, '\n', (size_t)(text + len - s))); s++)
		lines++;
	if (lines >= UINT32_MAX - 1 || len >= UINT32_MAX) {
		jitmap__pm_problem(f, "%s: %zu lines in %zu bytes: too large, not read", f->path,
				   lines, len);
		jitmap__pm_problems_done(f);
		return 0;
	}
	f->e = jitmap__big_alloc(lines * sizeof(*f->e), &f->e_mapped); /* a line names one object */
	if (!f->e)
		return -ENOMEM;
	f->cap_e = lines;
	size_t added = 0;
	unsigned line = 0;
	for (const char *s = text, *end = text + len; len && s < end; line++) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *le = nl ? nl : end;
		if (!perf_map_line(f, s, le, line + 1, &added))
			return -ENOMEM;
		s = le + 1;
	}
	jitmap__pm_problems_done(f);
	f->nranges = added;
	return added > INT32_MAX ? INT32_MAX : (int)added;
}

int jitmap_perfmap_add_perf_map(jitmap_perfmap *m, const char *text, size_t len,
				const char *origin)
{
	if (!m || !origin || (!text && len) || len == SIZE_MAX)
		return -EINVAL;
	char *buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	if (len)
		memcpy(buf, text, len);
	struct jitmap__pm_file *f = jitmap__pm_file_for(m, origin, JITMAP_PERFMAP_MAP);
	if (!f) {
		free(buf);
		return -ENOMEM;
	}
	return jitmap__pm_perf_map_take(f, buf, len, 0);
}

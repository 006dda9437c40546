/* perfmap.c: JIT code named by perf maps and jitdump files (jitmap/perfmap.h): the map, its
 * files and what each said, and the index that answers which code holds an address.
 *
 * Each file keeps what it said in order (entries: a code range and a name, or a range code
 * moved away from), and a flat index of what holds each address now: the entries "painted"
 * in order, a later one over an earlier one, into disjoint segments sorted by address. Most
 * files never overlap themselves, and their index is their entries sorted; otherwise one sweep
 * over the range boundaries with a heap of the open entries (the newest on top) paints them,
 * O(n log n). A lookup is a binary search per file, newest file first.
 *
 * Beside it, the readers that fill a file: a perf map's text (perfmap_text.c), a jitdump's
 * records (perfmap_jitdump.c) and their unwinding information (perfmap_unwind.c), and the
 * files read from disk, by path or for a process (perfmap_disk.c).
 */
#define _GNU_SOURCE
#include "jitmap/perfmap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "jitmap/unwind.h"

#define MAX_LISTED 5 /* problems listed per file; the rest are counted */

/* -- Files and what they said -- */

static void file_clear(struct jitmap__pm_file *f)
{
	if (f->text_mapped)
		munmap(f->text, f->text_mapped);
	else
		free(f->text);
	f->text = NULL;
	f->text_len = f->text_mapped = 0;
	jitmap__big_free(f->e, f->e_mapped);
	free(f->dbg);
	free(f->names);
	for (size_t k = 0; k < f->nunw; k++)
		jitmap_cfi_free(f->unw[k].cfi);
	free(f->unw);
	free(f->eh);
	f->unw = NULL;
	f->eh = NULL;
	f->nunw = f->cap_unw = f->neh = f->cap_eh = 0;
	f->arch = JITMAP_ARCH_UNKNOWN;
	jitmap__big_free(f->seg, f->seg_mapped);
	jitmap__problems_free(&f->problems);
	f->e = NULL;
	f->dbg = NULL;
	f->names = NULL;
	f->seg = NULL;
	f->ne = f->cap_e = f->e_mapped = f->ndbg = f->cap_dbg = f->nnames = f->cap_names = 0;
	f->nseg = f->seg_mapped = f->nranges = 0;
	f->dirty = false;
	f->have_st = false;
}

static void file_free(struct jitmap__pm_file *f)
{
	if (!f)
		return;
	file_clear(f);
	free(f->path);
	free(f->source);
	free(f);
}

jitmap_perfmap *jitmap_perfmap_new(void)
{
	jitmap_perfmap *m = calloc(1, sizeof(*m));
	if (!m)
		errno = ENOMEM;
	return m;
}

void jitmap_perfmap_free(jitmap_perfmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		file_free(m->files[i]);
	free(m->files);
	free(m);
}

struct jitmap__pm_file *jitmap__pm_file_named(const jitmap_perfmap *m, const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->files[i]->path, path))
			return m->files[i];
	return NULL;
}

struct jitmap__pm_file *jitmap__pm_file_for(jitmap_perfmap *m, const char *origin,
					     jitmap_perfmap_kind kind)
{
	const char *what = kind == JITMAP_PERFMAP_JITDUMP ? "jitdump" : "perf map";
	struct jitmap__pm_file *f = jitmap__pm_file_named(m, origin);
	if (f) {
		char *source = NULL;
		if (asprintf(&source, "%s %s", what, origin) < 0)
			return NULL;
		file_clear(f);
		free(f->source);
		f->source = source;
		f->kind = kind;
		f->in_core = false;
		return f;
	}
	if (jitmap__grow(&m->files, &m->cap, m->n + 1, sizeof(*m->files)))
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(origin)) || asprintf(&f->source, "%s %s", what, origin) < 0) {
		if (f)
			f->source = NULL;
		file_free(f);
		return NULL;
	}
	f->kind = kind;
	m->files[m->n++] = f;
	return f;
}

void jitmap__pm_problem(struct jitmap__pm_file *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	jitmap__vproblem(&f->problems, MAX_LISTED, fmt, ap);
	va_end(ap);
}

void jitmap__pm_problems_done(struct jitmap__pm_file *f)
{
	if (f->problems.unlisted)
		jitmap__problem(&f->problems, SIZE_MAX, "%s: %zu more problems like these", f->path,
				f->problems.unlisted);
}

uint32_t jitmap__pm_add_name(struct jitmap__pm_file *f, const char *s, size_t n)
{
	if (n >= UINT32_MAX - 1 || f->nnames > UINT32_MAX - 1 - n - 1 ||
	    jitmap__grow(&f->names, &f->cap_names, f->nnames + n + 1, 1))
		return JITMAP__PM_NONE;
	const uint32_t at = (uint32_t)f->nnames;
	memcpy(f->names + at, s, n);
	f->names[at + n] = 0;
	f->nnames += n + 1;
	return at;
}

int jitmap__pm_add_entry(struct jitmap__pm_file *f, uint64_t lo, uint64_t size, uint32_t name,
			 unsigned line)
{
	if (f->ne == f->cap_e && (f->e_mapped || jitmap__grow(&f->e, &f->cap_e, f->ne + 1,
								 sizeof(*f->e))))
		return -ENOMEM;
	f->e[f->ne++] = (struct jitmap__pm_entry){.lo = lo, .hi = lo + size, .name = name,
						  .nlen = 0, .line = line, .dbg = 0, .ndbg = 0,
						  .unw = JITMAP__PM_NONE};
	f->dirty = true;
	return 0;
}

int jitmap__pm_range_check(struct jitmap__pm_file *f, uint64_t lo, uint64_t size,
			   const char *fmt, ...)
{
	const bool huge = size > JITMAP_PERFMAP_MAX_RANGE, wraps = lo + size < lo;
	if (!huge && !wraps)
		return size == 0;
	char where[4200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(where, sizeof(where), fmt, ap);
	va_end(ap);
	if (huge)
		jitmap__pm_problem(f, "%s: a code object of 0x%" PRIx64 " bytes (more than 0x%"
				      PRIx64 "): not used", where, size, JITMAP_PERFMAP_MAX_RANGE);
	else
		jitmap__pm_problem(f, "%s: 0x%" PRIx64 " + 0x%" PRIx64 " wraps past the end of the "
				      "address space: not used", where, lo, size);
	return -1;
}

/* -- The index -- */

/* A max-heap of entry numbers (the newest entry on top). */
static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;
	for (; i && h[(i - 1) / 2] < v; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n)
{
	const uint32_t v = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

static void add_seg(struct jitmap__pm_file *f, uint64_t lo, uint64_t hi, uint32_t entry)
{
	if (f->nseg && f->seg[f->nseg - 1].entry == entry && f->seg[f->nseg - 1].hi == lo)
		f->seg[f->nseg - 1].hi = hi;
	else
		f->seg[f->nseg++] = (struct jitmap__pm_seg){.lo = lo, .hi = hi, .entry = entry};
}

/* What holds each address now: the entries painted in order into disjoint segments (room for
 * 2n: a boundary starts at most one segment, and there are at most 2n of them). */
static int paint(struct jitmap__pm_file *f)
{
	jitmap__big_free(f->seg, f->seg_mapped);
	f->seg = NULL;
	f->nseg = f->seg_mapped = 0;
	const size_t n = f->ne;
	f->dirty = false;
	if (!n || n >= JITMAP__PM_NONE)
		return 0;
	/* the starts (lo, ent), the ends (hi), the sorts' scratch (tk, tv), the heap */
	size_t m_scratch, m_seg;
	uint64_t *lo = jitmap__big_alloc(n * (3 * sizeof(uint64_t) + 3 * sizeof(uint32_t)), &m_scratch);
	f->seg = jitmap__big_alloc(2 * n * sizeof(*f->seg), &m_seg);
	if (!lo || !f->seg) {
		jitmap__big_free(lo, m_scratch);
		jitmap__big_free(f->seg, m_seg);
		f->seg = NULL;
		f->dirty = true;
		return -ENOMEM;
	}
	f->seg_mapped = m_seg;
	uint64_t *hi = lo + n, *tk = hi + n;
	uint32_t *ent = (uint32_t *)(tk + n), *tv = ent + n, *heap = tv + n;
	for (size_t i = 0; i < n; i++) {
		lo[i] = f->e[i].lo;
		hi[i] = f->e[i].hi;
		ent[i] = (uint32_t)i;
	}
	jitmap__radix_sort(lo, ent, n, tk, tv);
	bool disjoint = true;
	for (size_t k = 0; k < n && disjoint; k++)
		disjoint = f->e[ent[k]].name != JITMAP__PM_NONE &&
			   (k + 1 == n || f->e[ent[k]].hi <= lo[k + 1]);
	if (disjoint) {
		for (size_t k = 0; k < n; k++)
			add_seg(f, lo[k], f->e[ent[k]].hi, ent[k]);
		jitmap__big_free(lo, m_scratch);
		return 0;
	}
	/* One sweep over the boundaries (the starts and the ends, each sorted): at each, the
	 * newest open entry holds the addresses up to the next boundary. */
	jitmap__radix_sort(hi, NULL, n, tk, NULL);
	size_t nheap = 0, i = 0, j = 0;
	while (j < n) { /* the last end comes after every start */
		const uint64_t x = i < n && lo[i] <= hi[j] ? lo[i] : hi[j];
		while (i < n && lo[i] == x)
			heap_push(heap, &nheap, ent[i++]);
		while (j < n && hi[j] == x)
			j++;
		while (nheap && f->e[heap[0]].hi <= x)
			heap_pop(heap, &nheap);
		if (!nheap)
			continue;
		const uint64_t next = i < n && lo[i] < hi[j] ? lo[i] : hi[j]; /* j < n: open */
		if (f->e[heap[0]].name != JITMAP__PM_NONE)
			add_seg(f, x, next, heap[0]);
	}
	jitmap__big_free(lo, m_scratch);
	return 0;
}

int jitmap__pm_entry_at(jitmap_perfmap *m, uint64_t addr, struct jitmap__pm_file **file,
			struct jitmap__pm_entry **entry)
{
	for (size_t i = m->n; i-- > 0;) {
		struct jitmap__pm_file *f = m->files[i];
		if (f->dirty && paint(f))
			return -ENOMEM;
		const size_t at = JITMAP_UPPER_BOUND(f->seg, f->nseg, lo, addr);
		if (!at || addr >= f->seg[at - 1].hi)
			continue;
		*file = f;
		*entry = &f->e[f->seg[at - 1].entry];
		return 0;
	}
	return -ENOENT;
}

int jitmap_perfmap_lookup(jitmap_perfmap *m, uint64_t addr, jitmap_perfmap_sym *out)
{
	if (!m || !out || out->sz < sizeof(size_t))
		return -EINVAL;
	struct jitmap__pm_file *f;
	struct jitmap__pm_entry *e;
	const int rc = jitmap__pm_entry_at(m, addr, &f, &e);
	if (rc)
		return rc;
	if (e->nlen) { /* a perf map's name, ended in its text now */
		f->text[e->name + e->nlen] = 0;
		e->nlen = 0;
	}
	jitmap_perfmap_sym sym = {.sz = sizeof(sym),
				  .name = (f->text ? f->text : f->names) + e->name,
				  .lo = e->lo, .hi = e->hi, .origin = f->path,
				  .source = f->source, .line = e->line, .kind = f->kind,
				  .in_core = f->in_core};
	if (e->ndbg) {
		const struct jitmap__pm_dbg_line *d = f->dbg + e->dbg;
		const size_t j = JITMAP_UPPER_BOUND(d, e->ndbg, addr, addr);
		if (j) {
			sym.file = f->names + d[j - 1].file;
			sym.file_line = d[j - 1].line;
		}
	}
	return jitmap__give(out, &sym, sizeof(sym));
}

/* -- What the files said -- */

size_t jitmap_perfmap_num_files(const jitmap_perfmap *m)
{
	return m ? m->n : 0;
}

const char *jitmap_perfmap_file(const jitmap_perfmap *m, size_t i, size_t *num_ranges)
{
	if (num_ranges)
		*num_ranges = m && i < m->n ? m->files[i]->nranges : 0;
	return m && i < m->n ? m->files[i]->path : NULL;
}

int jitmap_perfmap_file_in_core(const jitmap_perfmap *m, size_t i)
{
	return m && i < m->n && m->files[i]->in_core;
}

size_t jitmap_perfmap_num_ranges(jitmap_perfmap *m)
{
	size_t n = 0;
	for (size_t i = 0; m && i < m->n; i++)
		n += m->files[i]->nranges;
	return n;
}

size_t jitmap_perfmap_num_problems(const jitmap_perfmap *m)
{
	size_t n = 0;
	for (size_t i = 0; m && i < m->n; i++)
		n += m->files[i]->problems.n;
	return n;
}

const char *jitmap_perfmap_problem(const jitmap_perfmap *m, size_t k)
{
	for (size_t i = 0; m && i < m->n; i++) {
		if (k < m->files[i]->problems.n)
			return m->files[i]->problems.items[k];
		k -= m->files[i]->problems.n;
	}
	return NULL;
}

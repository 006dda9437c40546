/* minidump_memory.c: what memory a minidump carries (the threads' stacks, the caller's ranges)
 * and the process's areas its MemoryInfoList and LinuxMaps streams list (minidump.h says what
 * each stream is for).
 *
 * Only bytes that can be read are carried: a range is read in chunks, and where a chunk
 * fails, a page at a time, so what a core lacks (a truncated segment, a small core's left-out
 * memory) is left out, never filled. Breakpad's reader refuses a MemoryList whose regions
 * overlap or pass 64 MiB or 4096, so regions are kept sorted and apart, each at most 64 MiB;
 * a stack the walker must find stays one region holding its stack pointer. Everything here
 * is bounded by the caller's budget of bytes and by counts of reads, whatever the process
 * (a hostile core's ranges cover the whole address space).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>

#include "../common/strbuf.h"
#include "internal.h"

#define PAGE UINT64_C(4096)
#define CHUNK (UINT64_C(64) << 10)   /* bytes read at once before falling back to pages */
#define MAX_FAILED_PAGES 4096        /* pages that could not be read, per range */
#define MAX_SPANS 65536              /* places a range's walk asks about, per range */

static uint64_t page_down(uint64_t a) { return a & ~(PAGE - 1); }
static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* -- Reading what can be read -- */

/* How many bytes from `lo` on (up to `hi`) `t` reads, into buf: chunks, then pages where a
 * chunk fails; the first page that cannot be read ends it. */
static uint64_t read_prefix(const jitmap_target *t, uint64_t lo, uint64_t hi, uint8_t *buf)
{
	char why[192];
	uint64_t at = lo;
	while (at < hi) {
		const uint64_t base = page_down(at);
		const uint64_t end = base > UINT64_MAX - CHUNK ? hi : min64(hi, base + CHUNK);
		if (!t->read_mem(t->ctx, at, buf + (at - lo), end - at, why, sizeof(why))) {
			at = end;
			continue;
		}
		while (at < end) {
			const uint64_t pe = page_down(at) > UINT64_MAX - PAGE ? end
									: min64(end, page_down(at) + PAGE);
			if (t->read_mem(t->ctx, at, buf + (at - lo), pe - at, why, sizeof(why)))
				return at - lo;
			at = pe;
		}
	}
	return at - lo;
}

/* -- The regions, sorted by lo -- */

/* Index of the first region whose end passes `addr` (n: none). */
static size_t first_after(const struct jitmap__md_mem *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].lo + m->v[mid].len <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct jitmap__md_region *jitmap__md_region_at(const struct jitmap__md_mem *m,
						      uint64_t lo)
{
	const size_t i = first_after(m, lo);
	return i < m->n && m->v[i].lo == lo ? &m->v[i] : NULL;
}

/* Read [lo, hi) (at most a region's size, within the budget; no region there) through `t`
 * and keep the bytes read from lo on as a region: how many. */
static uint64_t take(struct jitmap__md_mem *m, const jitmap_target *t, uint64_t lo,
		     uint64_t hi)
{
	if (m->rc || m->n >= JITMAP__MD_MAX_REGIONS || m->carried >= m->budget || hi <= lo)
		return 0;
	const uint64_t most = min64(JITMAP__MD_MAX_REGION, m->budget - m->carried);
	if (lo <= UINT64_MAX - most)
		hi = min64(hi, lo + most);
	uint8_t *b = malloc(hi - lo);
	if (!b || jitmap__grow(&m->v, &m->cap, m->n + 1, sizeof(*m->v))) {
		free(b);
		m->rc = -ENOMEM;
		return 0;
	}
	const uint64_t got = read_prefix(t, lo, hi, b);
	if (!got) {
		free(b);
		return 0;
	}
	uint8_t *shrunk = got < hi - lo ? realloc(b, got) : b;
	const size_t at = first_after(m, lo);
	memmove(m->v + at + 1, m->v + at, (m->n - at) * sizeof(*m->v));
	m->v[at] = (struct jitmap__md_region){lo, shrunk ? shrunk : b, (uint32_t)got};
	m->n++;
	m->carried += got;
	return got;
}

bool jitmap__md_stack(struct jitmap__md_mem *m, size_t i, uint64_t sp, uint64_t bytes,
		      uint64_t *lo_out)
{
	const jitmap_stopped_thread_info *th = jitmap_stopped_thread(m->s, i);
	size_t k = first_after(m, sp);
	if (k < m->n && m->v[k].lo <= sp) { /* another thread's stack holds it: share it */
		*lo_out = m->v[k].lo;
		return true;
	}
	uint64_t lo = page_down(sp);
	/* A stack captured while its thread was stopped (a live process read by thread) starts
	 * below sp, not at its page: bytes under the capture are not the thread's to read. */
	if (th && th->stack_hi > th->stack_lo && th->stack_lo > lo && th->stack_lo <= sp)
		lo = th->stack_lo;
	if (k > 0 && m->v[k - 1].lo + m->v[k - 1].len > lo)
		lo = m->v[k - 1].lo + m->v[k - 1].len;
	uint64_t hi = lo > UINT64_MAX - bytes ? UINT64_MAX : lo + bytes;
	/* Not past the end of the mapping holding sp (Breakpad's own writer stops there): the
	 * next mapping is not this stack. */
	jitmap_stopped_memory_info mi = {.sz = sizeof(mi)};
	if (!jitmap_stopped_memory(m->s, sp, &mi) && mi.segment_end > sp)
		hi = min64(hi, mi.segment_end);
	if (k < m->n)
		hi = min64(hi, m->v[k].lo);
	if (hi <= sp)
		return false;
	const jitmap_target t = jitmap_stopped_thread_stack_target(m->s, i);
	if (!t.read_mem)
		return false;
	uint64_t got = take(m, &t, lo, hi);
	if (lo + got <= sp && lo != sp) { /* the page's start could not be read: from sp on */
		if (got) /* the part below sp stays carried: it is the thread's too */
			return false;
		lo = sp;
		got = take(m, &t, lo, hi);
	}
	if (!got || lo + got <= sp)
		return false;
	*lo_out = lo;
	return true;
}

/* [lo, hi), no region there: what can be read of it, walking the places the process's
 * memory comes from (what no place holds is skipped without a read). */
static void range_gap(struct jitmap__md_mem *m, const jitmap_target *t, uint64_t lo,
		      uint64_t hi)
{
	unsigned failed = 0, spans = 0;
	uint64_t at = lo;
	while (at < hi && spans++ < MAX_SPANS && !m->rc && m->n < JITMAP__MD_MAX_REGIONS &&
	       m->carried < m->budget) {
		jitmap_stopped_memory_info mi = {.sz = sizeof(mi)};
		if (jitmap_stopped_memory(m->s, at, &mi) || !mi.size)
			return;
		const uint64_t end = mi.size >= hi - at ? hi : at + mi.size;
		if (mi.source == JITMAP_STOPPED_MEM_NONE) {
			at = end;
			continue;
		}
		while (at < end && !m->rc && m->n < JITMAP__MD_MAX_REGIONS &&
		       m->carried < m->budget) {
			const uint64_t got = take(m, t, at, end);
			at += got;
			if (at >= end)
				break;
			if (!got && ++failed > MAX_FAILED_PAGES) {
				at = end; /* an unreadable mapping: not read a page at a time */
				break;
			}
			if (!got) { /* the page at `at` cannot be read: on from the next */
				const uint64_t pg = page_down(at);
				at = pg > UINT64_MAX - PAGE || pg + PAGE > end ? end : pg + PAGE;
			}
		}
	}
}

void jitmap__md_range(struct jitmap__md_mem *m, uint64_t lo, uint64_t hi)
{
	const jitmap_target t = jitmap_stopped_target(m->s);
	if (!t.read_mem)
		return;
	uint64_t at = lo;
	while (at < hi && !m->rc && m->n < JITMAP__MD_MAX_REGIONS && m->carried < m->budget) {
		const size_t k = first_after(m, at);
		if (k < m->n && m->v[k].lo <= at) { /* carried already */
			at = m->v[k].lo + m->v[k].len;
			continue;
		}
		const uint64_t end = k < m->n ? min64(hi, m->v[k].lo) : hi;
		range_gap(m, &t, at, end);
		at = end;
	}
}

void jitmap__md_mem_free(struct jitmap__md_mem *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].bytes);
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}

/* -- The process's areas --
 *
 * Walked through jitmap_stopped_memory, which says for any address where its bytes come from
 * and how far that goes: a core's segments (every mapping the kernel dumped, anonymous ones
 * too) and the file mappings no segment covers (gcore leaves unmodified code out); a live
 * process's mappings. What lies between is skipped in one step. */

/* The file mapping of `s` holding addr, or NULL (the mappings are sorted by start). */
static const jitmap_stopped_mapping_info *mapping_at(jitmap_stopped *s, uint64_t addr)
{
	size_t lo = 0, hi = jitmap_stopped_num_mappings(s);
	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;
		const jitmap_stopped_mapping_info *m = jitmap_stopped_mapping(s, mid);
		if (!m)
			return NULL;
		if (m->end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	const jitmap_stopped_mapping_info *m = jitmap_stopped_mapping(s, lo);
	return m && m->start <= addr ? m : NULL;
}

int jitmap__md_areas(jitmap_stopped *s, size_t max, struct jitmap__md_area **out, size_t *nout)
{
	struct jitmap__md_area *v = NULL;
	size_t n = 0, cap = 0, steps = 0;
	uint64_t at = 0;
	*out = NULL;
	*nout = 0;
	while (n < max && steps++ < 4 * max) {
		jitmap_stopped_memory_info mi = {.sz = sizeof(mi)};
		if (jitmap_stopped_memory(s, at, &mi) || !mi.size)
			break;
		struct jitmap__md_area a = {.lo = at};
		if (mi.segment_end > mi.segment_start && mi.segment_start <= at &&
		    at < mi.segment_end) {
			a.hi = mi.segment_end;
			a.flags = mi.segment_flags & 7u;
		} else if (mi.source == JITMAP_STOPPED_MEM_FILE) {
			/* a file's mapping the core has no segment for: its code, or read-only data */
			a.hi = mi.size > UINT64_MAX - at ? UINT64_MAX : at + mi.size;
			a.flags = PF_R | (jitmap_stopped_code_at(s, at, NULL, 0) == 1 ? PF_X : 0);
		} else {
			if (mi.size > UINT64_MAX - at)
				break; /* nothing up to the top */
			at += mi.size;
			continue;
		}
		const jitmap_stopped_mapping_info *fm = mapping_at(s, at);
		if (fm) {
			a.hi = min64(a.hi, fm->end); /* one area a mapping */
			a.file = true;
			a.offset = fm->offset + (at - fm->start);
			a.name = fm->core_path;
		}
		jitmap_stopped_module_info mod = {.sz = sizeof(mod)};
		const int rc = jitmap_stopped_module_at(s, at, &mod);
		if (rc >= 0) {
			a.image = rc == 1;
			if (!a.name)
				a.name = mod.name;
		}
		if (jitmap__grow(&v, &cap, n + 1, sizeof(*v))) {
			free(v);
			return -ENOMEM;
		}
		v[n++] = a;
		if (a.hi <= at || a.hi == UINT64_MAX)
			break;
		at = a.hi;
	}
	*out = v;
	*nout = n;
	return 0;
}

/* Windows' protection of p_flags-style bits. */
uint32_t jitmap__md_protection(unsigned f)
{
	static const uint32_t by_flags[8] = {
		1,    /* --- NOACCESS */      0x10, /* --x EXECUTE */
		4,    /* -w- READWRITE */     0x40, /* -wx EXECUTE_READWRITE */
		2,    /* r-- READONLY */      0x20, /* r-x EXECUTE_READ */
		4,    /* rw- READWRITE */     0x40, /* rwx EXECUTE_READWRITE */
	};
	return by_flags[f & 7];
}

/* /proc/PID/maps' text of the areas (device and inode unknown: 00:00 0). */
char *jitmap__md_maps_text(const struct jitmap__md_area *a, size_t n, size_t *len)
{
	struct jitmap__buf sb = {0};
	for (size_t i = 0; i < n; i++)
		jitmap__buf_printf(&sb, "%08" PRIx64 "-%08" PRIx64 " %c%c%cp %08" PRIx64
				      " 00:00 0%s%s\n", a[i].lo, a[i].hi,
				      a[i].flags & PF_R ? 'r' : '-', a[i].flags & PF_W ? 'w' : '-',
				      a[i].flags & PF_X ? 'x' : '-', a[i].offset,
				      a[i].name ? "                          " : "",
				      a[i].name ? a[i].name : "");
	*len = sb.len;
	return jitmap__buf_finish(&sb);
}

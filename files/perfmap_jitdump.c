/* perfmap_jitdump.c: jitdump files (perf's tools/perf/Documentation/jitdump-specification.txt):
 * a header, then records of code loads (an address, a size, a name), code moves, source lines
 * (debug info) and unwinding information (perfmap_unwind.c), read into a file's entries. A
 * record that cannot be used is a problem of the file; a file cut inside a record (a runtime
 * still writing it) is read up to there. */
#include "jitmap/perfmap.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define JITDUMP_MAGIC 0x4A695444u /* "JiTD" in the writer's byte order */
#define JITDUMP_HEADER 40         /* magic, version, total_size, elf_mach, pad1, pid: u32;
				     timestamp, flags: u64 */
#define JITDUMP_RECORD 16         /* id, total_size: u32; timestamp: u64 */
/* A debug-info entry's address is, for most writers, where the line's code would be in the ELF
 * image perf inject makes of the code (its .text right after the 64-byte ELF header): the
 * code's address + 0x40 + the line's offset, as V8 (kElfHeaderSize) and LLVM's
 * PerfJITEventListener write it; perf's own Java agent writes the line's address itself. */
#define JITDUMP_LINE_SHIFT 0x40
enum {
	JIT_CODE_LOAD = 0, JIT_CODE_MOVE = 1, JIT_CODE_DEBUG_INFO = 2, JIT_CODE_CLOSE = 3,
	JIT_CODE_UNWINDING_INFO = 4,
};

bool jitmap__pm_jitdump_order(const uint8_t *p, size_t len, jitmap_byte_order *order)
{
	for (int o = JITMAP_ORDER_LITTLE; len >= 4 && o <= JITMAP_ORDER_BIG; o++) {
		if (jitmap__load(p, 4, (jitmap_byte_order)o) == JITDUMP_MAGIC) {
			if (order)
				*order = (jitmap_byte_order)o;
			return true;
		}
	}
	return false;
}

/* The latest load with this code_index (a move's code), or JITMAP__PM_NONE. */
static uint32_t load_by_index(const struct jitmap__pm_file *f, const uint32_t *loads,
			      size_t nloads, uint64_t index)
{
	/* Moves are rare; loads are scanned newest first, bounded so that a hostile file of
	 * moves costs O(n * 64), not O(n^2). */
	for (size_t k = nloads, seen = 0; k-- > 0 && seen < 64; seen++)
		if (f->e[loads[k]].index == index)
			return loads[k];
	return JITMAP__PM_NONE;
}

/* A debug-info record: its source lines, kept for the load that follows at `code_addr`.
 * Returns false only when out of memory. */
static bool debug_info(struct jitmap__pm_file *f, const struct jitmap__pm_reader *r, size_t off,
		       size_t end, unsigned rec, uint64_t *pending_addr, uint32_t *pending_first)
{
	if (end - off < 16) {
		jitmap__pm_problem(f, "%s: record %u (debug info) at offset %zu: %zu bytes, too "
				      "short", f->path, rec, off - JITDUMP_RECORD,
				   end - off + JITDUMP_RECORD);
		return true;
	}
	const uint64_t code_addr = jitmap__pm_u64(r, off), n = jitmap__pm_u64(r, off + 8);
	off += 16;
	/* Each entry is at least 17 bytes (addr, lineno, discrim, a NUL). */
	if (n > (end - off) / 17) {
		jitmap__pm_problem(f, "%s: record %u (debug info) at offset %zu: %" PRIu64
				      " lines do not fit in its %zu bytes", f->path, rec,
				   off - 16 - JITDUMP_RECORD, n, end - off + 16 + JITDUMP_RECORD);
		return true;
	}
	const size_t first = f->ndbg;
	uint32_t prev = JITMAP__PM_NONE;
	for (uint64_t k = 0; k < n; k++) {
		if (end - off < 17)
			break;
		const uint64_t addr = jitmap__pm_u64(r, off); /* as written: see line_outside */
		const uint32_t line = (uint32_t)jitmap__pm_u32(r, off + 8);
		off += 16;
		const uint8_t *nul = memchr(r->p + off, 0, end - off);
		if (!nul) {
			jitmap__pm_problem(f, "%s: record %u (debug info): line %" PRIu64 "'s file "
					      "name has no end", f->path, rec, k);
			break;
		}
		const size_t nlen = (size_t)(nul - (r->p + off));
		uint32_t file;
		/* "same as the previous" */
		if (nlen == 1 && r->p[off] == 0xff && prev != JITMAP__PM_NONE)
			file = prev;
		else if ((file = jitmap__pm_add_name(f, (const char *)r->p + off, nlen)) ==
			 JITMAP__PM_NONE)
			return false;
		off += nlen + 1;
		prev = file;
		if (jitmap__grow(&f->dbg, &f->cap_dbg, f->ndbg + 1, sizeof(*f->dbg)))
			return false;
		f->dbg[f->ndbg++] = (struct jitmap__pm_dbg_line){.addr = addr, .line = line,
								 .file = file};
	}
	*pending_addr = code_addr;
	*pending_first = (uint32_t)first;
	return true;
}

/* The first of the debug lines from `first` on whose address lies outside the code loaded at
 * [addr, addr + size) (a writer that got its entries wrong: Node.js 20's --perf-prof writes
 * some whose file names are not strings, and the entries after them are misread; or one that
 * wrote the lines' own addresses, without perf's 0x40), counted from `first`;
 * JITMAP__PM_NONE when all lie within. */
static uint32_t line_outside(const struct jitmap__pm_file *f, uint32_t first, uint64_t addr,
			     uint64_t size)
{
	for (size_t k = first; k < f->ndbg; k++)
		if (f->dbg[k].addr < addr || f->dbg[k].addr - addr >= size)
			return (uint32_t)(k - first);
	return JITMAP__PM_NONE;
}

/* The debug lines from `first` on placed in the code loaded at [addr, addr + size): read as
 * perf's (0x40 past each line's address) when every line then lies inside, else as the lines'
 * own addresses when every one does; JITMAP__PM_NONE then. Else the first line outside (the
 * perf reading's), counted from `first`, and the lines are left as written. */
static uint32_t place_lines(struct jitmap__pm_file *f, uint32_t first, uint64_t addr,
			    uint64_t size)
{
	for (size_t k = first; k < f->ndbg; k++)
		f->dbg[k].addr -= JITDUMP_LINE_SHIFT; /* below 0x40: wraps, outside any code */
	const uint32_t bad = line_outside(f, first, addr, size);
	if (bad == JITMAP__PM_NONE)
		return bad;
	for (size_t k = first; k < f->ndbg; k++)
		f->dbg[k].addr += JITDUMP_LINE_SHIFT;
	if (line_outside(f, first, addr, size) == JITMAP__PM_NONE)
		return JITMAP__PM_NONE;
	for (size_t k = first; k < f->ndbg; k++)
		f->dbg[k].addr -= JITDUMP_LINE_SHIFT; /* said as perf's */
	return bad;
}

static int cmp_dbg(const void *a, const void *b)
{
	const struct jitmap__pm_dbg_line *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int jitmap_perfmap_add_jitdump(jitmap_perfmap *m, const void *data, size_t len,
			       const char *origin, jitmap_error *err)
{
	if (!m || !origin || (!data && len))
		return jitmap__fail(err, -EINVAL, 0, "no map, origin or data");
	struct jitmap__pm_reader r = {.p = data};
	if (len < JITDUMP_HEADER)
		return jitmap__fail(err, -EINVAL, 0, "%zu bytes: shorter than a jitdump header (%d)",
				    len, JITDUMP_HEADER);
	if (!jitmap__pm_jitdump_order(data, len, &r.order))
		return jitmap__fail(err, -EINVAL, 0, "no jitdump magic (JiTD)");
	const uint64_t version = jitmap__pm_u32(&r, 4), header = jitmap__pm_u32(&r, 8);
	if (version != 1)
		return jitmap__fail(err, -EINVAL, 4, "jitdump version %" PRIu64 " (jitmap reads 1)",
				    version);
	if (header < JITDUMP_HEADER || header > len)
		return jitmap__fail(err, -EINVAL, 8, "a header of %" PRIu64 " bytes in a file of %zu",
				    header, len);
	struct jitmap__pm_file *f = jitmap__pm_file_for(m, origin, JITMAP_PERFMAP_JITDUMP);
	if (!f)
		return -ENOMEM;
	uint32_t *loads = NULL; /* entries that are loads, in order */
	size_t nloads = 0, cap_loads = 0, added = 0;
	uint64_t pending_addr = 0;
	uint32_t pending_first = JITMAP__PM_NONE; /* debug lines waiting for their load */
	struct jitmap__pm_pending_unwind pending_unw = {0};
	unsigned rec = 0;
	int rc = 0;
	bool cut = false; /* the file ends inside a record (maybe the load being written) */
	f->arch = jitmap_arch_from_elf_machine((unsigned)jitmap__pm_u32(&r, 12));
	for (size_t off = (size_t)header; off < len; rec++) {
		if (len - off < JITDUMP_RECORD || rec == UINT32_MAX - 1) {
			jitmap__pm_problem(f, "%s: the file ends inside record %u at offset %zu "
					      "(still being written, or cut short)", f->path,
					   rec + 1, off);
			cut = true;
			break;
		}
		const uint64_t id = jitmap__pm_u32(&r, off), size = jitmap__pm_u32(&r, off + 4);
		if (size < JITDUMP_RECORD || size > len - off) {
			jitmap__pm_problem(f, "%s: record %u at offset %zu: %" PRIu64 " bytes, %s",
					   f->path, rec + 1, off, size,
					   size < JITDUMP_RECORD ? "shorter than a record header" :
					   "past the end of the file (still being written, or cut "
					   "short)");
			cut = size >= JITDUMP_RECORD;
			break;
		}
		const size_t body = off + JITDUMP_RECORD, end = off + (size_t)size;
#define WHERE "%s: record %u at offset %zu", f->path, rec + 1, off
		if (id == JIT_CODE_CLOSE)
			break;
		if (id == JIT_CODE_DEBUG_INFO) {
			if (!debug_info(f, &r, body, end, rec + 1, &pending_addr, &pending_first)) {
				rc = -ENOMEM;
				break;
			}
		} else if (id == JIT_CODE_UNWINDING_INFO) {
			jitmap__pm_unwinding_info(f, &r, off, body, end, rec + 1, &pending_unw);
		} else if (id == JIT_CODE_LOAD) {
			/* pid, tid: u32; vma, code_addr, code_size, code_index: u64; name; code */
			const uint8_t *nul = end - body > 40 ? memchr(r.p + body + 40, 0, end - body - 40)
							     : NULL;
			if (!nul) {
				jitmap__pm_problem(f, "%s: record %u at offset %zu (code load): %s",
						   f->path, rec + 1, off,
						   end - body < 40 ? "too short"
								   : "its name has no end");
			} else {
				const uint64_t addr = jitmap__pm_u64(&r, body + 16);
				const uint64_t csize = jitmap__pm_u64(&r, body + 24);
				const size_t nlen = (size_t)(nul - (r.p + body + 40));
				if (!jitmap__pm_range_check(f, addr, csize, WHERE)) {
					const uint32_t name = jitmap__pm_add_name(
						f, (const char *)r.p + body + 40, nlen);
					if (name == JITMAP__PM_NONE ||
					    jitmap__pm_add_entry(f, addr, csize, name, rec + 1) ||
					    jitmap__grow(&loads, &cap_loads, nloads + 1,
							 sizeof(*loads))) {
						rc = -ENOMEM;
						break;
					}
					struct jitmap__pm_entry *e = &f->e[f->ne - 1];
					e->index = jitmap__pm_u64(&r, body + 32);
					const uint32_t bad =
						pending_first != JITMAP__PM_NONE && pending_addr == addr
							? place_lines(f, pending_first, addr, csize)
							: 0;
					if (pending_first != JITMAP__PM_NONE && pending_addr == addr &&
					    bad == JITMAP__PM_NONE) {
						e->dbg = pending_first;
						e->ndbg = (uint32_t)(f->ndbg - pending_first);
					} else if (pending_first != JITMAP__PM_NONE &&
						   pending_addr == addr) {
						jitmap__pm_problem(
							f, "%s: record %u at offset %zu (code load at 0x%"
							   PRIx64 "): the debug info before it puts line %"
							   PRIu32 " at 0x%" PRIx64 ", outside the code's %"
							   PRIu64 " bytes: its source lines are left out",
							f->path, rec + 1, off, addr, bad + 1,
							f->dbg[pending_first + bad].addr, csize);
						f->ndbg = pending_first;
					}
					if (!jitmap__pm_take_unwind(f, &r, e, &pending_unw)) {
						rc = -ENOMEM;
						break;
					}
					loads[nloads++] = (uint32_t)(f->ne - 1);
					added++;
				}
			}
			pending_first = JITMAP__PM_NONE;
			pending_unw = (struct jitmap__pm_pending_unwind){0};
		} else if (id == JIT_CODE_MOVE) {
			/* pid, tid: u32; vma, old_code_addr, new_code_addr, code_size, code_index */
			if (end - body < 48) {
				jitmap__pm_problem(f, "%s: record %u at offset %zu (code move): "
						      "too short", f->path, rec + 1, off);
			} else {
				const uint64_t from = jitmap__pm_u64(&r, body + 16);
				const uint64_t to = jitmap__pm_u64(&r, body + 24);
				const uint64_t csize = jitmap__pm_u64(&r, body + 32);
				const uint64_t index = jitmap__pm_u64(&r, body + 40);
				const uint32_t load = load_by_index(f, loads, nloads, index);
				if (load == JITMAP__PM_NONE) {
					jitmap__pm_problem(f, "%s: record %u at offset %zu: a "
							      "move of code index %" PRIu64
							      " never loaded", f->path, rec + 1,
							   off, index);
				} else if (!jitmap__pm_range_check(f, from, csize, WHERE) &&
					   !jitmap__pm_range_check(f, to, csize, WHERE)) {
					const uint32_t name = f->e[load].name;
					if (jitmap__pm_add_entry(f, from, csize, JITMAP__PM_NONE,
								 rec + 1) ||
					    jitmap__pm_add_entry(f, to, csize, name, rec + 1) ||
					    jitmap__grow(&loads, &cap_loads, nloads + 1,
							 sizeof(*loads)) ||
					    !jitmap__pm_move_unwind(f, load, &f->e[f->ne - 1])) {
						rc = -ENOMEM;
						break;
					}
					f->e[f->ne - 1].index = index;
					loads[nloads++] = (uint32_t)(f->ne - 1);
				}
			}
		} /* records of later versions: skipped */
#undef WHERE
		off = end;
	}
	if (pending_unw.rec && !cut)
		jitmap__pm_problem(f, "%s: record %u at offset %zu (unwinding info): no code load "
				      "follows it: not used", f->path, pending_unw.rec,
				   pending_unw.at);
	free(loads);
	/* Each load's source lines by address, for the lookup's search. */
	for (size_t i = 0; i < f->ne; i++)
		if (f->e[i].ndbg > 1)
			qsort(f->dbg + f->e[i].dbg, f->e[i].ndbg, sizeof(*f->dbg), cmp_dbg);
	jitmap__pm_problems_done(f);
	f->nranges = added;
	if (rc)
		return rc;
	return added > INT32_MAX ? INT32_MAX : (int)added;
}

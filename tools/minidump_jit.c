/* minidump_jit.c: the JIT code of a walked process as a minidump's modules, and their Breakpad
 * symbol files (jitmap-minidump, docs/minidumps.md).
 *
 * Breakpad's stack walker finds a frame's symbols and unwinding rules through the module that
 * holds its PC, and scans past code no module holds. So each JIT object (an image of the JIT
 * interface: its code ranges) and each executable mapping that holds a perf map's or a
 * jitdump's code becomes a module of its own, named "jit-" and its identifier, which is a
 * hash of the module's bytes: the same code gives the same identifier, whatever the address
 * it was put at, so a symbol store keeps one file for it. The symbol file says what jitmap
 * knows and nothing more:
 *   - FUNC records: an image's function symbols, and each JIT frame's function as jitmap
 *     named it (its range from the image, the perf map's line or the jitdump);
 *   - STACK CFI records: for each JIT frame whose caller jitmap's own unwinder proved, that
 *     step's rule (jitmap_stack_frame.rule: a CFI row, the stackmap's frame size, the code
 *     walk, a known function's frame pointer) at the address Breakpad looks it up at: the PC
 *     of the crashing frame, and for a caller its return address less one (x86-64) or less
 *     four (AArch64), where the walker asks for the call's row. Never a guess's: a step
 *     only a guess took has no row, and the walker says how it went on. A proven step's
 *     rule is a fact about the code at its PC (its CFI, its frame size, its instructions
 *     from its start), whatever the frame's registers, so a frame that a guess below it
 *     reached (a runtime's builtins without CFI under Node's JS frames) still gets its row:
 *     the walker uses it only where its own walk arrives at that PC.
 * The memory a dump carries besides the stacks: each JIT frame's function bytes (64 KiB of it
 * at most), for readers that disassemble (Breakpad's walker reads none). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jitmap/breakpad.h>

#include "minidump_tool.h"

#define MAX_JIT_MODULES 1024
#define MAX_MODULE_BYTES (UINT64_C(64) << 20)  /* of one module hashed at most */
#define MAX_HASHED_BYTES (UINT64_C(256) << 20) /* of all modules */
#define MAX_SAMPLE_BYTES (UINT64_C(64) << 10)  /* of a module past that */
#define MAX_MEMORY 4096                         /* function ranges carried (the dump's
						 * regions are 4096 at most) */
#define MAX_FUNC_BYTES (UINT64_C(64) << 10)   /* a function's bytes carried at most */

/* The module that holds a JIT frame: its image's code ranges, else the mapping of the
 * process that holds its code (a perf map's code lies in the runtime's anonymous memory). */
static int module_range(struct target *t, const struct frame_out *fo, uint64_t *lo,
			uint64_t *hi)
{
	if (fo->image) {
		*lo = UINT64_MAX;
		*hi = 0;
		for (size_t i = 0; i < jitmap_image_num_code_ranges(fo->image); i++) {
			const jitmap_image_range *r = jitmap_image_code_range(fo->image, i);
			if (r && r->hi > r->lo) {
				*lo = r->lo < *lo ? r->lo : *lo;
				*hi = r->hi > *hi ? r->hi : *hi;
			}
		}
		return *hi > *lo ? 0 : -ENOENT;
	}
	jitmap_stopped_memory_info mi = {.sz = sizeof(mi)};
	if (jitmap_stopped_memory(t->stopped, fo->code_pc, &mi) ||
	    mi.segment_end <= mi.segment_start)
		return -ENOENT;
	*lo = mi.segment_start;
	*hi = mi.segment_end;
	return 0;
}

static bool overlaps(const struct jit_module *m, uint64_t lo, uint64_t hi)
{
	return lo < m->base + m->size && m->base < hi;
}

/* A JIT frame's module made or grown (first pass): ranges that overlap are one module, since
 * Breakpad keeps one of two overlapping modules and would look the other's frames up in it
 * (an image's code inside a perf map's mapping, two images sharing a slab). */
static int module_add(struct jit_modules *jm, struct target *t, const struct frame_out *fo)
{
	uint64_t lo, hi;
	if (module_range(t, fo, &lo, &hi))
		return -ENOENT;
	struct jit_module *m = NULL;
	for (size_t i = 0; i < jm->n && !m; i++)
		if (overlaps(&jm->v[i], lo, hi))
			m = &jm->v[i];
	if (!m) {
		if (jm->n == MAX_JIT_MODULES)
			return -ENOSPC;
		if (jm->n == jm->cap) {
			const size_t cap = jm->cap ? 2 * jm->cap : 16;
			struct jit_module *v = realloc(jm->v, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			jm->v = v;
			jm->cap = cap;
		}
		m = &jm->v[jm->n++];
		memset(m, 0, sizeof(*m));
		m->base = lo;
		m->size = hi - lo;
	}
	const uint64_t end = m->base + m->size > hi ? m->base + m->size : hi;
	m->base = m->base < lo ? m->base : lo;
	m->size = end - m->base;
	bool known = !fo->image;
	for (unsigned k = 0; k < m->nimages; k++)
		known |= m->images[k] == fo->image;
	if (!known && m->nimages < MAX_MODULE_IMAGES)
		m->images[m->nimages++] = fo->image;
	return 0;
}

static int by_base(const void *a, const void *b)
{
	const struct jit_module *x = a, *y = b;
	return x->base < y->base ? -1 : x->base > y->base;
}

/* The modules in address order, those that overlap (one grown over another) made one. */
static void merge_modules(struct jit_modules *jm)
{
	if (jm->n < 2)
		return;
	qsort(jm->v, jm->n, sizeof(*jm->v), by_base);
	size_t out = 0;
	for (size_t i = 1; i < jm->n; i++) {
		struct jit_module *m = &jm->v[out], *o = &jm->v[i];
		if (!overlaps(m, o->base, o->base + o->size)) {
			jm->v[++out] = *o;
			continue;
		}
		if (o->base + o->size > m->base + m->size)
			m->size = o->base + o->size - m->base;
		for (unsigned k = 0; k < o->nimages && m->nimages < MAX_MODULE_IMAGES; k++)
			m->images[m->nimages++] = o->images[k];
	}
	jm->n = out + 1;
}

/* The module that holds a JIT frame's code (second pass). */
static struct jit_module *module_of(struct jit_modules *jm, struct target *t,
				    const struct frame_out *fo)
{
	uint64_t lo, hi;
	if (module_range(t, fo, &lo, &hi))
		return NULL;
	for (size_t i = 0; i < jm->n; i++)
		if (lo >= jm->v[i].base && hi - jm->v[i].base <= jm->v[i].size)
			return &jm->v[i];
	return NULL;
}

/* The module's identifier: a hash of its bytes as the process had them (a page that cannot
 * be read counts as zeros, and the size is hashed too: the same code at another address
 * gives the same identifier). At most 64 MiB of a module and 256 MiB of all are hashed (a
 * hostile core's thousand modules of 64 MiB would keep a crash handler for minutes); past
 * that, a module's first 64 KiB. A module none of whose bytes can be read (a small core
 * that left them out) would get an identifier its size alone makes, which another module
 * of that size shares: its symbol file would be merged with that one's, and name its frames
 * with another code's functions. It gets one of this dump alone (`unique`). */
static void module_id(struct target *t, struct jit_modules *jm, struct jit_module *m)
{
	uint64_t len = m->size < MAX_MODULE_BYTES ? m->size : MAX_MODULE_BYTES;
	if (jm->hashed + len > MAX_HASHED_BYTES)
		len = len < MAX_SAMPLE_BYTES ? len : MAX_SAMPLE_BYTES;
	jm->hashed += len;
	uint8_t *b = calloc(1, (size_t)len + 16);
	uint64_t readable = 0;
	if (b) {
		const jitmap_target mem = jitmap_stopped_target(t->stopped);
		char why[8];
		for (uint64_t off = 0; off < len; off += 4096) {
			const uint64_t n = len - off < 4096 ? len - off : 4096;
			if (mem.read_mem(mem.ctx, m->base + off, b + off, (size_t)n, why, sizeof(why)))
				memset(b + off, 0, (size_t)n);
			else
				readable += n;
		}
	}
	uint64_t tail[2] = {m->size, 0};
	if (!readable) {
		m->unique = true;
		tail[1] = (uint64_t)time(NULL) << 32 ^ (uint64_t)jitmap_stopped_pid(t->stopped) ^
			  m->base;
	}
	if (b) {
		memcpy(b + len, tail, sizeof(tail));
		jitmap_breakpad_code_id(b, (size_t)len + sizeof(tail), m->id);
		free(b);
	} else {
		jitmap_breakpad_code_id(tail, sizeof(tail), m->id);
	}
	snprintf(m->name, sizeof(m->name), "jit-%02x%02x%02x%02x%02x%02x", m->id[0], m->id[1],
		 m->id[2], m->id[3], m->id[4], m->id[5]);
}

/* A function's bytes to carry: appended (at most MAX_MEMORY * 16 asked), made unique and cut
 * to MAX_MEMORY in frame order at the end (finish_memory): no search per frame. */
static int add_memory(struct jit_modules *jm, uint64_t lo, uint64_t hi)
{
	if (jm->nmem == (size_t)MAX_MEMORY * 16)
		return 0;
	if (jm->nmem == jm->capmem) {
		const size_t cap = jm->capmem ? 2 * jm->capmem : 32;
		jitmap_minidump_range *v = realloc(jm->mem, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		jm->mem = v;
		jm->capmem = cap;
	}
	jm->mem[jm->nmem++] = (jitmap_minidump_range){lo, hi};
	return 0;
}

static int by_range(const void *a, const void *b)
{
	const jitmap_minidump_range *x = a, *y = b;
	return x->lo != y->lo ? (x->lo < y->lo ? -1 : 1) : (x->hi > y->hi) - (x->hi < y->hi);
}

/* The ranges asked, each once, MAX_MEMORY at most (the innermost frames' first: the
 * crashing thread's are asked first, and the walker's order is kept by the list's). */
static void finish_memory(struct jit_modules *jm)
{
	if (jm->nmem > MAX_MEMORY * 2) /* the first ones: they are the innermost */
		jm->nmem = MAX_MEMORY * 2;
	qsort(jm->mem, jm->nmem, sizeof(*jm->mem), by_range);
	size_t out = 0;
	for (size_t i = 0; i < jm->nmem; i++)
		if (!out || by_range(&jm->mem[out - 1], &jm->mem[i]))
			jm->mem[out++] = jm->mem[i];
	jm->nmem = out < MAX_MEMORY ? out : MAX_MEMORY;
}

/* Where Breakpad's walker looks up the row of a frame: the PC of the thread's first frame
 * (its context's), else the call before its return address, to the return address: a frame
 * a signal interrupted (exact, but not the first) too, since the walker takes every
 * caller's PC as a return address. -1 where it cannot say. */
static int row_at(jitmap_arch arch, const struct frame_out *fo, bool first, uint64_t *addr,
		  uint64_t *size)
{
	if (first) {
		*addr = fo->pc;
		*size = 1;
		return 0;
	}
	if (jitmap_breakpad_caller_pc(arch, fo->pc, addr))
		return -1;
	*size = fo->pc - *addr;
	return 0;
}

int minidump_jit_collect(struct target *t, struct jit_modules *jm)
{
	/* The modules first, so that each one's identifier (its file's name) is known before
	 * its records are. */
	for (size_t i = 0; i < t->nthreads; i++)
		for (size_t k = 0; k < t->threads[i].nframes; k++) {
			const struct frame_out *fo = &t->threads[i].frames[k];
			const int rc = fo->jit && !fo->inlined ? module_add(jm, t, fo) : 0;
			if (rc == -ENOMEM)
				return rc;
			jm->unplaced += rc != 0;
		}
	merge_modules(jm);
	for (size_t i = 0; i < jm->n; i++) {
		struct jit_module *m = &jm->v[i];
		module_id(t, jm, m);
		jm->unique += m->unique;
		m->sym = jitmap_breakpad_sym_new(t->arch, m->name, m->id, sizeof(m->id), m->base);
		if (!m->sym)
			return -ENOMEM;
		/* Its images' own function symbols: all of them, whether on a stack or not. */
		for (unsigned g = 0; g < m->nimages; g++)
			for (size_t s = 0; s < jitmap_image_num_symbols(m->images[g]); s++) {
				jitmap_image_symbol_info si = {.sz = sizeof(si)};
				if (jitmap_image_symbol(m->images[g], s, &si) == 0 && si.name &&
				    si.size && si.address >= m->base && si.address - m->base < m->size)
					jitmap_breakpad_sym_func(m->sym, si.address, si.size, si.name);
			}
	}
	for (size_t i = 0; i < t->nthreads; i++) {
		bool seen = false; /* a frame of the thread that is not an inlined one */
		for (size_t k = 0; k < t->threads[i].nframes; k++) {
			const struct frame_out *fo = &t->threads[i].frames[k];
			const bool first = !seen && !fo->inlined;
			seen |= !fo->inlined;
			if (!fo->jit || fo->inlined)
				continue;
			struct jit_module *m = module_of(jm, t, fo);
			if (!m || !m->sym)
				continue;
			if (fo->function && fo->func_hi > fo->func_lo && fo->func_lo >= m->base &&
			    fo->func_hi - m->base <= m->size) {
				jitmap_breakpad_sym_func(m->sym, fo->func_lo, fo->func_hi - fo->func_lo,
							 fo->function);
				const uint64_t hi = fo->func_hi - fo->func_lo > MAX_FUNC_BYTES
					? fo->func_lo + MAX_FUNC_BYTES : fo->func_hi;
				if (add_memory(jm, fo->func_lo, hi))
					return -ENOMEM;
			}
			uint64_t addr, size;
			if (fo->rule && row_at(t->arch, fo, first, &addr, &size) == 0) {
				if (jitmap_breakpad_sym_cfi(m->sym, addr, size, fo->rule) == 0)
					jm->rows++;
				else /* a register Breakpad has no name for */
					jm->refused++;
			}
		}
	}
	finish_memory(jm);
	return 0;
}

int minidump_jit_write_symbols(struct jit_modules *jm, const char *dir)
{
	int failed = 0;
	for (size_t i = 0; i < jm->n; i++) {
		char path[4096];
		jitmap_error err = {0};
		if (jitmap_breakpad_sym_write(jm->v[i].sym, dir, path, sizeof(path), &err)) {
			fprintf(stderr, "jitmap-minidump: cannot write the symbol file of %s under %s: "
				"%s\n", jm->v[i].name, dir, err.reason[0] ? err.reason
								  : "failed");
			failed = -1;
		}
	}
	return failed;
}

void minidump_jit_free(struct jit_modules *jm)
{
	for (size_t i = 0; i < jm->n; i++)
		jitmap_breakpad_sym_free(jm->v[i].sym);
	free(jm->v);
	free(jm->mem);
	memset(jm, 0, sizeof(*jm));
}

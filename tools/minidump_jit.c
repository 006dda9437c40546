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

#include <jitmap/breakpad.h>

#include "minidump_tool.h"

#define MAX_JIT_MODULES 1024
#define MAX_MODULE_BYTES (UINT64_C(64) << 20) /* hashed at most */
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

static struct jit_module *module_for(struct jit_modules *jm, struct target *t,
				     const struct frame_out *fo)
{
	uint64_t lo, hi;
	if (module_range(t, fo, &lo, &hi))
		return NULL;
	for (size_t i = 0; i < jm->n; i++)
		if (jm->v[i].base == lo && jm->v[i].size == hi - lo)
			return &jm->v[i];
	if (jm->n == MAX_JIT_MODULES)
		return NULL;
	if (jm->n == jm->cap) {
		const size_t cap = jm->cap ? 2 * jm->cap : 16;
		struct jit_module *v = realloc(jm->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		jm->v = v;
		jm->cap = cap;
	}
	struct jit_module *m = &jm->v[jm->n++];
	memset(m, 0, sizeof(*m));
	m->base = lo;
	m->size = hi - lo;
	m->image = fo->image;
	return m;
}

/* The module's identifier: a hash of its bytes as the process had them (a page that cannot
 * be read counts as zeros, and the size is hashed too: the same code at another address
 * gives the same identifier). */
static void module_id(struct target *t, struct jit_module *m)
{
	const uint64_t len = m->size < MAX_MODULE_BYTES ? m->size : MAX_MODULE_BYTES;
	uint8_t *b = calloc(1, (size_t)len + 8);
	if (b) {
		const jitmap_target mem = jitmap_stopped_target(t->stopped);
		char why[8];
		for (uint64_t off = 0; off < len; off += 4096) {
			const uint64_t n = len - off < 4096 ? len - off : 4096;
			if (mem.read_mem(mem.ctx, m->base + off, b + off, (size_t)n, why, sizeof(why)))
				memset(b + off, 0, (size_t)n);
		}
		for (unsigned k = 0; k < 8; k++)
			b[len + k] = (uint8_t)(m->size >> (8 * k));
		jitmap_breakpad_code_id(b, (size_t)len + 8, m->id);
		free(b);
	} else {
		jitmap_breakpad_code_id(&m->size, sizeof(m->size), m->id);
	}
	snprintf(m->name, sizeof(m->name), "jit-%02x%02x%02x%02x%02x%02x", m->id[0], m->id[1],
		 m->id[2], m->id[3], m->id[4], m->id[5]);
}

static int add_memory(struct jit_modules *jm, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < jm->nmem; i++)
		if (jm->mem[i].lo == lo && jm->mem[i].hi == hi)
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

/* Where Breakpad's walker looks up the row of a frame: the PC of a frame that stands there
 * (the crashing frame), else the call before its return address, to the return address.
 * -1 where it cannot say. */
static int row_at(jitmap_arch arch, const struct frame_out *fo, uint64_t *addr, uint64_t *size)
{
	if (fo->exact) {
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
			if (fo->jit && !fo->inlined && !module_for(jm, t, fo) && jm->n < MAX_JIT_MODULES)
				jm->unplaced++;
		}
	for (size_t i = 0; i < jm->n; i++) {
		struct jit_module *m = &jm->v[i];
		module_id(t, m);
		m->sym = jitmap_breakpad_sym_new(t->arch, m->name, m->id, sizeof(m->id), m->base);
		if (!m->sym)
			return -ENOMEM;
		/* An image's own function symbols: all of them, whether on a stack or not. */
		for (size_t s = 0; m->image && s < jitmap_image_num_symbols(m->image); s++) {
			jitmap_image_symbol_info si = {.sz = sizeof(si)};
			if (jitmap_image_symbol(m->image, s, &si) == 0 && si.name && si.size &&
			    si.address >= m->base && si.address - m->base < m->size)
				jitmap_breakpad_sym_func(m->sym, si.address, si.size, si.name);
		}
	}
	for (size_t i = 0; i < t->nthreads; i++)
		for (size_t k = 0; k < t->threads[i].nframes; k++) {
			const struct frame_out *fo = &t->threads[i].frames[k];
			if (!fo->jit || fo->inlined)
				continue;
			struct jit_module *m = module_for(jm, t, fo);
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
			if (fo->rule && row_at(t->arch, fo, &addr, &size) == 0) {
				if (jitmap_breakpad_sym_cfi(m->sym, addr, size, fo->rule) == 0)
					jm->rows++;
				else /* a register Breakpad has no name for */
					jm->refused++;
			}
		}
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

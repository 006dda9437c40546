/* reader.c: jitmap-reader.so, GDB's JIT reader plugin for jitmap.
 *
 * GDB hands the reader every JIT entry (an in-memory ELF image) and asks it to unwind every
 * frame of the process. The reader:
 *   - hands each entry's image to libjitmap's process model (jitmap_process_add_image),
 *     which owns reading its stackmap (the live section at sh_addr, the registered copy's
 *     addresses while MCJIT has not relocated it, a section rewritten in place) and one
 *     jitmap_index over them; the reader keeps what GDB's slots need: code ranges, function
 *     symbols, the live .eh_frame (gdb-jit-interface.md §4);
 *   - declines every entry whose functions GDB's own ELF reader names (GDB then has their
 *     names, found by name too, their DWARF and CFI), and claims (one symtab, one block per
 *     function symbol) only those it would leave as `?? ()`, or, when asked
 *     (JITMAP_READER_CLAIM_AUTO, for fast registration), every entry without DWARF;
 *   - unwinds frames in JIT code with libjitmap's unwinder (CFI, the stackmap's frame size
 *     at record PCs, the frame-pointer chain), except where GDB's DWARF unwinder already has
 *     the CFI of a declined entry;
 *   - gives the Python commands that index (jitmap-reader-api.h).
 *
 * GDB 13 traps (gdb-jit-interface.md §2, docs/gdb.md): block_open with a NULL name crashes
 * GDB; so does a NULL from gdb_init_reader; reg_get with a DWARF number the architecture does
 * not map aborts it; reg_set frees the value with its `free` member without checking for NULL,
 * and supplies the bytes even when `defined` is 0 (registers we do not set are the ones GDB
 * shows as <not saved>). Nothing read from the inferior is trusted: every size is capped,
 * every address range checked for overflow.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gdb/jit-reader.h>

#include <jitmap/jitmap.h>
#include <jitmap/process.h>
#include <jitmap/unwind.h>

#include "jitmap-reader-api.h"

/* GDB refuses a reader without this symbol; the build hides symbols by default. */
#pragma GCC visibility push(default)
GDB_DECLARE_GPL_COMPATIBLE_READER
#pragma GCC visibility pop

/* -- Limits -- */

#define MAX_IMAGE_SIZE (UINT64_C(1) << 30) /* a JIT image larger than this is declined */
#define MAX_LIVE_READ (UINT64_C(64) << 20)  /* CFI read from the target */
#define MAX_CODE_SPAN (UINT64_C(1) << 36)   /* one code section */
#define MAX_NAME 1024                       /* function names are cut here */
#define READ_CHUNK (1 << 20)                /* target_read takes an int length */
#define SNAP_LEN 16                         /* bytes sampled to detect stale entries */
#define CACHE_SLOTS 8
#define MEM_LINE 128                        /* target memory read at once while unwinding */

/* GDB's jit-reader API numbers registers as the DWARF numbering of the architecture GDB
 * debugs, and gives their bytes in its byte order, but says neither: jitmap.gdb tells the
 * reader (jitmap_reader_set_arch); until then it takes the host's (jitmap_arch_host), never an
 * image's. Every register role comes from libjitmap's table (jitmap/arch.h). */
#define MAX_GPR 64 /* registers kept per cached frame */

/* The register roles of the architecture being debugged, from its table. */
static struct {
	jitmap_arch arch;  /* JITMAP_ARCH_UNKNOWN: none usable */
	bool big_endian;   /* GDB's register bytes */
	int sp, fp, pc;
	int ngpr;          /* DWARF 0..ngpr-1: the registers read from GDB (the PC apart) */
	int first_clobber; /* the lowest-numbered caller-saved register */
} R;

/* Take the register roles of `arch`: false (R unchanged) when its table lacks one. */
static bool set_roles(jitmap_arch arch, bool big_endian)
{
	const int sp = jitmap_reg_sp(arch), fp = jitmap_reg_fp(arch), pc = jitmap_reg_pc(arch);
	/* The PC is the last of the core registers where it is numbered among them (x86-64's
	 * rip, AArch64's pc), apart from them elsewhere (s390x's PSW address, 65). */
	const int ncore = (int)jitmap_arch_num_core_regs(arch);
	const int ngpr = ncore - (pc >= 0 && pc == ncore - 1 ? 1 : 0);
	int first_clobber = -1;
	for (int n = 0; n < ngpr && first_clobber < 0; n++)
		if (!jitmap_reg_is_callee_saved(arch, (unsigned)n))
			first_clobber = n;
	if (sp < 0 || fp < 0 || pc < 0 || ngpr <= 0 || ngpr > MAX_GPR || first_clobber < 0)
		return false;
	R.arch = arch;
	R.big_endian = big_endian;
	R.sp = sp;
	R.fp = fp;
	R.pc = pc;
	R.ngpr = ngpr;
	R.first_clobber = first_clobber;
	return true;
}

/* -- State -- */

struct func {
	uint64_t lo, hi;
	char *name;
	bool gdb_named; /* GDB's own ELF reader names it too (not absolute, in a code section) */
};

struct span {
	uint64_t lo, hi;
};

struct entry {
	uint64_t serial;
	size_t pos; /* in reader.entries */
	jitmap_arch arch;
	bool big_endian, claimed, debug_info;
	bool values_are_addresses; /* ET_REL symbols hold addresses (JITMAP_SYMBOL_VALUE_IS_ADDRESS) */
	struct span *code; /* executable sections, sorted, disjoint */
	size_t ncode;
	struct func *funcs; /* sorted, disjoint, inside `code` */
	size_t nfuncs;
	size_t ngdb_named; /* how many of them GDB's own reader names */
	char *file_name; /* STT_FILE, or NULL */

	/* .llvm_stackmaps: the process model's (the image handed in as `image_id`); `sm` is
	 * what it last gave, valid until the next jitmap_process_recheck. */
	uint64_t image_id;
	bool has_sm;
	uint64_t sm_addr, sm_size;
	const jitmap_stackmap *sm;

	/* CFI: .eh_frame live at eh_addr, .debug_frame copied from the image. */
	uint64_t eh_addr, eh_size;
	void *df;
	size_t df_len;
	jitmap_cfi *cfi;
	uint64_t cfi_tried;

	/* Staleness: the first bytes of the code, sampled at first use. */
	uint64_t checked; /* generation of the last check */
	bool usable;      /* the result of that check */
	bool sampled;
	uint64_t snap_addr;
	uint8_t snap[SNAP_LEN];

	char problem[256];
};

struct slot {
	uint64_t lo, hi;
	struct entry *e;
};

struct cache_slot {
	uint64_t gen, epoch; /* valid while both match the reader's */
	uint64_t pc, known;
	uint64_t reg[MAX_GPR];
	struct entry *e;
	jitmap_unwind_result res;
	uint64_t func_lo;
	bool outermost;
};

/* Target memory read while unwinding one frame: the return address and the save slots of a
 * frame's callee-saved registers sit within a few words of its CFA, and each target_read
 * through GDB is a system call (GDB's own unwinder reads the stack through its stack cache).
 * Valid for one compute() only: nothing is kept across frames or stops. */
struct mem_line {
	bool valid;
	uint64_t base;
	uint8_t bytes[MEM_LINE];
};

struct reader {
	struct gdb_reader_funcs funcs;
	gdb_target_read *target_read; /* GDB's, remembered from its last call */
	struct mem_line lines[2];     /* see struct mem_line */
	unsigned line_next;
	int claim_mode;
	bool debug;
	bool arch_told; /* the debugger said which architecture it debugs: R is that one's */
	uint64_t gen;   /* bumped by jitmap_reader_invalidate(RECHECK) */
	uint64_t epoch; /* bumped whenever an entry or what it caches changes */
	uint64_t next_serial;
	struct entry **entries;
	size_t nentries, entries_cap;
	struct slot *slots; /* every entry's code ranges, sorted, disjoint */
	size_t nslots, slots_cap;
	jitmap_process *proc; /* the entries' stackmaps, one index over them */
	struct cache_slot cache[CACHE_SLOTS];
	unsigned cache_next;
	jitmap_reader_stats stats;
};

static struct reader *g_reader; /* for the exported API: GDB has one reader at a time */
static uint64_t g_serial;        /* how many readers GDB has loaded from this library */
static char g_last_error[256];
/* The claim mode, kept across jit-reader-unload and jit-reader-load (which destroy and make
 * the reader again) so that `jit-reader-unload`, `jit-reader-load` re-reads the entries under
 * the mode the user set; -1 until the first gdb_init_reader reads the environment. */
static int g_claim_mode = -1;

static void note(struct reader *r, struct entry *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void note(struct reader *r, struct entry *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(g_last_error, sizeof(g_last_error), fmt, ap);
	va_end(ap);
	if (e)
		snprintf(e->problem, sizeof(e->problem), "%s", g_last_error);
	if (r && r->debug)
		fprintf(stderr, "jitmap-reader: %s\n", g_last_error);
}

/* -- Target memory -- */

static int target_read(struct reader *r, uint64_t addr, void *buf, size_t len)
{
	if (!r->target_read)
		return -ENODEV;
	if (len && addr + len - 1 < addr)
		return -EFAULT;
	uint8_t *p = buf;
	while (len) {
		const int n = len > READ_CHUNK ? READ_CHUNK : (int)len;
		if (r->target_read(addr, p, n) != GDB_SUCCESS)
			return -EFAULT;
		addr += (uint64_t)n;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The unwinder's reads: through a small line cache (struct mem_line), falling back to the
 * exact read when a whole line cannot be read (the end of a mapping). */
static int unwind_read_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			   size_t why_len)
{
	struct reader *r = ctx;
	(void)why;
	(void)why_len;
	if (len > MEM_LINE / 2 || addr > UINT64_MAX - MEM_LINE)
		return target_read(r, addr, buf, len);
	for (unsigned i = 0; i < 2; i++) {
		const struct mem_line *l = &r->lines[i];
		if (l->valid && addr >= l->base && addr + len <= l->base + MEM_LINE) {
			memcpy(buf, l->bytes + (addr - l->base), len);
			return 0;
		}
	}
	struct mem_line *l = &r->lines[r->line_next++ % 2];
	l->base = addr & ~(uint64_t)(MEM_LINE / 2 - 1); /* addr + len fits: len <= MEM_LINE / 2 */
	l->valid = target_read(r, l->base, l->bytes, MEM_LINE) == 0;
	if (!l->valid)
		return target_read(r, addr, buf, len);
	memcpy(buf, l->bytes + (addr - l->base), len);
	return 0;
}

/* The process model's reads (its jitmap_target). */
static int process_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			size_t why_len)
{
	const int rc = target_read(ctx, addr, buf, len);
	if (rc)
		snprintf(why, why_len, "%s", rc == -ENODEV ? "GDB has not given the reader a way to "
			 "read memory yet" : "GDB cannot read that memory");
	return rc;
}

/* A malloc'd copy of `len` bytes at `addr` in the target, or NULL. */
static void *target_copy(struct reader *r, uint64_t addr, uint64_t len)
{
	if (!len || len > MAX_LIVE_READ)
		return NULL;
	void *buf = malloc(len);
	if (buf && target_read(r, addr, buf, len)) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/* -- Entries: creation from an ELF image -- */

static void entry_free(struct entry *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nfuncs; i++)
		free(e->funcs[i].name);
	free(e->funcs);
	free(e->code);
	free(e->file_name);
	free(e->df);
	jitmap_cfi_free(e->cfi);
	free(e);
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

static int cmp_func(const void *a, const void *b)
{
	const struct func *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->hi < y->hi) - (x->hi > y->hi); /* the larger first */
}

/* The element of a sorted array of non-overlapping [lo, hi) ranges that holds `addr`, or
 * NULL. Serves spans and functions alike: both start with `uint64_t lo, hi` (checked below). */
static const void *range_at(const void *base, size_t n, size_t stride, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (((const struct span *)((const char *)base + mid * stride))->lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const void *at = (const char *)base + (lo - 1) * stride;
	return addr < ((const struct span *)at)->hi ? at : NULL;
}
_Static_assert(offsetof(struct func, lo) == offsetof(struct span, lo) &&
		       offsetof(struct func, hi) == offsetof(struct span, hi),
	       "range_at reads functions as spans");

/* The code span of `e` holding `addr`, or NULL. */
static const struct span *code_at(const struct entry *e, uint64_t addr)
{
	return range_at(e->code, e->ncode, sizeof(*e->code), addr);
}

static const struct func *func_at(const struct entry *e, uint64_t addr)
{
	return range_at(e->funcs, e->nfuncs, sizeof(*e->funcs), addr);
}

/* Sort and merge the code spans; sort the functions, drop duplicates, cut each at the next
 * one and at the end of its span: GDB wants blocks that do not overlap. */
static void tidy_entry(struct entry *e)
{
	if (e->ncode) {
		qsort(e->code, e->ncode, sizeof(*e->code), cmp_span);
		size_t n = 0;
		for (size_t i = 0; i < e->ncode; i++) {
			if (n && e->code[i].lo <= e->code[n - 1].hi) {
				if (e->code[i].hi > e->code[n - 1].hi)
					e->code[n - 1].hi = e->code[i].hi;
			} else {
				e->code[n++] = e->code[i];
			}
		}
		e->ncode = n;
	}
	if (!e->nfuncs)
		return;
	qsort(e->funcs, e->nfuncs, sizeof(*e->funcs), cmp_func);
	size_t n = 0;
	for (size_t i = 0; i < e->nfuncs; i++) {
		struct func *f = &e->funcs[i];
		if (n && f->lo == e->funcs[n - 1].lo) { /* an alias: keep the first (largest) */
			e->funcs[n - 1].gdb_named |= f->gdb_named; /* GDB names the address */
			free(f->name);
			continue;
		}
		if (n && e->funcs[n - 1].hi > f->lo)
			e->funcs[n - 1].hi = f->lo;
		e->funcs[n++] = *f;
	}
	e->nfuncs = n;
	/* Zero-sized symbols (hand-written code) reach the next function or the span's end. */
	for (size_t i = 0; i < e->nfuncs; i++) {
		struct func *f = &e->funcs[i];
		const struct span *s = code_at(e, f->lo);
		uint64_t limit = s ? s->hi : f->lo;
		if (i + 1 < e->nfuncs && e->funcs[i + 1].lo < limit)
			limit = e->funcs[i + 1].lo;
		if (f->hi == f->lo || f->hi > limit)
			f->hi = limit;
	}
	n = 0;
	for (size_t i = 0; i < e->nfuncs; i++) {
		if (e->funcs[i].hi > e->funcs[i].lo)
			e->funcs[n++] = e->funcs[i];
		else
			free(e->funcs[i].name);
	}
	e->nfuncs = n;
}

/* Keep the image's function symbols that lie in its code. */
static int add_symbols(struct entry *e, const jitmap_image *img)
{
	const size_t n = jitmap_image_num_symbols(img);
	struct func *funcs = realloc(e->funcs, (e->nfuncs + n + 1) * sizeof(*funcs));
	if (!funcs)
		return -ENOMEM;
	e->funcs = funcs;
	for (size_t i = 0; i < n; i++) {
		jitmap_image_symbol_info s = {.sz = sizeof(s)};
		if (jitmap_image_symbol(img, i, &s) || !code_at(e, s.address))
			continue;
		/* GDB's ELF reader (elfread.c) makes an absolute symbol mst_abs, which its PC
		 * lookups skip, and a symbol of a section without SHF_EXECINSTR (BFD's SEC_CODE)
		 * a data symbol: neither names code, in bt or for break NAME. An ET_REL symbol
		 * whose value is an address GDB places outside its section. [checked: GDB 13] */
		const bool gdb_named = (s.flags & JITMAP_SYMBOL_IN_CODE) &&
				       !(s.flags & (JITMAP_SYMBOL_ABSOLUTE |
						    JITMAP_SYMBOL_VALUE_IS_ADDRESS));
		char *copy = strndup(s.name, MAX_NAME);
		if (!copy)
			return -ENOMEM;
		e->funcs[e->nfuncs++] = (struct func){s.address, s.address + s.size, copy, gdb_named};
		if (s.flags & JITMAP_SYMBOL_VALUE_IS_ADDRESS)
			e->values_are_addresses = true;
	}
	return 0;
}

/* Fill `e` from the ELF image (read by libjitmap). Returns 0, or a negative errno with the
 * reason in `why`. */
/* Hand the image to the process model (which reads its stackmap) and take from it what GDB's
 * slots need: code spans, function symbols, CFI. */
static int entry_from_image(struct reader *r, struct entry *e, const void *image, size_t size,
			    char *why, size_t why_len)
{
	char where[48];
	snprintf(where, sizeof(where), "JIT entry %" PRIu64, e->serial);
	int rc = jitmap_process_add_image(r->proc, image, size, where, &e->image_id);
	jitmap_source_info si = {.sz = sizeof(si)};
	if (rc || jitmap_process_image(r->proc, e->image_id, &si) || !si.image) {
		const char *p = rc ? NULL : jitmap_process_image_problem(r->proc, e->image_id, 0);
		snprintf(why, why_len, "%.150s", p ? p : jitmap_strerror(rc ? rc : -EINVAL));
		return rc ? rc : -EINVAL;
	}
	const jitmap_image *img = si.image;
	rc = -ENOMEM;
	e->arch = jitmap_image_arch(img);
	e->big_endian = jitmap_image_byte_order(img) == JITMAP_ORDER_BIG;
	e->debug_info = jitmap_image_has_debug_info(img);
	const char *file = jitmap_image_file_name(img);
	if (file && !(e->file_name = strndup(file, MAX_NAME)))
		goto out;

	const size_t ncode = jitmap_image_num_code_ranges(img);
	e->code = calloc(ncode + 1, sizeof(*e->code));
	if (!e->code)
		goto out;
	for (size_t i = 0; i < ncode; i++) {
		const jitmap_image_range *c = jitmap_image_code_range(img, i);
		if (c->hi - c->lo <= MAX_CODE_SPAN)
			e->code[e->ncode++] = (struct span){c->lo, c->hi};
	}

	uint64_t addr, len;
	if (!jitmap_image_stackmap_section(img, &addr, &len) && len) {
		e->has_sm = true;
		e->sm_addr = addr;
		e->sm_size = len;
	}
	if (!jitmap_image_eh_frame(img, &addr, &len) && len <= MAX_LIVE_READ) {
		e->eh_addr = addr;
		e->eh_size = len;
	}
	size_t df_len;
	const void *df = jitmap_image_debug_frame(img, &df_len);
	if (df && df_len <= MAX_LIVE_READ) {
		if (!(e->df = malloc(df_len)))
			goto out;
		memcpy(e->df, df, df_len);
		e->df_len = df_len;
	}
	rc = -EINVAL;
	if (!e->ncode) {
		snprintf(why, why_len, "no executable section placed in memory");
		goto out;
	}
	/* Code spans first: symbols are kept only inside them. */
	tidy_entry(e);
	rc = add_symbols(e, img);
	if (rc) {
		snprintf(why, why_len, "out of memory");
		goto out;
	}
	tidy_entry(e);
	for (size_t i = 0; i < e->nfuncs; i++)
		e->ngdb_named += e->funcs[i].gdb_named;
	rc = 0;
out:
	if (rc == -ENOMEM)
		snprintf(why, why_len, "out of memory");
	return rc;
}

/* -- Entries: the reader's table -- */

/* The first slot whose range ends after `addr`. */
static size_t slot_search(const struct reader *r, uint64_t addr)
{
	size_t lo = 0, hi = r->nslots;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->slots[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct entry *entry_at(const struct reader *r, uint64_t addr)
{
	const size_t i = slot_search(r, addr);
	return i < r->nslots && r->slots[i].lo <= addr ? r->slots[i].e : NULL;
}

static void drop_entry(struct reader *r, struct entry *e)
{
	for (size_t k = 0; k < e->ncode; k++) {
		size_t i = slot_search(r, e->code[k].lo);
		if (i < r->nslots && r->slots[i].e == e) {
			memmove(&r->slots[i], &r->slots[i + 1], (r->nslots - i - 1) * sizeof(*r->slots));
			r->nslots--;
		}
	}
	r->entries[e->pos] = r->entries[--r->nentries];
	r->entries[e->pos]->pos = e->pos;
	jitmap_process_remove_image(r->proc, e->image_id);
	r->epoch++;
	entry_free(e);
}

/* Add `e`, replacing the entries whose code it overlaps. Returns 0 or -ENOMEM. */
static int add_entry(struct reader *r, struct entry *e)
{
	for (size_t k = 0; k < e->ncode; k++) {
		size_t i;
		while ((i = slot_search(r, e->code[k].lo)) < r->nslots &&
		       r->slots[i].lo < e->code[k].hi) {
			r->stats.replaced++;
			drop_entry(r, r->slots[i].e);
		}
	}
	if (r->nentries == r->entries_cap) {
		size_t cap = r->entries_cap ? 2 * r->entries_cap : 64;
		struct entry **v = realloc(r->entries, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->entries = v;
		r->entries_cap = cap;
	}
	if (r->nslots + e->ncode > r->slots_cap) {
		size_t cap = r->slots_cap ? 2 * r->slots_cap : 64;
		while (cap < r->nslots + e->ncode)
			cap *= 2;
		struct slot *v = realloc(r->slots, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->slots = v;
		r->slots_cap = cap;
	}
	for (size_t k = 0; k < e->ncode; k++) {
		size_t i = slot_search(r, e->code[k].lo);
		memmove(&r->slots[i + 1], &r->slots[i], (r->nslots - i) * sizeof(*r->slots));
		r->slots[i] = (struct slot){e->code[k].lo, e->code[k].hi, e};
		r->nslots++;
	}
	e->pos = r->nentries;
	r->entries[r->nentries++] = e;
	r->epoch++;
	return 0;
}

static void forget_all(struct reader *r)
{
	while (r->nentries) {
		r->stats.dropped++;
		drop_entry(r, r->entries[r->nentries - 1]);
	}
}

/* -- Staleness -- */

/* Whether `e` may be used now. Checks it once per generation; drops it (and returns false)
 * when its sampled code bytes changed or became unreadable. */
static bool entry_usable(struct reader *r, struct entry *e)
{
	if (e->checked == r->gen)
		return e->usable;
	e->checked = r->gen;
	uint8_t now[SNAP_LEN];
	if (!e->sampled) {
		/* The first function's first bytes, else the code's: prologues are the least
		 * likely bytes to hold relocations (MCJIT relocates after registering). */
		const uint64_t at = e->nfuncs ? e->funcs[0].lo : e->code[0].lo;
		const struct span *s = code_at(e, at);
		const size_t len = s && s->hi - at < SNAP_LEN ? (size_t)(s->hi - at) : SNAP_LEN;
		e->usable = target_read(r, at, e->snap, len) == 0;
		if (!e->usable) {
			note(r, e, "code at 0x%" PRIx64 " cannot be read", at);
			return false;
		}
		e->sampled = true;
		e->snap_addr = at;
		return true;
	}
	const struct span *s = code_at(e, e->snap_addr);
	const size_t len = s->hi - e->snap_addr < SNAP_LEN ? (size_t)(s->hi - e->snap_addr) : SNAP_LEN;
	if (target_read(r, e->snap_addr, now, len) || memcmp(now, e->snap, len)) {
		note(r, NULL, "entry %" PRIu64 " (code at 0x%" PRIx64 ") is stale: dropped",
		     e->serial, e->snap_addr);
		r->stats.dropped++;
		drop_entry(r, e);
		return false;
	}
	/* A stackmap the JIT rewrote in place is the process model's to notice (recheck). */
	e->usable = true;
	return true;
}

/* -- Lazy parsing -- */

/* The entry's stackmap as the process model has it now (read again after a recheck when the
 * model's rules say so: MCJIT relocating, a section rewritten in place). */
static void ensure_stackmap(struct reader *r, struct entry *e)
{
	const jitmap_stackmap *sm = jitmap_process_image_stackmap(r->proc, e->image_id);
	if (sm != e->sm) {
		e->sm = sm;
		r->epoch++;
	}
	const char *problem = jitmap_process_image_problem(r->proc, e->image_id, 0);
	if (problem && strcmp(problem, e->problem))
		note(r, e, "%s", problem);
}

static void ensure_cfi(struct reader *r, struct entry *e)
{
	if (e->cfi || (!e->eh_size && !e->df) || e->cfi_tried == r->gen)
		return;
	void *eh = e->eh_size ? target_copy(r, e->eh_addr, e->eh_size) : NULL;
	jitmap_error err = {0};
	if (e->eh_size && !eh && !e->df) {
		e->cfi_tried = r->gen;
		note(r, e, ".eh_frame at 0x%" PRIx64 " cannot be read", e->eh_addr);
		return;
	}
	e->cfi = jitmap_cfi_new(e->arch, eh, eh ? e->eh_size : 0, e->eh_addr, e->df, e->df_len, &err);
	if (!e->cfi) {
		e->cfi_tried = r->gen;
		note(r, e, "no usable CFI (%s)", *err.reason ? err.reason : jitmap_strerror(-errno));
	} else {
		r->epoch++;
	}
	free(eh);
}

/* -- Unwinding -- */

static void reg_value_free(struct gdb_reg_value *v)
{
	free(v);
}

/* Read DWARF register `n` of the frame: 0 with the value, -1 when GDB has none. */
static int get_reg(struct gdb_unwind_callbacks *cb, int n, uint64_t *out)
{
	struct gdb_reg_value *v = cb->reg_get(cb, n);
	if (!v)
		return -1;
	int rc = -1;
	if (v->defined && v->size > 0) {
		/* GDB's bytes are in the target's order (R.big_endian). */
		const size_t n = v->size < 8 ? (size_t)v->size : 8;
		uint64_t x = 0;
		for (size_t i = 0; i < n; i++)
			x |= (uint64_t)v->value[R.big_endian ? n - 1 - i : i] << (8 * i);
		*out = x;
		rc = 0;
	}
	if (v->free)
		v->free(v);
	return rc;
}

static void set_reg(struct gdb_unwind_callbacks *cb, int n, uint64_t value)
{
	/* GDB copies register_size bytes (8 for what we set) and then calls `free`. */
	struct gdb_reg_value *v = malloc(sizeof(*v) + sizeof(value));
	if (!v)
		return;
	v->size = sizeof(value);
	v->defined = 1;
	v->free = reg_value_free;
	for (size_t i = 0; i < sizeof(value); i++) /* in the target's order */
		v->value[R.big_endian ? sizeof(value) - 1 - i : i] = (uint8_t)(value >> (8 * i));
	cb->reg_set(cb, n, v);
}

/* Whether the instruction that ends at `pc` is a call: then `pc` is a return address. The
 * decoding is libjitmap's (jitmap_arch_call_before); the code must not be read before its
 * section. */
/* 1: a call ends at `pc`; 0: the code before `pc` is not a call; -1: it cannot be read. */
static int call_before(struct reader *r, const struct entry *e, uint64_t pc)
{
	const struct span *s = code_at(e, pc - 1);
	uint8_t b[16];
	size_t n = jitmap_arch_call_window(e->arch);
	if (!s || !n || n > sizeof(b))
		return 0;
	if (pc - s->lo < n)
		n = (size_t)(pc - s->lo);
	if (!n || target_read(r, pc - n, b, n))
		return -1;
	return jitmap_arch_call_before(e->arch, b, n);
}

/* Frame 0 or an outer frame? The jit-reader API does not say. An outer frame's PC is a return
 * address, and its caller-saved registers are unknown when the frame below was unwound by an
 * unwinder that says so (this one, for JIT frames below). So, in order:
 *   1. a caller-saved register is undefined: outer;
 *   2. the PC is a function's first byte: innermost (no call returns there);
 *   3. the instruction before the PC is a call: a return address; it is not: innermost
 *      (a record there is one a breakpoint or a trap stopped at: an AArch64 leaf's);
 *   4. the code before it cannot be read: a stackmap record at the PC says a return
 *      address (statepoint records follow calls); else innermost.
 * Treating frame 0 that stopped just after a call as an outer frame changes nothing: the
 * unwind rules at a return address and at the call are the same. */
static bool looks_innermost(struct reader *r, const struct entry *e,
			    const jitmap_frame_regs *regs)
{
	for (int n = 0; n < R.ngpr; n++)
		if (!jitmap_reg_is_callee_saved(e->arch, (unsigned)n) &&
		    !jitmap_frame_reg_known(regs, (unsigned)n))
			return false;
	const struct func *f = func_at(e, regs->pc);
	if (f && f->lo == regs->pc)
		return true;
	const int call = call_before(r, e, regs->pc);
	if (call >= 0)
		return !call;
	return !(e->sm && jitmap_stackmap_lookup(e->sm, regs->pc, NULL, 0));
}

struct frame_calc {
	struct entry *e;
	jitmap_unwind_result res;
	uint64_t func_lo;  /* the function's start, for the frame ID */
	bool outermost;    /* the CFI marks it outermost: res.cfa only, no caller */
};

/* Unwind the frame that `cb` shows into `fc`. Returns 0 (with fc->outermost set when the
 * frame is the outermost one); -ENOENT when the PC is not in JIT code the reader knows (the
 * fast path for every other frame of the process); -EAGAIN when GDB's own unwinder has this
 * frame's CFI; another negative errno when unwinding failed. */
static int compute(struct reader *r, struct gdb_unwind_callbacks *cb, struct frame_calc *fc)
{
	uint64_t pc;
	if (!r->nslots || R.pc < 0 || get_reg(cb, R.pc, &pc))
		return -ENOENT;
	struct entry *e = entry_at(r, pc);
	if (!e && pc)
		e = entry_at(r, pc - 1); /* a return address just past the end of the code */
	if (!e || e->arch != R.arch)
		return -ENOENT;
	r->target_read = cb->target_read;
	if (!entry_usable(r, e))
		return -ESTALE;
	if (!e->claimed) {
		/* GDB read this entry itself and unwinds it from its CFI where it covers. */
		ensure_cfi(r, e);
		if (e->cfi && (jitmap_cfi_covers(e->cfi, pc, NULL, NULL) ||
			       jitmap_cfi_covers(e->cfi, pc - 1, NULL, NULL)))
			return -EAGAIN;
	}

	jitmap_frame_regs regs;
	memset(&regs, 0, sizeof(regs));
	regs.pc = pc;
	/* Every GPR, each a call into GDB. In a frame whose first caller-saved register (rax) is
	 * undefined (the frame below was unwound by an unwinder that knows caller-saved
	 * registers are not saved: this one) the other caller-saved registers are undefined
	 * too, and an outer frame's CFI never needs them: skip them. */
	uint64_t v;
	const bool clobber_known = !get_reg(cb, R.first_clobber, &v);
	if (clobber_known)
		jitmap_frame_reg_set(&regs, (unsigned)R.first_clobber, v);
	for (int n = 0; n < R.ngpr; n++) {
		if (n == R.first_clobber)
			continue;
		const bool caller_saved = !jitmap_reg_is_callee_saved(e->arch, (unsigned)n);
		if ((clobber_known || !caller_saved) && !get_reg(cb, n, &v))
			jitmap_frame_reg_set(&regs, (unsigned)n, v);
	}
	if (!jitmap_frame_reg_known(&regs, (unsigned)R.sp))
		return -EINVAL;

	for (unsigned i = 0; i < CACHE_SLOTS; i++) {
		const struct cache_slot *c = &r->cache[i];
		if (c->e == e && c->gen == r->gen && c->epoch == r->epoch && c->pc == pc &&
		    c->known == regs.known[0] &&
		    !memcmp(c->reg, regs.reg, (size_t)R.ngpr * sizeof(c->reg[0]))) {
			fc->e = e;
			fc->res = c->res;
			fc->func_lo = c->func_lo;
			fc->outermost = c->outermost;
			return 0;
		}
	}

	ensure_stackmap(r, e);
	ensure_cfi(r, e);
	const bool innermost = looks_innermost(r, e, &regs);
	const uint64_t where = innermost ? pc : pc - 1;
	const struct func *f = func_at(e, where);
	uint64_t lo = 0, hi = 0;
	if (f) {
		lo = f->lo;
		hi = f->hi;
	} else if (!e->cfi || !jitmap_cfi_covers(e->cfi, where, &lo, &hi)) {
		lo = hi = 0;
	}
	const jitmap_unwind_code code = {
		.arch = e->arch,
		.cfi = e->cfi,
		.sm = e->sm,
		.func_lo = lo,
		.func_hi = hi,
		.is_innermost = innermost,
		.order = e->big_endian ? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE,
	};
	const jitmap_target target = {r, NULL, unwind_read_mem};
	r->lines[0].valid = r->lines[1].valid = false;
	char why[160] = "";
	int rc = jitmap_unwind_step(&code, &regs, &target, &fc->res, why, sizeof(why));
	fc->outermost = rc == -ESRCH;
	if (rc && !fc->outermost) {
		r->stats.unwind_failures++;
		note(r, e, "cannot unwind the frame at 0x%" PRIx64 ": %s", pc,
		     *why ? why : jitmap_strerror(rc));
		return rc;
	}
	fc->e = e;
	fc->func_lo = lo ? lo : (code_at(e, where) ? code_at(e, where)->lo : pc);

	struct cache_slot *c = &r->cache[r->cache_next++ % CACHE_SLOTS];
	*c = (struct cache_slot){.gen = r->gen, .epoch = r->epoch, .pc = pc,
				 .known = regs.known[0], .e = e, .res = fc->res,
				 .func_lo = fc->func_lo, .outermost = fc->outermost};
	memcpy(c->reg, regs.reg, (size_t)R.ngpr * sizeof(c->reg[0]));
	return 0;
}

/* -- GDB's callbacks -- */

/* Whether to give GDB the symbols of `e` ourselves (jitmap-reader-api.h, Claiming). Never
 * an image with DWARF: GDB's reader gives its variables and lines. By default, only an image
 * whose functions GDB's own reader would leave unnamed: a claimed image's functions are found
 * by address only, so claiming one that GDB names loses `break NAME`, `info symbol` and
 * `info functions` for it (worse than GDB alone). */
static bool want_claim(int mode, const struct entry *e)
{
	if (e->debug_info || !e->nfuncs)
		return false;
	switch (mode) {
	case JITMAP_READER_CLAIM_AUTO:
		return true;
	case JITMAP_READER_CLAIM_UNNAMED:
		return e->ngdb_named == 0;
	default:
		return false;
	}
}

static enum gdb_status read_debug_info(struct gdb_reader_funcs *self,
				       struct gdb_symbol_callbacks *cb, void *memory,
				       long memory_sz)
{
	struct reader *r = self->priv_data;
	r->target_read = cb->target_read;
	r->stats.reads++;
	const uint64_t serial = ++r->next_serial;
	if (!memory || memory_sz <= 0 || (uint64_t)memory_sz > MAX_IMAGE_SIZE) {
		r->stats.rejected++;
		note(r, NULL, "entry %" PRIu64 ": image size %ld out of range: left to GDB", serial,
		     memory_sz);
		return GDB_FAIL;
	}
	struct entry *e = calloc(1, sizeof(*e));
	if (!e)
		return GDB_FAIL;
	e->serial = serial;
	char why[160] = "";
	if (entry_from_image(r, e, memory, (size_t)memory_sz, why, sizeof(why))) {
		r->stats.rejected++;
		note(r, NULL, "entry %" PRIu64 " (%ld bytes) left to GDB: %s", serial, memory_sz, why);
		jitmap_process_remove_image(r->proc, e->image_id);
		entry_free(e);
		return GDB_FAIL;
	}
	/* Which architecture GDB debugs: what the debugger said (jitmap_reader_set_arch), else
	 * the host's. Never an image's: its e_machine is only the JIT's word, and an image of
	 * another architecture is neither claimed nor unwound, since its DWARF numbers may be
	 * ones the debugged architecture does not map and GDB aborts when a reader asks for such
	 * a register (an x86-64 process registering an image whose e_machine says s390x or
	 * AArch64: tests/fuzz/fuzz_plugin, told and untold). */
	if (e->arch != R.arch)
		note(r, e, "entry %" PRIu64 ": architecture %s, but GDB debugs %s%s: left to GDB",
		     serial, jitmap_arch_name(e->arch), jitmap_arch_name(R.arch),
		     r->arch_told ? "" : " (the reader was not told otherwise: jitmap.gdb tells it)");
	e->claimed = e->arch == R.arch && want_claim(r->claim_mode, e);
	if (add_entry(r, e)) {
		r->stats.rejected++;
		note(r, NULL, "entry %" PRIu64 ": out of memory", serial);
		jitmap_process_remove_image(r->proc, e->image_id);
		entry_free(e);
		return GDB_FAIL;
	}
	if (!e->claimed) {
		r->stats.declined++;
		return GDB_FAIL;
	}
	r->stats.claimed++;
	struct gdb_object *obj = cb->object_open(cb);
	struct gdb_symtab *st = cb->symtab_open(cb, obj, e->file_name);
	for (size_t i = 0; i < e->nfuncs; i++)
		cb->block_open(cb, st, NULL, e->funcs[i].lo, e->funcs[i].hi, e->funcs[i].name);
	cb->symtab_close(cb, st);
	cb->object_close(cb, obj);
	return GDB_SUCCESS;
}

static enum gdb_status unwind_frame(struct gdb_reader_funcs *self, struct gdb_unwind_callbacks *cb)
{
	struct reader *r = self->priv_data;
	struct frame_calc fc;
	if (compute(r, cb, &fc))
		return GDB_FAIL;
	if (fc.outermost) {
		/* GDB's JIT unwinder cannot mark a frame outermost: jit.c builds every frame ID
		 * with frame_id_build, and default_frame_unwind_stop_reason reports
		 * UNWIND_OUTERMOST only for outer_frame_id. Of what a reader can do, a caller
		 * whose PC is 0 is the one that ends the backtrace without an error: GDB shows
		 * that caller as `0x0000000000000000 in ?? ()` and stops there (frame.c: "NORMAL
		 * frames will never unwind a zero PC"). Declining would hand the frame to GDB's
		 * prologue analyzer, which walks on through whatever the stack holds; a PC left
		 * <not saved> makes the first `bt` after each stop end in the error "PC not
		 * saved" (and gdb.execute("bt") raise). [checked: GDB 13.1, docs/gdb.md] */
		r->stats.outermost++;
		set_reg(cb, R.sp, fc.res.cfa);
		set_reg(cb, R.pc, 0);
		return GDB_SUCCESS;
	}
	r->stats.unwinds++;
	const jitmap_frame_regs *c = &fc.res.caller;
	for (int n = 0; n < R.ngpr; n++)
		if (n != R.sp && jitmap_frame_reg_known(c, (unsigned)n))
			set_reg(cb, n, c->reg[n]);
	set_reg(cb, R.sp, jitmap_frame_reg_known(c, (unsigned)R.sp) ? c->reg[R.sp] : fc.res.cfa);
	set_reg(cb, R.pc, c->pc);
	return GDB_SUCCESS;
}

static struct gdb_frame_id get_frame_id(struct gdb_reader_funcs *self, struct gdb_unwind_callbacks *cb)
{
	struct reader *r = self->priv_data;
	struct frame_calc fc;
	struct gdb_frame_id id = {0, 0};
	/* GDB asks for the ID of a frame right after unwind_frame unwound it: within one stop
	 * (generation), a frame's PC, SP and frame pointer identify it, so the cached answer is
	 * found without reading the other registers. */
	uint64_t pc, sp, fp;
	if (R.pc >= 0 && !get_reg(cb, R.pc, &pc) && !get_reg(cb, R.sp, &sp) &&
	    !get_reg(cb, R.fp, &fp)) {
		for (unsigned i = 0; i < CACHE_SLOTS; i++) {
			const struct cache_slot *c = &r->cache[i];
			if (c->e && c->gen == r->gen && c->epoch == r->epoch && c->pc == pc &&
			    c->reg[R.sp] == sp && c->reg[R.fp] == fp &&
			    (c->known >> R.fp & 1)) {
				id.code_address = c->func_lo;
				id.stack_address = c->res.cfa;
				return id;
			}
		}
	}
	if (!compute(r, cb, &fc)) {
		id.code_address = fc.func_lo;
		id.stack_address = fc.res.cfa;
	} else {
		/* Only frames unwind_frame accepted get here; keep the ID stable regardless. */
		uint64_t v = 0;
		if (R.pc >= 0 && !get_reg(cb, R.pc, &v))
			id.code_address = v;
		if (!get_reg(cb, R.sp, &v))
			id.stack_address = v;
	}
	return id;
}

static void destroy(struct gdb_reader_funcs *self)
{
	struct reader *r = self->priv_data;
	forget_all(r);
	free(r->entries);
	free(r->slots);
	jitmap_process_free(r->proc);
	if (g_reader == r)
		g_reader = NULL;
	free(r);
}

/* GDB 13 dereferences what gdb_init_reader returns without checking for NULL (the header
 * allows NULL): refuse with a version GDB rejects instead, which it reports as "Reader version
 * does not match GDB version." and stays usable. */
static struct gdb_reader_funcs refused = {.reader_version = 0};

__attribute__((visibility("default"))) struct gdb_reader_funcs *gdb_init_reader(void)
{
	if (g_reader)
		return &refused;
	jitmap_byte_order host_order;
	const jitmap_arch host = jitmap_arch_host(&host_order);
	if (!set_roles(host, host_order == JITMAP_ORDER_BIG))
		return &refused;
	struct reader *r = calloc(1, sizeof(*r));
	if (!r)
		return &refused;
	const jitmap_target target = {.ctx = r, .read_mem = process_read};
	/* The library's limits: the Python commands share this process. */
	r->proc = jitmap_process_new(&target, NULL);
	if (!r->proc) {
		free(r);
		return &refused;
	}
	r->funcs = (struct gdb_reader_funcs){
		.reader_version = GDB_READER_INTERFACE_VERSION,
		.priv_data = r,
		.read = read_debug_info,
		.unwind = unwind_frame,
		.get_frame_id = get_frame_id,
		.destroy = destroy,
	};
	r->gen = 1;
	const char *dbg = getenv("JITMAP_DEBUG");
	r->debug = dbg && *dbg && strcmp(dbg, "0");
	g_last_error[0] = '\0';
	if (g_claim_mode < 0) {
		const char *claim = getenv("JITMAP_READER_CLAIM");
		g_claim_mode = JITMAP_READER_CLAIM_UNNAMED;
		if (claim && !strcmp(claim, "never"))
			g_claim_mode = JITMAP_READER_CLAIM_NEVER;
		else if (claim && !strcmp(claim, "auto"))
			g_claim_mode = JITMAP_READER_CLAIM_AUTO;
		else if (claim && *claim && strcmp(claim, "unnamed"))
			note(r, NULL, "JITMAP_READER_CLAIM=%.64s is not unnamed, auto or never: "
			     "ignored", claim);
	}
	r->claim_mode = g_claim_mode;
	g_reader = r;
	g_serial++;
	return &r->funcs;
}

/* -- The API for the Python side (jitmap-reader-api.h) -- */

int jitmap_reader_api_version(void)
{
	return JITMAP_READER_API_VERSION;
}

int jitmap_reader_loaded(void)
{
	return g_reader != NULL;
}

int jitmap_reader_invalidate(int how)
{
	struct reader *r = g_reader;
	if (!r)
		return -ENODEV;
	switch (how) {
	case JITMAP_READER_RECHECK:
		r->gen++;
		jitmap_process_recheck(r->proc);
		return 0;
	case JITMAP_READER_FORGET:
		forget_all(r);
		r->gen++;
		jitmap_process_recheck(r->proc);
		return 0;
	default:
		return -EINVAL;
	}
}

int jitmap_reader_set_arch(int arch, int big_endian)
{
	struct reader *r = g_reader;
	if (!r)
		return -ENODEV;
	const jitmap_arch was = R.arch;
	const bool was_big = R.big_endian;
	if (!set_roles((jitmap_arch)arch, big_endian != 0))
		return -ENOTSUP;
	r->arch_told = true;
	if (R.arch != was || R.big_endian != was_big)
		r->epoch++; /* cached frames hold registers read with the old roles */
	return 0;
}

int jitmap_reader_set_claim(int mode)
{
	struct reader *r = g_reader;
	if (!r)
		return -ENODEV;
	if (mode != JITMAP_READER_CLAIM_AUTO && mode != JITMAP_READER_CLAIM_NEVER &&
	    mode != JITMAP_READER_CLAIM_UNNAMED)
		return -EINVAL;
	const int old = r->claim_mode;
	r->claim_mode = g_claim_mode = mode;
	return old;
}

int jitmap_reader_get_claim(void)
{
	return g_reader ? g_reader->claim_mode : -ENODEV;
}

size_t jitmap_reader_num_entries(void)
{
	return g_reader ? g_reader->nentries : 0;
}

int jitmap_reader_entry_info(size_t i, int parse, jitmap_reader_entry *out)
{
	struct reader *r = g_reader;
	if (!r)
		return -ENODEV;
	if (i >= r->nentries)
		return -ENOENT;
	struct entry *e = r->entries[i];
	const uint64_t serial = e->serial;
	if (parse && entry_usable(r, e))
		ensure_stackmap(r, e);
	if (i >= r->nentries || r->entries[i]->serial != serial) /* dropped as stale */
		return -ENOENT;
	e = r->entries[i];
	*out = (jitmap_reader_entry){
		.serial = e->serial,
		.code_start = e->code[0].lo,
		.code_end = e->code[e->ncode - 1].hi,
		.stackmap_address = e->sm_addr,
		.stackmap_size = e->has_sm ? e->sm_size : 0,
		.eh_frame_address = e->eh_addr,
		.eh_frame_size = e->eh_size,
		.num_functions = e->nfuncs > UINT32_MAX ? UINT32_MAX : (uint32_t)e->nfuncs,
		.flags = (e->claimed ? JITMAP_READER_ENTRY_CLAIMED : 0) |
			 (e->debug_info ? JITMAP_READER_ENTRY_DEBUG_INFO : 0) |
			 (e->has_sm ? JITMAP_READER_ENTRY_STACKMAP : 0) |
			 (e->eh_size || e->df ? JITMAP_READER_ENTRY_CFI : 0) |
			 (e->ngdb_named ? JITMAP_READER_ENTRY_GDB_NAMES : 0),
		.stackmap = e->sm,
		.problem = e->problem,
	};
	return 0;
}

jitmap_process *jitmap_reader_process(uint64_t *serial)
{
	if (serial)
		*serial = g_reader ? g_serial : 0;
	return g_reader ? g_reader->proc : NULL;
}

jitmap_index *jitmap_reader_index(void)
{
	struct reader *r = g_reader;
	if (!r)
		return NULL;
	/* Walk backwards: a stale entry is dropped by swapping the last one into its place. */
	for (size_t i = r->nentries; i-- > 0;) {
		if (i >= r->nentries)
			continue;
		struct entry *e = r->entries[i];
		if (entry_usable(r, e))
			ensure_stackmap(r, e);
	}
	return jitmap_process_index(r->proc);
}

int jitmap_reader_lookup(uint64_t pc, const jitmap_stackmap **stackmap, const char **name,
			 uint64_t *start, uint64_t *end)
{
	struct reader *r = g_reader;
	if (!r)
		return -ENODEV;
	struct entry *e = entry_at(r, pc);
	if (!e || !entry_usable(r, e))
		return -ENOENT;
	ensure_stackmap(r, e);
	if (stackmap)
		*stackmap = e->sm;
	const struct func *f = func_at(e, pc);
	if (name)
		*name = f ? f->name : NULL;
	if (start)
		*start = f ? f->lo : 0;
	if (end)
		*end = f ? f->hi : 0;
	return 0;
}

size_t jitmap_reader_find_function(const char *name, uint64_t *starts, size_t max)
{
	struct reader *r = g_reader;
	size_t n = 0;
	if (!r || !name)
		return 0;
	for (size_t i = 0; i < r->nentries; i++) {
		const struct entry *e = r->entries[i];
		for (size_t k = 0; k < e->nfuncs; k++) {
			if (strcmp(e->funcs[k].name, name))
				continue;
			if (n < max)
				starts[n] = e->funcs[k].lo;
			n++;
		}
	}
	return n;
}

const char *jitmap_reader_last_error(void)
{
	return g_last_error;
}

int jitmap_reader_get_stats(jitmap_reader_stats *out)
{
	if (!g_reader)
		return -ENODEV;
	*out = g_reader->stats;
	return 0;
}

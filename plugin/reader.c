/* reader.c: jitmap-reader.so, GDB's JIT reader plugin for jitmap.
 *
 * GDB hands the reader every JIT entry (an in-memory ELF image) and asks it to unwind every
 * frame of the process. The reader is a thin client of libjitmap's process model
 * (jitmap/process.h): each entry's image is handed in (jitmap_process_add_image), and the model
 * owns what is known of it: its code and functions, which image holds a PC
 * (jitmap_process_image_code_at, O(log n): GDB asks about every frame, its own and foreign
 * ones), its stackmap (the live section at sh_addr, a section rewritten in place, one
 * jitmap_index over all), its CFI (the live .eh_frame, read once), and when it is stale (GDB
 * never says when an entry goes away: its code changed or became unreadable, or a newer
 * image's code overlaps it). The reader keeps what is GDB's:
 *   - which entries to claim: it declines every entry whose functions GDB's own ELF reader
 *     names (GDB then has their names, found by name too, their DWARF and CFI), and claims
 *     (one symtab, one block per function) only those it would leave as `?? ()`, or, when
 *     asked (JITMAP_READER_CLAIM_AUTO, for fast registration), every entry without DWARF;
 *   - unwinding frames in JIT code with libjitmap's unwinder (CFI, the stackmap's frame size
 *     at record PCs, the frame-pointer chain), except where GDB's DWARF unwinder already has
 *     the CFI of a declined entry: GDB's registers, whether a frame is the innermost, and
 *     per-frame caches;
 *   - the API for the Python commands (jitmap-reader-api.h), its notes and counters.
 *
 * GDB 13 traps (gdb-jit-interface.md §2, docs/gdb.md): block_open with a NULL name crashes
 * GDB; so does a NULL from gdb_init_reader; reg_get with a DWARF number the architecture does
 * not map aborts it; reg_set frees the value with its `free` member without checking for NULL,
 * and supplies the bytes even when `defined` is 0 (registers we do not set are the ones GDB
 * shows as <not saved>). Nothing read from the inferior is trusted: the process model checks
 * images and sections, and the reader's own reads are bounded.
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

#include "../common/search.h"

#include "jitmap-reader-api.h"

/* GDB refuses a reader without this symbol; the build hides symbols by default. */
#pragma GCC visibility push(default)
GDB_DECLARE_GPL_COMPATIBLE_READER
#pragma GCC visibility pop

/* -- Limits -- */

#define MAX_IMAGE_SIZE (UINT64_C(1) << 30) /* a JIT image larger than this is declined */
#define MAX_NAME 1024                       /* names given to GDB are cut here */
#define READ_CHUNK (1 << 20)                /* target_read takes an int length */
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

/* What the reader keeps of an image GDB handed it; the rest is the process model's. */
struct entry {
	uint64_t id;     /* the image's, in the process model */
	uint64_t serial; /* GDB's reading order: "entry 3" in notes */
	bool claimed, debug_info;
	bool gdb_names; /* GDB's own ELF reader names some of its functions */
	const jitmap_stackmap *sm; /* what the model last gave, valid until the next recheck */
	char problem[256];
};

struct cache_slot {
	uint64_t gen, epoch; /* valid while both match the reader's */
	uint64_t pc, known;
	uint64_t reg[MAX_GPR];
	uint64_t id; /* the entry's (0: an empty slot) */
	jitmap_unwind_result res;
	uint64_t func_lo;
	bool outermost;
	bool guess;
};

/* Callers the reader found by a guess (a step no method proved: the frame-pointer chain
 * through code whose start is unknown), by the PC and SP it gave GDB for them, for
 * jitmap_reader_guess: GDB shows such a frame's registers as facts, and only jitmap's own
 * commands can say that they are not. */
#define GUESS_SLOTS 64
struct guess_slot {
	uint64_t gen, epoch, pc, sp;
	char why[256];
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
	struct entry *entries; /* sorted by id (ids only grow) */
	size_t nentries, entries_cap;
	jitmap_process *proc; /* the images, their code, stackmaps and CFI */
	struct cache_slot cache[CACHE_SLOTS];
	unsigned cache_next;
	struct guess_slot guesses[GUESS_SLOTS];
	unsigned guess_next;
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

/* -- Entries -- */

static struct entry *entry_of(struct reader *r, uint64_t id)
{
	const size_t lo = JITMAP_LOWER_BOUND(r->entries, r->nentries, id, id);
	return lo < r->nentries && r->entries[lo].id == id ? &r->entries[lo] : NULL;
}

static void remove_entry(struct reader *r, struct entry *e)
{
	const size_t at = (size_t)(e - r->entries);
	memmove(e, e + 1, (r->nentries - at - 1) * sizeof(*e));
	r->nentries--;
	r->epoch++;
}

/* Forget the entries whose images the process model dropped: stale (their code changed or
 * cannot be read any more), or replaced by a newer image over the same code. */
static void forget_dropped(struct reader *r)
{
	jitmap_dropped_image d[8];
	size_t n;
	while ((n = jitmap_process_take_dropped(r->proc, d, 8)) > 0) {
		for (size_t i = 0; i < n; i++) {
			struct entry *e = entry_of(r, d[i].id);
			if (!e)
				continue;
			if (d[i].replaced)
				r->stats.replaced++;
			else
				r->stats.dropped++;
			note(r, NULL, "entry %" PRIu64 " %s: dropped (%s)", e->serial,
			     d[i].replaced ? "was replaced" : "is stale", d[i].why);
			remove_entry(r, e);
		}
	}
}

static void forget_all(struct reader *r)
{
	forget_dropped(r);
	while (r->nentries) {
		r->stats.dropped++;
		jitmap_process_remove_image(r->proc, r->entries[--r->nentries].id);
	}
	forget_dropped(r); /* nothing left to say of them */
	r->epoch++;
}

/* Whether GDB's own ELF reader names some function of the image's code `code` (sorted,
 * disjoint). GDB's ELF reader (elfread.c) makes an absolute symbol mst_abs, which its PC
 * lookups skip, and a symbol of a section without SHF_EXECINSTR (BFD's SEC_CODE) a data
 * symbol: neither names code, in bt or for break NAME. An ET_REL symbol whose value is an
 * address GDB places outside its section. [checked: GDB 13] */
static bool gdb_names(const jitmap_image *img, const jitmap_image_range *code, size_t ncode)
{
	const size_t n = jitmap_image_num_symbols(img);
	for (size_t i = 0; i < n; i++) {
		jitmap_image_symbol_info s = {.sz = sizeof(s)};
		if (jitmap_image_symbol(img, i, &s) || !(s.flags & JITMAP_SYMBOL_IN_CODE) ||
		    (s.flags & (JITMAP_SYMBOL_ABSOLUTE | JITMAP_SYMBOL_VALUE_IS_ADDRESS)))
			continue;
		const size_t lo = JITMAP_UPPER_BOUND(code, ncode, lo, s.address);
		if (lo && s.address < code[lo - 1].hi)
			return true;
	}
	return false;
}

/* Hand GDB's image to the process model and take what the claim needs: its image, its
 * functions. Returns 0, or a negative errno with the reason in `why` (e->id is set when the
 * model kept the image). */
static int hand_in(struct reader *r, struct entry *e, const void *image, size_t size,
		   const jitmap_image **img, const jitmap_code_function **fns, size_t *nfns,
		   char *why, size_t why_len)
{
	char where[48];
	snprintf(where, sizeof(where), "JIT entry %" PRIu64, e->serial);
	const int rc = jitmap_process_add_image(r->proc, image, size, where, &e->id);
	jitmap_source_info si = {.sz = sizeof(si)};
	if (rc || jitmap_process_image(r->proc, e->id, &si) || !si.image) {
		const char *p = rc ? NULL : jitmap_process_image_problem(r->proc, e->id, 0);
		snprintf(why, why_len, "%.150s", p ? p : jitmap_strerror(rc ? rc : -EINVAL));
		return rc ? rc : -EINVAL;
	}
	const jitmap_image_range *code;
	size_t ncode;
	if (jitmap_process_image_code(r->proc, e->id, &code, &ncode, fns, nfns)) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	if (!ncode) {
		snprintf(why, why_len, "no executable section placed in memory");
		return -EINVAL;
	}
	*img = si.image;
	e->debug_info = jitmap_image_has_debug_info(si.image);
	e->gdb_names = gdb_names(si.image, code, ncode);
	return 0;
}

static int add_entry(struct reader *r, const struct entry *e)
{
	if (r->nentries == r->entries_cap) {
		const size_t cap = r->entries_cap ? 2 * r->entries_cap : 64;
		struct entry *v = realloc(r->entries, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->entries = v;
		r->entries_cap = cap;
	}
	r->entries[r->nentries++] = *e; /* the newest id: the array stays sorted */
	r->epoch++;
	return 0;
}

/* The entry's stackmap as the process model has it now (read again after a recheck when the
 * model's rules say so). May drop the entry as stale when its code was not looked at since
 * the last recheck: forget_dropped after it, and find the entry again. */
static const jitmap_stackmap *entry_stackmap(struct reader *r, struct entry *e)
{
	const jitmap_stackmap *sm = jitmap_process_image_stackmap(r->proc, e->id);
	if (sm != e->sm) {
		e->sm = sm;
		r->epoch++;
	}
	const char *problem = jitmap_process_image_problem(r->proc, e->id, 0);
	if (problem && strcmp(problem, e->problem))
		note(r, e, "%s", problem);
	return sm;
}

/* The CFI of the entry's image (read once by the process model), saying why there is none. */
static const jitmap_cfi *entry_cfi(struct reader *r, struct entry *e, const jitmap_code_info *code)
{
	const char *why;
	const jitmap_cfi *cfi = jitmap_process_code_cfi(r->proc, code, &why);
	if (!cfi && why && strcmp(why, e->problem))
		note(r, e, "%s", why);
	return cfi;
}

/* The entry's code at `addr`, when `addr` is its code. */
static bool entry_code_at(struct reader *r, const struct entry *e, uint64_t addr,
			  jitmap_code_info *out)
{
	return jitmap_process_image_code_at(r->proc, addr, out) == 0 && out->image_id == e->id;
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
 * range (`code`, which holds pc - 1 or pc). 1: a call ends at `pc`; 0: the code before `pc` is
 * not a call; -1: it cannot be read. */
static int call_before(struct reader *r, const jitmap_code_info *code, uint64_t pc)
{
	uint8_t b[16];
	size_t n = jitmap_arch_call_window(R.arch);
	if (pc - 1 < code->lo || pc - 1 >= code->hi || !n || n > sizeof(b))
		return 0;
	if (pc - code->lo < n)
		n = (size_t)(pc - code->lo);
	if (!n || target_read(r, pc - n, b, n))
		return -1;
	return jitmap_arch_call_before(R.arch, b, n);
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
 * unwind rules at a return address and at the call are the same. `code` holds the PC, or
 * pc - 1 when the PC is just past the end of the code. */
static bool looks_innermost(struct reader *r, const jitmap_code_info *code,
			    const jitmap_stackmap *sm, const jitmap_frame_regs *regs)
{
	for (int n = 0; n < R.ngpr; n++)
		if (!jitmap_reg_is_callee_saved(R.arch, (unsigned)n) &&
		    !jitmap_frame_reg_known(regs, (unsigned)n))
			return false;
	if (code->function && code->function_lo == regs->pc)
		return true;
	const int call = call_before(r, code, regs->pc);
	if (call >= 0)
		return !call;
	return !(sm && jitmap_stackmap_lookup(sm, regs->pc, NULL, 0));
}

struct frame_calc {
	uint64_t id;       /* the entry's */
	jitmap_unwind_result res;
	uint64_t func_lo;  /* the function's start, for the frame ID */
	bool outermost;    /* the CFI marks it outermost: res.cfa only, no caller */
	bool guess;        /* no method proved the step: GDB gets the chain's registers only */
};

/* Unwind the frame that `cb` shows into `fc`. Returns 0 (with fc->outermost set when the
 * frame is the outermost one); -ENOENT when the PC is not in JIT code the reader knows (the
 * fast path for every other frame of the process); -EAGAIN when GDB's own unwinder has this
 * frame's CFI; another negative errno when unwinding failed. */
static int compute(struct reader *r, struct gdb_unwind_callbacks *cb, struct frame_calc *fc)
{
	uint64_t pc;
	if (!r->nentries || R.pc < 0 || get_reg(cb, R.pc, &pc))
		return -ENOENT;
	r->target_read = cb->target_read;
	jitmap_code_info code;
	uint64_t found_at = pc;
	int rc = jitmap_process_image_code_at(r->proc, pc, &code);
	if (rc && pc) /* a return address just past the end of the code */
		rc = jitmap_process_image_code_at(r->proc, found_at = pc - 1, &code);
	forget_dropped(r);
	struct entry *e = rc ? NULL : entry_of(r, code.image_id);
	if (!e || jitmap_image_arch(code.image) != R.arch)
		return -ENOENT;
	const jitmap_cfi *cfi = NULL;
	if (!e->claimed) {
		/* GDB read this entry itself and unwinds it from its CFI where it covers. */
		cfi = entry_cfi(r, e, &code);
		if (cfi && (jitmap_cfi_covers(cfi, pc, NULL, NULL) ||
			    jitmap_cfi_covers(cfi, pc - 1, NULL, NULL)))
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
		const bool caller_saved = !jitmap_reg_is_callee_saved(R.arch, (unsigned)n);
		if ((clobber_known || !caller_saved) && !get_reg(cb, n, &v))
			jitmap_frame_reg_set(&regs, (unsigned)n, v);
	}
	if (!jitmap_frame_reg_known(&regs, (unsigned)R.sp))
		return -EINVAL;

	for (unsigned i = 0; i < CACHE_SLOTS; i++) {
		const struct cache_slot *c = &r->cache[i];
		if (c->id == e->id && c->gen == r->gen && c->epoch == r->epoch && c->pc == pc &&
		    c->known == regs.known[0] &&
		    !memcmp(c->reg, regs.reg, (size_t)R.ngpr * sizeof(c->reg[0]))) {
			fc->id = e->id;
			fc->res = c->res;
			fc->func_lo = c->func_lo;
			fc->outermost = c->outermost;
			fc->guess = c->guess;
			return 0;
		}
	}

	/* Its code was looked at (staleness) by the lookup above: this drops nothing. */
	const jitmap_stackmap *sm = entry_stackmap(r, e);
	if (!cfi)
		cfi = entry_cfi(r, e, &code);
	const bool innermost = looks_innermost(r, &code, sm, &regs);
	const uint64_t where = innermost ? pc : pc - 1;
	jitmap_code_info at = code; /* the code at `where` */
	const bool known = where == found_at ||
			   (code.function && where >= code.function_lo && where < code.function_hi) ||
			   entry_code_at(r, e, where, &at);
	uint64_t lo = 0, hi = 0;
	if (known && at.function) {
		lo = at.function_lo;
		hi = at.function_hi;
	} else if (!cfi || !jitmap_cfi_covers(cfi, where, &lo, &hi)) {
		lo = hi = 0;
	}
	jitmap_unwind_code ucode = {
		.arch = R.arch,
		.cfi = cfi,
		.sm = sm,
		.func_lo = lo,
		.func_hi = hi,
		.is_innermost = innermost,
		.methods = JITMAP_UNWIND_PROVEN,
		.order = jitmap_image_byte_order(code.image),
	};
	const jitmap_target target = {r, NULL, unwind_read_mem};
	r->lines[0].valid = r->lines[1].valid = false;
	char why[160] = "";
	/* A proof first (CFI, the stackmap's frame size, the code's instructions, a frame
	 * pointer its prologue sets); only then a guess, which GDB is told as little of as it
	 * needs to go on. */
	rc = jitmap_unwind_step(&ucode, &regs, &target, &fc->res, why, sizeof(why));
	fc->guess = false;
	if (rc && rc != -ESRCH) {
		char guess_why[160];
		ucode.methods = 0;
		memcpy(guess_why, why, sizeof(why));
		if (jitmap_unwind_step(&ucode, &regs, &target, &fc->res, why, sizeof(why)) == 0) {
			rc = 0;
			fc->guess = true;
			memcpy(why, guess_why, sizeof(why));
		}
	}
	fc->outermost = rc == -ESRCH;
	if (rc && !fc->outermost) {
		r->stats.unwind_failures++;
		note(r, e, "cannot unwind the frame at 0x%" PRIx64 ": %s", pc,
		     *why ? why : jitmap_strerror(rc));
		return rc;
	}
	fc->id = e->id;
	fc->func_lo = lo ? lo : known ? at.lo : pc;
	if (fc->guess) {
		const jitmap_frame_regs *cr = &fc->res.caller;
		struct guess_slot *g = &r->guesses[r->guess_next++ % GUESS_SLOTS];
		*g = (struct guess_slot){.gen = r->gen, .epoch = r->epoch, .pc = cr->pc,
					 .sp = jitmap_frame_reg_known(cr, (unsigned)R.sp)
						       ? cr->reg[R.sp] : fc->res.cfa};
		snprintf(g->why, sizeof(g->why), "the caller of the frame at 0x%" PRIx64 " was "
			 "found by a guess (%s)", pc, why);
	}

	struct cache_slot *c = &r->cache[r->cache_next++ % CACHE_SLOTS];
	*c = (struct cache_slot){.gen = r->gen, .epoch = r->epoch, .pc = pc,
				 .known = regs.known[0], .id = e->id, .res = fc->res,
				 .func_lo = fc->func_lo, .outermost = fc->outermost,
				 .guess = fc->guess};
	memcpy(c->reg, regs.reg, (size_t)R.ngpr * sizeof(c->reg[0]));
	return 0;
}

/* -- GDB's callbacks -- */

/* Whether to give GDB the symbols of `e` ourselves (jitmap-reader-api.h, Claiming). Never
 * an image with DWARF: GDB's reader gives its variables and lines. By default, only an image
 * whose functions GDB's own reader would leave unnamed: a claimed image's functions are found
 * by address only, so claiming one that GDB names loses `break NAME`, `info symbol` and
 * `info functions` for it (worse than GDB alone). */
static bool want_claim(int mode, const struct entry *e, size_t nfns)
{
	if (e->debug_info || !nfns)
		return false;
	switch (mode) {
	case JITMAP_READER_CLAIM_AUTO:
		return true;
	case JITMAP_READER_CLAIM_UNNAMED:
		return !e->gdb_names;
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
	struct entry e = {.serial = serial};
	const jitmap_image *img = NULL;
	const jitmap_code_function *fns = NULL;
	size_t nfns = 0;
	char why[160] = "";
	if (hand_in(r, &e, memory, (size_t)memory_sz, &img, &fns, &nfns, why, sizeof(why))) {
		r->stats.rejected++;
		note(r, NULL, "entry %" PRIu64 " (%ld bytes) left to GDB: %s", serial, memory_sz, why);
		jitmap_process_remove_image(r->proc, e.id);
		forget_dropped(r);
		return GDB_FAIL;
	}
	forget_dropped(r); /* the entries its code replaced */
	/* Which architecture GDB debugs: what the debugger said (jitmap_reader_set_arch), else
	 * the host's. Never an image's: its e_machine is only the JIT's word, and an image of
	 * another architecture is neither claimed nor unwound, since its DWARF numbers may be
	 * ones the debugged architecture does not map and GDB aborts when a reader asks for such
	 * a register (an x86-64 process registering an image whose e_machine says s390x or
	 * AArch64: tests/fuzz/fuzz_plugin, told and untold). */
	const jitmap_arch arch = jitmap_image_arch(img);
	e.claimed = arch == R.arch && want_claim(r->claim_mode, &e, nfns);
	if (add_entry(r, &e)) {
		r->stats.rejected++;
		note(r, NULL, "entry %" PRIu64 ": out of memory", serial);
		jitmap_process_remove_image(r->proc, e.id);
		return GDB_FAIL;
	}
	if (arch != R.arch)
		note(r, entry_of(r, e.id), "entry %" PRIu64 ": architecture %s, but GDB debugs %s%s: "
		     "left to GDB", serial, jitmap_arch_name(arch), jitmap_arch_name(R.arch),
		     r->arch_told ? "" : " (the reader was not told otherwise: jitmap.gdb tells it)");
	if (!e.claimed) {
		r->stats.declined++;
		return GDB_FAIL;
	}
	r->stats.claimed++;
	/* GDB copies the names; the process model keeps the functions while the image is. */
	char name[MAX_NAME + 1];
	const char *file = jitmap_image_file_name(img);
	if (file)
		snprintf(name, sizeof(name), "%s", file);
	struct gdb_object *obj = cb->object_open(cb);
	struct gdb_symtab *st = cb->symtab_open(cb, obj, file ? name : NULL);
	for (size_t i = 0; i < nfns; i++) {
		snprintf(name, sizeof(name), "%s", fns[i].name);
		cb->block_open(cb, st, NULL, fns[i].lo, fns[i].hi, name);
	}
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
	r->stats.guesses += fc.guess;
	const jitmap_frame_regs *c = &fc.res.caller;
	for (int n = 0; n < R.ngpr; n++)
		if (n != R.sp && jitmap_frame_reg_known(c, (unsigned)n) && (!fc.guess || n == R.fp))
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
			if (c->id && c->gen == r->gen && c->epoch == r->epoch && c->pc == pc &&
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
	/* The library's limits: the Python commands share this process. GDB never says when
	 * an entry goes: a new image over old code replaces it. */
	const jitmap_process_opts opts = {.sz = sizeof(opts),
					  .flags = JITMAP_PROCESS_REPLACE_IMAGES};
	r->proc = jitmap_process_new(&target, &opts);
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
	const uint64_t id = r->entries[i].id;
	if (parse) {
		entry_stackmap(r, &r->entries[i]);
		forget_dropped(r);
	}
	const struct entry *e = entry_of(r, id);
	jitmap_source_info si = {.sz = sizeof(si)};
	const jitmap_image_range *code;
	size_t ncode, nfns;
	if (!e || jitmap_process_image(r->proc, id, &si) || !si.image ||
	    jitmap_process_image_code(r->proc, id, &code, &ncode, NULL, &nfns) || !ncode)
		return -ENOENT; /* dropped as stale */
	uint64_t sm_addr = 0, sm_size = 0, eh_addr = 0, eh_size = 0;
	size_t df_len;
	const bool has_sm = !jitmap_image_stackmap_section(si.image, &sm_addr, &sm_size) && sm_size;
	const bool has_eh = !jitmap_image_eh_frame(si.image, &eh_addr, &eh_size) && eh_size;
	const bool has_df = jitmap_image_debug_frame(si.image, &df_len) != NULL;
	*out = (jitmap_reader_entry){
		.serial = e->serial,
		.code_start = code[0].lo,
		.code_end = code[ncode - 1].hi,
		.stackmap_address = has_sm ? sm_addr : 0,
		.stackmap_size = has_sm ? sm_size : 0,
		.eh_frame_address = has_eh ? eh_addr : 0,
		.eh_frame_size = has_eh ? eh_size : 0,
		.num_functions = nfns > UINT32_MAX ? UINT32_MAX : (uint32_t)nfns,
		.flags = (e->claimed ? JITMAP_READER_ENTRY_CLAIMED : 0) |
			 (e->debug_info ? JITMAP_READER_ENTRY_DEBUG_INFO : 0) |
			 (has_sm ? JITMAP_READER_ENTRY_STACKMAP : 0) |
			 (has_eh || has_df ? JITMAP_READER_ENTRY_CFI : 0) |
			 (e->gdb_names ? JITMAP_READER_ENTRY_GDB_NAMES : 0),
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
	for (size_t i = 0; i < r->nentries;) {
		const uint64_t id = r->entries[i].id;
		entry_stackmap(r, &r->entries[i]);
		forget_dropped(r); /* it alone, if stale: the next one takes its place */
		if (i < r->nentries && r->entries[i].id == id)
			i++;
	}
	return jitmap_process_index(r->proc);
}

int jitmap_reader_lookup(uint64_t pc, const jitmap_stackmap **stackmap, const char **name,
			 uint64_t *start, uint64_t *end)
{
	struct reader *r = g_reader;
	if (!r)
		return -ENODEV;
	jitmap_code_info code;
	const int rc = jitmap_process_image_code_at(r->proc, pc, &code);
	forget_dropped(r);
	struct entry *e = rc ? NULL : entry_of(r, code.image_id);
	if (!e)
		return -ENOENT;
	/* Its code was looked at: reading its stackmap drops nothing. Not read when not asked
	 * for: the perf-map unwinder asks about every frame only whether an entry holds it. */
	if (stackmap)
		*stackmap = entry_stackmap(r, e);
	if (name)
		*name = code.function;
	if (start)
		*start = code.function_lo;
	if (end)
		*end = code.function_hi;
	return 0;
}

size_t jitmap_reader_find_function(const char *name, uint64_t *starts, size_t max)
{
	struct reader *r = g_reader;
	size_t n = 0;
	if (!r || !name)
		return 0;
	for (size_t i = 0; i < r->nentries; i++) {
		const jitmap_code_function *fns;
		size_t nfns;
		if (jitmap_process_image_code(r->proc, r->entries[i].id, NULL, NULL, &fns, &nfns))
			continue;
		for (size_t k = 0; k < nfns; k++) {
			if (strcmp(fns[k].name, name))
				continue;
			if (n < max)
				starts[n] = fns[k].lo;
			n++;
		}
	}
	return n;
}

const char *jitmap_reader_last_error(void)
{
	return g_last_error;
}

int jitmap_reader_guess(uint64_t pc, uint64_t sp, char *why, size_t len)
{
	if (!g_reader)
		return 0;
	for (unsigned i = 0; i < GUESS_SLOTS; i++) {
		const struct guess_slot *g = &g_reader->guesses[i];
		if (g->why[0] && g->gen == g_reader->gen && g->epoch == g_reader->epoch &&
		    g->pc == pc && g->sp == sp) {
			if (why && len)
				snprintf(why, len, "%s", g->why);
			return 1;
		}
	}
	return 0;
}

int jitmap_reader_get_stats(jitmap_reader_stats *out)
{
	if (!g_reader)
		return -ENODEV;
	*out = g_reader->stats;
	return 0;
}

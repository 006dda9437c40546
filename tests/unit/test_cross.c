/* test_cross.c: the unwinder and the evaluator on real AArch64 and s390x code.
 *
 * tests/fixtures/cross/cross-{aarch64,s390x}.elf are cross.ll compiled by llc-14 for each
 * target and linked at fixed addresses (regen.sh says how): real code, real .eh_frame, real
 * .llvm_stackmaps (big-endian on s390x). The test reads them through libjitmap's image reader,
 * lays out in fake memory the stack that the code's prologues would have built for the calls
 * cx_entry -> cx_fp -> cx_saves (the layouts are written below from the disassembly, not from
 * the CFI, so the CFI is checked against them), and unwinds two frames with each method,
 * checking every step's CFA, return address and recovered callee-saved registers against the
 * values it stored. It also evaluates the records' locations there, and on s390x a 4-byte
 * stack slot and 4-byte sub-registers whose host-order reading would give other numbers.
 */
#include "unit.h"

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <unistd.h>

#include "jitmap/unwind.h"

#define ONLY(m) JITMAP_UNWIND_MASK(JITMAP_UNWIND_##m)

/* -- The image's segments and a stack, as target memory -- */

#define STACK_LO UINT64_C(0x7fe000)
#define STACK_LEN 0x2000

struct mem {
	jitmap_byte_order order;
	struct {
		uint64_t addr;
		size_t len;
		const uint8_t *bytes;
	} seg[4];
	unsigned nseg;
	uint8_t *file;
	size_t file_len;
	uint8_t stack[STACK_LEN];
	/* Registers of the frame being evaluated (jitmap_target) */
	const jitmap_frame_regs *regs;
};

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	(void)why;
	(void)why_len;
	struct mem *m = ctx;
	if (addr >= STACK_LO && addr - STACK_LO <= STACK_LEN && len <= STACK_LEN - (addr - STACK_LO)) {
		memcpy(buf, m->stack + (addr - STACK_LO), len);
		return 0;
	}
	for (unsigned i = 0; i < m->nseg; i++) {
		if (addr >= m->seg[i].addr && addr - m->seg[i].addr <= m->seg[i].len &&
		    len <= m->seg[i].len - (addr - m->seg[i].addr)) {
			memcpy(buf, m->seg[i].bytes + (addr - m->seg[i].addr), len);
			return 0;
		}
	}
	return -EFAULT;
}

/* A word of the stack, in the target's order. */
static void put(struct mem *m, uint64_t addr, uint64_t v, size_t size)
{
	assert_true(addr >= STACK_LO && addr + size <= STACK_LO + STACK_LEN);
	sm_put(m->stack + (addr - STACK_LO), v, size, m->order);
}

static void load_image(struct mem *m, const char *name)
{
	const char *dir = getenv("JITMAP_FIXTURES");
	char path[512];
	snprintf(path, sizeof(path), "%s/cross/%s", dir ? dir : "tests/fixtures", name);
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	m->file_len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	m->file = malloc(m->file_len);
	assert_non_null(m->file);
	assert_int_equal(fread(m->file, 1, m->file_len, f), m->file_len);
	fclose(f);

	elf_version(EV_CURRENT);
	Elf *e = elf_memory((char *)m->file, m->file_len);
	assert_non_null(e);
	size_t n = 0;
	assert_int_equal(elf_getphdrnum(e, &n), 0);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		assert_non_null(gelf_getphdr(e, (int)i, &ph));
		if (ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		assert_true(m->nseg < ARRAY_LEN(m->seg));
		assert_true(ph.p_offset + ph.p_filesz <= m->file_len);
		m->seg[m->nseg].addr = ph.p_vaddr;
		m->seg[m->nseg].len = ph.p_filesz;
		m->seg[m->nseg].bytes = m->file + ph.p_offset;
		m->nseg++;
	}
	elf_end(e);
}

/* Registers for jitmap_location_eval_frame: the frame's, in the target's byte order. */
static int regs_read(void *ctx, unsigned regno, void *buf, size_t size, char *why, size_t len)
{
	struct mem *m = ctx;
	(void)why;
	(void)len;
	if (!jitmap_frame_reg_known(m->regs, regno))
		return -ENOENT;
	uint8_t b[8];
	sm_put(b, m->regs->reg[regno], 8, m->order);
	memset(buf, 0, size);
	memcpy(buf, b, size < 8 ? size : 8);
	return 0;
}

/* -- The image through libjitmap -- */

struct fixture {
	struct mem m;
	jitmap_image *img;
	jitmap_stackmap *sm;
	jitmap_cfi *cfi;
	jitmap_arch arch;
};

static void open_fixture(struct fixture *fx, const char *name, jitmap_arch arch,
			 jitmap_byte_order order)
{
	memset(fx, 0, sizeof(*fx));
	fx->m.order = order;
	load_image(&fx->m, name);
	jitmap_error err = {0};
	fx->img = jitmap_image_open_memory(fx->m.file, fx->m.file_len, &err);
	if (!fx->img)
		fail_msg("%s: %s", name, err.reason);
	assert_int_equal(jitmap_image_arch(fx->img), arch);
	assert_int_equal(jitmap_image_byte_order(fx->img), order);
	fx->sm = jitmap_image_stackmap(fx->img);
	assert_non_null(fx->sm);
	assert_int_equal(jitmap_stackmap_byte_order(fx->sm), order);
	uint64_t eh_addr = 0, eh_size = 0;
	assert_int_equal(jitmap_image_eh_frame(fx->img, &eh_addr, &eh_size), 0);
	uint8_t *eh = malloc(eh_size);
	assert_non_null(eh);
	assert_int_equal(mem_read(&fx->m, eh_addr, eh, eh_size, NULL, 0), 0);
	fx->cfi = jitmap_cfi_new(arch, eh, eh_size, eh_addr, NULL, 0, &err);
	free(eh);
	if (!fx->cfi)
		fail_msg("%s: CFI: %s", name, err.reason);
	fx->arch = arch;
}

static void close_fixture(struct fixture *fx)
{
	jitmap_cfi_free(fx->cfi);
	jitmap_image_free(fx->img);
	free(fx->m.file);
}

static const jitmap_record *record(const struct fixture *fx, uint64_t id, uint64_t *pc,
				   uint64_t *func)
{
	for (size_t i = 0; i < jitmap_stackmap_num_records(fx->sm); i++) {
		const jitmap_record *r = jitmap_stackmap_record(fx->sm, i);
		if (r->id == id) {
			*pc = jitmap_record_pc(fx->sm, r);
			*func = jitmap_record_function(fx->sm, r)->address;
			return r;
		}
	}
	fail_msg("no record %" PRIu64, id);
	return NULL;
}

static void expect_reg(const jitmap_frame_regs *r, unsigned n, uint64_t v)
{
	if (!jitmap_frame_reg_known(r, n))
		fail_msg("register %u should be known in the caller", n);
	if (r->reg[n] != v)
		fail_msg("register %u: 0x%" PRIx64 ", expected 0x%" PRIx64, n, r->reg[n], v);
}

/* One step with the methods in `methods`; the caller's PC and SP and the CFA checked. */
static jitmap_unwind_result step(struct fixture *fx, const jitmap_frame_regs *regs, bool innermost,
				 uint32_t methods, uint64_t lo, uint64_t hi, uint64_t want_cfa,
				 uint64_t want_sp, uint64_t want_ra, jitmap_unwind_method want)
{
	const jitmap_unwind_code code = {.arch = fx->arch, .cfi = fx->cfi, .sm = fx->sm,
					 .func_lo = lo, .func_hi = hi, .is_innermost = innermost,
					 .methods = methods};
	const jitmap_target t = {&fx->m, NULL, mem_read};
	jitmap_unwind_result res;
	char why[512];
	const int rc = jitmap_unwind_step(&code, regs, &t, &res, why, sizeof(why));
	if (rc)
		fail_msg("step at 0x%" PRIx64 " (methods 0x%x): %d: %s", regs->pc, methods, rc, why);
	assert_int_equal(res.method, want);
	if (res.cfa != want_cfa)
		fail_msg("CFA 0x%" PRIx64 ", expected 0x%" PRIx64, res.cfa, want_cfa);
	if (res.caller.pc != want_ra)
		fail_msg("return address 0x%" PRIx64 ", expected 0x%" PRIx64, res.caller.pc, want_ra);
	expect_reg(&res.caller, (unsigned)jitmap_reg_sp(fx->arch), want_sp);
	return res;
}

/* The return address of cx_entry's call of cx_fp: where cx_fp returns (the unwinder checks
 * that a return address follows a call, so the stack's must be a real one). */
static uint64_t entry_return(struct fixture *fx)
{
	uint64_t lo = 0, hi = 0;
	for (size_t i = 0; i < jitmap_image_num_symbols(fx->img); i++) {
		jitmap_image_symbol_info s = {.sz = sizeof(s)};
		if (jitmap_image_symbol(fx->img, i, &s) == 0 && s.name && !strcmp(s.name, "cx_entry")) {
			lo = s.address;
			hi = s.address + s.size;
		}
	}
	assert_true(lo != 0 && hi > lo);
	const size_t w = jitmap_arch_call_window(fx->arch);
	uint8_t b[16];
	assert_true(w > 0 && w <= sizeof(b));
	for (uint64_t ra = lo + w; ra <= hi; ra += 2)
		if (mem_read(&fx->m, ra - w, b, w, NULL, 0) == 0 &&
		    jitmap_arch_call_before(fx->arch, b, w))
			return ra;
	fail_msg("no call in cx_entry");
	return 0;
}

static jitmap_value eval(struct fixture *fx, const jitmap_record *rec, unsigned i,
			 const jitmap_frame_regs *regs, unsigned level)
{
	fx->m.regs = regs;
	const jitmap_target t = {&fx->m, regs_read, mem_read};
	JITMAP_OPTS(jitmap_eval_opts, o, .frame_level = level);
	jitmap_value v;
	assert_true(i < rec->num_locations);
	const int rc = jitmap_location_eval_frame(fx->sm, rec, &rec->locations[i], &t, &o, &v);
	if (rc)
		fail_msg("record %" PRIu64 " location %u: %s", rec->id, i, v.why);
	return v;
}

/* -- AArch64 -- */

#define X19 19
#define X20 20
#define X21 21
#define X29 29
#define X30 30
#define A64_SP 31

/* cx_fp:    stp x29, x30, [sp, #-32]!; stp x20, x19, [sp, #16]; mov x29, sp; ...
 *           bl cx_saves; (record 300) ...
 * cx_saves: sub sp, sp, #64; stp x29, x30, [sp, #16]; add x29, sp, #16; str x21, [sp, #32];
 *           stp x20, x19, [sp, #48]; ... str w19, [sp, #8]; bl cx_cb; (record 200) ...
 * cx_entry's SP (cx_fp's CFA) is E; its x29, x19-x21 and its return address are below. */
static void test_aarch64_real(void **state)
{
	(void)state;
	struct fixture fx;
	open_fixture(&fx, "cross-aarch64.elf", JITMAP_ARCH_AARCH64, JITMAP_ORDER_LITTLE);
	uint64_t pc200, saves, pc300, fp_fn;
	const jitmap_record *r200 = record(&fx, 200, &pc200, &saves);
	const jitmap_record *r300 = record(&fx, 300, &pc300, &fp_fn);
	/* The record after a call sits on its return address: the word before is a BL. */
	uint8_t insn[4];
	assert_int_equal(mem_read(&fx.m, pc300 - 4, insn, 4, NULL, 0), 0);
	assert_true(jitmap_arch_call_before(JITMAP_ARCH_AARCH64, insn, 4));
	assert_int_equal(jitmap_record_function(fx.sm, r200)->stack_size, 64);
	assert_int_equal(jitmap_record_function(fx.sm, r300)->stack_size, 32);

	const uint64_t E = 0x7ff800, X29_E = 0x7ff900, RA_E = entry_return(&fx);
	const uint64_t X19_E = 0x1919191919, X20_E = 0x2020202020, X21_E = 0x2121212121;
	const uint64_t SP1 = E - 32, SP0 = SP1 - 64;
	const uint64_t X19_1 = 0x9, X20_1 = 0x7; /* cx_fp's b and a */
	struct mem *m = &fx.m;
	put(m, SP1, X29_E, 8);
	put(m, SP1 + 8, RA_E, 8);
	put(m, SP1 + 16, X20_E, 8);
	put(m, SP1 + 24, X19_E, 8);
	put(m, SP0 + 16, SP1, 8);   /* cx_saves's frame record: cx_fp's x29 */
	put(m, SP0 + 24, pc300, 8); /* and its return address */
	put(m, SP0 + 32, X21_E, 8);
	put(m, SP0 + 48, X20_1, 8);
	put(m, SP0 + 56, X19_1, 8);
	put(m, SP0 + 8, 0xc0c0c0c0, 4); /* str w19, [sp, #8]: c's low half */

	jitmap_frame_regs f0 = {.pc = pc200};
	jitmap_frame_reg_set(&f0, A64_SP, SP0);
	jitmap_frame_reg_set(&f0, X29, SP0 + 16);
	jitmap_frame_reg_set(&f0, X30, pc200);
	jitmap_frame_reg_set(&f0, X19, 0xc0c0c0c0c0); /* c, b, a */
	jitmap_frame_reg_set(&f0, X20, 0xb0b0b0b0b0);
	jitmap_frame_reg_set(&f0, X21, 0xa0a0a0a0a0);

	/* Frame 0, cx_saves at record 200: every method finds cx_fp; CFI restores x19-x21. */
	jitmap_unwind_result res = step(&fx, &f0, true, ONLY(CFI), 0, 0, SP1, SP1, pc300,
					JITMAP_UNWIND_CFI);
	expect_reg(&res.caller, X29, SP1);
	expect_reg(&res.caller, X19, X19_1);
	expect_reg(&res.caller, X20, X20_1);
	expect_reg(&res.caller, X21, X21_E);
	const jitmap_frame_regs f1 = res.caller;
	res = step(&fx, &f0, true, ONLY(STACKMAP), 0, 0, SP1, SP1, pc300, JITMAP_UNWIND_STACKMAP);
	expect_reg(&res.caller, X29, SP1);
	expect_reg(&res.caller, X19, X19_1); /* from the prologue's stores */
	expect_reg(&res.caller, X21, X21_E);
	res = step(&fx, &f0, true, ONLY(FRAME_POINTER), saves, fp_fn, SP1, SP1, pc300,
		   JITMAP_UNWIND_FRAME_POINTER);
	expect_reg(&res.caller, X29, SP1);

	/* Record 200's values in frame 0: a, b, c in x21, x20, x19; the buffer at x29 - 12. */
	assert_int_equal(eval(&fx, r200, 0, &f0, 0).u, 0xa0a0a0a0a0);
	assert_int_equal(eval(&fx, r200, 1, &f0, 0).u, 0xb0b0b0b0b0);
	assert_int_equal(eval(&fx, r200, 2, &f0, 0).u, 0xc0c0c0c0c0);
	const jitmap_value buf = eval(&fx, r200, 3, &f0, 0);
	assert_true(buf.is_address);
	assert_int_equal(buf.u, SP0 + 4);

	/* Frame 1, cx_fp at record 300 (a return address): cx_entry's registers. */
	res = step(&fx, &f1, false, ONLY(CFI), 0, 0, E, E, RA_E, JITMAP_UNWIND_CFI);
	expect_reg(&res.caller, X29, X29_E);
	expect_reg(&res.caller, X19, X19_E);
	expect_reg(&res.caller, X20, X20_E);
	res = step(&fx, &f1, false, ONLY(STACKMAP), 0, 0, E, E, RA_E, JITMAP_UNWIND_STACKMAP);
	expect_reg(&res.caller, X29, X29_E);
	expect_reg(&res.caller, X20, X20_E);
	res = step(&fx, &f1, false, ONLY(FRAME_POINTER), fp_fn, fp_fn + 0x30, E, E, RA_E,
		   JITMAP_UNWIND_FRAME_POINTER);
	expect_reg(&res.caller, X29, X29_E);
	/* Record 300 in frame 1: a and b in x20 and x19, callee-saved, so available there. */
	assert_int_equal(eval(&fx, r300, 0, &f1, 1).u, X20_1);
	assert_int_equal(eval(&fx, r300, 1, &f1, 1).u, X19_1);

	/* Frame 0 at cx_fp's first instruction: CFI's CIE row (CFA = SP, x30 unsaved) and the
	 * frame-pointer method's entry rule agree: the return address is still in x30. */
	jitmap_frame_regs entry = {.pc = fp_fn};
	jitmap_frame_reg_set(&entry, A64_SP, E);
	jitmap_frame_reg_set(&entry, X29, X29_E);
	jitmap_frame_reg_set(&entry, X30, RA_E);
	step(&fx, &entry, true, ONLY(FRAME_POINTER), fp_fn, fp_fn + 0x30, E, E, RA_E,
	     JITMAP_UNWIND_FRAME_POINTER);
	close_fixture(&fx);
}

/* -- s390x -- */

#define R11 11
#define R12 12
#define R13 13
#define R14 14
#define R15 15

/* cx_fp:    stmg %r11,%r15,88(%r15); aghi %r15,-160; lgr %r11,%r15; ...
 *           brasl %r14,cx_saves; (record 300) ...
 * cx_saves: stmg %r11,%r15,88(%r15); aghi %r15,-176; ... st %r13,168(%r15);
 *           brasl %r14,cx_cb; (record 200) ...
 * A function saves r11-r15 in its caller's register save area (the caller's SP + 88 ...):
 * the CFA is the caller's SP + 160 (the ABI's save area). cx_entry's SP is E. */
static void test_s390x_real(void **state)
{
	(void)state;
	struct fixture fx;
	open_fixture(&fx, "cross-s390x.elf", JITMAP_ARCH_S390X, JITMAP_ORDER_BIG);
	uint64_t pc200, saves, pc300, fp_fn;
	const jitmap_record *r200 = record(&fx, 200, &pc200, &saves);
	const jitmap_record *r300 = record(&fx, 300, &pc300, &fp_fn);
	assert_int_equal(jitmap_record_function(fx.sm, r200)->stack_size, 176);
	assert_int_equal(jitmap_record_function(fx.sm, r300)->stack_size, 160);

	const uint64_t E = 0x7ff800, RA_E = entry_return(&fx);
	const uint64_t R11_E = 0x1111111111, R12_E = 0x1212121212, R13_E = 0x1313131313;
	const uint64_t SP1 = E - 160, SP0 = SP1 - 176;
	const uint64_t R12_1 = 0x7, R13_1 = 0x9; /* cx_fp's a and b */
	struct mem *m = &fx.m;
	put(m, E + 88, R11_E, 8); /* cx_fp's stmg, in cx_entry's save area */
	put(m, E + 96, R12_E, 8);
	put(m, E + 104, R13_E, 8);
	put(m, E + 112, RA_E, 8);
	put(m, E + 120, E, 8);
	put(m, SP1 + 88, SP1, 8); /* cx_saves's stmg: cx_fp's r11 (its frame pointer) */
	put(m, SP1 + 96, R12_1, 8);
	put(m, SP1 + 104, R13_1, 8);
	put(m, SP1 + 112, pc300, 8);
	put(m, SP1 + 120, SP1, 8);
	put(m, SP0 + 168, 0xc0c1c2c3, 4); /* st %r13,168(%r15) */

	jitmap_frame_regs f0 = {.pc = pc200};
	jitmap_frame_reg_set(&f0, R15, SP0);
	jitmap_frame_reg_set(&f0, R14, pc200);
	jitmap_frame_reg_set(&f0, R11, 0xa0a0a0a0a0); /* a, b, c */
	jitmap_frame_reg_set(&f0, R12, 0xb0b0b0b0b0);
	jitmap_frame_reg_set(&f0, R13, 0xc0c0c0c0c0);

	/* Frame 0, cx_saves at record 200, by CFI: CFA = r15 + 336, the caller's SP 160 below
	 * it, r11-r14 from cx_fp's save area. */
	jitmap_unwind_result res = step(&fx, &f0, true, ONLY(CFI), 0, 0, SP1 + 160, SP1, pc300,
					JITMAP_UNWIND_CFI);
	expect_reg(&res.caller, R11, SP1);
	expect_reg(&res.caller, R12, R12_1);
	expect_reg(&res.caller, R13, R13_1);
	const jitmap_frame_regs f1 = res.caller;
	/* By the stackmap: CFA = SP + stack size + 160, r14 and r11-r13 where the stmg put them. */
	res = step(&fx, &f0, true, ONLY(STACKMAP), 0, 0, SP1 + 160, SP1, pc300,
		   JITMAP_UNWIND_STACKMAP);
	expect_reg(&res.caller, R11, SP1);
	expect_reg(&res.caller, R12, R12_1);
	expect_reg(&res.caller, R13, R13_1);

	/* Record 200's values: r11-r13, and the buffer at r15 + 164. */
	assert_int_equal(eval(&fx, r200, 0, &f0, 0).u, 0xa0a0a0a0a0);
	assert_int_equal(eval(&fx, r200, 2, &f0, 0).u, 0xc0c0c0c0c0);
	assert_int_equal(eval(&fx, r200, 3, &f0, 0).u, SP0 + 164);

	/* Frame 1, cx_fp at record 300: CFA = r11 + 320 (its frame pointer). */
	res = step(&fx, &f1, false, ONLY(CFI), 0, 0, E + 160, E, RA_E, JITMAP_UNWIND_CFI);
	expect_reg(&res.caller, R11, R11_E);
	expect_reg(&res.caller, R12, R12_E);
	expect_reg(&res.caller, R13, R13_E);
	res = step(&fx, &f1, false, ONLY(STACKMAP), 0, 0, E + 160, E, RA_E, JITMAP_UNWIND_STACKMAP);
	expect_reg(&res.caller, R11, R11_E);
	expect_reg(&res.caller, R13, R13_E);
	assert_int_equal(eval(&fx, r300, 0, &f1, 1).u, R12_1);
	assert_int_equal(eval(&fx, r300, 1, &f1, 1).u, R13_1);

	/* A leaf at its first instruction (cx_cb has no stmg): CFA = r15 + 160, the caller's
	 * SP is r15 itself and the return address still in r14. */
	uint64_t cb = 0;
	for (size_t i = 0; i < jitmap_image_num_symbols(fx.img); i++) {
		jitmap_image_symbol_info s = {.sz = sizeof(s)};
		if (jitmap_image_symbol(fx.img, i, &s) == 0 && s.name && !strcmp(s.name, "cx_cb"))
			cb = s.address;
	}
	assert_true(cb != 0);
	jitmap_frame_regs leaf = {.pc = cb};
	jitmap_frame_reg_set(&leaf, R15, SP0);
	jitmap_frame_reg_set(&leaf, R14, pc200);
	step(&fx, &leaf, true, ONLY(CFI), 0, 0, SP0 + 160, SP0, pc200, JITMAP_UNWIND_CFI);
	close_fixture(&fx);
}

/* Big-endian values: record 400 of cx_spill keeps sixteen i32 values, some in 4-byte stack
 * slots ([r15 + N], Indirect) and some in the low halves of 64-bit registers. Read in the
 * host's (little-endian) order the slot would give 0x78563412 and the register 0x44332211
 * followed by garbage: the evaluator must use the stackmap's order. */
static void test_s390x_big_endian_values(void **state)
{
	(void)state;
	struct fixture fx;
	open_fixture(&fx, "cross-s390x.elf", JITMAP_ARCH_S390X, JITMAP_ORDER_BIG);
	uint64_t pc, fn;
	const jitmap_record *r = record(&fx, 400, &pc, &fn);
	const uint64_t SP = 0x7ff000;
	jitmap_frame_regs regs = {.pc = pc};
	jitmap_frame_reg_set(&regs, R15, SP);
	for (unsigned n = 0; n < 15; n++)
		if (n != R15)
			jitmap_frame_reg_set(&regs, n, UINT64_C(0xdeadbeef00000000) | (0x11223344u + n));
	unsigned slots = 0, subregs = 0;
	for (unsigned i = 0; i < r->num_locations; i++) {
		const jitmap_location *l = &r->locations[i];
		if (l->size != 4)
			continue;
		if (l->kind == INDIRECT) {
			assert_int_equal(l->dwarf_reg, R15);
			const uint32_t v = 0x12345678u + i;
			put(&fx.m, SP + (uint64_t)(int64_t)l->offset, v, 4);
			const jitmap_value got = eval(&fx, r, i, &regs, 0);
			assert_int_equal(got.size, 4);
			assert_int_equal(got.u, v);
			assert_int_equal(got.address, SP + (uint64_t)(int64_t)l->offset);
			slots++;
		} else if (l->kind == REG) {
			const jitmap_value got = eval(&fx, r, i, &regs, 0);
			assert_int_equal(got.u, 0x11223344u + l->dwarf_reg);
			subregs++;
		}
	}
	/* What llc-14 made of cx_spill (regen.sh): six spilled, the rest in registers. */
	assert_int_equal(slots, 6);
	assert_true(subregs >= 8);
	close_fixture(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aarch64_real),
		cmocka_unit_test(test_s390x_real),
		cmocka_unit_test(test_s390x_big_endian_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

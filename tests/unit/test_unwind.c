/* test_unwind.c: the unwinder (include/jitmap/unwind.h).
 *
 * Three kinds of tests:
 *   - hand-built .eh_frame sections and stack memory, one rule at a time (CFA rules, register
 *     rules, the outermost frame, the guarantee that SP grows), and the frame-pointer and
 *     stackmap methods with each of their checks;
 *   - hostile CFI: a table of malformed sections, every truncation and many byte mutations of
 *     a real .eh_frame: each must give a reason or a working object, never a crash;
 *   - live code: unwind_fixture.ll, compiled by llc-14 and linked into this executable, runs
 *     with a breakpoint (int3) on every stackmap record and on prologue and epilogue
 *     instructions. At each stop the registers and the stack are saved; afterwards every
 *     method is checked against the machine's truth (the return address and the registers at
 *     the entry of uw_entry) and against the others. This is where the stackmap frame-size
 *     rule is verified: at every record, CFA(stackmap) must equal CFA(CFI), or the method
 *     must decline.
 */
#define _GNU_SOURCE
#include "unit.h"

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "jitmap/perfmap.h"
#include "jitmap/stack.h"
#include "jitmap/unwind.h"

#define X86 JITMAP_ARCH_X86_64
#define ONLY(m) JITMAP_UNWIND_MASK(JITMAP_UNWIND_##m)
#define RSP 7
#define RBP 6
#define RBX 3

/* -- Fake target memory -- */

struct region {
	uint64_t addr;
	size_t len;
	uint8_t bytes[1024];
};

struct fake_mem {
	struct region r[3];
	unsigned n;
	unsigned reads;
	/* Whether the unwinder checks that each return address follows a call (the default of
	 * jitmap_unwind_step). The tests of one rule at a time use made-up words as return
	 * addresses, with no code before them: step() passes JITMAP_UNWIND_UNCHECKED_RETURN for
	 * them unless this is set (test_return_checked sets it). */
	bool check_returns;
};

static struct region *fake_region(struct fake_mem *m, uint64_t addr, size_t len)
{
	assert_true(m->n < ARRAY_LEN(m->r) && len <= sizeof(m->r[0].bytes));
	struct region *r = &m->r[m->n++];
	r->addr = addr;
	r->len = len;
	memset(r->bytes, 0, sizeof(r->bytes));
	return r;
}

static void fake_put(struct fake_mem *m, uint64_t addr, const void *p, size_t len)
{
	for (unsigned i = 0; i < m->n; i++) {
		struct region *r = &m->r[i];
		if (addr >= r->addr && addr - r->addr + len <= r->len) {
			memcpy(r->bytes + (addr - r->addr), p, len);
			return;
		}
	}
	fail_msg("fake_put outside the regions: 0x%" PRIx64, addr);
}

static void fake_put64(struct fake_mem *m, uint64_t addr, uint64_t v)
{
	uint8_t b[8];
	sm_put(b, v, 8, JITMAP_ORDER_LITTLE);
	fake_put(m, addr, b, 8);
}

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	(void)why;
	(void)why_len;
	struct fake_mem *m = ctx;
	m->reads++;
	for (unsigned i = 0; i < m->n; i++) {
		const struct region *r = &m->r[i];
		if (addr >= r->addr && addr - r->addr <= r->len && len <= r->len - (addr - r->addr)) {
			memcpy(buf, r->bytes + (addr - r->addr), len);
			return 0;
		}
	}
	return -EFAULT;
}

/* -- Hand-built .eh_frame (LSB 5.0 §10.6) -- */

struct eh {
	uint8_t b[2048];
	size_t n;
	uint64_t addr; /* where the section sits */
};

static void eh_put(struct eh *e, uint64_t v, size_t size)
{
	assert_true(e->n + size <= sizeof(e->b));
	sm_put(e->b + e->n, v, size, JITMAP_ORDER_LITTLE);
	e->n += size;
}

static void eh_bytes(struct eh *e, const void *p, size_t len)
{
	assert_true(e->n + len <= sizeof(e->b));
	if (len)
		memcpy(e->b + e->n, p, len);
	e->n += len;
}

/* Pad the entry started at `start` to 8 bytes with DW_CFA_nop and write its length. */
static void eh_close(struct eh *e, size_t start)
{
	while ((e->n - start) % 8)
		eh_put(e, 0, 1);
	sm_put(e->b + start, e->n - start - 4, 4, JITMAP_ORDER_LITTLE);
}

/* The CIE LLVM writes for x86-64: "zR", pc-relative sdata4 FDE addresses, code alignment 1,
 * data alignment -8, return address column 16; CFA = rsp + 8, rip at CFA - 8. */
static const uint8_t x86_cie_insns[] = {0x0c, 7, 8, 0x90, 1};

static size_t eh_cie_aug(struct eh *e, const char *aug, const uint8_t *augdata, size_t augdata_len,
			 const uint8_t *insns, size_t len)
{
	const size_t start = e->n;
	eh_put(e, 0, 4);
	eh_put(e, 0, 4); /* CIE id */
	eh_put(e, 1, 1); /* version */
	eh_bytes(e, aug, strlen(aug) + 1);
	eh_put(e, 1, 1);    /* code alignment 1 */
	eh_put(e, 0x78, 1); /* data alignment -8 */
	eh_put(e, 16, 1);   /* return address column */
	if (aug[0] == 'z') {
		eh_put(e, augdata_len, 1);
		eh_bytes(e, augdata, augdata_len);
	}
	eh_bytes(e, insns, len);
	eh_close(e, start);
	return start;
}

static size_t eh_cie(struct eh *e, const uint8_t *insns, size_t len)
{
	const uint8_t pcrel_sdata4 = 0x1b;
	return eh_cie_aug(e, "zR", &pcrel_sdata4, 1, insns, len);
}

static size_t eh_fde(struct eh *e, size_t cie, uint64_t lo, uint32_t range,
		     const uint8_t *insns, size_t len)
{
	const size_t start = e->n;
	eh_put(e, 0, 4);
	eh_put(e, e->n - cie, 4); /* CIE pointer: back from this field */
	eh_put(e, (uint32_t)(lo - (e->addr + e->n)), 4);
	eh_put(e, range, 4);
	eh_put(e, 0, 1); /* augmentation data length */
	eh_bytes(e, insns, len);
	eh_close(e, start);
	return start;
}

static void eh_end(struct eh *e)
{
	eh_put(e, 0, 4);
}

static jitmap_cfi *cfi_ok(const struct eh *e)
{
	jitmap_error err;
	jitmap_cfi *cfi = jitmap_cfi_new(X86, e->b, e->n, e->addr, NULL, 0, &err);
	if (!cfi)
		fail_msg("jitmap_cfi_new failed at %" PRIu64 ": %s", err.offset, err.reason);
	return cfi;
}

/* The usual frame: push %rbp; mov %rsp,%rbp; push %rbx at [0x1000, 0x1100):
 * 0x1001 CFA = rsp + 16, rbp at CFA - 16; 0x1004 CFA = rbp + 16; 0x1008 rbx at CFA - 24. */
static const uint8_t fp_frame_insns[] = {
	0x41, 0x0e, 0x10, 0x86, 0x02, /* advance 1; def_cfa_offset 16; offset rbp, 2 */
	0x43, 0x0d, 0x06,             /* advance 3; def_cfa_register rbp */
	0x44, 0x83, 0x03,             /* advance 4; offset rbx, 3 */
};

static void regs_set(jitmap_frame_regs *r, unsigned n, uint64_t v)
{
	jitmap_frame_reg_set(r, n, v);
}

static jitmap_frame_regs regs_with(uint64_t pc, uint64_t sp, uint64_t fp)
{
	jitmap_frame_regs r;
	memset(&r, 0, sizeof(r));
	r.pc = pc;
	regs_set(&r, RSP, sp);
	regs_set(&r, RBP, fp);
	return r;
}

static void expect_unknown(const jitmap_frame_regs *r, unsigned n)
{
	if (jitmap_frame_reg_known(r, n))
		fail_msg("register %u should be unknown in the caller, holds 0x%" PRIx64, n,
			 r->reg[n]);
}

static void expect_reg(const jitmap_frame_regs *r, unsigned n, uint64_t v)
{
	if (!jitmap_frame_reg_known(r, n))
		fail_msg("register %u should be known in the caller", n);
	if (r->reg[n] != v)
		fail_msg("register %u: 0x%" PRIx64 ", expected 0x%" PRIx64, n, r->reg[n], v);
}

static int step(const jitmap_unwind_code *code, const jitmap_frame_regs *regs,
		struct fake_mem *mem, jitmap_unwind_result *out, char *why, size_t why_len)
{
	const jitmap_target t = {mem, NULL, fake_read};
	jitmap_unwind_code c = *code;
	if (!mem->check_returns)
		c.methods |= JITMAP_UNWIND_UNCHECKED_RETURN;
	return jitmap_unwind_step(&c, regs, &t, out, why, why_len);
}

/* -- CFI, rule by rule -- */

static void test_cfi_fp_frame(void **state)
{
	(void)state;
	struct eh e = {.addr = 0x5000};
	const size_t cie = eh_cie(&e, x86_cie_insns, sizeof(x86_cie_insns));
	eh_fde(&e, cie, 0x1000, 0x100, fp_frame_insns, sizeof(fp_frame_insns));
	eh_end(&e);
	jitmap_cfi *cfi = cfi_ok(&e);

	uint64_t lo = 0, hi = 0;
	assert_true(jitmap_cfi_covers(cfi, 0x1000, &lo, &hi));
	assert_int_equal(lo, 0x1000);
	assert_int_equal(hi, 0x1100);
	assert_true(jitmap_cfi_covers(cfi, 0x10ff, NULL, NULL));
	assert_false(jitmap_cfi_covers(cfi, 0x1100, NULL, NULL));
	assert_false(jitmap_cfi_covers(cfi, 0xfff, NULL, NULL));
	assert_false(jitmap_cfi_covers(NULL, 0x1000, NULL, NULL));

	/* Body: rbp = 0x7100, rbx saved at 0x70f8, rbp's caller value at 0x7100. */
	struct fake_mem m = {0};
	fake_region(&m, 0x7000, 0x200);
	fake_put64(&m, 0x7100, 0xaaaa0000);
	fake_put64(&m, 0x7108, 0x5555);
	fake_put64(&m, 0x70f8, 0xbbbb0000);
	jitmap_frame_regs r = regs_with(0x1010, 0x70e0, 0x7100);
	regs_set(&r, RBX, 1);
	regs_set(&r, 12, 0x1212); /* callee-saved, no rule: same value */
	regs_set(&r, 0, 7);       /* rax: caller-saved */
	regs_set(&r, 16, 0xdead); /* the RA column is not a register on x86-64 */
	const jitmap_unwind_code code = {.arch = X86, .cfi = cfi, .is_innermost = true};
	jitmap_unwind_result res;
	char why[512];
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.method, JITMAP_UNWIND_CFI);
	assert_string_equal(why, "");
	assert_int_equal(res.cfa, 0x7110);
	assert_int_equal(res.caller.pc, 0x5555);
	expect_reg(&res.caller, RSP, 0x7110);
	expect_reg(&res.caller, RBP, 0xaaaa0000);
	expect_reg(&res.caller, RBX, 0xbbbb0000);
	expect_reg(&res.caller, 12, 0x1212);
	expect_unknown(&res.caller, 0);
	expect_unknown(&res.caller, 13); /* callee-saved but unknown in this frame */
	expect_unknown(&res.caller, 16);

	/* Entry: CFA = rsp + 8; nothing saved yet, so rbx is the same. */
	r = regs_with(0x1000, 0x7108, 0x7300);
	regs_set(&r, RBX, 0x42);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.cfa, 0x7110);
	assert_int_equal(res.caller.pc, 0x5555);
	expect_reg(&res.caller, RBP, 0x7300);
	expect_reg(&res.caller, RBX, 0x42);

	/* After push %rbp: CFA = rsp + 16. */
	r = regs_with(0x1001, 0x7100, 0x7300);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.cfa, 0x7110);
	expect_reg(&res.caller, RBP, 0xaaaa0000);

	/* An outer frame whose return address is just past the FDE: the row of PC - 1. */
	r = regs_with(0x1100, 0x70e0, 0x7100);
	jitmap_unwind_code outer = code;
	outer.is_innermost = false;
	assert_int_equal(step(&outer, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.caller.pc, 0x5555);
	/* ... but as frame 0 that PC is outside every FDE. */
	jitmap_unwind_code cfi_only = code;
	cfi_only.methods = ONLY(CFI);
	assert_int_equal(step(&cfi_only, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "cfi: no FDE covers 0x1100");

	/* The return address slot cannot be read. */
	r = regs_with(0x1010, 0x70e0, 0x7300);
	assert_int_equal(step(&cfi_only, &r, &m, &res, why, sizeof(why)), -EFAULT);
	assert_contains(why, "cannot read the return address at 0x7308");

	/* The CFA register (rbp) is not known. */
	r = regs_with(0x1010, 0x70e0, 0);
	r.known[0] &= ~(UINT64_C(1) << RBP);
	assert_int_equal(step(&cfi_only, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "register 6 + 16, not known");

	/* A CFA at or below SP is refused: the caller must be above. */
	r = regs_with(0x1010, 0x7110, 0x7100);
	assert_int_equal(step(&cfi_only, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "is not above the stack pointer");
	jitmap_cfi_free(cfi);
}

static void test_cfi_register_rules(void **state)
{
	(void)state;
	struct eh e = {.addr = 0x5000};
	const size_t cie = eh_cie(&e, x86_cie_insns, sizeof(x86_cie_insns));
	const uint8_t insns[] = {
		0x0e, 0x20,       /* def_cfa_offset 32 */
		0x07, 0x03,       /* undefined rbx */
		0x08, 0x0c,       /* same_value r12 */
		0x09, 0x0d, 0x0e, /* r13 is in r14 */
		0x14, 0x0f, 0x02, /* val_offset r15: CFA - 16 */
		0x10, 0x06, 0x01, 0x30, /* rbp: expression (DW_OP_lit0) */
		0x84, 0x03,       /* rax at CFA - 24: a caller-saved register is still unknown */
	};
	eh_fde(&e, cie, 0x1000, 0x100, insns, sizeof(insns));
	eh_end(&e);
	jitmap_cfi *cfi = cfi_ok(&e);
	struct fake_mem m = {0};
	fake_region(&m, 0x7000, 0x200);
	fake_put64(&m, 0x7018, 0x6666);
	fake_put64(&m, 0x7008, 0x1111);
	jitmap_frame_regs r = regs_with(0x1000, 0x7000, 0x7300);
	for (unsigned i = 0; i < 16; i++)
		if (i != RSP)
			regs_set(&r, i, 0x100 + i);
	const jitmap_unwind_code code = {.arch = X86, .cfi = cfi, .is_innermost = true};
	jitmap_unwind_result res;
	char why[256];
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.cfa, 0x7020);
	assert_int_equal(res.caller.pc, 0x6666);
	expect_unknown(&res.caller, RBX);
	expect_reg(&res.caller, 12, 0x10c);
	expect_reg(&res.caller, 13, 0x10e);
	expect_reg(&res.caller, 14, 0x10e);
	expect_reg(&res.caller, 15, 0x7010);
	expect_unknown(&res.caller, RBP);
	for (unsigned i = 0; i < 12; i++)
		if (i != RSP && i != RBX && i != RBP)
			expect_unknown(&res.caller, i);
	jitmap_cfi_free(cfi);
}

static void test_cfi_outermost_and_expressions(void **state)
{
	(void)state;
	struct eh e = {.addr = 0x5000};
	const size_t cie = eh_cie(&e, x86_cie_insns, sizeof(x86_cie_insns));
	const uint8_t undefined_ra[] = {0x07, 0x10};
	eh_fde(&e, cie, 0x1000, 0x100, undefined_ra, sizeof(undefined_ra));
	/* DW_CFA_def_cfa_expression: DW_OP_breg7 (rsp) 8. */
	const uint8_t cfa_expr[] = {0x0f, 0x02, 0x77, 0x08};
	eh_fde(&e, cie, 0x1100, 0x100, cfa_expr, sizeof(cfa_expr));
	/* The return address as an expression. */
	const uint8_t ra_expr[] = {0x10, 0x10, 0x01, 0x30};
	eh_fde(&e, cie, 0x1200, 0x100, ra_expr, sizeof(ra_expr));
	eh_end(&e);
	jitmap_cfi *cfi = cfi_ok(&e);

	struct fake_mem m = {0};
	fake_region(&m, 0x7000, 0x200);
	struct region *code_bytes = fake_region(&m, 0x1000, 0x300);
	const uint8_t prologue[] = {0x55, 0x48, 0x89, 0xe5};
	memcpy(code_bytes->bytes + 0x100, prologue, 4);
	fake_put64(&m, 0x7100, 0x7200);
	fake_put64(&m, 0x7108, 0x4321);
	const jitmap_unwind_code code = {.arch = X86, .cfi = cfi, .is_innermost = false};
	jitmap_unwind_result res;
	char why[512];

	/* Undefined return address: the outermost frame, its own result (-ESRCH, not a
	 * failure), with the frame's CFA for its ID and no caller; no other method may go on
	 * (the frame pointer would find the "caller" 0x4321 here). */
	jitmap_frame_regs r = regs_with(0x1050, 0x7000, 0x7100);
	regs_set(&r, RBX, 0x55);
	memset(&res, 0xa5, sizeof(res));
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ESRCH);
	assert_contains(why, "cfi: the return address is undefined at 0x104f: the outermost frame");
	assert_null(strstr(why, "frame-pointer"));
	assert_int_equal(res.cfa, 0x7008); /* rsp + 8: the CIE's rule */
	assert_int_equal(res.method, JITMAP_UNWIND_CFI);
	assert_int_equal(res.caller.pc, 0);
	for (unsigned i = 0; i < JITMAP_UNWIND_MAX_REGS / 64; i++)
		assert_int_equal(res.caller.known[i], 0);
	assert_string_equal(jitmap_strerror(-ESRCH), "no caller: the outermost frame");
	/* The same in frame 0 (the row at the PC itself), and at the function's first byte. */
	jitmap_unwind_code inner = code;
	inner.is_innermost = true;
	assert_int_equal(step(&inner, &r, &m, &res, why, sizeof(why)), -ESRCH);
	assert_int_equal(res.cfa, 0x7008);
	r.pc = 0x1000;
	assert_int_equal(step(&inner, &r, &m, &res, why, sizeof(why)), -ESRCH);
	assert_contains(why, "undefined at 0x1000: the outermost frame");
	/* Without CFI among the allowed methods nothing marks the frame outermost: the frame
	 * pointer answers as it would anywhere. */
	jitmap_unwind_code no_cfi = code;
	no_cfi.methods = JITMAP_UNWIND_MASK(JITMAP_UNWIND_FRAME_POINTER);
	r = regs_with(0x1050, 0x7000, 0x7100);
	assert_int_equal(step(&no_cfi, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.method, JITMAP_UNWIND_FRAME_POINTER);
	assert_int_equal(res.caller.pc, 0x4321);

	/* A CFA expression is declined with a reason, and the frame pointer takes over (the
	 * FDE says where the function starts, and its code sets up rbp). */
	r = regs_with(0x1150, 0x7000, 0x7100);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.method, JITMAP_UNWIND_FRAME_POINTER);
	assert_int_equal(res.caller.pc, 0x4321);
	assert_int_equal(res.cfa, 0x7110);
	jitmap_unwind_code cfi_only = code;
	cfi_only.methods = ONLY(CFI);
	assert_int_equal(step(&cfi_only, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "cfi: the CFA at 0x114f is a DWARF expression");

	r = regs_with(0x1250, 0x7000, 0x7100);
	assert_int_equal(step(&cfi_only, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "return address at 0x124f is a DWARF expression");
	/* The function at the FDE's start (0x1200) does not set up rbp: no frame-pointer
	 * fallback either. */
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "frame-pointer: the function at 0x1200 does not begin with push %rbp");
	jitmap_cfi_free(cfi);
}

/* Instructions libdwarf rejects are a reason at unwinding time (or at jitmap_cfi_new). */
static void test_cfi_bad_instructions(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		uint8_t insns[8];
		size_t len;
	} cases[] = {
		{"reserved opcode 0x17", {0x17}, 1},
		{"opcode 0x3f (user range)", {0x3f, 0x01}, 2},
		{"register 300 beyond the table", {0x05, 0xac, 0x02, 0x01}, 4},
		{"LEB128 0 spelt over two bytes", {0x0e, 0x80, 0x00}, 3},
		{"restore_state without remember", {0x0b}, 1},
		{"advance past the FDE", {0x04, 0xff, 0xff, 0xff, 0x7f, 0x0e, 0x10}, 7},
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct eh e = {.addr = 0x5000};
		const size_t cie = eh_cie(&e, x86_cie_insns, sizeof(x86_cie_insns));
		eh_fde(&e, cie, 0x1000, 0x100, cases[i].insns, cases[i].len);
		eh_end(&e);
		jitmap_error err;
		jitmap_cfi *cfi = jitmap_cfi_new(X86, e.b, e.n, e.addr, NULL, 0, &err);
		if (!cfi) {
			assert_true(err.reason[0] != '\0');
			print_message("  %s: rejected at open: %s\n", cases[i].what, err.reason);
			continue;
		}
		struct fake_mem m = {0};
		fake_region(&m, 0x7000, 0x200);
		const jitmap_frame_regs r = regs_with(0x1080, 0x7000, 0x7100);
		const jitmap_unwind_code code = {.arch = X86, .cfi = cfi, .is_innermost = true,
						 .methods = ONLY(CFI)};
		jitmap_unwind_result res;
		char why[512];
		const int rc = step(&code, &r, &m, &res, why, sizeof(why));
		print_message("  %s: %s\n", cases[i].what, rc ? why : "unwound");
		if (rc) {
			assert_true(rc == -ENOENT || rc == -EFAULT);
			assert_contains(why, "cfi: ");
		} else {
			assert_true(res.cfa > 0x7000);
		}
		jitmap_cfi_free(cfi);
	}
}

static void test_cfi_debug_frame_and_overlaps(void **state)
{
	(void)state;
	/* .debug_frame: CIE id 0xffffffff, absolute addresses, an FDE pointing forward to its
	 * CIE. Two FDEs overlap: [0x2000, 0x2400) and [0x2100, 0x2200). */
	uint8_t df[256];
	size_t n = 0;
	const size_t fde1 = n;
	n += 4;
	sm_put(df + n, 56, 4, JITMAP_ORDER_LITTLE); /* CIE at offset 56 */
	n += 4;
	sm_put(df + n, 0x2000, 8, JITMAP_ORDER_LITTLE);
	sm_put(df + n + 8, 0x400, 8, JITMAP_ORDER_LITTLE);
	n += 16;
	while ((n - fde1) % 8)
		df[n++] = 0;
	sm_put(df + fde1, n - fde1 - 4, 4, JITMAP_ORDER_LITTLE);
	const size_t fde2 = n;
	n += 4;
	sm_put(df + n, 56, 4, JITMAP_ORDER_LITTLE);
	n += 4;
	sm_put(df + n, 0x2100, 8, JITMAP_ORDER_LITTLE);
	sm_put(df + n + 8, 0x100, 8, JITMAP_ORDER_LITTLE);
	n += 16;
	df[n++] = 0x0e; /* def_cfa_offset 24 */
	df[n++] = 24;
	while ((n - fde2) % 8)
		df[n++] = 0;
	sm_put(df + fde2, n - fde2 - 4, 4, JITMAP_ORDER_LITTLE);
	assert_int_equal(n, 56);
	const size_t cie = n;
	n += 4;
	sm_put(df + n, 0xffffffffu, 4, JITMAP_ORDER_LITTLE);
	n += 4;
	const uint8_t body[] = {1, 0, 1, 0x78, 16, 0x0c, 7, 8, 0x90, 1};
	memcpy(df + n, body, sizeof(body));
	n += sizeof(body);
	while ((n - cie) % 8)
		df[n++] = 0;
	sm_put(df + cie, n - cie - 4, 4, JITMAP_ORDER_LITTLE);

	jitmap_error err;
	jitmap_cfi *cfi = jitmap_cfi_new(X86, NULL, 0, 0, df, n, &err);
	if (!cfi)
		fail_msg("%s", err.reason);
	uint64_t lo, hi;
	assert_true(jitmap_cfi_covers(cfi, 0x2150, &lo, &hi));
	assert_int_equal(lo, 0x2100);
	assert_true(jitmap_cfi_covers(cfi, 0x2300, &lo, &hi));
	assert_int_equal(lo, 0x2000);
	assert_int_equal(hi, 0x2400);

	struct fake_mem m = {0};
	fake_region(&m, 0x7000, 0x200);
	fake_put64(&m, 0x7010, 0x9999);
	fake_put64(&m, 0x7000, 0x8888);
	const jitmap_unwind_code code = {.arch = X86, .cfi = cfi, .is_innermost = true};
	jitmap_unwind_result res;
	jitmap_frame_regs r = regs_with(0x2150, 0x7000, 0);
	assert_int_equal(step(&code, &r, &m, &res, NULL, 0), 0);
	assert_int_equal(res.cfa, 0x7018);
	assert_int_equal(res.caller.pc, 0x9999);
	r = regs_with(0x2300, 0x7000, 0);
	assert_int_equal(step(&code, &r, &m, &res, NULL, 0), 0);
	assert_int_equal(res.cfa, 0x7008);
	assert_int_equal(res.caller.pc, 0x8888);
	jitmap_cfi_free(cfi);
}

/* -- Hostile CFI -- */

struct hostile {
	const char *what;
	int code; /* expected errno */
	const char *reason;
};

static void expect_rejected(const uint8_t *b, size_t n, const struct hostile *h)
{
	jitmap_error err;
	memset(&err, 0, sizeof(err));
	errno = 0;
	jitmap_cfi *cfi = jitmap_cfi_new(X86, b, n, 0x5000, NULL, 0, &err);
	if (cfi) {
		jitmap_cfi_free(cfi);
		fail_msg("%s: accepted", h->what);
	}
	if (errno != h->code || err.code != -h->code)
		fail_msg("%s: errno %d (%s), expected %d", h->what, errno, err.reason, h->code);
	assert_contains(err.reason, h->reason);
}

static void test_cfi_hostile(void **state)
{
	(void)state;
	struct eh base = {.addr = 0x5000};
	const size_t cie = eh_cie(&base, x86_cie_insns, sizeof(x86_cie_insns));
	const size_t fde = eh_fde(&base, cie, 0x1000, 0x100, fp_frame_insns,
				  sizeof(fp_frame_insns));
	const size_t fde2 = eh_fde(&base, cie, 0x1100, 0x100, NULL, 0);
	eh_end(&base);
	jitmap_cfi_free(cfi_ok(&base));
	struct eh e;
	struct hostile h;

#define MUTATE(text, errcode, why, ...)                                                     \
	do {                                                                                \
		e = base;                                                                   \
		__VA_ARGS__;                                                                \
		h = (struct hostile){text, errcode, why};                                   \
		expect_rejected(e.b, e.n, &h);                                              \
	} while (0)

	MUTATE("huge length", EINVAL, "claims 4026531824 bytes",
	       sm_put(e.b + fde, 0xeffffff0u, 4, JITMAP_ORDER_LITTLE));
	MUTATE("reserved length", EINVAL, "reserved length value 0xfffffff5",
	       sm_put(e.b + fde, 0xfffffff5u, 4, JITMAP_ORDER_LITTLE));
	MUTATE("64-bit length of 2^62", EINVAL, "claims",
	       sm_put(e.b + fde, 0xffffffffu, 4, JITMAP_ORDER_LITTLE);
	       sm_put(e.b + fde + 4, UINT64_C(1) << 62, 8, JITMAP_ORDER_LITTLE));
	MUTATE("entry shorter than its ID", EINVAL, "has no ID",
	       sm_put(e.b + fde, 2, 4, JITMAP_ORDER_LITTLE));
	MUTATE("FDE pointing to an FDE", EINVAL, "no CIE starts",
	       sm_put(e.b + fde2 + 4, fde2 + 4 - fde, 4, JITMAP_ORDER_LITTLE));
	MUTATE("FDE pointing to itself", EINVAL, "no CIE starts",
	       sm_put(e.b + fde + 4, 4, 4, JITMAP_ORDER_LITTLE));
	MUTATE("CIE pointer before the section", EINVAL, "points before the section",
	       sm_put(e.b + fde + 4, 0x10000, 4, JITMAP_ORDER_LITTLE));
	MUTATE("CIE pointer into the middle of the CIE", EINVAL, "no CIE starts",
	       sm_put(e.b + fde + 4, fde + 4 - 8, 4, JITMAP_ORDER_LITTLE));
	MUTATE("CIE version 2", EINVAL, "CIE version 2", e.b[cie + 8] = 2);
	MUTATE("CIE version 4 in .eh_frame", EINVAL, "CIE version 4", e.b[cie + 8] = 4);
	MUTATE("unknown augmentation", EINVAL, "augmentation \"zX\"", e.b[cie + 10] = 'X');
	MUTATE("augmentation without z", EINVAL, "augmentation \"eR\"", e.b[cie + 9] = 'e');
	MUTATE("unterminated augmentation", EINVAL, "not terminated",
	       memset(e.b + cie + 9, 'R', 20));
	MUTATE("data-relative FDE addresses", EINVAL, "FDE pointer encoding 0x3b",
	       e.b[cie + 16] = 0x3b);
	MUTATE("indirect FDE addresses", EINVAL, "FDE pointer encoding 0x9b",
	       e.b[cie + 16] = 0x9b);
	MUTATE("LEB128 FDE addresses", EINVAL, "FDE pointer encoding 0x01", e.b[cie + 16] = 0x01);
	MUTATE("augmentation data overrun", EINVAL, "augmentation data overruns",
	       e.b[cie + 15] = 0x7f);
	MUTATE("return address column 200", EINVAL, "return address column 200",
	       e.b[cie + 14] = 200);
	MUTATE("FDE too short for its range", EINVAL, "too short",
	       sm_put(e.b + fde2, 8, 4, JITMAP_ORDER_LITTLE);
	       memset(e.b + fde2 + 12, 0, 4));
	MUTATE("FDE augmentation data overrun", EINVAL, "FDE augmentation data overruns",
	       e.b[fde2 + 16] = 0x40);
	MUTATE("stray bytes at the end", EINVAL, "stray bytes",
	       e.n -= 4; e.b[e.n++] = 1; e.b[e.n++] = 2);
	MUTATE("truncated 64-bit length", EINVAL, "truncated 64-bit length",
	       e.n -= 4; sm_put(e.b + e.n, 0xffffffffu, 4, JITMAP_ORDER_LITTLE); e.n += 4;
	       e.b[e.n++] = 0);
	MUTATE("CIE only", ENOENT, "no FDE", e.n = fde; eh_end(&e));
	MUTATE("every FDE wraps around", ENOENT, "no FDE covers any code",
	       sm_put(e.b + fde + 8, (uint32_t)(0xfffffffffffff000 - (0x5000 + fde + 8)), 4,
		      JITMAP_ORDER_LITTLE);
	       sm_put(e.b + fde + 12, 0x2000, 4, JITMAP_ORDER_LITTLE);
	       e.n = fde2; eh_end(&e));
	MUTATE("terminator only", ENOENT, "no FDE", e.n = 0; eh_end(&e));
#undef MUTATE

	/* Bytes after the terminator are not read; so a section may end anywhere past it. */
	e = base;
	memset(e.b + e.n, 0xee, 64);
	e.n += 64;
	jitmap_cfi_free(cfi_ok(&e));

	/* Sizes, NULLs and architectures. */
	jitmap_error err;
	errno = 0;
	assert_null(jitmap_cfi_new(X86, base.b, (size_t)(UINT64_C(64) << 20) + 1, 0, NULL, 0, &err));
	assert_int_equal(errno, EINVAL);
	assert_contains(err.reason, "larger than 64 MiB");
	assert_null(jitmap_cfi_new(X86, NULL, 100, 0, NULL, 0, &err));
	assert_int_equal(errno, ENOENT);
	assert_null(jitmap_cfi_new(X86, base.b, 0, 0, base.b, 0, &err));
	assert_int_equal(errno, ENOENT);
	assert_null(jitmap_cfi_new(JITMAP_ARCH_UNKNOWN, base.b, base.n, 0, NULL, 0, &err));
	assert_int_equal(errno, ENOTSUP);
	assert_null(jitmap_cfi_new(X86, base.b, 3, 0, NULL, 0, NULL)); /* no error record */
	assert_int_equal(errno, EINVAL);
	jitmap_cfi_free(NULL);

	/* .debug_frame: two FDEs that point at each other (a CIE pointer loop), version 4
	 * with a 4-byte address size. */
	uint8_t df[48] = {0};
	sm_put(df, 20, 4, JITMAP_ORDER_LITTLE);
	sm_put(df + 4, 24, 4, JITMAP_ORDER_LITTLE); /* -> the second FDE */
	sm_put(df + 24, 20, 4, JITMAP_ORDER_LITTLE);
	sm_put(df + 28, 0, 4, JITMAP_ORDER_LITTLE); /* -> the first FDE */
	assert_null(jitmap_cfi_new(X86, NULL, 0, 0, df, sizeof(df), &err));
	assert_int_equal(errno, EINVAL);
	assert_contains(err.reason, ".debug_frame: FDE's CIE pointer leads to offset 24");
	uint8_t df4[24] = {0};
	sm_put(df4, 20, 4, JITMAP_ORDER_LITTLE);
	sm_put(df4 + 4, 0xffffffffu, 4, JITMAP_ORDER_LITTLE);
	df4[8] = 4;  /* version */
	df4[10] = 4; /* address size */
	assert_null(jitmap_cfi_new(X86, NULL, 0, 0, df4, sizeof(df4), &err));
	assert_contains(err.reason, "CIE address size 4, segment size 0");
}

/* Every prefix and many single-byte changes of a section: a reason or a working object,
 * never a crash (ASan and UBSan watch this in the sanitizer build). */
static void torture(const uint8_t *sec, size_t len, uint64_t addr, uint64_t pc_lo, uint64_t pc_hi)
{
	uint8_t *b = malloc(len ? len : 1);
	assert_non_null(b);
	struct fake_mem m = {0};
	fake_region(&m, 0x7000, 0x400);
	size_t opened = 0, rejected = 0, steps_ok = 0;
	for (size_t cut = 0; cut <= len; cut++) {
		/* An exact-size copy, so that a read past the end is caught. */
		uint8_t *p = malloc(cut ? cut : 1);
		assert_non_null(p);
		memcpy(p, sec, cut);
		jitmap_error err;
		jitmap_cfi *cfi = jitmap_cfi_new(X86, p, cut, addr, NULL, 0, &err);
		free(p);
		if (!cfi) {
			assert_true(err.reason[0] != '\0');
			rejected++;
			continue;
		}
		opened++;
		jitmap_cfi_free(cfi);
	}
	static const uint8_t values[] = {0x00, 0xff, 0x80, 0x7f, 0x01, 0x10};
	for (size_t i = 0; i < len; i++) {
		for (size_t v = 0; v < ARRAY_LEN(values); v++) {
			memcpy(b, sec, len);
			b[i] ^= values[v] ? values[v] : b[i];
			jitmap_error err;
			jitmap_cfi *cfi = jitmap_cfi_new(X86, b, len, addr, NULL, 0, &err);
			if (!cfi) {
				assert_true(err.reason[0] != '\0');
				rejected++;
				continue;
			}
			opened++;
			const uint64_t stride = (pc_hi - pc_lo) / 16 > 7 ? (pc_hi - pc_lo) / 16 : 7;
			for (uint64_t pc = pc_lo; pc < pc_hi; pc += stride) {
				jitmap_frame_regs r = regs_with(pc, 0x7100, 0x7180);
				const jitmap_unwind_code code = {.arch = X86, .cfi = cfi,
								 .is_innermost = pc % 2,
								 .methods = ONLY(CFI)};
				jitmap_unwind_result res;
				char why[128];
				const int rc = step(&code, &r, &m, &res, why, sizeof(why));
				assert_true(rc == 0 || rc == -ENOENT || rc == -EFAULT);
				if (rc == 0) {
					assert_true(res.cfa > 0x7100);
					steps_ok++;
				} else {
					assert_true(why[0] != '\0');
				}
			}
			jitmap_cfi_free(cfi);
		}
	}
	free(b);
	print_message("  %zu bytes: %zu opened, %zu rejected, %zu steps unwound\n", len, opened,
		      rejected, steps_ok);
	assert_true(opened > 0 && rejected > 0);
}

static void test_cfi_torture_synthetic(void **state)
{
	(void)state;
	struct eh e = {.addr = 0x5000};
	const size_t cie = eh_cie(&e, x86_cie_insns, sizeof(x86_cie_insns));
	eh_fde(&e, cie, 0x1000, 0x100, fp_frame_insns, sizeof(fp_frame_insns));
	const uint8_t more[] = {0x0a, 0x41, 0x0e, 0x10, 0x0b, 0x0e, 0x18, 0x2e, 0x08};
	eh_fde(&e, cie, 0x1100, 0x80, more, sizeof(more));
	const uint8_t pers[] = {0x9b, 0, 0, 0, 0, 0x1b, 0x1b}; /* P (indirect), L, R */
	const size_t cie2 = eh_cie_aug(&e, "zPLR", pers, sizeof(pers), x86_cie_insns,
				       sizeof(x86_cie_insns));
	eh_fde(&e, cie2, 0x1200, 0x40, fp_frame_insns, sizeof(fp_frame_insns));
	eh_end(&e);
	jitmap_cfi_free(cfi_ok(&e));
	torture(e.b, e.n, e.addr, 0x1000, 0x1240);
}

/* -- The frame-pointer chain -- */

static void test_frame_pointer(void **state)
{
	(void)state;
	struct fake_mem m = {0};
	fake_region(&m, 0x7000, 0x200);
	struct region *code_bytes = fake_region(&m, 0x1000, 0x100);
	fake_put64(&m, 0x7100, 0x7180);
	fake_put64(&m, 0x7108, 0x4444);
	jitmap_unwind_result res;
	char why[512];
	jitmap_unwind_code code = {.arch = X86};

	/* Outer frame, function unknown: the chain with its sanity checks. */
	jitmap_frame_regs r = regs_with(0x1050, 0x7000, 0x7100);
	regs_set(&r, RBX, 3);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.method, JITMAP_UNWIND_FRAME_POINTER);
	assert_int_equal(res.cfa, 0x7110);
	assert_int_equal(res.caller.pc, 0x4444);
	expect_reg(&res.caller, RSP, 0x7110);
	expect_reg(&res.caller, RBP, 0x7180);
	expect_unknown(&res.caller, RBX); /* callee-saved, but where it was saved is not known */
	/* ... and a guess: under JITMAP_UNWIND_PROVEN it declines, saying why. */
	code.methods = JITMAP_UNWIND_PROVEN;
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "the function's start is unknown, so nothing says rbp is its frame "
			"pointer: following it would be a guess");
	code.methods = JITMAP_UNWIND_PROVEN | JITMAP_UNWIND_MASK(JITMAP_UNWIND_FRAME_POINTER);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "following it would be a guess");
	code.methods = 0;

	static const struct {
		const char *what;
		uint64_t sp, fp;
		int rc;
		const char *why;
	} bad[] = {
		{"rbp below rsp", 0x7108, 0x7100, -ENOENT, "not a frame pointer"},
		{"rbp misaligned", 0x7000, 0x7104, -ENOENT, "not a frame pointer"},
		{"rbp too far", 0x6000, 0x7100 + (UINT64_C(16) << 20), -ENOENT, "not a frame pointer"},
		{"rbp at the top", 0x7000, UINT64_MAX - 7, -ENOENT, "not a frame pointer"},
		{"record unreadable", 0x7000, 0x7200, -EFAULT, "cannot read the frame record"},
		{"return address 0", 0x7000, 0x7040, -ENOENT, "the end of the chain"},
	};
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		r = regs_with(0x1050, bad[i].sp, bad[i].fp);
		const int rc = step(&code, &r, &m, &res, why, sizeof(why));
		if (rc != bad[i].rc)
			fail_msg("%s: %d (%s)", bad[i].what, rc, why);
		assert_contains(why, bad[i].why);
		assert_contains(why, "cfi: no CFI for this code; stackmap: no stackmap for this code");
	}
	r = regs_with(0x1050, 0x7000, 0);
	r.known[0] &= ~(UINT64_C(1) << RBP);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "rbp is not known");

	/* A known function that does not set up rbp: declined (rbp would be its caller's). */
	const uint8_t frameless[] = {0x53, 0x48, 0x83, 0xec, 0x10};
	memcpy(code_bytes->bytes, frameless, sizeof(frameless));
	code.func_lo = 0x1000;
	code.func_hi = 0x1080;
	r = regs_with(0x1050, 0x7000, 0x7100);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "the function at 0x1000 does not begin with push %rbp");
	/* A return address at the very end of the function is still in it (PC - 1). */
	r.pc = 0x1080;
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "the function at 0x1000 does not begin");

	/* A known function with the prologue (after endbr64), frame 0 in its body. */
	const uint8_t fp_code[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0x53};
	memcpy(code_bytes->bytes, fp_code, sizeof(fp_code));
	code.is_innermost = true;
	r = regs_with(0x1050, 0x7000, 0x7100);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.caller.pc, 0x4444);
	/* The function's prologue proves it: the same under JITMAP_UNWIND_PROVEN. */
	code.methods = JITMAP_UNWIND_PROVEN;
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.caller.pc, 0x4444);
	code.methods = 0;

	/* Frame 0 at the entry, and at the push after the endbr64: RA at rsp, every
	 * callee-saved register unchanged. */
	fake_put64(&m, 0x7010, 0x3333);
	fake_put64(&m, 0x7018, 0x2222);
	for (uint64_t pc = 0x1000; pc <= 0x1004; pc += 4) {
		r = regs_with(pc, 0x7010, 0x9990);
		regs_set(&r, RBX, 0x77);
		regs_set(&r, 0, 0x1);
		assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
		assert_int_equal(res.caller.pc, 0x3333);
		assert_int_equal(res.cfa, 0x7018);
		expect_reg(&res.caller, RBP, 0x9990);
		expect_reg(&res.caller, RBX, 0x77);
		expect_unknown(&res.caller, 0);
	}
	/* Between push %rbp and mov %rsp,%rbp: the caller's rbp is at rsp, the RA above. */
	r = regs_with(0x1005, 0x7010, 0x9990);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.caller.pc, 0x2222);
	assert_int_equal(res.cfa, 0x7020);
	expect_reg(&res.caller, RBP, 0x3333);

	/* Frame 0 at a ret: RA at rsp, everything restored already. */
	code_bytes->bytes[0x60] = 0xc3;
	r = regs_with(0x1060, 0x7010, 0x5550);
	regs_set(&r, 15, 0xf);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.caller.pc, 0x3333);
	expect_reg(&res.caller, RBP, 0x5550);
	expect_reg(&res.caller, 15, 0xf);
	code_bytes->bytes[0x60] = 0xf3;
	code_bytes->bytes[0x61] = 0xc3;
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.caller.pc, 0x3333);

	/* Frame 0 at a push %rbp of a function whose start is unknown: declined. */
	code.func_lo = code.func_hi = 0;
	code_bytes->bytes[0x70] = 0x55;
	r = regs_with(0x1070, 0x7010, 0x7100);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "prologue of a function whose start is unknown");

	/* AArch64 without the function's start: where the record is in the frame only the
	 * prologue says. RISC-V: not implemented, said so. */
	code.arch = JITMAP_ARCH_AARCH64;
	r = regs_with(0x1050, 0, 0);
	memset(r.known, 0, sizeof(r.known));
	regs_set(&r, 31, 0x7000);
	regs_set(&r, 29, 0x7100);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "frame-pointer: the function's start is unknown, and on aarch64 only "
			     "its prologue says where the frame record is");
	code.arch = JITMAP_ARCH_RISCV64;
	memset(r.known, 0, sizeof(r.known));
	regs_set(&r, 2, 0x7000);
	regs_set(&r, 8, 0x7100);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "frame-pointer: not known for riscv64");
}

/* -- The stackmap's frame size -- */

/* The stackmap `b` describes, parsed. */
static jitmap_stackmap *built(sm_builder *b, jitmap_byte_order order, jitmap_arch arch)
{
	sm_bytes bytes = smb_emit(b);
	jitmap_stackmap *sm = parse_bytes_ok(&bytes, order, arch);
	sm_bytes_free(&bytes);
	return sm;
}

static jitmap_stackmap *one_function_stackmap(uint64_t stack_size, jitmap_arch arch)
{
	sm_builder b;
	smb_init(&b, 3, JITMAP_ORDER_LITTLE);
	smb_function(&b, 0x2000, stack_size);
	smb_record(&b, 7, 0x10);
	smb_loc(&b, REG, 8, 3, 0);
	smb_record(&b, 8, 0x30);
	return built(&b, JITMAP_ORDER_LITTLE, arch);
}

/* -- The code: every path from the function's start to the PC (walk.c) -- */

/* One function at 0x1000 of `bytes`, frame at `pc` with SP 0x7000 (rbp `rbp`, rbx 0x3b):
 * the step's return, with `res` and `why`. */
static int code_step_fp(const uint8_t *bytes, size_t len, uint64_t pc, bool exact, uint64_t rbp,
			jitmap_unwind_result *res, char *why, size_t why_len)
{
	struct fake_mem m = {0};
	struct region *code = fake_region(&m, 0x1000, 0x200);
	memcpy(code->bytes, bytes, len);
	fake_region(&m, 0x7000, 0x200);
	for (uint64_t a = 0x7000; a < 0x7200; a += 8)
		fake_put64(&m, a, 0xdead0000 + (a - 0x7000));
	jitmap_unwind_code c = {.arch = X86, .func_lo = 0x1000, .func_hi = 0x1000 + len,
				.is_innermost = exact, .methods = JITMAP_UNWIND_PROVEN};
	jitmap_frame_regs r = regs_with(pc, 0x7000, rbp);
	regs_set(&r, RBX, 0x3b);
	return step(&c, &r, &m, res, why, why_len);
}

static int code_step(const uint8_t *bytes, size_t len, uint64_t pc, bool exact,
		     jitmap_unwind_result *res, char *why, size_t why_len)
{
	return code_step_fp(bytes, len, pc, exact, 0x7100, res, why, why_len);
}

static void test_code_walk(void **state)
{
	(void)state;
	jitmap_unwind_result res;
	char why[512];
	/* CPython's -X perf trampoline: endbr64; sub $8,%rsp; call *%rcx; add $8,%rsp; ret. */
	static const uint8_t tramp[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
					0x48, 0x83, 0xc4, 0x08, 0xc3};
	/* At the return address the call left: 8 pushed by the call into it, 8 subtracted. */
	assert_int_equal(code_step(tramp, sizeof(tramp), 0x100a, false, &res, why, sizeof(why)), 0);
	assert_int_equal(res.method, JITMAP_UNWIND_CODE);
	assert_int_equal(res.cfa, 0x7010);
	assert_int_equal(res.caller.pc, 0xdead0008);
	expect_reg(&res.caller, RSP, 0x7010);
	expect_reg(&res.caller, RBP, 0x7100); /* no instruction writes them: the caller's */
	expect_reg(&res.caller, RBX, 0x3b);
	/* Frame 0 at its entry, after the endbr64, at the ret: the return address at SP. */
	for (uint64_t pc = 0x1000; pc <= 0x100e; pc += pc == 0x1004 ? 10 : 4) {
		assert_int_equal(code_step(tramp, sizeof(tramp), pc, true, &res, why, sizeof(why)),
				 0);
		assert_int_equal(res.cfa, 0x7008);
	}
	/* Not where an instruction starts; a return address at the first byte (no call in it
	 * left one there: a continuation, BEAM's and V8's); not after a call. */
	assert_int_equal(code_step(tramp, sizeof(tramp), 0x1005, true, &res, why, sizeof(why)),
			 -ENOENT);
	assert_contains(why, "code: 0x1005 is not where an instruction starts");
	assert_int_equal(code_step(tramp, sizeof(tramp), 0x1000, false, &res, why, sizeof(why)),
			 -ENOENT);
	assert_contains(why, "is the code's first byte: no call in it left it there");
	assert_int_equal(code_step(tramp, sizeof(tramp), 0x1008, false, &res, why, sizeof(why)),
			 -ENOENT);
	assert_contains(why, "0x1008 does not follow a call");

	/* V8's shape: checks first (a branch out of the function), then the frame, pushes and
	 * room for locals: no frame-pointer prologue at the start, so only the code answers.
	 *   lea -7(%rip),%rbx; cmp %rbx,%rcx; jne 0x2000; push %rbp; mov %rsp,%rbp;
	 *   push %rsi; push %rdi; push %rax; sub $0x20,%rsp; call *%rax */
	static const uint8_t v8[] = {0x48, 0x8d, 0x1d, 0xf9, 0xff, 0xff, 0xff, 0x48, 0x39, 0xd9,
				     0x0f, 0x85, 0xf0, 0x0f, 0x00, 0x00, 0x55, 0x48, 0x89, 0xe5,
				     0x56, 0x57, 0x50, 0x48, 0x83, 0xec, 0x20, 0xff, 0xd0, 0xc3};
	/* (rbp as the function set it: SP + the room and the three pushes) */
	assert_int_equal(code_step_fp(v8, sizeof(v8), 0x101d, false, 0x7000 + 0x20 + 3 * 8, &res,
				      why, sizeof(why)), 0);
	assert_int_equal(res.method, JITMAP_UNWIND_CODE);
	assert_int_equal(res.cfa, 0x7000 + 0x20 + 3 * 8 + 8 + 8);
	assert_int_equal(res.caller.pc, 0xdead0000 + 0x20 + 3 * 8 + 8);
	expect_reg(&res.caller, RBP, 0xdead0000 + 0x20 + 3 * 8); /* from its slot */
	expect_unknown(&res.caller, RBX); /* the lea wrote it */

	/* An interpreter's register file, pushed in a loop: SP differs on the two paths into
	 * the loop, the frame pointer does not.
	 *   push %rbp; mov %rsp,%rbp; mov $4,%ecx; L: push $0; dec %ecx; jne L; call *%rax */
	static const uint8_t loop[] = {0x55, 0x48, 0x89, 0xe5, 0xb9, 0x04, 0x00, 0x00, 0x00, 0x6a,
				       0x00, 0xff, 0xc9, 0x75, 0xfa, 0xff, 0xd0, 0xc3};
	assert_int_equal(code_step(loop, sizeof(loop), 0x1011, false, &res, why, sizeof(why)), 0);
	assert_int_equal(res.method, JITMAP_UNWIND_CODE);
	assert_int_equal(res.cfa, 0x7110);
	expect_reg(&res.caller, RBP, 0xdead0100);

	/* BEAM's tail call: the frame already left, rbp the caller's again, then the jump.
	 *   push %rbp; mov %rsp,%rbp; sub $16,%rsp; call *%rax; leave; jmp 0x3000 */
	static const uint8_t tail[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0xff, 0xd0,
				       0xc9, 0xe9, 0xf0, 0x1f, 0x00, 0x00};
	assert_int_equal(code_step(tail, sizeof(tail), 0x100b, true, &res, why, sizeof(why)), 0);
	assert_int_equal(res.method, JITMAP_UNWIND_CODE);
	assert_int_equal(res.cfa, 0x7008);
	assert_int_equal(res.caller.pc, 0xdead0000);
	expect_reg(&res.caller, RBP, 0x7100); /* popped back: the caller's */

	/* A dynamic alloca without a frame pointer: SP's distance is not known.
	 *   push %rbx; sub %rax,%rsp; call *%rdx */
	static const uint8_t alloca_[] = {0x53, 0x48, 0x29, 0xc4, 0xff, 0xd2, 0xc3};
	assert_int_equal(code_step(alloca_, sizeof(alloca_), 0x1006, false, &res, why,
				   sizeof(why)), -ENOENT);
	assert_contains(why, "the stack pointer's distance to the frame's top differs on the "
			"paths there, or was changed in a way not followed");
	/* The same pushes on one path and not the other: the paths disagree.
	 *   test %edi,%edi; je L; push %rbx; L: call *%rax */
	static const uint8_t cond[] = {0x85, 0xff, 0x74, 0x01, 0x53, 0xff, 0xd0, 0xc3};
	assert_int_equal(code_step(cond, sizeof(cond), 0x1007, false, &res, why, sizeof(why)),
			 -ENOENT);
	assert_contains(why, "differs on the paths there");
	/* A jump into the middle of an instruction. jmp 0x1003 over a 5-byte mov; nop; ret */
	static const uint8_t mid[] = {0xeb, 0x01, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x90, 0xc3};
	assert_int_equal(code_step(mid, sizeof(mid), 0x1007, true, &res, why, sizeof(why)),
			 -ENOENT);
	assert_contains(why, "jumps into the middle of an instruction");
	/* Code reached only by an indirect jump (a switch's case). jmp *%rax; push %rbx; ret */
	static const uint8_t ind[] = {0xff, 0xe0, 0x53, 0xc3};
	assert_int_equal(code_step(ind, sizeof(ind), 0x1002, true, &res, why, sizeof(why)),
			 -ENOENT);
	assert_contains(why, "no path from the function's start at 0x1000 reaches 0x1002");
}

static void test_stackmap_rule(void **state)
{
	(void)state;
	struct fake_mem m = {0};
	fake_region(&m, 0x7000, 0x200);
	struct region *code_bytes = fake_region(&m, 0x2000, 0x100);
	code_bytes->bytes[0] = 0x53; /* push %rbx: no frame pointer */
	fake_put64(&m, 0x7028, 0x6060);
	fake_put64(&m, 0x7020, 0x7070);
	jitmap_stackmap *sm = one_function_stackmap(40, X86);
	jitmap_unwind_code code = {.arch = X86, .sm = sm, .methods = ONLY(STACKMAP)};
	jitmap_unwind_result res;
	char why[512];

	/* At the record: CFA = rsp + 40 + 8, the return address at CFA - 8, rbx from the slot
	 * its push made (CFA - 16); nothing else is known: the prologue builds 8 bytes of a
	 * 40-byte frame, so it is not all of the saves (rbp is kept only when the code proves
	 * where it was saved). */
	jitmap_frame_regs r = regs_with(0x2010, 0x7000, 0x7020);
	regs_set(&r, RBX, 5);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.method, JITMAP_UNWIND_STACKMAP);
	assert_int_equal(res.cfa, 0x7030);
	assert_int_equal(res.caller.pc, 0x6060);
	expect_reg(&res.caller, RSP, 0x7030);
	expect_unknown(&res.caller, RBP);
	expect_reg(&res.caller, RBX, 0x7070);

	/* With push %rbp; mov %rsp,%rbp at the function's address and rbp = CFA - 16, rbp's
	 * save slot is proven. */
	const uint8_t prologue[] = {0x55, 0x48, 0x89, 0xe5};
	memcpy(code_bytes->bytes, prologue, sizeof(prologue));
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	expect_reg(&res.caller, RBP, 0x7070);
	/* The other encoding of the mov. */
	code_bytes->bytes[2] = 0x8b;
	code_bytes->bytes[3] = 0xec;
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	expect_reg(&res.caller, RBP, 0x7070);
	/* ... and when rbp says otherwise, SP is not the body's SP: declined. */
	r = regs_with(0x2010, 0x6fe0, 0x7020);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "stackmap: the stack size 40 puts the CFA at 0x7010, but the frame "
			"pointer puts it at 0x7030");

	/* Without a frame pointer, an instruction at the record that moves rsp (the add that
	 * frees a call's pushed arguments) makes SP unprovable; unreadable code too. */
	code_bytes->bytes[0] = 0x53;
	static const uint8_t moves[][4] = {
		{0x48, 0x83, 0xc4, 0x20}, {0x48, 0x81, 0xc4, 0x00}, {0x48, 0x8d, 0x64, 0x24},
		{0x48, 0x8d, 0xa4, 0x24}, {0x59, 0x90, 0x90, 0x90}, {0x41, 0x5f, 0x90, 0x90},
	};
	r = regs_with(0x2010, 0x7000, 0x7020);
	for (size_t i = 0; i < ARRAY_LEN(moves); i++) {
		memcpy(code_bytes->bytes + 0x10, moves[i], 4);
		assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
		assert_contains(why, "the instruction at 0x2010 moves the stack pointer");
	}
	/* ... unless it is the epilogue and agrees with the stack size: add $0x20,%rsp; pop
	 * %rbx; ret puts the return address 40 above SP, where the rule does (a record at the
	 * return address of the call a function ends with). When the add also frees pushed
	 * arguments (0x30), or no return follows, it declines. */
	memcpy(code_bytes->bytes + 0x10, "\x48\x83\xc4\x20\x5b\xc3", 6);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.cfa, 0x7030);
	assert_int_equal(res.caller.pc, 0x6060);
	memcpy(code_bytes->bytes + 0x10, "\x48\x83\xc4\x30\x5b\xc3", 6);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "the instruction at 0x2010 moves the stack pointer");
	memcpy(code_bytes->bytes + 0x10, "\x48\x83\xc4\x20\x5b\x90", 6);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	memset(code_bytes->bytes + 0x14, 0, 2);
	memcpy(code_bytes->bytes + 0x10, "\x48\x01\xd8\x90", 4); /* add %rbx,%rax */
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	m.r[1].len = 0x14; /* the code ends inside the instruction */
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -EFAULT);
	assert_contains(why, "cannot read the code at 0x2010");
	m.r[1].len = 0x100;
	memcpy(code_bytes->bytes, prologue, sizeof(prologue));

	/* Not at a record: the nearest is named. */
	r = regs_with(0x2011, 0x7000, 0x7020);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "stackmap: no record at 0x2011 (nearest: before 0x2010)");
	r.pc = 0x1000;
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "stackmap: no record at 0x1000");

	/* Unreadable return address, RA of 0, SP at the top of memory. */
	r = regs_with(0x2030, 0x7100, 0x7120);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "the return address at 0x7128 is 0");
	r = regs_with(0x2030, 0x7400, 0x7420);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -EFAULT);
	assert_contains(why, "cannot read the return address at 0x7428");
	r = regs_with(0x2030, UINT64_MAX - 40, 0);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "overflows");
	jitmap_stackmap_free(sm);

	static const struct {
		uint64_t stack_size;
		jitmap_arch arch;
		const char *why;
	} no[] = {
		{UINT64_MAX, X86, "has a dynamic or realigned frame"},
		{41, X86, "stack size 41 of the function at 0x2000 is not plausible"},
		{UINT64_C(1) << 40, X86, "is not plausible"},
		/* AArch64 has the rule, but nothing at 0x2000 says where the return address is */
		{40, JITMAP_ARCH_AARCH64, "where the function at 0x2000 saved the return address "
					  "is not known"},
		{40, JITMAP_ARCH_RISCV64, "the frame size rule is not known for riscv64"},
	};
	for (size_t i = 0; i < ARRAY_LEN(no); i++) {
		sm = one_function_stackmap(no[i].stack_size, no[i].arch);
		code.sm = sm;
		code.arch = no[i].arch;
		r = regs_with(0x2010, 0x7000, 0x7020);
		if (no[i].arch == JITMAP_ARCH_AARCH64)
			regs_set(&r, 31, 0x7000);
		if (no[i].arch == JITMAP_ARCH_RISCV64)
			regs_set(&r, 2, 0x7000);
		assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
		assert_contains(why, no[i].why);
		jitmap_stackmap_free(sm);
	}
}

/* -- AArch64: frame records, leaves, the stackmap's frame size -- */

static void put_words(struct fake_mem *m, uint64_t at, const uint32_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const uint8_t b[4] = {(uint8_t)w[i], (uint8_t)(w[i] >> 8), (uint8_t)(w[i] >> 16),
				      (uint8_t)(w[i] >> 24)};
		fake_put(m, at + 4 * i, b, 4);
	}
}

#define A64_NOP 0xd503201fu
#define X29 29
#define X30 30
#define A64_SP 31

/* A stop in a frameless leaf called by a function with a frame record, laid out as the
 * code below leaves the stack (the words are what aarch64-linux-gnu-as assembles):
 *   outer 0x10000: stp x29, x30, [sp, #-48]!; mov x29, sp; stp x19, x20, [sp, #16];
 *                  nop; nop; bl inner; (0x10018, record 1001) ...
 *   inner 0x10080: sub sp, sp, #32; nop; (0x10088, record 1002) nop; add sp, sp, #32; ret
 *   B     0x10100: sub sp, sp, #32; stp x29, x30, [sp, #16]; add x29, sp, #16
 *   C     0x10180: str x30, [sp, #-16]!
 *   D     0x10200: stp x19, x20, [sp, #-16]! (a leaf that saves callee-saved registers)
 *   E     0x10240: sub sp, sp, #32; eight nops; str x19, [sp, #8] (at +36); (record 1006)
 *   F     0x10280: sub sp, sp, #32; (record 1007) mov x9, x19
 *   G     0x102c0: sub sp, sp, #32; mov x9, x19; (record 1008)
 * The caller's SP is 0x8000, its x29 0x8100, its return address 0x20010. */
static void test_aarch64(void **state)
{
	(void)state;
	struct fake_mem m = {0};
	fake_region(&m, 0x7f00, 0x200);
	fake_region(&m, 0x10000, 0x300);
	static const uint32_t outer[] = {0xa9bd7bfd, 0x910003fd, 0xa90153f3, A64_NOP, A64_NOP,
					 0x94000000, A64_NOP, A64_NOP};
	static const uint32_t inner[] = {0xd10083ff, 0xf90007e9, A64_NOP, 0x910083ff, 0xd65f03c0};
	static const uint32_t form_b[] = {0xd10083ff, 0xa9017bfd, 0x910043fd, A64_NOP};
	static const uint32_t form_c[] = {0xf81f0ffe, A64_NOP, A64_NOP, A64_NOP};
	static const uint32_t form_d[] = {0xa9bf53f3, A64_NOP, A64_NOP, A64_NOP};
	put_words(&m, 0x10000, outer, ARRAY_LEN(outer));
	put_words(&m, 0x10080, inner, ARRAY_LEN(inner));
	put_words(&m, 0x10100, form_b, ARRAY_LEN(form_b));
	put_words(&m, 0x10180, form_c, ARRAY_LEN(form_c));
	put_words(&m, 0x10200, form_d, ARRAY_LEN(form_d));
	static const uint32_t form_e[] = {0xd10083ff, A64_NOP, A64_NOP, A64_NOP, A64_NOP, A64_NOP,
					  A64_NOP, A64_NOP, A64_NOP, 0xf90007f3, A64_NOP};
	static const uint32_t form_f[] = {0xd10083ff, 0xaa1303e9, A64_NOP};
	put_words(&m, 0x10240, form_e, ARRAY_LEN(form_e));
	put_words(&m, 0x10280, form_f, ARRAY_LEN(form_f));
	put_words(&m, 0x102c0, form_f, ARRAY_LEN(form_f));
	fake_put64(&m, 0x7fd0, 0x8100);  /* outer's frame record: the caller's x29 */
	fake_put64(&m, 0x7fd8, 0x20010); /* and its return address */
	fake_put64(&m, 0x7fe0, 0x1919);  /* the caller's x19, x20 */
	fake_put64(&m, 0x7fe8, 0x2020);

	sm_builder b;
	smb_init(&b, 3, JITMAP_ORDER_LITTLE);
	smb_function(&b, 0x10000, 48);
	smb_record(&b, 1001, 0x18);
	smb_function(&b, 0x10080, 32);
	smb_record(&b, 1002, 0x8);
	smb_function(&b, 0x10100, 32);
	smb_record(&b, 1003, 0xc);
	smb_function(&b, 0x10180, 16);
	smb_record(&b, 1004, 0x8);
	smb_function(&b, 0x10200, 16);
	smb_record(&b, 1005, 0x8);
	smb_function(&b, 0x10240, 32);
	smb_record(&b, 1006, 0x28);
	smb_function(&b, 0x10280, 32);
	smb_record(&b, 1007, 0x4);
	smb_function(&b, 0x102c0, 32);
	smb_record(&b, 1008, 0x8);
	jitmap_stackmap *sm = built(&b, JITMAP_ORDER_LITTLE, JITMAP_ARCH_AARCH64);

	jitmap_unwind_code code = {.arch = JITMAP_ARCH_AARCH64, .sm = sm, .is_innermost = true,
				   .methods = ONLY(STACKMAP)};
	jitmap_unwind_result res;
	char why[512];
	jitmap_frame_regs r;
#define A64_REGS(pc_, sp_, fp_, lr_)                                                       \
	do {                                                                               \
		memset(&r, 0, sizeof(r));                                                  \
		r.pc = (pc_);                                                              \
		regs_set(&r, A64_SP, (sp_));                                               \
		regs_set(&r, X29, (fp_));                                                  \
		regs_set(&r, X30, (lr_));                                                  \
		regs_set(&r, 19, 1234);                                                    \
		regs_set(&r, 20, 5678);                                                    \
		for (unsigned x_ = 21; x_ <= 28; x_++)                                     \
			regs_set(&r, x_, 0x2100 + x_);                                     \
	} while (0)

	/* Frame 0, the leaf at record 1002: CFA = SP + 32, the return address still in x30,
	 * every callee-saved register the caller's (the leaf stored only x9, caller-saved). */
	A64_REGS(0x10088, 0x7fb0, 0x7fd0, 0x10018);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.method, JITMAP_UNWIND_STACKMAP);
	assert_int_equal(res.cfa, 0x7fd0);
	assert_int_equal(res.caller.pc, 0x10018);
	expect_reg(&res.caller, A64_SP, 0x7fd0);
	expect_reg(&res.caller, X29, 0x7fd0);
	expect_reg(&res.caller, 19, 1234);
	expect_reg(&res.caller, 20, 5678);

	/* Frame 1, outer at record 1001: CFA = SP + 48, which x29 + 48 (its prologue) confirms;
	 * the return address and the caller's x29 from the frame record, its x19 and x20 from
	 * the slots its prologue stored them in (stp x19, x20, [sp, #16]: CFA - 32), and x21-x28,
	 * which that prologue (the whole 48-byte frame, then code that touches none of them)
	 * does not save, the leaf's: the ABI's rule, as GDB's prologue analyzer has it. */
	jitmap_frame_regs f1 = res.caller;
	for (unsigned x = 21; x <= 28; x++)
		expect_reg(&f1, x, 0x2100 + x);
	code.is_innermost = false;
	assert_int_equal(step(&code, &f1, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.cfa, 0x8000);
	assert_int_equal(res.caller.pc, 0x20010);
	expect_reg(&res.caller, X29, 0x8100);
	expect_reg(&res.caller, 19, 0x1919);
	expect_reg(&res.caller, 20, 0x2020);
	for (unsigned x = 21; x <= 28; x++)
		expect_reg(&res.caller, x, 0x2100 + x);
	expect_unknown(&res.caller, 9);
	/* The same by the frame-pointer chain alone, with the function's range known. */
	code.methods = ONLY(FRAME_POINTER);
	code.func_lo = 0x10000;
	code.func_hi = 0x10020;
	assert_int_equal(step(&code, &f1, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.cfa, 0x8000);
	assert_int_equal(res.caller.pc, 0x20010);
	expect_reg(&res.caller, X29, 0x8100);
	expect_reg(&res.caller, 19, 0x1919);
	for (unsigned x = 21; x <= 28; x++)
		expect_reg(&res.caller, x, 0x2100 + x);
	/* An x29 that disagrees with the stack size: the stackmap method declines. */
	code.methods = ONLY(STACKMAP);
	regs_set(&f1, X29, 0x7fc0);
	assert_int_equal(step(&code, &f1, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "but the frame pointer puts it at 0x7ff0");

	/* Outer as frame 0 inside its prologue: at its entry (return address in x30, CFA =
	 * SP), after the stp (the pair at SP, CFA = SP + 48), after the mov (x29 + 48). */
	code.methods = ONLY(FRAME_POINTER);
	code.is_innermost = true;
	A64_REGS(0x10000, 0x8000, 0x8100, 0x20010);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.cfa, 0x8000);
	assert_int_equal(res.caller.pc, 0x20010);
	expect_reg(&res.caller, X29, 0x8100);
	A64_REGS(0x10004, 0x7fd0, 0x8100, 0x20010);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.cfa, 0x8000);
	assert_int_equal(res.caller.pc, 0x20010);
	expect_reg(&res.caller, X29, 0x8100);
	A64_REGS(0x10008, 0x7fd0, 0x7fd0, 0x20010);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.cfa, 0x8000);
	assert_int_equal(res.caller.pc, 0x20010);

	/* The leaf at its ret (SP back at the CFA): the return address in x30. */
	code.func_lo = 0x10080;
	code.func_hi = 0x10094;
	A64_REGS(0x10090, 0x7fd0, 0x7fd0, 0x10018);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.cfa, 0x7fd0);
	assert_int_equal(res.caller.pc, 0x10018);
	/* In the leaf's body x29 is the caller's: the chain declines. */
	A64_REGS(0x10088, 0x7fb0, 0x7fd0, 0x10018);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "does not begin with stp x29, x30, [sp, #-N]!; mov x29, sp");

	/* B: sub sp, sp, #32; stp x29, x30, [sp, #16]; add x29, sp, #16: CFA = x29 + 16. */
	code.methods = ONLY(STACKMAP);
	code.is_innermost = false;
	fake_put64(&m, 0x7fc0, 0x8100);
	fake_put64(&m, 0x7fc8, 0x20020);
	A64_REGS(0x1010c, 0x7fb0, 0x7fc0, 0);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.cfa, 0x7fd0);
	assert_int_equal(res.caller.pc, 0x20020);
	expect_reg(&res.caller, X29, 0x8100);

	/* C: str x30, [sp, #-16]! and no frame record: the return address at CFA - 16. */
	fake_put64(&m, 0x7fb8, 0x20030);
	A64_REGS(0x10188, 0x7fb8, 0x8100, 0);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.cfa, 0x7fc8);
	assert_int_equal(res.caller.pc, 0x20030);

	/* D: a leaf that saved x19 and x20: the return address in x30, as frame 0 only, and
	 * the caller's x19 and x20 read back from their slots (CFA - 16, CFA - 8); x21, which
	 * its prologue (the whole 16-byte frame) does not save, the caller's under the ABI. */
	code.is_innermost = true;
	A64_REGS(0x10208, 0x7fc0, 0x8100, 0x10018);
	regs_set(&r, 21, 2121);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.cfa, 0x7fd0);
	assert_int_equal(res.caller.pc, 0x10018);
	expect_reg(&res.caller, 19, 0x8100);
	expect_reg(&res.caller, 20, 0x20020);
	expect_reg(&res.caller, 21, 2121);

	code.is_innermost = false;
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "where the function at 0x10200 saved the return address is not known");

	/* What ran before the PC decides, however far from the start: E stored x19 at +36 and
	 * G copied it (neither passes x19 or x20 on); F copies it only after the PC (both still
	 * the caller's). */
	code.is_innermost = true;
	static const struct {
		uint64_t pc;
		bool carried;
	} leaves[] = {{0x10268, false}, {0x10284, true}, {0x102c8, false}};
	for (size_t i = 0; i < ARRAY_LEN(leaves); i++) {
		A64_REGS(leaves[i].pc, 0x7fc0, 0x8100, 0x10018);
		assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
		assert_int_equal(res.cfa, 0x7fe0);
		assert_int_equal(res.caller.pc, 0x10018);
		if (leaves[i].carried) {
			expect_reg(&res.caller, 19, 1234);
			expect_reg(&res.caller, 20, 5678);
		} else {
			expect_unknown(&res.caller, 19);
			expect_unknown(&res.caller, 20);
		}
	}
#undef A64_REGS
	jitmap_stackmap_free(sm);
	}

/* AArch64 code that looks like what the rules take but is not (found in review): each is
 * unwound right or declined, never given a wrong caller.
 *   U1 0x10000: eight movs; stp x29, x30, [sp, #-16]!; mov x29, sp; bl; (record 2001):
 *               x30 holds the record's PC, the return address is in the frame record;
 *   U3 0x10100: stp x29, x30, [sp, #-16]!; sub sp, sp, #32; mov x29, sp; bl: not form A
 *               (the frame record is 32 bytes above x29, not at it);
 *   U5 0x10200: paciasp; stp x29, x30, [sp, #-16]!; mov x29, sp; bl: the saved x30 is
 *               signed, its top bits the signature.
 * The frame records hold the caller's x29 0x8100 and the return address 0x20010. */
static void test_aarch64_lookalikes(void **state)
{
	(void)state;
	struct fake_mem m = {0};
	fake_region(&m, 0x7e00, 0x300);
	fake_region(&m, 0x10000, 0x280);
	static const uint32_t late[] = {0xaa0003e9, 0xaa0003e9, 0xaa0003e9, 0xaa0003e9,
					0xaa0003e9, 0xaa0003e9, 0xaa0003e9, 0xaa0003e9,
					0xa9bf7bfd, 0x910003fd, 0x94000000, A64_NOP};
	static const uint32_t subbed[] = {0xa9bf7bfd, 0xd10083ff, 0x910003fd, 0x94000000, A64_NOP};
	static const uint32_t pac[] = {0xd503233f, 0xa9bf7bfd, 0x910003fd, 0x94000000, A64_NOP};
	put_words(&m, 0x10000, late, ARRAY_LEN(late));
	put_words(&m, 0x10100, subbed, ARRAY_LEN(subbed));
	put_words(&m, 0x10200, pac, ARRAY_LEN(pac));
	fake_put64(&m, 0x7fc0, 0x8100); /* U1's and U3's frame record */
	fake_put64(&m, 0x7fc8, 0x20010);
	fake_put64(&m, 0x7fa0, 0x1111); /* U3's locals, where form A would see a record */
	fake_put64(&m, 0x7fa8, 0x2222);
	fake_put64(&m, 0x7f00, 0x8100); /* U5's frame record, x30 signed */
	fake_put64(&m, 0x7f08, UINT64_C(0x005a000000020010));

	sm_builder b;
	smb_init(&b, 3, JITMAP_ORDER_LITTLE);
	smb_function(&b, 0x10000, 16);
	smb_record(&b, 2001, 0x2c);
	jitmap_stackmap *sm = built(&b, JITMAP_ORDER_LITTLE, JITMAP_ARCH_AARCH64);
	jitmap_unwind_code code = {.arch = JITMAP_ARCH_AARCH64, .sm = sm, .is_innermost = true};
	jitmap_unwind_result res;
	char why[512];
	jitmap_frame_regs r;

	/* U1, frame 0 at the record: the stackmap method sees the stp before the PC; by the
	 * frame record (its prologue is not at the start: declined) or not at all. */
	memset(&r, 0, sizeof(r));
	r.pc = 0x1002c;
	regs_set(&r, A64_SP, 0x7fc0);
	regs_set(&r, X29, 0x7fc0);
	regs_set(&r, X30, 0x1002c);
	int rc = step(&code, &r, &m, &res, why, sizeof(why));
	if (rc == 0) {
		assert_int_equal(res.caller.pc, 0x20010);
		assert_int_equal(res.cfa, 0x7fd0);
	} else {
		assert_contains(why, "stores or copies its return address register before 0x1002c");
	}
	/* The same with x30 what the bl left and no stp seen (a copy elsewhere): the PC
	 * itself is never its own return address. */
	code.methods = ONLY(STACKMAP);
	static const uint32_t hidden[] = {0xd10043ff, 0x94000000, A64_NOP}; /* sub; bl */
	put_words(&m, 0x10240, hidden, ARRAY_LEN(hidden));
	jitmap_stackmap_free(sm);
	smb_init(&b, 3, JITMAP_ORDER_LITTLE);
	smb_function(&b, 0x10240, 16);
	smb_record(&b, 2002, 0x8);
	sm = built(&b, JITMAP_ORDER_LITTLE, JITMAP_ARCH_AARCH64);
	code.sm = sm;
	memset(&r, 0, sizeof(r));
	r.pc = 0x10248;
	regs_set(&r, A64_SP, 0x7fc0);
	regs_set(&r, X30, 0x10248);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "holds the PC itself");

	/* U3, an outer frame by the frame-pointer chain: not form A, so declined. */
	code.methods = ONLY(FRAME_POINTER);
	code.is_innermost = false;
	code.func_lo = 0x10100;
	code.func_hi = 0x10114;
	memset(&r, 0, sizeof(r));
	r.pc = 0x10110;
	regs_set(&r, A64_SP, 0x7fa0);
	regs_set(&r, X29, 0x7fa0);
	rc = step(&code, &r, &m, &res, why, sizeof(why));
	if (rc == 0) {
		assert_int_equal(res.caller.pc, 0x20010);
		assert_int_equal(res.cfa, 0x7fd0);
	}

	/* U5: the signed return address comes back as the address. */
	code.func_lo = 0x10200;
	code.func_hi = 0x10214;
	memset(&r, 0, sizeof(r));
	r.pc = 0x10210;
	regs_set(&r, A64_SP, 0x7f00);
	regs_set(&r, X29, 0x7f00);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.caller.pc, 0x20010);
	assert_int_equal(res.cfa, 0x7f10);
	jitmap_stackmap_free(sm);
}

/* -- The ABI's rule: what a prologue decoded whole does not save, it does not change -- */

/* x86-64 registers of a frame whose callee-saved ones hold 0x300 + their number. */
static jitmap_frame_regs x86_frame(uint64_t pc, uint64_t sp, uint64_t fp)
{
	jitmap_frame_regs r = regs_with(pc, sp, fp);
	regs_set(&r, RBX, 0x303);
	for (unsigned n = 12; n <= 15; n++)
		regs_set(&r, n, 0x300 + n);
	regs_set(&r, 0, 0xaa); /* rax: caller-saved, never carried */
	return r;
}

/* For each x86-64 callee-saved register but rsp: 'c' carried (this frame's value), 's'
 * restored from its slot (`slot[reg]`), '?' unknown, in the order rbx rbp r12 r13 r14 r15. */
static void expect_x86(const jitmap_frame_regs *caller, const jitmap_frame_regs *frame,
		       const char *want, const uint64_t slot[16])
{
	static const unsigned order[] = {RBX, RBP, 12, 13, 14, 15};
	for (size_t k = 0; k < ARRAY_LEN(order); k++) {
		const unsigned n = order[k];
		if (want[k] == 'c')
			expect_reg(caller, n, frame->reg[n]);
		else if (want[k] == 's')
			expect_reg(caller, n, slot[n]);
		else
			expect_unknown(caller, n);
	}
	expect_unknown(caller, 0);
}

/* The hand-written JITs' shapes (examples/handjit, examples/handjit-arm64), LLVM's, and
 * prologues the decoder cannot finish (then nothing is carried). x86-64 functions sit at
 * 0x2000 with a record at 0x2010; each frame's CFA is 0x7030, its return address 0x6060. */
static void test_carry_rule(void **state)
{
	(void)state;
	/* slot: where each 's' register was pushed, as an offset from the CFA (rbx rbp r12 r13
	 * r14 r15). */
	static const struct {
		const char *what;
		uint8_t code[24];
		uint64_t stack_size;
		const char *want; /* rbx rbp r12 r13 r14 r15 (expect_x86) */
		int slot[6];
		const char *want_fp; /* by the frame pointer, where it differs */
	} x86[] = {
		/* handjit_outer: rbp's frame record, rbx and r12 pushed, r13-r15 carried */
		{"push rbp; mov rbp,rsp; push rbx; push r12; sub rsp,16",
		 {0x55, 0x48, 0x89, 0xe5, 0x53, 0x41, 0x54, 0x48, 0x83, 0xec, 0x10,
		  0x48, 0x8d, 0x5c, 0x7f, 0x07}, 40, "sssccc", {-24, -16, -32}, NULL},
		/* handjit_inner: no frame pointer, no pushes: everything carried */
		{"sub rsp,24", {0x48, 0x83, 0xec, 0x18, 0x48, 0x89, 0xf8}, 24, "cccccc", {0}, NULL},
		/* LLVM's frameless shape (uw_sp_plain) */
		{"push r14; push rbx; sub rsp,24; mov r14,rsi",
		 {0x41, 0x56, 0x53, 0x48, 0x83, 0xec, 0x18, 0x49, 0x89, 0xf6, 0xe8}, 40, "scccsc",
		 {-24, 0, 0, 0, -16}, NULL},
		/* LLVM's alignment push of rax (tests/stack's program) */
		{"push rbp; mov rbp,rsp; push rbx; push rax; imul",
		 {0x55, 0x48, 0x89, 0xe5, 0x53, 0x50, 0x48, 0x69, 0xdf, 0x43, 0x42, 0x0f, 0x00},
		 24, "sscccc", {-24, -16}, NULL},
		/* GCC's: a move into a register it already pushed, between its pushes; the sub
		 * after a move is taken for the body's (LLVM's room for stack arguments), so the
		 * decoded frame is not the stack size's, but the frame pointer's method, which
		 * has no stack size, carries */
		{"endbr64; push rbp; mov rbp,rsp; push r12; mov r12,rdi; push rbx; sub rsp,16",
		 {0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0x41, 0x54, 0x49, 0x89, 0xfc,
		  0x53, 0x48, 0x83, 0xec, 0x10, 0xe8}, 40, "sss???", {-32, -16, -24}, "sssccc"},
		/* not finished: the first body instruction writes r13, which was not saved */
		{"push rbx; push r12; sub rsp,8; mov r13d,1",
		 {0x53, 0x41, 0x54, 0x48, 0x83, 0xec, 0x08, 0x41, 0xbd, 0x01, 0, 0, 0}, 24,
		 "s?s???", {-16, 0, -24}, NULL},
		/* ... or stores it */
		{"push rbx; sub rsp,16; mov [rsp+8],r13",
		 {0x53, 0x48, 0x83, 0xec, 0x10, 0x4c, 0x89, 0x6c, 0x24, 0x08}, 24, "s?????", {-16}, NULL},
		/* ... a move from an unsaved one too (a leaf may keep it there and change it),
		 * though the frame before it is the stack size's */
		{"push rbx; mov rax,r15; sub rsp,8",
		 {0x53, 0x4c, 0x89, 0xf8, 0x48, 0x83, 0xec, 0x08}, 8, "s?????", {-16}, NULL},
		/* the window ends inside what looks like a prologue */
		{"sub rsp,8 twelve times (48 bytes; record 8, after them)", {0x48, 0x83, 0xec,
		  0x08, 0x48, 0x83, 0xec, 0x08, 0x48, 0x83, 0xec, 0x08, 0x48, 0x83, 0xec, 0x08,
		  0x48, 0x83, 0xec, 0x08, 0x48, 0x83, 0xec, 0x08}, 96, "??????", {0}, NULL},
		/* shrink-wrapped: the frame the prologue builds is not the stack size's */
		{"test rdi,rdi (saves in a later block)", {0x48, 0x85, 0xff, 0x74, 0x10}, 8,
		 "??????", {0}, NULL},
		{"push rbx; sub rsp,8 with a stack size of 32", {0x53, 0x48, 0x83, 0xec, 0x08, 0xe8},
		 32, "s?????", {-16}, NULL},
	};
	static const unsigned order[] = {RBX, RBP, 12, 13, 14, 15};
	char why[512];
	jitmap_unwind_result res;
	for (size_t i = 0; i < ARRAY_LEN(x86); i++) {
		struct fake_mem m = {0};
		fake_region(&m, 0x7000, 0x100);
		struct region *code_bytes = fake_region(&m, 0x2000, 0x100);
		/* the window is 48 bytes: the code, then nops (which end any prologue) */
		memset(code_bytes->bytes, 0x90, 0x100);
		memcpy(code_bytes->bytes, x86[i].code, sizeof(x86[i].code));
		const bool twelve = strstr(x86[i].what, "twelve") != NULL;
		if (twelve) /* six subs fill 24 bytes: twelve the window */
			memcpy(code_bytes->bytes + 24, x86[i].code, 24);
		for (uint64_t a = 0x7000; a < 0x7028; a += 8)
			fake_put64(&m, a, 0x5000 + a);
		fake_put64(&m, 0x7028, 0x6060);
		uint64_t slot[16] = {0};
		for (size_t k = 0; k < ARRAY_LEN(order); k++)
			slot[order[k]] = 0x5000 + 0x7030 + (int64_t)x86[i].slot[k];
		jitmap_stackmap *sm = one_function_stackmap(x86[i].stack_size, X86);
		const uint64_t sp = 0x7030 - 8 - x86[i].stack_size;
		jitmap_frame_regs r = x86_frame(twelve ? 0x2030 : 0x2010, sp, 0x7020);
		jitmap_unwind_code code = {.arch = X86, .sm = sm, .methods = ONLY(STACKMAP)};
		if (step(&code, &r, &m, &res, why, sizeof(why)))
			fail_msg("%s: %s", x86[i].what, why);
		assert_int_equal(res.cfa, 0x7030);
		assert_int_equal(res.caller.pc, 0x6060);
		print_message("  %-52s %s\n", x86[i].what, x86[i].want);
		expect_x86(&res.caller, &r, x86[i].want, slot);
		/* The frame-pointer method decodes the same prologue where it keeps rbp. */
		if (strstr(x86[i].what, "mov rbp,rsp")) {
			code.methods = ONLY(FRAME_POINTER);
			code.func_lo = 0x2000;
			code.func_hi = 0x2100;
			if (step(&code, &r, &m, &res, why, sizeof(why)))
				fail_msg("%s (frame pointer): %s", x86[i].what, why);
			expect_x86(&res.caller, &r, x86[i].want_fp ? x86[i].want_fp : x86[i].want,
				   slot);
		}
		jitmap_stackmap_free(sm);
	}

	/* Frame 0 inside handjit_outer's prologue, by the frame pointer: a register whose push
	 * has not run yet still holds the caller's value. */
	struct fake_mem m = {0};
	fake_region(&m, 0x7000, 0x100);
	struct region *code_bytes = fake_region(&m, 0x2000, 0x100);
	memcpy(code_bytes->bytes, x86[0].code, sizeof(x86[0].code));
	fake_put64(&m, 0x7020, 0x7100); /* the caller's rbp */
	fake_put64(&m, 0x7028, 0x6060);
	fake_put64(&m, 0x7018, 0x5303); /* rbx's slot */
	jitmap_unwind_code code = {.arch = X86, .is_innermost = true, .func_lo = 0x2000,
				   .func_hi = 0x2100, .methods = ONLY(FRAME_POINTER)};
	const uint64_t rbp_slot[16] = {[RBP] = 0x7100},
		       rbx_slot[16] = {[RBX] = 0x5303, [RBP] = 0x7100};
	jitmap_frame_regs r = x86_frame(0x2004, 0x7020, 0x7020); /* after mov rbp,rsp */
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	expect_x86(&res.caller, &r, "cscccc", rbp_slot);
	r = x86_frame(0x2005, 0x7018, 0x7020); /* after push rbx */
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	expect_x86(&res.caller, &r, "sscccc", rbx_slot);

	/* A save slot that cannot be read loses that register; it is not carried. */
	m.r[0].addr = 0x7018;
	m.r[0].len = 0xe8;
	memmove(m.r[0].bytes, m.r[0].bytes + 0x18, 0xe8);
	jitmap_stackmap *sm = one_function_stackmap(40, X86);
	code = (jitmap_unwind_code){.arch = X86, .sm = sm, .methods = ONLY(STACKMAP)};
	r = x86_frame(0x2010, 0x7000, 0x7020); /* r12's slot, CFA - 32, below the region */
	memset(code_bytes->bytes + 0x10, 0x90, 4);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	expect_x86(&res.caller, &r, "ss?ccc", rbx_slot);
	jitmap_stackmap_free(sm);

	/* AArch64: handjit-arm64's outer (stp x29, x30, [sp, #-48]!; mov x29, sp; stp x19,
	 * x20, [sp, #16]) and what stops the decoder from knowing the saves are all there. */
	static const struct {
		const char *what;
		uint32_t code[4];
		uint64_t stack_size;
		bool carried;
	} a64[] = {
		{"form A, then stp x19, x20", {0xa9bd7bfd, 0x910003fd, 0xa90153f3, A64_NOP}, 48,
		 true},
		{"then movz x21, #5", {0xa9bd7bfd, 0x910003fd, 0xa90153f3, 0xd28000b5}, 48, false},
		{"then str x21, [x29, #40]", {0xa9bd7bfd, 0x910003fd, 0xa90153f3, 0xf90017b5}, 48,
		 false},
		{"then mov x9, x21", {0xa9bd7bfd, 0x910003fd, 0xa90153f3, 0xaa1503e9}, 48, false},
		{"a stack size of 64 for a 48-byte frame",
		 {0xa9bd7bfd, 0x910003fd, 0xa90153f3, A64_NOP}, 64, false},
	};
	for (size_t i = 0; i < ARRAY_LEN(a64); i++) {
		struct fake_mem am = {0};
		fake_region(&am, 0x7f00, 0x200);
		fake_region(&am, 0x10000, 0x100);
		put_words(&am, 0x10000, a64[i].code, 4);
		/* nop; sub sp, sp, #16 where the frame is 64 bytes (a later allocation: the
		 * stackmap method then does not know the prologue was all of the saves); bl */
		const uint32_t body[] = {A64_NOP, a64[i].stack_size == 64 ? 0xd10043ffu : A64_NOP,
					 0x94000000, A64_NOP};
		put_words(&am, 0x10010, body, 4);
		/* The frame: CFA 0x8000, SP = CFA - stack size, x29 = CFA - 48. */
		fake_put64(&am, 0x7fd0, 0x8100);
		fake_put64(&am, 0x7fd8, 0x20010);
		fake_put64(&am, 0x7fe0, 0x1919);
		fake_put64(&am, 0x7fe8, 0x2020);
		sm_builder b;
		smb_init(&b, 3, JITMAP_ORDER_LITTLE);
		smb_function(&b, 0x10000, a64[i].stack_size);
		smb_record(&b, 1001, 0x1c);
		jitmap_stackmap *asm_ = built(&b, JITMAP_ORDER_LITTLE, JITMAP_ARCH_AARCH64);
		jitmap_frame_regs f;
		memset(&f, 0, sizeof(f));
		f.pc = 0x1001c;
		regs_set(&f, A64_SP, 0x8000 - a64[i].stack_size);
		regs_set(&f, X29, 0x7fd0);
		for (unsigned x = 19; x <= 28; x++)
			regs_set(&f, x, 0x4400 + x);
		regs_set(&f, 9, 0x99);
		jitmap_unwind_code ac = {.arch = JITMAP_ARCH_AARCH64, .sm = asm_,
					 .methods = ONLY(STACKMAP)};
		for (int method = 0; method < 2; method++) {
			if (method == 1) {
				if (a64[i].stack_size != 48)
					break; /* (no stack size there: it would carry) */
				ac.methods = ONLY(FRAME_POINTER);
				ac.func_lo = 0x10000;
				ac.func_hi = 0x10020;
			}
			if (step(&ac, &f, &am, &res, why, sizeof(why)))
				fail_msg("aarch64 %s: %s", a64[i].what, why);
			assert_int_equal(res.caller.pc, 0x20010);
			expect_reg(&res.caller, X29, 0x8100);
			expect_reg(&res.caller, 19, 0x1919);
			expect_reg(&res.caller, 20, 0x2020);
			expect_unknown(&res.caller, 9);
			for (unsigned x = 21; x <= 28; x++) {
				if (a64[i].carried)
					expect_reg(&res.caller, x, 0x4400 + x);
				else
					expect_unknown(&res.caller, x);
			}
		}
		jitmap_stackmap_free(asm_);
	}

	/* An AArch64 leaf (frame 0) that saves x19 and x20 in its prologue and x21 past the
	 * decoded window, before the PC: the stores that ran say a callee-saved register was
	 * stored where the shape did not look, so only the slots it saw are believed. */
	struct fake_mem lm = {0};
	fake_region(&lm, 0x7f00, 0x200);
	fake_region(&lm, 0x10000, 0x100);
	uint32_t leaf[16];
	leaf[0] = 0xa9be53f3; /* stp x19, x20, [sp, #-32]! */
	for (unsigned k = 1; k < 14; k++)
		leaf[k] = A64_NOP;
	leaf[14] = 0xf9000bf5; /* str x21, [sp, #16] */
	leaf[15] = A64_NOP;
	put_words(&lm, 0x10000, leaf, 16);
	fake_put64(&lm, 0x7fe0, 0x1919);
	fake_put64(&lm, 0x7fe8, 0x2020);
	sm_builder lb;
	smb_init(&lb, 3, JITMAP_ORDER_LITTLE);
	smb_function(&lb, 0x10000, 32);
	smb_record(&lb, 1009, 0x3c);
	jitmap_stackmap *lsm = built(&lb, JITMAP_ORDER_LITTLE, JITMAP_ARCH_AARCH64);
	jitmap_frame_regs lf;
	memset(&lf, 0, sizeof(lf));
	lf.pc = 0x1003c;
	regs_set(&lf, A64_SP, 0x7fe0);
	regs_set(&lf, X29, 0x8100);
	regs_set(&lf, X30, 0x20010);
	for (unsigned x = 19; x <= 28; x++)
		regs_set(&lf, x, 0x4400 + x);
	const jitmap_unwind_code lc = {.arch = JITMAP_ARCH_AARCH64, .sm = lsm, .is_innermost = true,
				       .methods = ONLY(STACKMAP)};
	assert_int_equal(step(&lc, &lf, &lm, &res, why, sizeof(why)), 0);
	assert_int_equal(res.caller.pc, 0x20010);
	assert_int_equal(res.cfa, 0x8000);
	expect_reg(&res.caller, 19, 0x1919);
	expect_reg(&res.caller, 20, 0x2020);
	for (unsigned x = 21; x <= 29; x++)
		expect_unknown(&res.caller, x);
	jitmap_stackmap_free(lsm);
}

/* -- s390x: the stmg prologue, leaves -- */

#define S390 JITMAP_ARCH_S390X
#define S390_R14 14
#define S390_R15 15
#define S390_F8 24 /* DWARF */

static void fake_put_be64(struct fake_mem *m, uint64_t addr, uint64_t v)
{
	uint8_t b[8];
	sm_put(b, v, 8, JITMAP_ORDER_BIG);
	fake_put(m, addr, b, 8);
}

/* The frames of examples/handjit-s390x at a stop in its leaf (the bytes are what
 * s390x-linux-gnu-objdump shows of that program's code), and leaves that save a register
 * their caller keeps, each a function of its own with a record after its first
 * instructions:
 *   outer 0x10000: stmg %r6,%r15,48(%r15); aghi %r15,-200; brasl %r14,inner;
 *                  (0x10010, record 2001) lghi %r2,0; lmg ...; br %r14
 *   inner 0x10080: aghi %r15,-32; stg %r1,8(%r15); .insn e,0x0001;
 *                  (0x1008c, record 2002) lghi %r2,0; aghi %r15,32; br %r14
 *   B 0x10100: aghi %r15,-32; stg %r6,8(%r15); nopr         (record at +12)
 *   C 0x10140: lgr %r1,%r7; nopr                            (+6, stack size 0)
 *   D 0x10180: aghi %r15,-32; std %f8,8(%r15); nopr         (+10)
 *   E 0x101c0: aghi %r15,-32; stg %r14,8(%r15); nopr        (+12)
 *   F 0x10200: stmg %r6,%r7,48(%r15); nopr                  (+8, stack size 0)
 * The outer function's caller has SP 0x8000; its stmg saved r6-r15 at 0x8030-0x8078 (the
 * caller's register save area), the return address 0x20010 among them. */
static void test_s390x(void **state)
{
	(void)state;
	struct fake_mem m = {0};
	fake_region(&m, 0x7e00, 0x300);
	fake_region(&m, 0x10000, 0x280);
	static const uint8_t outer[] = {0xeb, 0x6f, 0xf0, 0x30, 0x00, 0x24, 0xa7, 0xfb, 0xff, 0x38,
					0xc0, 0xe5, 0x00, 0x00, 0x00, 0x3b, 0xa7, 0x29, 0x00, 0x00,
					0xeb, 0x6f, 0xf0, 0xf8, 0x00, 0x04, 0x07, 0xfe};
	static const uint8_t inner[] = {0xa7, 0xfb, 0xff, 0xe0, 0xe3, 0x10, 0xf0, 0x08, 0x00, 0x24,
					0x00, 0x01, 0xa7, 0x29, 0x00, 0x00, 0xa7, 0xfb, 0x00, 0x20,
					0x07, 0xfe};
	static const uint8_t leaf_b[] = {0xa7, 0xfb, 0xff, 0xe0, 0xe3, 0x60, 0xf0, 0x08, 0x00, 0x24,
					 0x07, 0x00, 0x07, 0xfe};
	static const uint8_t leaf_c[] = {0xb9, 0x04, 0x00, 0x17, 0x07, 0x00, 0x07, 0xfe};
	static const uint8_t leaf_d[] = {0xa7, 0xfb, 0xff, 0xe0, 0x60, 0x80, 0xf0, 0x08, 0x07, 0x00,
					 0x07, 0xfe};
	static const uint8_t leaf_e[] = {0xa7, 0xfb, 0xff, 0xe0, 0xe3, 0xe0, 0xf0, 0x08, 0x00, 0x24,
					 0x07, 0x00, 0x07, 0xfe};
	static const uint8_t leaf_f[] = {0xeb, 0x67, 0xf0, 0x30, 0x00, 0x24, 0x07, 0x00, 0x07, 0xfe};
	/* G: aghi; fifteen nopr; stg %r6,8(%r15) at +34, past the first 32 bytes; record 2008
	 * after it. H: aghi; record 2009; stg %r6,8(%r15) not yet run. */
	uint8_t leaf_g[44] = {0xa7, 0xfb, 0xff, 0xe0};
	for (size_t k = 4; k < 34; k += 2)
		leaf_g[k] = 0x07;
	static const uint8_t stg_r6[] = {0xe3, 0x60, 0xf0, 0x08, 0x00, 0x24};
	memcpy(leaf_g + 34, stg_r6, sizeof(stg_r6));
	leaf_g[40] = 0x07, leaf_g[42] = 0x07, leaf_g[43] = 0xfe;
	static const uint8_t leaf_h[] = {0xa7, 0xfb, 0xff, 0xe0, 0xe3, 0x60, 0xf0, 0x08, 0x00, 0x24,
					 0x07, 0x00, 0x07, 0xfe};
	/* What follows each function in the window is zero (2-byte instructions, none a store). */
	fake_put(&m, 0x10000, outer, sizeof(outer));
	fake_put(&m, 0x10080, inner, sizeof(inner));
	fake_put(&m, 0x10100, leaf_b, sizeof(leaf_b));
	fake_put(&m, 0x10140, leaf_c, sizeof(leaf_c));
	fake_put(&m, 0x10180, leaf_d, sizeof(leaf_d));
	fake_put(&m, 0x101c0, leaf_e, sizeof(leaf_e));
	fake_put(&m, 0x10200, leaf_f, sizeof(leaf_f));
	fake_put(&m, 0x10230, leaf_g, sizeof(leaf_g));
	fake_put(&m, 0x10260, leaf_h, sizeof(leaf_h));
	const uint64_t C = 0x8000, SP1 = C - 200, SP0 = SP1 - 32;
	for (unsigned r = 6; r <= 13; r++)
		fake_put_be64(&m, C + 48 + 8 * (r - 6), 0x0600 + r); /* the caller's r6-r13 */
	fake_put_be64(&m, C + 112, 0x20010);                       /* r14 */
	fake_put_be64(&m, C + 120, C);                             /* r15 */

	sm_builder b;
	smb_init(&b, 3, JITMAP_ORDER_BIG);
	smb_function(&b, 0x10000, 200);
	smb_record(&b, 2001, 0x10);
	smb_function(&b, 0x10080, 32);
	smb_record(&b, 2002, 0xc);
	smb_function(&b, 0x10100, 32);
	smb_record(&b, 2003, 0xc);
	smb_function(&b, 0x10140, 0);
	smb_record(&b, 2004, 0x6);
	smb_function(&b, 0x10180, 32);
	smb_record(&b, 2005, 0xa);
	smb_function(&b, 0x101c0, 32);
	smb_record(&b, 2006, 0xc);
	smb_function(&b, 0x10200, 0);
	smb_record(&b, 2007, 0x8);
	smb_function(&b, 0x10230, 32);
	smb_record(&b, 2008, 0x28);
	smb_function(&b, 0x10260, 32);
	smb_record(&b, 2009, 0x4);
	jitmap_stackmap *sm = built(&b, JITMAP_ORDER_BIG, S390);

	jitmap_unwind_code code = {.arch = S390, .order = JITMAP_ORDER_BIG, .sm = sm,
				   .is_innermost = true, .methods = ONLY(STACKMAP)};
	jitmap_unwind_result res;
	char why[512];
	jitmap_frame_regs r;
	/* Frame 0's registers: the outer function's r6-r13 (0x1606 ...), f8. */
#define S390_REGS(pc_, sp_, ra_)                                                           \
	do {                                                                               \
		memset(&r, 0, sizeof(r));                                                  \
		r.pc = (pc_);                                                              \
		regs_set(&r, S390_R15, (sp_));                                             \
		regs_set(&r, S390_R14, (ra_));                                             \
		for (unsigned k = 6; k <= 13; k++)                                         \
			regs_set(&r, k, 0x1600 + k);                                       \
		regs_set(&r, S390_F8, 0xf8f8);                                             \
		regs_set(&r, 1, 0x1111);                                                   \
	} while (0)

	/* Frame 0, the leaf at record 2002: CFA = SP + 32 + 160, the return address still in
	 * r14, and every register its caller keeps is the caller's (it stored only r1). */
	S390_REGS(0x1008c, SP0, 0x10010);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.method, JITMAP_UNWIND_STACKMAP);
	assert_int_equal(res.cfa, SP1 + 160);
	assert_int_equal(res.caller.pc, 0x10010);
	expect_reg(&res.caller, S390_R15, SP1);
	for (unsigned k = 6; k <= 13; k++)
		expect_reg(&res.caller, k, 0x1600 + k);
	expect_reg(&res.caller, S390_F8, 0xf8f8);
	expect_unknown(&res.caller, 1);

	/* Frame 1, outer at record 2001: CFA = SP + 200 + 160; r14 and r6-r13 from its stmg,
	 * in its caller's save area (big-endian words). */
	jitmap_frame_regs f1 = res.caller;
	code.is_innermost = false;
	assert_int_equal(step(&code, &f1, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.cfa, C + 160);
	assert_int_equal(res.caller.pc, 0x20010);
	expect_reg(&res.caller, S390_R15, C);
	for (unsigned k = 6; k <= 13; k++)
		expect_reg(&res.caller, k, 0x0600 + k);
	/* The leaf as an outer frame: its return address's place is not known. */
	S390_REGS(0x1008c, SP0, 0x10010);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "where the function at 0x10080 saved the return address is not known");

	/* Leaves that save a register their caller keeps (stg %r6; lgr %r1,%r7; std %f8; stmg
	 * %r6,%r7): unwound, the return address in r14, but none of r6-r13 and f8 passed on. */
	code.is_innermost = true;
	static const struct {
		uint64_t pc, stack_size;
	} saves[] = {{0x1010c, 32}, {0x10146, 0}, {0x1018a, 32}, {0x10208, 0}};
	for (size_t i = 0; i < ARRAY_LEN(saves); i++) {
		S390_REGS(saves[i].pc, SP0, 0x10010);
		assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
		assert_int_equal(res.cfa, SP0 + saves[i].stack_size + 160);
		assert_int_equal(res.caller.pc, 0x10010);
		for (unsigned k = 6; k <= 13; k++)
			expect_unknown(&res.caller, k);
		expect_unknown(&res.caller, S390_F8);
	}
	/* A leaf that stores r14 (E): r14 may no longer be its return address. */
	S390_REGS(0x101cc, SP0, 0x10010);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "the function at 0x101c0 stores or copies its return address "
			     "register before 0x101cc");
	/* What ran before the PC decides, however far from the start: G saved r6 at +34 (none
	 * of r6-r13 passed on), H saves it only after the PC (all of them still the caller's). */
	S390_REGS(0x10258, SP0, 0x10010);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.caller.pc, 0x10010);
	for (unsigned k = 6; k <= 13; k++)
		expect_unknown(&res.caller, k);
	S390_REGS(0x10264, SP0, 0x10010);
	assert_int_equal(step(&code, &r, &m, &res, why, sizeof(why)), 0);
	assert_int_equal(res.caller.pc, 0x10010);
	for (unsigned k = 6; k <= 13; k++)
		expect_reg(&res.caller, k, 0x1600 + k);
#undef S390_REGS
	jitmap_stackmap_free(sm);
}

/* -- The API's edges -- */

static void test_api(void **state)
{
	(void)state;
	unsigned sp = 0, fp = 0, ra = 0;
	static const struct {
		jitmap_arch arch;
		unsigned sp, fp, ra;
	} regs[] = {
		{X86, 7, 6, 16},
		{JITMAP_ARCH_AARCH64, 31, 29, 30},
		{JITMAP_ARCH_PPC64, 1, 31, 65},
		{JITMAP_ARCH_S390X, 15, 11, 14},
		{JITMAP_ARCH_RISCV64, 2, 8, 1},
	};
	for (size_t i = 0; i < ARRAY_LEN(regs); i++) {
		assert_int_equal(jitmap_unwind_arch_regs(regs[i].arch, &sp, &fp, &ra), 0);
		assert_int_equal(sp, regs[i].sp);
		assert_int_equal(fp, regs[i].fp);
		assert_int_equal(ra, regs[i].ra);
		assert_true(regs[i].ra < JITMAP_UNWIND_MAX_REGS);
	}
	assert_int_equal(jitmap_unwind_arch_regs(JITMAP_ARCH_UNKNOWN, &sp, NULL, NULL), -ENOTSUP);
	assert_int_equal(jitmap_unwind_arch_regs(X86, NULL, NULL, NULL), 0);

	/* SysV x86-64: rbx, rbp, r12-r15 (and rsp). */
	for (unsigned r = 0; r <= 16; r++) {
		const bool want = r == 3 || r == 6 || r == 7 || (r >= 12 && r <= 15);
		assert_int_equal(jitmap_unwind_callee_saved(X86, r), want);
	}
	/* AAPCS64: x19-x29 and sp; not x30 (the link register) nor x0-x18. */
	for (unsigned r = 0; r <= 31; r++) {
		const bool want = (r >= 19 && r <= 29) || r == 31;
		assert_int_equal(jitmap_unwind_callee_saved(JITMAP_ARCH_AARCH64, r), want);
	}
	assert_false(jitmap_unwind_callee_saved(JITMAP_ARCH_UNKNOWN, 3));

	assert_string_equal(jitmap_unwind_method_name(JITMAP_UNWIND_CFI), "cfi");
	assert_string_equal(jitmap_unwind_method_name(JITMAP_UNWIND_STACKMAP), "stackmap");
	assert_string_equal(jitmap_unwind_method_name(JITMAP_UNWIND_FRAME_POINTER), "frame-pointer");
	assert_string_equal(jitmap_unwind_method_name(JITMAP_UNWIND_NATIVE), "native");
	assert_string_equal(jitmap_unwind_method_name(JITMAP_UNWIND_NONE), "none");
	assert_string_equal(jitmap_unwind_method_name((jitmap_unwind_method)99), "none");

	jitmap_frame_regs r;
	memset(&r, 0, sizeof(r));
	jitmap_frame_reg_set(&r, JITMAP_UNWIND_MAX_REGS, 1); /* ignored */
	assert_false(jitmap_frame_reg_known(&r, JITMAP_UNWIND_MAX_REGS));
	jitmap_frame_reg_set(&r, 127, 9);
	assert_true(jitmap_frame_reg_known(&r, 127));

	jitmap_unwind_result res;
	char why[128], tiny[8];
	jitmap_unwind_code code = {.arch = X86};
	assert_int_equal(jitmap_unwind_step(NULL, &r, NULL, &res, why, sizeof(why)), -EINVAL);
	assert_int_equal(jitmap_unwind_step(&code, NULL, NULL, &res, why, sizeof(why)), -EINVAL);
	assert_int_equal(jitmap_unwind_step(&code, &r, NULL, NULL, why, sizeof(why)), -EINVAL);
	assert_int_equal(jitmap_unwind_step(&code, &r, NULL, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "the stack pointer of this frame is not known");
	code.arch = JITMAP_ARCH_UNKNOWN;
	assert_int_equal(jitmap_unwind_step(&code, &r, NULL, &res, why, sizeof(why)), -ENOTSUP);
	/* No target at all: every read fails. */
	code.arch = X86;
	r = regs_with(0x1000, 0x7000, 0x7100);
	assert_int_equal(jitmap_unwind_step(&code, &r, NULL, &res, why, sizeof(why)), -EFAULT);
	assert_int_equal(jitmap_unwind_step(&code, &r, NULL, &res, tiny, sizeof(tiny)), -EFAULT);
	assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
	assert_int_equal(jitmap_unwind_step(&code, &r, NULL, &res, NULL, 0), -EFAULT);
	code.methods = UINT32_C(1) << 20; /* no known method */
	assert_int_equal(jitmap_unwind_step(&code, &r, NULL, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "no method was allowed");
}

/* -- Live code -- */

/* -- What a proof found: a block is not a function, and fuzzed stacks --
 *
 * A method that proves a step must find a return address: one in executable code, after a
 * call (or a runtime's continuation, the first byte of a code range). YJIT's perf map has a
 * line per compiled block, not per function: the frame is built by an entry stub no line
 * covers (push rbp; mov rsp,rbp; push rbx; push r12; jmp to the block), and the block pushes
 * nothing, so what lies at its SP is the stub's last save, not a return address. */

#define W_CODE UINT64_C(0x20000)
#define W_CODE_LEN 0x400
#define W_STACK UINT64_C(0x7000)
#define W_STACK_LEN 0x200

struct world {
	uint8_t code[W_CODE_LEN];
	uint8_t stack[W_STACK_LEN];
	uint64_t range_lo[8], range_hi[8]; /* the perf map's lines */
	unsigned nranges;
	uint64_t planted[8]; /* return addresses of calls in code the walk follows */
	unsigned nplanted;
};

static int world_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
		      size_t why_len)
{
	(void)why, (void)why_len;
	const struct world *w = ctx;
	if (addr >= W_CODE && addr - W_CODE <= W_CODE_LEN && len <= W_CODE_LEN - (addr - W_CODE)) {
		memcpy(buf, w->code + (addr - W_CODE), len);
		return 0;
	}
	if (addr >= W_STACK && addr - W_STACK <= W_STACK_LEN &&
	    len <= W_STACK_LEN - (addr - W_STACK)) {
		memcpy(buf, w->stack + (addr - W_STACK), len);
		return 0;
	}
	return -EFAULT;
}

/* Executable: the code, not the stack (which the reads above reach too). */
static int world_code_at(void *ctx, uint64_t pc, char *why, size_t why_len)
{
	(void)ctx;
	if (pc >= W_CODE && pc < W_CODE + W_CODE_LEN)
		return 1;
	snprintf(why, why_len, "0x%" PRIx64 " is not executable", pc);
	return 0;
}

static void world_put64(struct world *w, uint64_t addr, uint64_t v)
{
	assert_true(addr >= W_STACK && addr + 8 <= W_STACK + W_STACK_LEN);
	sm_put(w->stack + (addr - W_STACK), v, 8, JITMAP_ORDER_LITTLE);
}

/* A process whose perf map has the world's ranges, and a stacker over it. */
static jitmap_stacker *world_stacker(struct world *w, jitmap_process **proc)
{
	static jitmap_target t;
	t = (jitmap_target){w, NULL, world_read};
	jitmap_process *p = jitmap_process_new(&t, NULL);
	assert_non_null(p);
	assert_int_equal(jitmap_process_scan_begin(p), 0);
	assert_int_equal(jitmap_process_scan_end(p), 0);
	char text[1024];
	size_t n = 0;
	for (unsigned k = 0; k < w->nranges; k++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%" PRIx64 " %" PRIx64 " r%u\n",
				      w->range_lo[k], w->range_hi[k] - w->range_lo[k], k);
	jitmap_perfmap *pm = jitmap_process_perfmap(p);
	assert_non_null(pm);
	assert_int_equal(jitmap_perfmap_add_perf_map(pm, text, n, "/tmp/perf-1.map"),
			 (int)w->nranges);
	JITMAP_OPTS(jitmap_stacker_opts, o, .code_at = world_code_at, .code_ctx = w);
	jitmap_stacker *st = jitmap_stacker_new(p, &t, X86, &o);
	assert_non_null(st);
	*proc = p;
	return st;
}

struct walked {
	unsigned n;
	jitmap_stack_frame f[8];
	char why[8][512];
	uint64_t sp[8];
};

static int keep_walked(void *ctx, const jitmap_stack_frame *f)
{
	struct walked *k = ctx;
	if (k->n < 8) {
		k->f[k->n] = *f;
		snprintf(k->why[k->n], sizeof(k->why[0]), "%s", f->why ? f->why : "");
		k->sp[k->n] = f->regs->reg[RSP];
	}
	k->n++;
	return 0;
}

/* The interpreter calls the entry stub (call rel32, returning to INTERP_RA); the stub builds
 * the frame and jumps to the block, which the map names; the block calls a C function
 * (call *0x10(%r13), returning to BLOCK + 16). */
#define INTERP_RA (W_CODE + 0x15)
#define STUB (W_CODE + 0x40)
#define BLOCK (W_CODE + 0x80)

static void yjit_world(struct world *w)
{
	memset(w, 0, sizeof(*w));
	memset(w->code, 0x90, sizeof(w->code));
	static const uint8_t interp[] = {0x55, 0x48, 0x89, 0xe5};         /* push rbp; mov */
	static const uint8_t call[] = {0xe8, 0x2b, 0x00, 0x00, 0x00};      /* call STUB */
	static const uint8_t stub[] = {0x55, 0x48, 0x89, 0xe5, 0x53, 0x41, 0x54, /* pushes */
				       0x4c, 0x8b, 0x2f, 0xff, 0xe2};       /* jmp *%rdx */
	static const uint8_t block[] = {
		0x48, 0x8b, 0x43, 0x08, /* mov 8(%rbx),%rax */
		0x48, 0x83, 0xc0, 0x01, /* add $1,%rax */
		0x48, 0x89, 0x43, 0x08, /* mov %rax,8(%rbx) */
		0x41, 0xff, 0x55, 0x10, /* call *0x10(%r13) */
		0xe9, 0x00, 0x00, 0x00, 0x00, /* jmp to the next block */
	};
	memcpy(w->code, interp, sizeof(interp));
	memcpy(w->code + (INTERP_RA - 5 - W_CODE), call, sizeof(call));
	memcpy(w->code + (STUB - W_CODE), stub, sizeof(stub));
	memcpy(w->code + (BLOCK - W_CODE), block, sizeof(block));
	w->range_lo[0] = BLOCK;
	w->range_hi[0] = BLOCK + 0x20;
	w->nranges = 1;
	/* The stub's frame: r12 (1, a Ruby value), rbx (a heap pointer), the frame record. */
	world_put64(w, W_STACK, 1);
	world_put64(w, W_STACK + 8, UINT64_C(0x55550000c0de));
	world_put64(w, W_STACK + 16, W_STACK + 0x40);
	world_put64(w, W_STACK + 24, INTERP_RA);
	/* The interpreter's frame record ends the chain. */
	world_put64(w, W_STACK + 0x40, 0);
	world_put64(w, W_STACK + 0x48, 0);
}

static void test_block_is_not_a_function(void **state)
{
	(void)state;
	static struct world w;
	yjit_world(&w);
	/* Frame 0 in the block (inside it, at its first byte), and a return address in it. */
	static const struct {
		uint64_t pc;
		bool exact;
	} at[] = {{BLOCK + 4, true}, {BLOCK, true}, {BLOCK + 16, false}};
	for (size_t i = 0; i < ARRAY_LEN(at); i++) {
		jitmap_process *p;
		jitmap_stacker *st = world_stacker(&w, &p);
		jitmap_frame_regs r = regs_with(at[i].pc, W_STACK, W_STACK + 16);
		regs_set(&r, RBX, UINT64_C(0x55550000c0de));
		const jitmap_stack_frame *f;
		jitmap_frame_regs caller;
		bool caller_exact;
		const int rc = jitmap_stacker_step(st, &r, at[i].exact, &f, &caller, &caller_exact);
		if (rc || caller.pc != INTERP_RA)
			fail_msg("the block at 0x%" PRIx64 " (%s): %d, method %s, caller 0x%" PRIx64
				 "%s: %s", at[i].pc, at[i].exact ? "frame 0" : "a return address",
				 rc, jitmap_unwind_method_name(f->method), caller.pc,
				 f->step_guessed ? " (a guess)" : " (proven)", f->why);
		/* The frame-pointer chain, and a guess: nothing proves the block's frame. */
		assert_true(f->jit);
		assert_int_equal(f->method, JITMAP_UNWIND_FRAME_POINTER);
		assert_true(f->step_guessed);
		assert_int_equal(caller.reg[RSP], W_STACK + 32);
		expect_reg(&caller, RBP, W_STACK + 0x40);
		/* Why the code walk did not prove it: its return address follows no call. */
		if (at[i].pc != BLOCK)
			assert_contains(f->why, "code: the return address 0x1 found at 0x7000 follows "
					"no call (no code can be read before it): the code object "
					"may be a block, not a function entered by a call");
		else
			assert_contains(f->why, "the return address 0x1 found at 0x7000 follows no "
					"call");
		jitmap_stacker_free(st);
		jitmap_process_free(p);
	}

	/* The whole walk: the block, then the interpreter (to the end of its chain). */
	jitmap_process *p;
	jitmap_stacker *st = world_stacker(&w, &p);
	const jitmap_frame_regs r = regs_with(BLOCK + 4, W_STACK, W_STACK + 16);
	struct walked k = {0};
	(void)jitmap_stacker_walk(st, &r, keep_walked, &k);
	assert_true(k.n >= 2);
	assert_int_equal(k.f[1].pc, INTERP_RA);
	assert_int_equal(k.sp[1], W_STACK + 32);
	assert_true(k.f[1].guessed);
	jitmap_stacker_free(st);
	jitmap_process_free(p);

	/* The unwinder alone (GDB's reader asks it so): under JITMAP_UNWIND_PROVEN the code walk
	 * declines, and nothing else proves the step. */
	jitmap_unwind_code c = {.arch = X86, .func_lo = BLOCK, .func_hi = BLOCK + 0x20,
				.is_innermost = true, .methods = JITMAP_UNWIND_PROVEN};
	const jitmap_target t = {&w, NULL, world_read};
	jitmap_unwind_result res;
	char why[512];
	jitmap_frame_regs fr = regs_with(BLOCK + 4, W_STACK, W_STACK + 16);
	assert_int_equal(jitmap_unwind_step(&c, &fr, &t, &res, why, sizeof(why)), -ENOENT);
	assert_contains(why, "code: the return address 0x1 found at 0x7000 follows no call");
	/* The same code entered by a call (a return address after one at its SP): proven. */
	world_put64(&w, W_STACK, INTERP_RA);
	assert_int_equal(jitmap_unwind_step(&c, &fr, &t, &res, why, sizeof(why)), 0);
	assert_int_equal(res.method, JITMAP_UNWIND_CODE);
	assert_int_equal(res.caller.pc, INTERP_RA);
	/* With the check left to the caller, the unwinder gives the word as it is. */
	world_put64(&w, W_STACK, 1);
	c.methods |= JITMAP_UNWIND_UNCHECKED_RETURN;
	assert_int_equal(jitmap_unwind_step(&c, &fr, &t, &res, why, sizeof(why)), 0);
	assert_int_equal(res.caller.pc, 1);
}

/* A runtime's continuation is still proven: a return address at a code range's first byte
 * that no call left (BEAM's normal_exit/0: the range before it ends in no call). */
static void test_continuation_proven(void **state)
{
	(void)state;
	static struct world w;
	memset(&w, 0, sizeof(w));
	memset(w.code, 0x90, sizeof(w.code));
	/* A function that keeps no frame pointer and called out: sub $8,%rsp; call *%rax. */
	static const uint8_t fn[] = {0x48, 0x83, 0xec, 0x08, 0xff, 0xd0, 0xc3};
	memcpy(w.code + 0x100, fn, sizeof(fn));
	w.code[0x1ff] = 0xcc; /* int3 before the continuation: no call */
	w.range_lo[0] = W_CODE + 0x100;
	w.range_hi[0] = W_CODE + 0x110;
	w.range_lo[1] = W_CODE + 0x200; /* normal_exit */
	w.range_hi[1] = W_CODE + 0x210;
	w.nranges = 2;
	world_put64(&w, W_STACK + 8, W_CODE + 0x200);
	jitmap_process *p;
	jitmap_stacker *st = world_stacker(&w, &p);
	const jitmap_frame_regs r = regs_with(W_CODE + 0x106, W_STACK, 0x1234);
	const jitmap_stack_frame *f;
	jitmap_frame_regs caller;
	bool caller_exact;
	assert_int_equal(jitmap_stacker_step(st, &r, false, &f, &caller, &caller_exact), 0);
	assert_int_equal(f->method, JITMAP_UNWIND_CODE);
	assert_false(f->step_guessed);
	assert_int_equal(caller.pc, W_CODE + 0x200);
	/* A word at no range's start is not one: nothing proves the step. */
	world_put64(&w, W_STACK + 8, W_CODE + 0x204);
	const int rc = jitmap_stacker_step(st, &r, false, &f, &caller, &caller_exact);
	assert_true(rc != 0 || f->step_guessed);
	jitmap_stacker_free(st);
	jitmap_process_free(p);
}

/* -- Fuzzed stacks: no step marked proven lands where no code is, or after no call -- */

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static bool world_follows_call(const struct world *w, uint64_t pc)
{
	uint8_t b[7];
	for (size_t n = sizeof(b); n > 0; n--)
		if (pc >= n && world_read((void *)w, pc - n, b, n, NULL, 0) == 0)
			return jitmap_arch_call_before(X86, b, n);
	return false;
}

static bool world_range_start(const struct world *w, uint64_t pc)
{
	for (unsigned k = 0; k < w->nranges; k++)
		if (w->range_lo[k] == pc)
			return true;
	return false;
}

/* Code made of instructions the walk follows (pushes, pops, SP adjustments, moves, calls,
 * returns, short jumps), with the addresses after its calls, and a frame-pointer prologue
 * now and then; ranges over it that start at an instruction or anywhere. */
static void fuzz_world(struct world *w, uint64_t *after_call, unsigned *ncalls, uint64_t *insn,
		       unsigned *ninsn)
{
	static const struct {
		uint8_t b[6];
		uint8_t len;
		bool call;
	} menu[] = {
		{{0x55}, 1, false},                   /* push %rbp */
		{{0x53}, 1, false},                   /* push %rbx */
		{{0x5b}, 1, false},                   /* pop %rbx */
		{{0x5d}, 1, false},                   /* pop %rbp */
		{{0x48, 0x89, 0xe5}, 3, false},       /* mov %rsp,%rbp */
		{{0x48, 0x83, 0xec, 0x18}, 4, false}, /* sub $0x18,%rsp */
		{{0x48, 0x83, 0xc4, 0x08}, 4, false}, /* add $8,%rsp */
		{{0x48, 0x8b, 0x43, 0x08}, 4, false}, /* mov 8(%rbx),%rax */
		{{0x41, 0x54}, 2, false},             /* push %r12 */
		{{0xff, 0xd0}, 2, true},              /* call *%rax */
		{{0xe8, 0x10, 0, 0, 0}, 5, true},     /* call rel32 */
		{{0x41, 0xff, 0x55, 0x10}, 4, true},  /* call *0x10(%r13) */
		{{0xc3}, 1, false},                   /* ret */
		{{0xc9}, 1, false},                   /* leave */
		{{0xeb, 0x02}, 2, false},             /* jmp .+4 */
		{{0x74, 0x01}, 2, false},             /* je .+3 */
		{{0x90}, 1, false},                   /* nop */
	};
	memset(w, 0, sizeof(*w));
	*ncalls = *ninsn = 0;
	size_t off = 0;
	while (off + 6 < W_CODE_LEN) {
		if (rnd() % 12 == 0 && off + 4 < W_CODE_LEN) { /* a prologue */
			static const uint8_t pro[] = {0x55, 0x48, 0x89, 0xe5};
			if (*ninsn < 512)
				insn[(*ninsn)++] = W_CODE + off;
			memcpy(w->code + off, pro, sizeof(pro));
			off += sizeof(pro);
			continue;
		}
		const size_t k = rnd() % ARRAY_LEN(menu);
		if (*ninsn < 512)
			insn[(*ninsn)++] = W_CODE + off;
		memcpy(w->code + off, menu[k].b, menu[k].len);
		off += menu[k].len;
		if (menu[k].call && *ncalls < 128)
			after_call[(*ncalls)++] = W_CODE + off;
	}
	w->nranges = 1 + (unsigned)(rnd() % 6);
	for (unsigned k = 0; k < w->nranges; k++) {
		const uint64_t lo = rnd() % 4 ? insn[rnd() % *ninsn] : W_CODE + rnd() % W_CODE_LEN;
		uint64_t len = 4 + rnd() % 0x80;
		if (lo + len > W_CODE + W_CODE_LEN)
			len = W_CODE + W_CODE_LEN - lo;
		w->range_lo[k] = lo;
		w->range_hi[k] = lo + (len ? len : 1);
		/* Half the ranges start with code the walk follows to a call: a function (a
		 * prologue, pushes, room) or a block (nothing pushed), as a JIT writes them. */
		if (rnd() % 2 && len >= 16) {
			uint8_t *c = w->code + (lo - W_CODE);
			size_t n = 0;
			if (rnd() % 2) {
				static const uint8_t pro[] = {0x55, 0x48, 0x89, 0xe5};
				memcpy(c, pro, sizeof(pro));
				n = sizeof(pro);
			}
			for (unsigned pushes = (unsigned)(rnd() % 3); pushes; pushes--)
				c[n++] = 0x53; /* push %rbx */
			if (rnd() % 2) {
				static const uint8_t room[] = {0x48, 0x83, 0xec, 0x08};
				memcpy(c + n, room, sizeof(room));
				n += sizeof(room);
			}
			c[n++] = 0xff; /* call *%rax */
			c[n++] = 0xd0;
			if (n <= len && w->nplanted < ARRAY_LEN(w->planted))
				w->planted[w->nplanted++] = lo + n;
		}
	}
	/* The stack: return addresses (after a call or not), range starts, stack addresses,
	 * small numbers, anything. */
	for (uint64_t a = W_STACK; a < W_STACK + W_STACK_LEN; a += 8) {
		uint64_t v;
		switch (rnd() % 9) {
		case 0: case 7: case 8: v = *ncalls ? after_call[rnd() % *ncalls] : 0; break;
		case 1: v = W_CODE + rnd() % W_CODE_LEN; break;
		case 2: v = w->range_lo[rnd() % w->nranges]; break;
		case 3: v = W_STACK + 8 * (rnd() % (W_STACK_LEN / 8)); break;
		case 4: v = rnd() % 4; break;
		case 5: v = rnd() % 0x100000; break;
		default: v = rnd(); break;
		}
		world_put64(w, a, v);
	}
}

/* A step's rule (jitmap_stack_frame.rule) applied to the frame's registers and memory, as a
 * crash reporter's stack walker applies a symbol file's STACK CFI row: it must give the
 * caller the step gave (its PC, SP, and every register it restored). Returns 0, or fails. */
static void replay_rule(const jitmap_unwind_rule *rule, const jitmap_frame_regs *regs,
			const jitmap_target *t, const jitmap_frame_regs *caller, unsigned iter)
{
	if (!jitmap_frame_reg_known(regs, rule->cfa_reg))
		fail_msg("iteration %u: the rule's CFA register %u is not known in the frame", iter,
			 rule->cfa_reg);
	const uint64_t cfa = regs->reg[rule->cfa_reg] + (uint64_t)rule->cfa_off;
	if (!jitmap_frame_reg_known(caller, RSP) || caller->reg[RSP] != cfa)
		fail_msg("iteration %u: the rule's CFA 0x%" PRIx64 " is not the caller's SP 0x%"
			 PRIx64, iter, cfa, caller->reg[RSP]);
	jitmap_unwind_saved all[JITMAP_UNWIND_RULE_MAX_SAVED + 1];
	all[0] = rule->ra;
	memcpy(all + 1, rule->saved, rule->num_saved * sizeof(all[0]));
	for (unsigned k = 0; k <= rule->num_saved; k++) {
		uint64_t v = 0;
		char w[8];
		switch (all[k].where) {
		case JITMAP_UNWIND_AT_CFA:
			if (t->read_mem(t->ctx, cfa + (uint64_t)all[k].off, &v, 8, w, sizeof(w)))
				continue; /* a slot this world cannot give: nothing to compare */
			break;
		case JITMAP_UNWIND_CFA_PLUS:
			v = cfa + (uint64_t)all[k].off;
			break;
		case JITMAP_UNWIND_IN_REG:
			if (!jitmap_frame_reg_known(regs, all[k].from))
				fail_msg("iteration %u: the rule reads register %u, unknown", iter,
					 all[k].from);
			v = regs->reg[all[k].from];
			break;
		default:
			fail_msg("iteration %u: a rule of kind %u", iter, all[k].where);
		}
		const bool is_ra = k == 0;
		const uint64_t want = is_ra ? caller->pc : caller->reg[all[k].reg];
		if ((is_ra || jitmap_frame_reg_known(caller, all[k].reg)) && v != want)
			fail_msg("iteration %u: the rule gives register %u 0x%" PRIx64 ", the step "
				 "0x%" PRIx64, iter, all[k].reg, v, want);
	}
	/* A callee-saved register the rule does not name, a reader takes as unchanged: the
	 * step must have carried it over unchanged. */
	for (unsigned reg = 0; reg < 16; reg++) {
		bool named = false;
		for (unsigned k = 0; k < rule->num_saved; k++)
			named |= rule->saved[k].reg == reg;
		if (named || reg == RSP || !jitmap_unwind_callee_saved(X86, reg) ||
		    !jitmap_frame_reg_known(regs, reg))
			continue;
		if (!jitmap_frame_reg_known(caller, reg) || caller->reg[reg] != regs->reg[reg])
			fail_msg("iteration %u: the rule leaves register %u out (unchanged), but the "
				 "step did not carry it over", iter, reg);
	}
}

static void test_fuzzed_proofs(void **state)
{
	(void)state;
	static struct world w;
	uint64_t after_call[128], insn[512];
	unsigned ncalls, ninsn, proven = 0, stacker_proven = 0, ruled = 0;
	rnd_state = UINT64_C(0x9e3779b97f4a7c15);
	const jitmap_target t = {&w, NULL, world_read};
	for (unsigned iter = 0; iter < 3000; iter++) {
		fuzz_world(&w, after_call, &ncalls, insn, &ninsn);
		/* The PC: an instruction's start, after a call, or anywhere in the code; mostly in
		 * a range (the map's code), where the code walk answers. */
		const unsigned how = (unsigned)(rnd() % 3);
		const unsigned in = (unsigned)(rnd() % w.nranges);
		uint64_t pc = 0;
		for (unsigned tries = 0; tries < 16; tries++) {
			pc = how == 0 ? insn[rnd() % ninsn]
			   : how == 1 && ncalls ? after_call[rnd() % ncalls]
			   : W_CODE + rnd() % W_CODE_LEN;
			if (rnd() % 4 == 0 || (pc >= w.range_lo[in] && pc <= w.range_hi[in]))
				break;
		}
		bool exact = how == 0 || (how == 2 && rnd() % 2);
		if (w.nplanted && rnd() % 2) {
			pc = w.planted[rnd() % w.nplanted];
			exact = false;
		}
		const uint64_t sp = W_STACK + 8 * (rnd() % 32);
		const uint64_t fp = rnd() % 4 ? sp + 8 * (rnd() % 16) : rnd();
		jitmap_frame_regs r = regs_with(pc, sp, fp);
		regs_set(&r, RBX, rnd());
		regs_set(&r, 12, rnd());

		/* The unwinder alone, as GDB's reader asks it: over the range holding the PC. */
		jitmap_unwind_code c = {.arch = X86, .is_innermost = exact,
					.methods = JITMAP_UNWIND_PROVEN};
		for (unsigned k = 0; k < w.nranges; k++)
			if (pc >= w.range_lo[k] && pc <= w.range_hi[k]) {
				c.func_lo = w.range_lo[k];
				c.func_hi = w.range_hi[k];
			}
		jitmap_unwind_result res;
		char why[512];
		if (jitmap_unwind_step(&c, &r, &t, &res, why, sizeof(why)) == 0) {
			proven++;
			if (!world_follows_call(&w, res.caller.pc))
				fail_msg("iteration %u: pc 0x%" PRIx64 "%s sp 0x%" PRIx64 ": %s proved a "
					 "caller at 0x%" PRIx64 ", which follows no call", iter, pc,
					 exact ? " (exact)" : "", sp,
					 jitmap_unwind_method_name(res.method), res.caller.pc);
		}

		/* The stacker, as jitmap-stack and GDB's perf-map unwinder ask it. */
		jitmap_process *p;
		jitmap_stacker *st = world_stacker(&w, &p);
		const jitmap_stack_frame *f;
		jitmap_frame_regs caller;
		bool caller_exact;
		const int rc = jitmap_stacker_step(st, &r, exact, &f, &caller, &caller_exact);
		if (rc == 0 && !f->step_guessed) {
			stacker_proven++;
			char where[64];
			if (world_code_at(&w, caller.pc, where, sizeof(where)) != 1 ||
			    !(world_follows_call(&w, caller.pc) || world_range_start(&w, caller.pc)))
				fail_msg("iteration %u: pc 0x%" PRIx64 "%s sp 0x%" PRIx64 ": the stacker's "
					 "%s step is marked proven, to 0x%" PRIx64 ", which is no "
					 "return address", iter, pc, exact ? " (exact)" : "", sp,
					 jitmap_unwind_method_name(f->method), caller.pc);
			if (f->rule) {
				ruled++;
				replay_rule(f->rule, &r, &t, &caller, iter);
			}
		}
		if (f->rule && (rc != 0 || f->step_guessed))
			fail_msg("iteration %u: a rule for a step that was not proven", iter);
		jitmap_stacker_free(st);
		jitmap_process_free(p);
	}
	/* The fuzzer reached proofs at all (else it tests nothing). */
	print_message("  3000 stacks: %u proven by the unwinder, %u by the stacker, %u of those "
		      "with a rule replayed\n", proven, stacker_proven, ruled);
	assert_true(proven > 100);
	assert_true(stacker_proven > 100);
	assert_true(ruled > 100);
}

#ifdef JITMAP_UNWIND_FIXTURE

/* What the fixture calls. */
int64_t uw_cb(int64_t x);
void uw_cb_void(void);
int64_t uw_cb_many(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int64_t g,
		   int64_t h, int64_t i);
int64_t uw_entry(int64_t n);

__attribute__((noinline)) int64_t uw_cb(int64_t x)
{
	return x + 1;
}

__attribute__((noinline)) void uw_cb_void(void)
{
	__asm__ volatile("");
}

__attribute__((noinline)) int64_t uw_cb_many(int64_t a, int64_t b, int64_t c, int64_t d,
					     int64_t e, int64_t f, int64_t g, int64_t h, int64_t i)
{
	return a + b + c + d + e + f + g + h + i;
}

static const char *const fixture_functions[] = {
	"uw_leaf",      "uw_saves",    "uw_fp",       "uw_recurse",   "uw_patch", "uw_dynamic",
	"uw_realigned", "uw_manyargs", "uw_sp_plain", "uw_sp_pushed", "uw_entry", /* last */
};
#define NUM_FUNCS ARRAY_LEN(fixture_functions)

enum bp_kind { BP_RECORD, BP_ENTRY, BP_AFTER_PUSH, BP_AFTER_MOV, BP_RET };
static const char *const bp_kind_name[] = {"record", "entry", "after push", "after mov", "ret"};

#define MAX_BPS 96
#define STACK_COPY 16384
/* The 128 bytes below rsp that the SysV ABI keeps for leaf code (signals do not touch them):
 * at a ret, the callee-saved registers' save slots are there. */
#define RED_ZONE 128

struct snapshot {
	uint64_t pc;
	uint64_t reg[16]; /* DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 */
	uint64_t stack_lo;
	size_t stack_len;
	uint8_t stack[STACK_COPY];
};

struct bp {
	uint64_t addr;
	enum bp_kind kind;
	size_t func;
	uint8_t orig;
	volatile int armed, hit;
	struct snapshot snap;
};

static struct live {
	jitmap_stackmap *sm;
	jitmap_cfi *cfi;
	uint64_t func_lo[NUM_FUNCS], func_hi[NUM_FUNCS];
	uint64_t code_lo, code_hi;
	struct bp bps[MAX_BPS];
	size_t num_bps;
	volatile uint64_t stack_top;
	volatile int stray_traps;
} live;

/* Copy the stack of the interrupted code, without ASan looking: the frames in between
 * belong to code it did not instrument, and its own redzones are not ours to judge. */
__attribute__((no_sanitize_address)) static void copy_stack(uint8_t *dst, uint64_t src, size_t n)
{
	const volatile uint8_t *s = (const volatile uint8_t *)(uintptr_t)src;
	for (size_t i = 0; i < n; i++)
		dst[i] = s[i];
}

static void on_trap(int sig, siginfo_t *si, void *ucv)
{
	(void)sig, (void)si;
	ucontext_t *uc = ucv;
	const uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP] - 1;
	struct bp *bp = NULL;
	for (size_t i = 0; i < live.num_bps; i++)
		if (live.bps[i].addr == pc && live.bps[i].armed)
			bp = &live.bps[i];
	if (!bp) {
		live.stray_traps++;
		return;
	}
	*(volatile uint8_t *)(uintptr_t)pc = bp->orig;
	bp->armed = 0;
	bp->hit = 1;
	static const int gregs[16] = {REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI,
				      REG_RBP, REG_RSP, REG_R8,  REG_R9,  REG_R10, REG_R11,
				      REG_R12, REG_R13, REG_R14, REG_R15};
	struct snapshot *s = &bp->snap;
	s->pc = pc;
	for (int i = 0; i < 16; i++)
		s->reg[i] = (uint64_t)uc->uc_mcontext.gregs[gregs[i]];
	s->stack_lo = s->reg[RSP] - RED_ZONE;
	const uint64_t len = live.stack_top > s->stack_lo ? live.stack_top - s->stack_lo : 0;
	s->stack_len = len <= STACK_COPY ? (size_t)len : 0;
	copy_stack(s->stack, s->stack_lo, s->stack_len);
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
}

/* The bounds of this executable's text (GNU ld defines them). */
extern const char __executable_start[], etext[];

/* Memory as it was at one breakpoint: the saved stack, and the fixture's code (restored). */
static int snap_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	(void)why;
	(void)why_len;
	const struct snapshot *s = ctx;
	if (addr >= s->stack_lo && addr - s->stack_lo <= s->stack_len &&
	    len <= s->stack_len - (addr - s->stack_lo)) {
		memcpy(buf, s->stack + (addr - s->stack_lo), len);
		return 0;
	}
	if (addr >= live.code_lo && addr < live.code_hi && len <= live.code_hi - addr) {
		memcpy(buf, (const void *)(uintptr_t)addr, len);
		return 0;
	}
	/* The rest of this executable's code (never written: the breakpoints are in the
	 * fixture's): the unwinder reads the call before each return address, and uw_entry
	 * returns into the test's own C code. */
	const uint64_t text_lo = (uint64_t)(uintptr_t)__executable_start;
	const uint64_t text_hi = (uint64_t)(uintptr_t)etext;
	if (addr >= text_lo && addr < text_hi && len <= text_hi - addr) {
		memcpy(buf, (const void *)(uintptr_t)addr, len);
		return 0;
	}
	return -EFAULT;
}

static size_t func_of(uint64_t pc)
{
	for (size_t f = 0; f < NUM_FUNCS; f++)
		if (pc >= live.func_lo[f] && pc < live.func_hi[f])
			return f;
	return NUM_FUNCS;
}

static void add_bp(uint64_t addr, enum bp_kind kind, size_t func)
{
	for (size_t i = 0; i < live.num_bps; i++)
		if (live.bps[i].addr == addr)
			return;
	assert_true(live.num_bps < MAX_BPS);
	struct bp *bp = &live.bps[live.num_bps++];
	bp->addr = addr;
	bp->kind = kind;
	bp->func = func;
}

/* The executable's sections and symbols, read with libelf (not with jitmap's ELF layer:
 * the test should not lean on what it tests). */
static bool load_self(uint64_t *eh_addr, uint64_t *eh_size, uint64_t *sm_addr, uint64_t *sm_size)
{
	elf_version(EV_CURRENT);
	const int fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	GElf_Ehdr eh;
	assert_non_null(gelf_getehdr(elf, &eh));
	if (eh.e_type != ET_EXEC) {
		elf_end(elf);
		close(fd);
		return false;
	}
	size_t shstrndx;
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	*eh_size = *sm_size = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".eh_frame")) {
			*eh_addr = sh.sh_addr;
			*eh_size = sh.sh_size;
		} else if (name && !strcmp(name, ".llvm_stackmaps")) {
			*sm_addr = sh.sh_addr;
			*sm_size = sh.sh_size;
		} else if (sh.sh_type == SHT_SYMTAB) {
			Elf_Data *d = elf_getdata(scn, NULL);
			const size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
			for (size_t i = 0; i < n; i++) {
				GElf_Sym sym;
				gelf_getsym(d, (int)i, &sym);
				const char *sname = elf_strptr(elf, sh.sh_link, sym.st_name);
				for (size_t f = 0; sname && f < NUM_FUNCS; f++) {
					if (!strcmp(sname, fixture_functions[f])) {
						live.func_lo[f] = sym.st_value;
						live.func_hi[f] = sym.st_value + sym.st_size;
					}
				}
			}
		}
	}
	elf_end(elf);
	close(fd);
	return true;
}

/* Not a tail call (the asm after the call): uw_entry's caller must be this frame, whose
 * frame address bounds the stack that the breakpoints copy. */
__attribute__((noinline)) static int64_t run_fixture(int64_t n)
{
	live.stack_top = (uint64_t)(uintptr_t)__builtin_frame_address(0) + 16;
	const int64_t r = uw_entry(n);
	__asm__ volatile("" ::: "memory");
	return r;
}

static int live_setup(void **state)
{
	(void)state;
	uint64_t eh_addr = 0, eh_size = 0, sm_addr = 0, sm_size = 0;
	if (!load_self(&eh_addr, &eh_size, &sm_addr, &sm_size)) {
		print_message("the test executable is not ET_EXEC: live tests skipped\n");
		return 0;
	}
	assert_true(eh_size > 0 && sm_size > 0);
	live.code_lo = UINT64_MAX;
	for (size_t f = 0; f < NUM_FUNCS; f++) {
		assert_true(live.func_hi[f] > live.func_lo[f]);
		if (live.func_lo[f] < live.code_lo)
			live.code_lo = live.func_lo[f];
		if (live.func_hi[f] > live.code_hi)
			live.code_hi = live.func_hi[f];
	}
	assert_int_equal(live.func_lo[NUM_FUNCS - 1], (uint64_t)(uintptr_t)&uw_entry);

	/* The sections as they sit in memory: the linker relocated them, as RuntimeDyld does
	 * in a JIT. */
	jitmap_error err;
	live.cfi = jitmap_cfi_new(X86, (const void *)(uintptr_t)eh_addr, eh_size, eh_addr, NULL, 0,
				  &err);
	if (!live.cfi)
		fail_msg("the executable's .eh_frame: %s", err.reason);
	live.sm = parse_ok((const void *)(uintptr_t)sm_addr, sm_size, JITMAP_ORDER_LITTLE, X86);

	/* Breakpoints: every record, and the prologue and epilogue of each function. */
	for (size_t i = 0; i < jitmap_stackmap_num_records(live.sm); i++) {
		const uint64_t pc = jitmap_record_pc(live.sm, jitmap_stackmap_record(live.sm, i));
		assert_true(func_of(pc) < NUM_FUNCS);
		add_bp(pc, BP_RECORD, func_of(pc));
	}
	for (size_t f = 0; f < NUM_FUNCS; f++) {
		const uint8_t *c = (const uint8_t *)(uintptr_t)live.func_lo[f];
		add_bp(live.func_lo[f], BP_ENTRY, f);
		if (c[0] == 0x55) {
			add_bp(live.func_lo[f] + 1, BP_AFTER_PUSH, f);
			if (c[1] == 0x48 && c[2] == 0x89 && c[3] == 0xe5)
				add_bp(live.func_lo[f] + 4, BP_AFTER_MOV, f);
		}
		if (c[live.func_hi[f] - live.func_lo[f] - 1] == 0xc3)
			add_bp(live.func_hi[f] - 1, BP_RET, f);
	}

	const int64_t expected = run_fixture(5); /* without breakpoints, for comparison */
	const long page = sysconf(_SC_PAGESIZE);
	const uint64_t plo = live.code_lo & ~(uint64_t)(page - 1);
	const size_t plen = (size_t)(live.code_hi - plo);
	assert_int_equal(mprotect((void *)(uintptr_t)plo, plen, PROT_READ | PROT_WRITE | PROT_EXEC), 0);
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGTRAP, &sa, &old), 0);
	for (size_t i = 0; i < live.num_bps; i++) {
		volatile uint8_t *p = (volatile uint8_t *)(uintptr_t)live.bps[i].addr;
		live.bps[i].orig = *p;
		live.bps[i].armed = 1;
		*p = 0xcc;
	}
	const int64_t got = run_fixture(5);
	for (size_t i = 0; i < live.num_bps; i++) {
		if (live.bps[i].armed) {
			*(volatile uint8_t *)(uintptr_t)live.bps[i].addr = live.bps[i].orig;
			live.bps[i].armed = 0;
		}
	}
	sigaction(SIGTRAP, &old, NULL);
	assert_int_equal(mprotect((void *)(uintptr_t)plo, plen, PROT_READ | PROT_EXEC), 0);
	assert_int_equal(got, expected);
	assert_int_equal(live.stray_traps, 0);
	return 0;
}

static int live_teardown(void **state)
{
	(void)state;
	jitmap_cfi_free(live.cfi);
	jitmap_stackmap_free(live.sm);
	return 0;
}

#define NEED_LIVE()                                                                        \
	do {                                                                               \
		if (!live.cfi) {                                                           \
			print_message("live fixture not loaded\n");                       \
			skip();                                                            \
		}                                                                          \
	} while (0)

static jitmap_frame_regs snap_regs(const struct snapshot *s)
{
	jitmap_frame_regs r;
	memset(&r, 0, sizeof(r));
	r.pc = s->pc;
	for (unsigned i = 0; i < 16; i++)
		jitmap_frame_reg_set(&r, i, s->reg[i]);
	return r;
}

static const struct bp *entry_bp(void)
{
	for (size_t i = 0; i < live.num_bps; i++)
		if (live.bps[i].kind == BP_ENTRY && live.bps[i].func == NUM_FUNCS - 1)
			return &live.bps[i];
	return NULL;
}

static uint64_t snap_word(const struct snapshot *s, uint64_t addr)
{
	uint8_t b[8];
	if (snap_read((void *)s, addr, b, 8, NULL, 0))
		fail_msg("0x%" PRIx64 " is not in the snapshot", addr);
	return sm_get(b, 8, JITMAP_ORDER_LITTLE);
}

static jitmap_unwind_code live_code(uint64_t pc, bool innermost, uint32_t methods, bool ranges)
{
	jitmap_unwind_code c = {.arch = X86, .cfi = live.cfi, .sm = live.sm,
				.is_innermost = innermost, .methods = methods};
	const size_t f = func_of(innermost ? pc : pc - 1);
	if (ranges && f < NUM_FUNCS) {
		c.func_lo = live.func_lo[f];
		c.func_hi = live.func_hi[f];
	}
	return c;
}

/* Whether function f begins with push %rbp; mov %rsp,%rbp. */
static bool keeps_fp(size_t f)
{
	const uint8_t *c = (const uint8_t *)(uintptr_t)live.func_lo[f];
	return c[0] == 0x55 && c[1] == 0x48 && c[2] == 0x89 && c[3] == 0xe5;
}

static const char *where(uint64_t pc)
{
	static char buf[64];
	const size_t f = func_of(pc);
	if (f < NUM_FUNCS)
		snprintf(buf, sizeof(buf), "%s+%" PRIu64, fixture_functions[f], pc - live.func_lo[f]);
	else
		snprintf(buf, sizeof(buf), "0x%" PRIx64, pc);
	return buf;
}

/* Every breakpoint was reached, and saved a usable stack. */
static void test_live_hits(void **state)
{
	(void)state;
	NEED_LIVE();
	size_t per_kind[5] = {0};
	for (size_t i = 0; i < live.num_bps; i++) {
		const struct bp *bp = &live.bps[i];
		if (!bp->hit)
			fail_msg("breakpoint at %s (%s) not reached", where(bp->addr),
				 bp_kind_name[bp->kind]);
		if (bp->snap.stack_len == 0)
			fail_msg("stack at %s too deep to copy", where(bp->addr));
		per_kind[bp->kind]++;
	}
	/* unwind_fixture.ll has 15 records at 14 PCs (a stackmap and a patchpoint share one). */
	assert_int_equal(jitmap_stackmap_num_records(live.sm), 15);
	assert_int_equal(per_kind[BP_RECORD], 14);
	assert_int_equal(per_kind[BP_ENTRY], NUM_FUNCS);
	print_message("  %zu stops: %zu records, %zu entries, %zu after push, %zu after mov, "
		      "%zu rets\n", live.num_bps, per_kind[0], per_kind[1], per_kind[2], per_kind[3],
		      per_kind[4]);
}

/* From every stop, CFI alone unwinds every fixture frame and reaches uw_entry's caller with
 * exactly the return address, stack pointer and callee-saved registers it had at entry. */
static void chain_to_entry(uint32_t methods, const char *label)
{
	const struct bp *e = entry_bp();
	assert_non_null(e);
	const uint64_t want_pc = snap_word(&e->snap, e->snap.reg[RSP]);
	const uint64_t want_sp = e->snap.reg[RSP] + 8;
	static const unsigned cs[] = {3, 6, 12, 13, 14, 15};
	size_t frames = 0;
	for (size_t i = 0; i < live.num_bps; i++) {
		const struct snapshot *s = &live.bps[i].snap;
		const jitmap_target t = {(void *)s, NULL, snap_read};
		jitmap_frame_regs r = snap_regs(s);
		bool innermost = true, reached = false;
		for (int depth = 0; depth < 64 && !reached; depth++, frames++) {
			const jitmap_unwind_code code = live_code(r.pc, innermost, methods, true);
			jitmap_unwind_result res;
			char why[512];
			const int rc = jitmap_unwind_step(&code, &r, &t, &res, why, sizeof(why));
			if (rc)
				fail_msg("%s: from %s, frame %d at %s: %s", label, where(s->pc), depth,
					 where(r.pc), why);
			assert_true(res.caller.reg[RSP] > r.reg[RSP]);
			for (unsigned k = 0; k < 16; k++) {
				if (!jitmap_unwind_callee_saved(X86, k))
					expect_unknown(&res.caller, k);
			}
			reached = res.caller.pc == want_pc;
			r = res.caller;
			innermost = false;
		}
		if (!reached)
			fail_msg("%s: from %s, uw_entry's caller was not reached", label, where(s->pc));
		if (r.reg[RSP] != want_sp)
			fail_msg("%s: from %s: caller's rsp 0x%" PRIx64 ", expected 0x%" PRIx64, label,
				 where(s->pc), r.reg[RSP], want_sp);
		for (size_t k = 0; k < ARRAY_LEN(cs); k++) {
			const unsigned c = cs[k] & 15;
			if (!jitmap_frame_reg_known(&r, c) || r.reg[c] != e->snap.reg[c])
				fail_msg("%s: from %s: caller's %s is %s0x%" PRIx64 ", expected 0x%"
					 PRIx64, label, where(s->pc), jitmap_reg_name(X86, c),
					 jitmap_frame_reg_known(&r, c) ? "" : "unknown, ", r.reg[c],
					 e->snap.reg[c]);
		}
	}
	print_message("  %s: %zu stops, %zu frames unwound, all reached uw_entry's caller with its "
		      "callee-saved registers\n", label, live.num_bps, frames);
}

static void test_live_cfi_chain(void **state)
{
	(void)state;
	NEED_LIVE();
	chain_to_entry(ONLY(CFI), "cfi");
	chain_to_entry(0, "all methods");
}

/* The stackmap frame-size rule at every record (frame 0, stopped there) and at every record
 * that is an outer frame's return address (reached by unwinding): it gives CFI's CFA and
 * return address, or it declines; it never gives another answer. */
/* Every callee-saved register but rsp that `got` knows is CFI's (`cfi`, which
 * test_live_cfi_chain holds to the machine); counts those, and those CFI knows that `got`
 * does not. */
static void same_callee_saved(const jitmap_frame_regs *got, const jitmap_frame_regs *cfi,
			      size_t *same, size_t *missing)
{
	for (unsigned r = 0; r < 17; r++) {
		if (r == RSP || !jitmap_unwind_callee_saved(X86, r))
			continue;
		if (jitmap_frame_reg_known(got, r)) {
			expect_reg(got, r, cfi->reg[r]);
			++*same;
		} else if (jitmap_frame_reg_known(cfi, r)) {
			++*missing;
		}
	}
}

static void test_live_stackmap_rule(void **state)
{
	(void)state;
	NEED_LIVE();
	size_t agree = 0, declined_dynamic = 0, declined_sp = 0, outer_checks = 0;
	size_t sm_regs = 0, sm_missing = 0;
	uint64_t mismatch_ids[16];
	int64_t mismatch_delta[16];
	size_t num_mismatch = 0;
	for (size_t i = 0; i < live.num_bps; i++) {
		const struct snapshot *s = &live.bps[i].snap;
		const jitmap_target t = {(void *)s, NULL, snap_read};
		jitmap_frame_regs r = snap_regs(s);
		bool innermost = true;
		for (int depth = 0; depth < 64; depth++) {
			if (!innermost && func_of(r.pc - 1) == NUM_FUNCS)
				break; /* uw_entry's caller: the test's own code */
			const jitmap_record *rec = NULL;
			jitmap_unwind_result by_cfi, by_sm;
			char why[512];
			jitmap_unwind_code code = live_code(r.pc, innermost, ONLY(CFI), false);
			if (jitmap_unwind_step(&code, &r, &t, &by_cfi, why, sizeof(why)))
				fail_msg("from %s, at %s: %s", where(s->pc), where(r.pc), why);
			if (jitmap_stackmap_lookup(live.sm, r.pc, &rec, 1) > 0) {
				const jitmap_function *f = jitmap_record_function(live.sm, rec);
				code.methods = ONLY(STACKMAP);
				const int rc = jitmap_unwind_step(&code, &r, &t, &by_sm, why,
								  sizeof(why));
				if (f->stack_size == UINT64_MAX) {
					assert_int_equal(rc, -ENOENT);
					assert_contains(why, "dynamic or realigned");
					declined_dynamic += depth == 0;
				} else {
					const uint64_t raw = r.reg[RSP] + f->stack_size + 8;
					if (raw == by_cfi.cfa) {
						if (rc)
							fail_msg("record %" PRIu64 ": %s", rec->id, why);
						assert_int_equal(by_sm.method, JITMAP_UNWIND_STACKMAP);
						assert_int_equal(by_sm.cfa, by_cfi.cfa);
						assert_int_equal(by_sm.caller.pc, by_cfi.caller.pc);
						assert_int_equal(by_sm.caller.reg[RSP], by_cfi.caller.reg[RSP]);
						/* rbp is proven where the function keeps a frame
						 * pointer, and must then be CFI's; every callee-saved
						 * register it knows (push slots, and those the ABI
						 * carries past a prologue decoded whole) is CFI's. */
						if (keeps_fp(func_of(r.pc)))
							expect_reg(&by_sm.caller, RBP,
								   by_cfi.caller.reg[RBP]);
						same_callee_saved(&by_sm.caller, &by_cfi.caller,
								  &sm_regs, &sm_missing);
						agree += depth == 0;
					} else {
						assert_int_equal(rc, -ENOENT);
						assert_contains(why, "the body's SP here");
						if (depth == 0) {
							assert_true(num_mismatch < ARRAY_LEN(mismatch_ids));
							mismatch_ids[num_mismatch] = rec->id;
							mismatch_delta[num_mismatch++] =
								(int64_t)(raw - by_cfi.cfa);
						}
						declined_sp += depth == 0;
					}
					outer_checks += depth > 0;
				}
			}
			r = by_cfi.caller;
			innermost = false;
		}
	}
	print_message("  records as frame 0: %zu agree with CFI, %zu declined (no stack size), "
		      "%zu declined (SP moved); %zu more checks as outer frames\n", agree,
		      declined_dynamic, declined_sp, outer_checks);
	print_message("  stackmap method: %zu callee-saved registers equal CFI's, %zu that CFI "
		      "knows unknown\n", sm_regs, sm_missing);
	for (size_t k = 0; k < num_mismatch; k++)
		print_message("  record %" PRIu64 ": SP + stack size + 8 is CFI's CFA %+" PRId64 "\n",
			      mismatch_ids[k], mismatch_delta[k]);
	/* 14 record PCs: 600 and 700 have no stack size; at 901 (a statepoint whose call's
	 * stack arguments were pushed) SP is 32 below the body's, and the method declines;
	 * the other 11 agree exactly (800, after a call with pushed arguments too, sits after
	 * the add that frees them). */
	assert_int_equal(agree, 11);
	assert_int_equal(declined_dynamic, 2);
	assert_int_equal(num_mismatch, 1);
	assert_int_equal(mismatch_ids[0], 901);
	assert_int_equal(mismatch_delta[0], -32);
	assert_true(outer_checks >= 5);
	/* Every callee-saved register CFI recovers, the stackmap method does too, from the
	 * pushes and the ABI's rule (348 with llc-14). */
	assert_int_equal(sm_missing, 0);
	assert_true(sm_regs >= 300);
}

/* The frame-pointer chain, at every stop and in every outer frame: CFI's answer, or a
 * decline in a frameless function (uw_entry, uw_sp_*); stops at an entry, after a push or at
 * a ret included. */
static void test_live_frame_pointer(void **state)
{
	(void)state;
	NEED_LIVE();
	size_t agree = 0, declined = 0, fp_regs = 0, fp_missing = 0;
	for (size_t i = 0; i < live.num_bps; i++) {
		const struct bp *bp = &live.bps[i];
		const struct snapshot *s = &bp->snap;
		const jitmap_target t = {(void *)s, NULL, snap_read};
		jitmap_frame_regs r = snap_regs(s);
		bool innermost = true;
		for (int depth = 0; depth < 64; depth++) {
			if (!innermost && func_of(r.pc - 1) == NUM_FUNCS)
				break;
			jitmap_unwind_result by_cfi, by_fp;
			char why[512];
			jitmap_unwind_code code = live_code(r.pc, innermost, ONLY(CFI), true);
			if (jitmap_unwind_step(&code, &r, &t, &by_cfi, why, sizeof(why)))
				fail_msg("from %s, at %s: %s", where(s->pc), where(r.pc), why);
			code.methods = ONLY(FRAME_POINTER);
			const int rc = jitmap_unwind_step(&code, &r, &t, &by_fp, why, sizeof(why));
			const size_t f = func_of(innermost ? r.pc : r.pc - 1);
			const bool frameless = !keeps_fp(f);
			const bool special = innermost && (bp->kind == BP_ENTRY ||
							   bp->kind == BP_AFTER_PUSH ||
							   bp->kind == BP_RET);
			if (frameless && !special) {
				assert_int_equal(rc, -ENOENT);
				assert_contains(why, "does not begin with push %rbp");
				declined++;
			} else {
				if (rc)
					fail_msg("from %s (%s), frame %d at %s: %s", where(s->pc),
						 bp_kind_name[bp->kind], depth, where(r.pc), why);
				assert_int_equal(by_fp.cfa, by_cfi.cfa);
				assert_int_equal(by_fp.caller.pc, by_cfi.caller.pc);
				expect_reg(&by_fp.caller, RBP, by_cfi.caller.reg[RBP]);
				same_callee_saved(&by_fp.caller, &by_cfi.caller, &fp_regs,
						  &fp_missing);
				agree++;
			}
			r = by_cfi.caller;
			innermost = false;
		}
	}
	print_message("  frame pointer: %zu frames agree with CFI, %zu declined in frameless "
		      "functions\n", agree, declined);
	print_message("  frame pointer: %zu callee-saved registers equal CFI's, %zu that CFI "
		      "knows unknown\n", fp_regs, fp_missing);
	assert_true(agree > 50 && declined > 0);
	assert_int_equal(fp_missing, 0); /* 612 registers with llc-14 */
	assert_true(fp_regs >= 500);
}

/* CFI against the machine itself: at each function's first instruction the return
 * address is at rsp, and at a ret as well. */
static void test_live_cfi_against_machine(void **state)
{
	(void)state;
	NEED_LIVE();
	size_t checked = 0;
	for (size_t i = 0; i < live.num_bps; i++) {
		const struct bp *bp = &live.bps[i];
		if (bp->kind != BP_ENTRY && bp->kind != BP_RET && bp->kind != BP_AFTER_PUSH)
			continue;
		const struct snapshot *s = &bp->snap;
		const jitmap_target t = {(void *)s, NULL, snap_read};
		const jitmap_frame_regs r = snap_regs(s);
		const jitmap_unwind_code code = live_code(s->pc, true, ONLY(CFI), false);
		jitmap_unwind_result res;
		char why[512];
		if (jitmap_unwind_step(&code, &r, &t, &res, why, sizeof(why)))
			fail_msg("at %s: %s", where(s->pc), why);
		const uint64_t slot = s->reg[RSP] + (bp->kind == BP_AFTER_PUSH ? 8 : 0);
		assert_int_equal(res.cfa, slot + 8);
		assert_int_equal(res.caller.pc, snap_word(s, slot));
		if (bp->kind == BP_AFTER_PUSH)
			expect_reg(&res.caller, RBP, snap_word(s, s->reg[RSP]));
		else
			expect_reg(&res.caller, RBP, s->reg[RBP]);
		checked++;
	}
	assert_true(checked >= 2 * NUM_FUNCS);
}

/* The fixture's FDEs and their CIE, as the linker left them in the executable's .eh_frame,
 * moved to a section of their own (CIE pointers and pc-relative addresses re-encoded for the
 * new place). Returns its length. */
static size_t fixture_eh_frame(uint8_t *out, size_t cap, uint64_t new_addr)
{
	uint64_t eh_addr = 0, eh_size = 0, sm_addr = 0, sm_size = 0;
	assert_true(load_self(&eh_addr, &eh_size, &sm_addr, &sm_size));
	const uint8_t *eh = (const uint8_t *)(uintptr_t)eh_addr;
	uint64_t cie = UINT64_MAX;
	size_t n = 0;
	for (uint64_t off = 0; off + 8 <= eh_size;) {
		const uint64_t len = sm_get(eh + off, 4, JITMAP_ORDER_LITTLE);
		if (len == 0 || len == 0xffffffffu)
			break;
		const uint64_t id = sm_get(eh + off + 4, 4, JITMAP_ORDER_LITTLE);
		/* FDEs here use pc-relative sdata4 addresses (LLVM's and GCC's choice). */
		const int32_t rel = (int32_t)sm_get(eh + off + 8, 4, JITMAP_ORDER_LITTLE);
		const uint64_t lo = eh_addr + off + 8 + (uint64_t)(int64_t)rel;
		if (id != 0 && lo >= live.code_lo && lo < live.code_hi) {
			const uint64_t this_cie = off + 4 - id;
			if (cie == UINT64_MAX) {
				cie = this_cie;
				const uint64_t cie_len = sm_get(eh + cie, 4, JITMAP_ORDER_LITTLE) + 4;
				assert_true(cie_len <= cap);
				memcpy(out, eh + cie, cie_len);
				n = cie_len;
			}
			assert_int_equal(this_cie, cie);
			assert_true(n + len + 4 + 4 <= cap);
			memcpy(out + n, eh + off, len + 4);
			sm_put(out + n + 4, n + 4, 4, JITMAP_ORDER_LITTLE);
			sm_put(out + n + 8, (uint32_t)(lo - (new_addr + n + 8)), 4, JITMAP_ORDER_LITTLE);
			n += len + 4;
		}
		off += len + 4;
	}
	assert_true(n > 0);
	sm_put(out + n, 0, 4, JITMAP_ORDER_LITTLE);
	return n + 4;
}

static void test_live_cfi_torture(void **state)
{
	(void)state;
	NEED_LIVE();
	static uint8_t sec[4096];
	const uint64_t addr = 0x100000;
	const size_t len = fixture_eh_frame(sec, sizeof(sec), addr);
	/* The moved section unwinds as the original does. */
	jitmap_error err;
	jitmap_cfi *cfi = jitmap_cfi_new(X86, sec, len, addr, NULL, 0, &err);
	if (!cfi)
		fail_msg("%s", err.reason);
	for (size_t f = 0; f < NUM_FUNCS; f++) {
		uint64_t lo, hi;
		assert_true(jitmap_cfi_covers(cfi, live.func_lo[f], &lo, &hi));
		assert_int_equal(lo, live.func_lo[f]);
		assert_int_equal(hi, live.func_hi[f]);
	}
	jitmap_cfi_free(cfi);
	torture(sec, len, addr, live.code_lo, live.code_hi);
}

#endif /* JITMAP_UNWIND_FIXTURE */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cfi_fp_frame),
		cmocka_unit_test(test_cfi_register_rules),
		cmocka_unit_test(test_cfi_outermost_and_expressions),
		cmocka_unit_test(test_cfi_bad_instructions),
		cmocka_unit_test(test_cfi_debug_frame_and_overlaps),
		cmocka_unit_test(test_cfi_hostile),
		cmocka_unit_test(test_cfi_torture_synthetic),
		cmocka_unit_test(test_frame_pointer),
		cmocka_unit_test(test_code_walk),
		cmocka_unit_test(test_stackmap_rule),
		cmocka_unit_test(test_carry_rule),
		cmocka_unit_test(test_aarch64),
		cmocka_unit_test(test_aarch64_lookalikes),
		cmocka_unit_test(test_s390x),
		cmocka_unit_test(test_api),
		cmocka_unit_test(test_block_is_not_a_function),
		cmocka_unit_test(test_continuation_proven),
		cmocka_unit_test(test_fuzzed_proofs),
	};
	int failed = cmocka_run_group_tests_name("unwind", tests, NULL, NULL);
#ifdef JITMAP_UNWIND_FIXTURE
	const struct CMUnitTest live_tests[] = {
		cmocka_unit_test(test_live_hits),
		cmocka_unit_test(test_live_cfi_chain),
		cmocka_unit_test(test_live_stackmap_rule),
		cmocka_unit_test(test_live_frame_pointer),
		cmocka_unit_test(test_live_cfi_against_machine),
		cmocka_unit_test(test_live_cfi_torture),
	};
	failed += cmocka_run_group_tests_name("unwind_live", live_tests, live_setup, live_teardown);
#else
	print_message("no llc (or not x86-64) at configure time: live unwinding tests skipped\n");
#endif
	return failed;
}

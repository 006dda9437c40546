/* s390x: the s390x ELF ABI (big-endian), LLVM's DWARF numbering: r0-r15 0-15, the FP registers
 * 16-31 interleaved (f0 f2 f4 f6 f1 f3 ...), control 32-47, access 48-63, the PSW 64-65
 * (GDB's numbers; LLVM has none), vector 68-83. The
 * return address arrives in r14; the back chain is optional, so there is no frame record.
 * Every caller allocates a 160-byte register save area for its callee at the bottom of its
 * frame, so the CFA (the caller's SP + 160) lies above the caller's SP, and a function that
 * calls saves r6-r15 there with one store-multiple (stmg %rN,%r15,8*N(%r15)) as its first
 * instruction (llc-14 and GCC). Instructions are big-endian halfwords (z/Architecture
 * Principles of Operation; encodings checked with s390x-linux-gnu-objdump). */
#include "internal.h"

static const unsigned char fpr[16] = {0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15};

static const char *reg_name(unsigned r)
{
	const jitmap_arch a = JITMAP_ARCH_S390X;
	if (r <= 15)
		return jitmap__numbered(a, r, "r", r);
	if (r <= 31)
		return jitmap__numbered(a, r, "f", fpr[r - 16]);
	if (r <= 47)
		return jitmap__numbered(a, r, "c", r - 32);
	if (r <= 63)
		return jitmap__numbered(a, r, "a", r - 48);
	if (r == 64)
		return "pswm";
	if (r == 65)
		return "pswa";
	if (r >= 68 && r <= 83)
		return jitmap__numbered(a, r, "v", 16 + fpr[r - 68]);
	return NULL;
}

/* r6-r15 and f8-f15 (DWARF 24-31). */
static bool callee_saved(unsigned r)
{
	return (r >= 6 && r <= 15) || (r >= 24 && r <= 31);
}

/* brasl %r14,L (6 bytes), bras %r14,L (4), basr %r14,%rX (2): the call before a return
 * address. Read backwards from the return address, so a longer instruction whose last bytes
 * look like one of these can fool it, as with x86-64. */
static bool call_before(const uint8_t *b, size_t n)
{
	if (n >= 6 && b[n - 6] == 0xc0 && b[n - 5] == 0xe5)
		return true;
	if (n >= 4 && b[n - 4] == 0xa7 && b[n - 3] == 0xe5)
		return true;
	return n >= 2 && b[n - 2] == 0x0d && b[n - 1] >> 4 == 14;
}

/* stmg %rA,%rB,D(%r15) (RSY-a: EB A B | B2 DL DL | DH 24, D a signed 20-bit displacement):
 * the first register and the displacement, or false. */
static bool stmg_r15(const uint8_t *b, unsigned *first, unsigned *last, int64_t *disp)
{
	if (b[0] != 0xeb || b[5] != 0x24 || b[2] >> 4 != 15)
		return false;
	int64_t d = (int64_t)((b[2] & 0xfu) << 8 | b[3]) | (int64_t)b[4] << 12;
	if (d & 0x80000)
		d -= 0x100000;
	*first = b[1] >> 4;
	*last = b[1] & 0xfu;
	*disp = d;
	return true;
}

/* The length of the instruction whose first byte is `op`: its two top bits (00: 2 bytes,
 * 01 and 10: 4, 11: 6). */
static size_t insn_len(uint8_t op)
{
	return op < 0x40 ? 2 : op < 0xc0 ? 4 : 6;
}

static bool gpr_kept(unsigned r)
{
	return r >= 6 && r <= 13;
}

/* f8-f15, by their numbers in the instructions */
static bool fpr_kept(unsigned r)
{
	return r >= 8;
}

/* Whether the registers first..last of a store multiple (wrapping after r15) take in one
 * of r6-r13, and whether r14. */
static void range_hits(unsigned first, unsigned last, bool *kept, bool *r14)
{
	for (unsigned r = first;; r = (r + 1) & 15) {
		*kept |= gpr_kept(r);
		*r14 |= r == 14;
		if (r == last)
			return;
	}
}

/* The `stores` hook: what a function that does not begin with the stmg of a non-leaf does
 * with the registers the ABI makes it preserve, in its first `n` bytes (those that ran before
 * the PC): whether an instruction stores or copies one of r6-r13 or f8-f15 (to memory, or to
 * another register: a leaf may keep its caller's value anywhere before it reuses the
 * register), and whether one stores or copies r14. The stores and copies decoded are the
 * ABI's ways to save a register (st/sty/stg, stm/stmy/stmg/stmh, std/stdy/ste/stey, lr/lgr,
 * ldr, ldgr/lgdr); a vector instruction (v8-v15 hold f8-f15) counts as one. The walk follows
 * the instruction lengths from the function's start. */
static void leaf_saves(const uint8_t *b, size_t n, bool *kept, bool *r14)
{
	*kept = *r14 = false;
	for (size_t i = 0; i + 2 <= n;) {
		const uint8_t *p = b + i;
		const size_t len = insn_len(p[0]);
		if (i + len > n)
			return;
		const unsigned r1 = p[1] >> 4, r2 = p[1] & 15;
		const unsigned rre2 = len == 4 ? (p[3] & 15) : 0;
		unsigned gpr = 16; /* the GPR stored or copied, 16 for none */
		switch (p[0]) {
		case 0x18: /* lr R1,R2 */
			gpr = r2;
			break;
		case 0x28: /* ldr */
			*kept |= fpr_kept(r2);
			break;
		case 0x50: /* st */
			gpr = r1;
			break;
		case 0x60: /* std */
		case 0x70: /* ste */
			*kept |= fpr_kept(r1);
			break;
		case 0x90: /* stm R1,R3 */
			range_hits(r1, r2, kept, r14);
			break;
		case 0xb9:
			if (p[1] == 0x04 || p[1] == 0x14 || p[1] == 0x16) /* lgr, lgfr, llgfr */
				gpr = rre2;
			break;
		case 0xb3:
			if (p[1] == 0xc1) /* ldgr F1,R2 */
				gpr = rre2;
			else if (p[1] == 0xcd) /* lgdr R1,F2 */
				*kept |= fpr_kept(rre2);
			break;
		case 0xe3:
			if (p[5] == 0x24 || p[5] == 0x50) /* stg, sty */
				gpr = r1;
			break;
		case 0xeb:
			if (p[5] == 0x24 || p[5] == 0x90 || p[5] == 0x26) /* stmg, stmy, stmh */
				range_hits(r1, r2, kept, r14);
			break;
		case 0xed:
			if (p[5] == 0x67 || p[5] == 0x66) /* stdy, stey */
				*kept |= fpr_kept(r1);
			break;
		case 0xe6:
		case 0xe7: /* vector instructions */
			*kept = true;
			break;
		default:
			break;
		}
		*kept |= gpr < 16 && gpr_kept(gpr);
		*r14 |= gpr == 14;
		i += len;
	}
}

/* The saves of a stmg at the function's start, into the register save area the caller
 * allocated: rN at SP_entry + disp + 8 * (N - first), SP_entry being CFA - 160; r14 among
 * them is the return address, r6-r13 are callee-saved. No stmg that covers r14: a leaf,
 * whose return address stays in r14 and whose callee-saved registers are its caller's
 * unless the instructions before the PC save one (leaf_saves). saves_complete stays false:
 * f8-f15, callee-saved too, are stored (std) after the stack is allocated, which this
 * decoder does not follow, so no register the stmg leaves out is known to be unchanged. */
static void shape(const uint8_t *b, size_t n, struct jitmap__shape *out)
{
	*out = (struct jitmap__shape){.kind = JITMAP_PROLOGUE_NONE};
	unsigned first, last;
	int64_t disp;
	if (n >= 6 && stmg_r15(b, &first, &last, &disp) && first <= 14 && last >= 14 &&
	    last <= 15) {
		out->ra_known = true;
		out->ra_from_cfa = disp + 8 * (14 - (int64_t)first) - 160;
		for (unsigned r = first < 6 ? 6 : first; r <= 13; r++) {
			out->saved[out->nsaved].reg = (uint16_t)r;
			out->saved[out->nsaved].after = 6;
			out->saved[out->nsaved].cfa_off = (int32_t)(disp + 8 * (int64_t)(r - first) - 160);
			out->nsaved++;
		}
	}
}

/* aghi %r15,I; agfi %r15,I; la %r15,D(...); lay %r15,D(...); lgr %r15,R: the stack pointer
 * moves. */
static bool moves_sp(const uint8_t *b, size_t n)
{
	if (n < 4) /* the 4-byte forms; agfi and lay are 6 */
		return false;
	if (b[0] == 0xa7 && b[1] == 0xfb) /* aghi */
		return true;
	if (b[0] == 0xc2 && b[1] == 0xf8) /* agfi */
		return true;
	if (b[0] == 0x41 && b[1] >> 4 == 15) /* la */
		return true;
	if (n >= 6 && b[0] == 0xe3 && b[1] >> 4 == 15 && b[5] == 0x71) /* lay */
		return true;
	return b[0] == 0xb9 && b[1] == 0x04 && b[3] >> 4 == 15; /* lgr */
}

/* br %r14 (bcr 15,%r14). */
static bool is_return(const uint8_t *b, size_t n)
{
	return n >= 2 && b[0] == 0x07 && b[1] == 0xfe;
}


const struct jitmap__arch jitmap__s390x = {
	.id = JITMAP_ARCH_S390X,
	.name = "s390x",
	.aliases = (const char *const[]){"s390x", "s390:64-bit", NULL},
	.elf_machine = 22, /* EM_S390 */
	.pointer_size = 8,
	.default_order = JITMAP_ORDER_BIG, /* the s390x ABI is big-endian only */
	.sp = 15,
	.fp = 11,
	.ra = 14,
	/* The PSW address: LLVM numbers no PC, but GDB's s390 DWARF map (s390-tdep.c,
	 * s390_dwarf_regmap: 64 PSWM, 65 PSWA), and so its jit-reader API, and jitmap's core
	 * reader (targets/core.c) do. */
	.pc = 65,
	.num_core_regs = 16,
	.ra_in_register = true,
	/* LLVM's SystemZ stack size is what the prologue subtracts from r15 (llc-14: aghi
	 * %r15,-176 for stack size 176), the caller's save area not included. */
	.stackmap_rule = true,
	.cfa_sp_offset = 160,
	.call_window = 6,
	.insn_window = 6,
	.call_before = call_before,
	.reg_name = reg_name,
	.callee_saved = callee_saved,
	.shape = shape,
	.stores = leaf_saves,
	.moves_sp = moves_sp,
	.is_return = is_return,
};

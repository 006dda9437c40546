/* AArch64: AAPCS64, DWARF numbers per AADWARF64 (x0-x30 0-30, sp 31, pc 32; LLVM names no
 * register 32, so neither do we). The frame record is the (x29, x30) pair that x29 points at;
 * where it sits in the frame varies (at its top after `stp x29, x30, [sp, #-16]!`, at the
 * bottom of the callee-saved area after `stp x29, x30, [sp, #-N]!`), so the CFA is known
 * from x29 only through the function's prologue (the shape hook). The return address
 * arrives in x30 (the link register). Instructions are little-endian words in either data
 * byte order (encodings: Arm ARM, checked with aarch64-linux-gnu-as). */
#include "internal.h"

static const char *reg_name(unsigned r)
{
	const jitmap_arch a = JITMAP_ARCH_AARCH64;
	if (r <= 30)
		return jitmap__numbered(a, r, "x", r);
	if (r == 31)
		return "sp";
	if (r == 46)
		return "vg";
	if (r == 47)
		return "ffr";
	if (r >= 48 && r <= 63)
		return jitmap__numbered(a, r, "p", r - 48);
	if (r >= 64 && r <= 95)
		return jitmap__numbered(a, r, "v", r - 64);
	if (r >= 96 && r <= 127)
		return jitmap__numbered(a, r, "z", r - 96);
	return NULL;
}

/* x19-x29 and sp. v8-v15 keep only their low halves: not callee-saved as a whole. */
static bool callee_saved(unsigned r)
{
	return (r >= 19 && r <= 29) || r == 31;
}

/* BL imm26 and BLR Xn: the word before the return address. */
static bool call_before(const uint8_t *b, size_t n)
{
	if (n < 4)
		return false;
	const uint8_t *p = b + n - 4;
	const uint32_t insn = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			      (uint32_t)p[3] << 24;
	return (insn & 0xfc000000u) == 0x94000000u || (insn & 0xfffffc1fu) == 0xd63f0000u;
}

static uint32_t word(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Sign-extend the `bits`-bit field of `insn` at `lsb`. */
static int64_t field(uint32_t insn, unsigned lsb, unsigned bits)
{
	const uint64_t v = (insn >> lsb) & ((UINT64_C(1) << bits) - 1);
	return (int64_t)(v ^ (UINT64_C(1) << (bits - 1))) - (int64_t)(UINT64_C(1) << (bits - 1));
}

/* add/sub Xd, sp, #imm{, lsl #12} with Xd given: the immediate (negative for sub), or false. */
static bool sp_arith(uint32_t insn, unsigned rd, int64_t *imm)
{
	const uint32_t base = insn & 0xff8003ffu;
	if (base != (0x91000000u | 31u << 5 | rd) && base != (0xd1000000u | 31u << 5 | rd))
		return false;
	int64_t v = (int64_t)((insn >> 10) & 0xfff) << ((insn >> 22) & 1 ? 12 : 0);
	*imm = (insn & 0x40000000u) ? -v : v;
	return true;
}

/* stp x29, x30, [sp, #off]! (pre-index) or [sp, #off] (offset): 1 or 2, the offset in *off. */
static int stp_fp_lr(uint32_t insn, int64_t *off)
{
	if ((insn & 0xffc07fffu) == 0xa9807bfdu) {
		*off = field(insn, 15, 7) * 8;
		return 1;
	}
	if ((insn & 0xffc07fffu) == 0xa9007bfdu) {
		*off = field(insn, 15, 7) * 8;
		return 2;
	}
	return 0;
}

/* A store to [sp, #imm] that moves neither SP nor x29/x30: stp/str of X registers or of D
 * registers, signed or unsigned offset form (no writeback). The one instruction form A
 * allows between its stp and its mov. */
static bool plain_sp_store(uint32_t x)
{
	const unsigned rt = x & 31, rt2 = (x >> 10) & 31;
	const uint32_t op = x & 0xffc003e0u; /* the opcode with rn = sp */
	if (op == 0xa90003e0u) /* stp Xt, Xt2, [sp, #imm] */
		return rt != 29 && rt != 30 && rt2 != 29 && rt2 != 30;
	if (op == 0xf90003e0u) /* str Xt, [sp, #imm] */
		return rt != 29 && rt != 30;
	return op == 0x6d0003e0u || op == 0xfd0003e0u; /* stp Dt, Dt2 / str Dt, [sp, #imm] */
}

/* paciasp, pacibsp, bti c, bti jc: a landing pad or signing before the prologue. */
static bool pad(uint32_t insn)
{
	return insn == 0xd503233fu || insn == 0xd503237fu || insn == 0xd503245fu ||
	       insn == 0xd50324dfu;
}

/* x19-x29: the registers a prologue saves that the unwinder tracks (x30 is the return
 * address, SP is the frame). */
static bool kept_or_fp(unsigned r)
{
	return r >= 19 && r <= 29;
}

/* A save: `reg`'s caller value at CFA + cfa_off once the instruction at word `i` has run.
 * False when the table is full. */
static bool note_saved(struct jitmap__shape *out, unsigned reg, unsigned i, int64_t cfa_off)
{
	if (!kept_or_fp(reg))
		return true;
	if (out->nsaved >= sizeof(out->saved) / sizeof(out->saved[0]))
		return false;
	out->saved[out->nsaved].reg = (uint16_t)reg;
	out->saved[out->nsaved].after = (uint16_t)(4 * i + 4);
	out->saved[out->nsaved].cfa_off = (int32_t)cfa_off;
	out->nsaved++;
	return true;
}

/* Where the prologue stores x19-x29: walk its stores to [sp, ...] (X registers, and D
 * registers, which move SP in their pre-index form but are not tracked) and its SP moves,
 * the SP's distance below the CFA tracked in *cur, up to the first other instruction.
 * Returns that instruction's index (n when the window ended first), or -1 when the table of
 * saves filled up. */
static int saved_registers(const uint32_t *w, unsigned i, unsigned n, struct jitmap__shape *out,
			   int64_t *cur)
{
	int64_t v; /* *cur: SP - CFA */
	bool ok = true;
	for (; i < n; i++) {
		const uint32_t x = w[i];
		const unsigned rt = x & 31, rn = (x >> 5) & 31, rt2 = (x >> 10) & 31;
		if (pad(x) || (sp_arith(x, 29, &v) && v >= 0))
			continue;
		if (sp_arith(x, 31, &v) && v < 0) {
			*cur += v;
		} else if ((x & 0xffc00000u) == 0xa9800000u && rn == 31) { /* stp, pre-index */
			*cur += field(x, 15, 7) * 8;
			ok = note_saved(out, rt, i, *cur) && note_saved(out, rt2, i, *cur + 8);
		} else if ((x & 0xffc00000u) == 0xa9000000u && rn == 31) { /* stp, offset */
			const int64_t off = field(x, 15, 7) * 8;
			ok = note_saved(out, rt, i, *cur + off) &&
			     note_saved(out, rt2, i, *cur + off + 8);
		} else if ((x & 0xffc00000u) == 0xf9000000u && rn == 31) { /* str, unsigned offset */
			ok = note_saved(out, rt, i, *cur + (int64_t)((x >> 10) & 0xfff) * 8);
		} else if ((x & 0xffe00c00u) == 0xf8000c00u && rn == 31) { /* str, pre-index */
			*cur += field(x, 12, 9);
			ok = note_saved(out, rt, i, *cur);
		} else if ((x & 0xffc00000u) == 0x6d800000u && rn == 31) { /* stp Dt, pre-index */
			*cur += field(x, 15, 7) * 8;
		} else if ((x & 0xffc00000u) == 0x6d000000u && rn == 31) { /* stp Dt, offset */
		} else if ((x & 0xffc00000u) == 0xfd000000u && rn == 31) { /* str Dt, offset */
		} else {
			return (int)i;
		}
		if (!ok)
			return -1;
	}
	return (int)n;
}

/* Whether the words [i, n) store, copy or write one of x19-x29 that `out` does not hold as
 * saved: then the prologue was not all of the saves (or the code does not keep the ABI).
 * Conservative: any instruction whose Rd/Rt field (bits 0-4) names one, outside the
 * branch, system and SIMD&FP classes (there it is not an X register, or is only read),
 * the second register of a load/store pair, and a mov (orr Xd, xzr, Xm) from one. */
static bool touches_unsaved(const uint32_t *w, unsigned i, unsigned n,
			    const struct jitmap__shape *out)
{
	for (; i < n; i++) {
		const uint32_t x = w[i];
		const unsigned op0 = (x >> 25) & 15, rd = x & 31, rt2 = (x >> 10) & 31,
			       rm = (x >> 16) & 31;
		bool hit[32] = {false};
		/* branches and system, SIMD&FP data processing, SVE, unallocated */
		if ((op0 & 14) == 10 || (op0 & 7) == 7 || op0 < 4)
			continue;
		if ((op0 & 5) == 4) { /* loads and stores */
			if (x & (1u << 26))
				continue; /* SIMD&FP registers */
			hit[rd] = true;
			if ((x & 0x3a000000u) == 0x28000000u) /* pair */
				hit[rt2] = true;
		} else {
			hit[rd] = true;
			if ((x & 0xffe0ffe0u) == 0xaa0003e0u) /* mov Xd, Xm */
				hit[rm] = true;
		}
		for (unsigned r = 19; r <= 29; r++) {
			if (!hit[r])
				continue;
			bool saved = false;
			for (unsigned k = 0; k < out->nsaved; k++)
				saved |= out->saved[k].reg == r;
			if (!saved)
				return true;
		}
	}
	return false;
}

/* The prologues LLVM and GCC write, and a hand-written JIT's:
 *   A  stp x29, x30, [sp, #-N]!; mov x29, sp           CFA = x29 + N
 *   B  sub sp, sp, #X; stp x29, x30, [sp, #Y]; add x29, sp, #Y      CFA = x29 + X - Y
 *   C  str x30, [sp, #-N]!                              (no frame record) RA at CFA - N
 * each after an optional landing pad, with one store to [sp, #imm] that moves neither SP nor
 * x29/x30 allowed between A's two instructions. Anything else is a frame the table does not
 * know (a leaf, or a body that saves later: `stores` says what ran before a PC). */
static void shape(const uint8_t *b, size_t len, struct jitmap__shape *out)
{
	uint32_t w[JITMAP__SHAPE_WINDOW / 4];
	unsigned n = JITMAP__SHAPE_WINDOW / 4, i = 0;
	for (unsigned k = 0; k < n; k++)
		w[k] = word(b + 4 * k);
	const unsigned code = len / 4 < n ? (unsigned)(len / 4) : n; /* whole words of code */
	*out = (struct jitmap__shape){.kind = JITMAP_PROLOGUE_NONE};
	while (i < n && pad(w[i]))
		i++;
	out->save_at = 4 * i;
	int64_t cur = 0;
	const int stop = saved_registers(w, i, code, out, &cur);
	if (stop >= 0 && (unsigned)stop < code && !touches_unsaved(w, (unsigned)stop, code, out)) {
		out->saves_complete = true;
		out->frame_size = (uint64_t)-cur;
	}
	int64_t off, sub, add;
	if (i < n && stp_fp_lr(w[i], &off) == 1 && off < 0) { /* A */
		for (unsigned k = i + 1; k < n && k <= i + 2; k++) {
			/* one instruction between, a store that keeps SP and the pair */
			if (k == i + 2 && !plain_sp_store(w[i + 1]))
				break;
			if (sp_arith(w[k], 29, &add) && add == 0) {
				out->kind = JITMAP_PROLOGUE_FP;
				out->after_save = 4 * (i + 1);
				out->fp_set_at = 4 * (k + 1);
				out->cfa_from_fp = -off;
				out->cfa_after_save = -off;
				return;
			}
		}
		return;
	}
	if (i + 2 < n && sp_arith(w[i], 31, &sub) && sub < 0 && stp_fp_lr(w[i + 1], &off) == 2 &&
	    off >= 0 && sp_arith(w[i + 2], 29, &add) && add == off && off < -sub) { /* B */
		out->kind = JITMAP_PROLOGUE_FP;
		out->fp_set_at = 4 * (i + 3);
		out->cfa_from_fp = -sub - off;
		/* no single "after the save" state: SP moved first */
		out->after_save = out->fp_set_at;
		out->cfa_after_save = 0;
		return;
	}
	if (i < n && (w[i] & 0xffe00fffu) == 0xf8000ffeu && field(w[i], 12, 9) < 0) { /* C */
		out->ra_known = true;
		out->ra_from_cfa = field(w[i], 12, 9);
	}
}

static bool kept(unsigned r)
{
	return r >= 19 && r <= 28;
}

/* What the words of `b` store or copy: x19-x28 and x30 by str/stp (any addressing) or by
 * mov (orr Xd, xzr, Xm), d8-d15 by any SIMD&FP store (conservatively). */
static void stores(const uint8_t *b, size_t n, bool *callee_saved, bool *ra)
{
	*callee_saved = *ra = false;
	for (size_t k = 0; k + 4 <= n; k += 4) {
		const uint32_t x = word(b + k);
		const bool stp64 = (x & 0xfc400000u) == 0xa8000000u; /* store pair, 64-bit */
		const bool str64 = (x & 0xffc00000u) == 0xf9000000u || /* str (unsigned offset) */
				   (x & 0xffe00400u) == 0xf8000400u;   /* str (pre/post-index) */
		const bool vstp = (x & 0x3e400000u) == 0x2c000000u;   /* SIMD&FP store pair */
		const bool vstr = (x & 0x3f400000u) == 0x3d000000u ||  /* SIMD&FP str */
				  (x & 0x3f600400u) == 0x3c000400u;
		const bool mov = (x & 0xffe0ffe0u) == 0xaa0003e0u;   /* mov Xd, Xm */
		const unsigned rt = x & 31, rt2 = (x >> 10) & 31, rm = (x >> 16) & 31;
		if ((stp64 && (kept(rt) || kept(rt2))) || (str64 && kept(rt)) || (mov && kept(rm)) ||
		    vstp || vstr)
			*callee_saved = true;
		if ((stp64 && (rt == 30 || rt2 == 30)) || (str64 && rt == 30) || (mov && rm == 30))
			*ra = true;
	}
}

/* add/sub sp, sp, #imm. */
static bool moves_sp(const uint8_t *b, size_t n)
{
	int64_t imm;
	return n >= 4 && sp_arith(word(b), 31, &imm);
}

/* ret, retaa, retab. */
static bool is_return(const uint8_t *b, size_t n)
{
	if (n < 4)
		return false;
	const uint32_t x = word(b);
	return x == 0xd65f03c0u || x == 0xd65f0bffu || x == 0xd65f0fffu;
}

/* stp x29, x30, [sp, #-N]!, or mov x29, sp. */
static bool looks_like_prologue(const uint8_t *b, size_t n)
{
	int64_t off;
	if (n < 4)
		return false;
	const uint32_t x = word(b);
	return stp_fp_lr(x, &off) == 1 || x == 0x910003fdu;
}


const struct jitmap__arch jitmap__aarch64 = {
	.id = JITMAP_ARCH_AARCH64,
	.name = "aarch64",
	.aliases = (const char *const[]){"aarch64", "arm64", "aarch64_be", "arm64e", NULL},
	.elf_machine = 183, /* EM_AARCH64 */
	.pointer_size = 8,
	.default_order = JITMAP_ORDER_LITTLE,
	.sp = 31,
	.fp = 29,
	.ra = 30,
	.pc = 32,
	.num_core_regs = 33,
	.ra_in_register = true,
	/* paciasp/pacibsp sign x30 before the prologue saves it (and a leaf may keep it signed
	 * in x30): the signature takes the bits above the virtual address. Linux gives user space
	 * 48-bit addresses (52 only to mappings asked for above 2^48, which this mask would
	 * cut); GDB strips the same bits with the mask the kernel reports (pauth_dmask). */
	.code_address_mask = (UINT64_C(1) << 48) - 1,
	/* LLVM's AArch64 stack size is the whole frame, frame record and callee-saved area
	 * included (llc-14: sub sp, sp, #64 for stack size 64; stp x29, x30, [sp, #-32]! for 32):
	 * at a record the caller's SP is SP + stack size. */
	.stackmap_rule = true,
	.has_frame_record = true,
	.saved_fp_at = 0,
	.ra_at = 8,
	.cfa_at = 16,
	.call_window = 4,
	.insn_window = 4,
	.reg_name = reg_name,
	.callee_saved = callee_saved,
	.call_before = call_before,
	.shape = shape,
	.stores = stores,
	.prologue_text = "stp x29, x30, [sp, #-N]!; mov x29, sp",
	.fixed_cfa_at = false,
	.moves_sp = moves_sp,
	.is_return = is_return,
	.looks_like_prologue = looks_like_prologue,
};

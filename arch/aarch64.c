/* AArch64: AAPCS64, DWARF numbers per AADWARF64 (x0-x30 0-30, sp 31, pc 32; LLVM names no
 * register 32, so neither do we). The frame record
 * is the (x29, x30) pair that x29 points at. Instructions are little-endian words in either
 * data byte order. The unwinder's frame-size rule and prologue decoding are not here yet
 * (issue #11): where a hook is NULL the unwinder declines. */
#include "arch.h"

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
	.has_frame_record = true,
	.saved_fp_at = 0,
	.ra_at = 8,
	.cfa_at = 16,
	.call_window = 4,
	.reg_name = reg_name,
	.callee_saved = callee_saved,
	.call_before = call_before,
};

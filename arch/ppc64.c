/* 64-bit PowerPC: ELFv2 (and ELFv1) ABI, LLVM's DWARF numbering, which differs from GDB's
 * rs6000_dwarf2_reg_to_regnum for LR, CTR and the vector registers; stackmaps use LLVM's. */
#include "internal.h"

static const char *reg_name(unsigned r)
{
	const jitmap_arch a = JITMAP_ARCH_PPC64;
	if (r <= 31)
		return jitmap__numbered(a, r, "r", r);
	if (r <= 63)
		return jitmap__numbered(a, r, "f", r - 32);
	if (r == 65)
		return "lr";
	if (r == 66)
		return "ctr";
	if (r >= 68 && r <= 75)
		return jitmap__numbered(a, r, "cr", r - 68);
	if (r == 76)
		return "xer";
	if (r >= 77 && r <= 108)
		return jitmap__numbered(a, r, "vr", r - 77);
	if (r == 109)
		return "vrsave";
	return NULL;
}

static bool callee_saved(unsigned r)
{
	return r == 1 || r == 2 || (r >= 14 && r <= 31) || (r >= 46 && r <= 63) ||
	       (r >= 70 && r <= 72) || (r >= 97 && r <= 108);
}

const struct jitmap__arch jitmap__ppc64 = {
	.id = JITMAP_ARCH_PPC64,
	.name = "ppc64",
	.aliases = (const char *const[]){"ppc64", "ppc64le", "powerpc64", "powerpc64le",
					  "powerpc:common64", NULL},
	.elf_machine = 21, /* EM_PPC64 */
	.pointer_size = 8,
	.default_order = JITMAP_ORDER_LITTLE, /* ppc64le; ELFv1 callers pass their order */
	.sp = 1,
	.fp = 31,
	.ra = 65,
	.pc = -1,
	.num_core_regs = 66,
	.ra_in_register = true,
	.reg_name = reg_name,
	.callee_saved = callee_saved,
};

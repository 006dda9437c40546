/* s390x: the s390x ELF ABI (big-endian), LLVM's DWARF numbering: r0-r15 0-15, the FP registers
 * 16-31 interleaved (f0 f2 f4 f6 f1 f3 ...), control 32-47, access 48-63, vector 68-83. The
 * return address arrives in r14; the back chain is optional, so there is no frame record. */
#include "arch.h"

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
	if (r >= 68 && r <= 83)
		return jitmap__numbered(a, r, "v", 16 + fpr[r - 68]);
	return NULL;
}

/* r6-r15 and f8-f15 (DWARF 24-31). */
static bool callee_saved(unsigned r)
{
	return (r >= 6 && r <= 15) || (r >= 24 && r <= 31);
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
	.pc = -1,
	.num_core_regs = 16,
	.ra_in_register = true,
	.reg_name = reg_name,
	.callee_saved = callee_saved,
};

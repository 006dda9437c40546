/* RISC-V 64: LP64D ABI, DWARF x0-x31 0-31, f0-f31 32-63, v0-v31 96-127. The return address
 * arrives in ra (x1); with a frame pointer, fp (s0) is the CFA, ra at fp - 8 and the caller's
 * fp at fp - 16. */
#include "internal.h"

static const char *const x[32] = {
	"zero", "ra", "sp", "gp", "tp",  "t0",  "t1", "t2", "fp", "s1", "a0",
	"a1",   "a2", "a3", "a4", "a5",  "a6",  "a7", "s2", "s3", "s4", "s5",
	"s6",   "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
};
static const char *const f[32] = {
	"ft0", "ft1", "ft2",  "ft3",  "ft4", "ft5", "ft6",  "ft7",  "fs0",  "fs1", "fa0",
	"fa1", "fa2", "fa3",  "fa4",  "fa5", "fa6", "fa7",  "fs2",  "fs3",  "fs4", "fs5",
	"fs6", "fs7", "fs8",  "fs9",  "fs10", "fs11", "ft8", "ft9", "ft10", "ft11",
};

static const char *reg_name(unsigned r)
{
	if (r <= 31)
		return x[r];
	if (r <= 63)
		return f[r - 32];
	if (r >= 96 && r <= 127)
		return jitmap__numbered(JITMAP_ARCH_RISCV64, r, "v", r - 96);
	return NULL;
}

/* sp, s0-s11, fs0-fs11. */
static bool callee_saved(unsigned r)
{
	return r == 2 || r == 8 || r == 9 || (r >= 18 && r <= 27) || r == 40 || r == 41 ||
	       (r >= 50 && r <= 59);
}

const struct jitmap__arch jitmap__riscv64 = {
	.id = JITMAP_ARCH_RISCV64,
	.name = "riscv64",
	.aliases = (const char *const[]){"riscv64", "riscv:rv64", NULL},
	.elf_machine = 243, /* EM_RISCV */
	.pointer_size = 8,
	.default_order = JITMAP_ORDER_LITTLE,
	.sp = 2,
	.fp = 8,
	.ra = 1,
	.pc = -1,
	.num_core_regs = 32,
	.ra_in_register = true,
	.has_frame_record = true,
	.saved_fp_at = -16,
	.ra_at = -8,
	.cfa_at = 0,
	.reg_name = reg_name,
	.callee_saved = callee_saved,
};

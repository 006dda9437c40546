/* regs.c: DWARF register numbers per architecture, as LLVM numbers them and GDB names them.
 *
 * Tables from shared/reference/stackmap-format.md §4 (checked against LLVM 19's MC tables).
 * PowerPC: GDB's rs6000_dwarf2_reg_to_regnum numbers LR, CTR and the vector registers
 * differently from LLVM; stackmaps use LLVM's numbers, so these tables follow LLVM.
 */
#include <stdio.h>

#include "internal.h"

/* -- Names -- */

static const char *const x86_64_gpr[17] = {
	"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8",
	"r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip",
};
static const char *const x86_64_seg[6] = {"es", "cs", "ss", "ds", "fs", "gs"};
static const char *const riscv_x[32] = {
	"zero", "ra", "sp", "gp", "tp",  "t0",  "t1", "t2", "fp", "s1", "a0",
	"a1",   "a2", "a3", "a4", "a5",  "a6",  "a7", "s2", "s3", "s4", "s5",
	"s6",   "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
};
static const char *const riscv_f[32] = {
	"ft0", "ft1", "ft2",  "ft3",  "ft4", "ft5", "ft6",  "ft7",  "fs0",  "fs1", "fa0",
	"fa1", "fa2", "fa3",  "fa4",  "fa5", "fa6", "fa7",  "fs2",  "fs3",  "fs4", "fs5",
	"fs6", "fs7", "fs8",  "fs9",  "fs10", "fs11", "ft8", "ft9", "ft10", "ft11",
};
/* s390x DWARF 16-31 and 68-83 interleave the even and odd FP/vector registers. */
static const unsigned char s390x_fpr[16] = {0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15};

/* Names built from a prefix and a number live in one static buffer per (arch, regno): the
 * tables are small, so build them all once. */
#define MAX_REGNO 160
static char numbered[6][MAX_REGNO][8];

static const char *num(jitmap_arch arch, unsigned regno, const char *prefix, unsigned n)
{
	char *s = numbered[arch][regno];
	if (!s[0])
		snprintf(s, sizeof(numbered[0][0]), "%s%u", prefix, n);
	return s;
}

const char *jitmap_reg_name(jitmap_arch arch, unsigned r)
{
	if (r >= MAX_REGNO)
		return NULL;
	switch (arch) {
	case JITMAP_ARCH_X86_64:
		if (r <= 16)
			return x86_64_gpr[r];
		if (r <= 32)
			return num(arch, r, "xmm", r - 17);
		if (r <= 40)
			return num(arch, r, "st", r - 33);
		if (r <= 48)
			return num(arch, r, "mm", r - 41);
		if (r == 49)
			return "eflags";
		if (r <= 55)
			return x86_64_seg[r - 50];
		if (r == 58)
			return "fs_base";
		if (r == 59)
			return "gs_base";
		if (r >= 67 && r <= 82)
			return num(arch, r, "xmm", r - 67 + 16);
		if (r >= 118 && r <= 125)
			return num(arch, r, "k", r - 118);
		if (r >= 130 && r <= 145)
			return num(arch, r, "r", r - 130 + 16);
		return NULL;
	case JITMAP_ARCH_AARCH64:
		if (r <= 30)
			return num(arch, r, "x", r);
		if (r == 31)
			return "sp";
		if (r == 46)
			return "vg";
		if (r == 47)
			return "ffr";
		if (r >= 48 && r <= 63)
			return num(arch, r, "p", r - 48);
		if (r >= 64 && r <= 95)
			return num(arch, r, "v", r - 64);
		if (r >= 96 && r <= 127)
			return num(arch, r, "z", r - 96);
		return NULL;
	case JITMAP_ARCH_PPC64:
		if (r <= 31)
			return num(arch, r, "r", r);
		if (r <= 63)
			return num(arch, r, "f", r - 32);
		if (r == 65)
			return "lr";
		if (r == 66)
			return "ctr";
		if (r >= 68 && r <= 75)
			return num(arch, r, "cr", r - 68);
		if (r == 76)
			return "xer";
		if (r >= 77 && r <= 108)
			return num(arch, r, "vr", r - 77);
		if (r == 109)
			return "vrsave";
		return NULL;
	case JITMAP_ARCH_S390X:
		if (r <= 15)
			return num(arch, r, "r", r);
		if (r <= 31)
			return num(arch, r, "f", s390x_fpr[r - 16]);
		if (r <= 47)
			return num(arch, r, "c", r - 32);
		if (r <= 63)
			return num(arch, r, "a", r - 48);
		if (r >= 68 && r <= 83)
			return num(arch, r, "v", 16 + s390x_fpr[r - 68]);
		return NULL;
	case JITMAP_ARCH_RISCV64:
		if (r <= 31)
			return riscv_x[r];
		if (r <= 63)
			return riscv_f[r - 32];
		if (r >= 96 && r <= 127)
			return num(arch, r, "v", r - 96);
		return NULL;
	default:
		return NULL;
	}
}

/* -- ABI facts -- */

int jitmap_reg_sp(jitmap_arch arch)
{
	switch (arch) {
	case JITMAP_ARCH_X86_64: return 7;
	case JITMAP_ARCH_AARCH64: return 31;
	case JITMAP_ARCH_PPC64: return 1;
	case JITMAP_ARCH_S390X: return 15;
	case JITMAP_ARCH_RISCV64: return 2;
	default: return -1;
	}
}

int jitmap_reg_fp(jitmap_arch arch)
{
	switch (arch) {
	case JITMAP_ARCH_X86_64: return 6;
	case JITMAP_ARCH_AARCH64: return 29;
	case JITMAP_ARCH_PPC64: return 31;
	case JITMAP_ARCH_S390X: return 11;
	case JITMAP_ARCH_RISCV64: return 8;
	default: return -1;
	}
}

/* Callee-saved per the standard ELF ABIs (SysV x86-64, AAPCS64, ELFv2, s390x ELF, RISC-V
 * LP64D). The stack pointer counts: an unwinder always recovers it. Vector registers whose
 * low half only is preserved (AArch64 v8-v15) are not callee-saved as a whole. */
bool jitmap_reg_is_callee_saved(jitmap_arch arch, unsigned r)
{
	switch (arch) {
	case JITMAP_ARCH_X86_64:
		return r == 3 || r == 6 || r == 7 || (r >= 12 && r <= 15);
	case JITMAP_ARCH_AARCH64:
		return (r >= 19 && r <= 29) || r == 31;
	case JITMAP_ARCH_PPC64:
		return r == 1 || r == 2 || (r >= 14 && r <= 31) || (r >= 46 && r <= 63) ||
		       (r >= 70 && r <= 72) || (r >= 97 && r <= 108);
	case JITMAP_ARCH_S390X:
		return (r >= 6 && r <= 15) || (r >= 24 && r <= 31);
	case JITMAP_ARCH_RISCV64:
		return r == 2 || r == 8 || r == 9 || (r >= 18 && r <= 27) || r == 40 || r == 41 ||
		       (r >= 50 && r <= 59);
	default:
		return false;
	}
}

/* -- Architectures -- */

const char *jitmap_arch_name(jitmap_arch arch)
{
	switch (arch) {
	case JITMAP_ARCH_X86_64: return "x86-64";
	case JITMAP_ARCH_AARCH64: return "aarch64";
	case JITMAP_ARCH_PPC64: return "ppc64";
	case JITMAP_ARCH_S390X: return "s390x";
	case JITMAP_ARCH_RISCV64: return "riscv64";
	default: return "unknown";
	}
}

jitmap_arch jitmap_arch_from_elf_machine(unsigned m)
{
	switch (m) {
	case 62: return JITMAP_ARCH_X86_64;   /* EM_X86_64 */
	case 183: return JITMAP_ARCH_AARCH64; /* EM_AARCH64 */
	case 21: return JITMAP_ARCH_PPC64;    /* EM_PPC64 */
	case 22: return JITMAP_ARCH_S390X;    /* EM_S390 */
	case 243: return JITMAP_ARCH_RISCV64; /* EM_RISCV */
	default: return JITMAP_ARCH_UNKNOWN;
	}
}

/* Fill every numbered name once at load time, so that later calls only read the table and
 * jitmap_reg_name is safe to call from several threads. */
__attribute__((constructor)) static void fill_numbered_names(void)
{
	for (int arch = JITMAP_ARCH_X86_64; arch <= JITMAP_ARCH_RISCV64; arch++)
		for (unsigned r = 0; r < MAX_REGNO; r++)
			(void)jitmap_reg_name((jitmap_arch)arch, r);
}

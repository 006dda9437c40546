/* linux_regs.c: a thread's registers as Linux lays them out (NT_PRSTATUS's pr_reg, which a
 * core holds for each thread and PTRACE_GETREGSET reads as NT_PRSTATUS), as the unwinder's
 * DWARF-numbered registers. Where each register sits is a fact about Linux's ABI for an
 * architecture, not about the architecture: it is kept here, beside the unwinder that uses
 * the registers, and the architecture tables say only what the registers are. */
#include "internal.h"

/* A register in pr_reg: its DWARF number, its offset and size in bytes. */
struct greg {
	uint16_t regno, offset;
	uint8_t size;
};

/* user_regs_struct: r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs
 * eflags rsp ss fs_base gs_base ds es fs gs (<sys/user.h>). */
static const struct greg x86_64[] = {
	{15, 0, 8},  {14, 8, 8},   {13, 16, 8},  {12, 24, 8},  {6, 32, 8},   {3, 40, 8},
	{11, 48, 8}, {10, 56, 8},  {9, 64, 8},   {8, 72, 8},   {0, 80, 8},   {2, 88, 8},
	{1, 96, 8},  {4, 104, 8},  {5, 112, 8},  /* orig_rax at 120 */ {16, 128, 8},
	{51, 136, 8}, {49, 144, 8}, {7, 152, 8}, {52, 160, 8}, {58, 168, 8}, {59, 176, 8},
	{53, 184, 8}, {50, 192, 8}, {54, 200, 8}, {55, 208, 8},
};

/* user_pt_regs: regs[31] (x0-x30), sp, pc, then pstate (no DWARF number)
 * (<asm/ptrace.h>). */
#define W(n) {n, 8 * (n), 8}
static const struct greg aarch64[] = {
	W(0),  W(1),  W(2),  W(3),  W(4),  W(5),  W(6),  W(7),  W(8),  W(9),  W(10),
	W(11), W(12), W(13), W(14), W(15), W(16), W(17), W(18), W(19), W(20), W(21),
	W(22), W(23), W(24), W(25), W(26), W(27), W(28), W(29), W(30), W(31), W(32),
};
#undef W

/* s390_regs: psw mask, psw addr, gprs[16], acrs[16] (4 bytes each), orig_gpr2
 * (<asm/ptrace.h>). */
static const struct greg s390x[] = {
	{64, 0, 8},   {65, 8, 8},   {0, 16, 8},   {1, 24, 8},   {2, 32, 8},   {3, 40, 8},
	{4, 48, 8},   {5, 56, 8},   {6, 64, 8},   {7, 72, 8},   {8, 80, 8},   {9, 88, 8},
	{10, 96, 8},  {11, 104, 8}, {12, 112, 8}, {13, 120, 8}, {14, 128, 8}, {15, 136, 8},
	{48, 144, 4}, {49, 148, 4}, {50, 152, 4}, {51, 156, 4}, {52, 160, 4}, {53, 164, 4},
	{54, 168, 4}, {55, 172, 4}, {56, 176, 4}, {57, 180, 4}, {58, 184, 4}, {59, 188, 4},
	{60, 192, 4}, {61, 196, 4}, {62, 200, 4}, {63, 204, 4},
};

static const struct greg *layout(jitmap_arch arch, size_t *n)
{
#define L(t) (*n = sizeof(t) / sizeof(t[0]), t)
	switch (arch) {
	case JITMAP_ARCH_X86_64: return L(x86_64);
	case JITMAP_ARCH_AARCH64: return L(aarch64);
	case JITMAP_ARCH_S390X: return L(s390x);
	default: *n = 0; return NULL; /* ppc64, RISC-V: no layout known here */
	}
#undef L
}

size_t jitmap__linux_gregs(jitmap_arch arch, jitmap_byte_order order, const uint8_t *p,
			   size_t len, uint16_t *regno, uint64_t *value, size_t max)
{
	size_t count;
	const struct greg *g = layout(arch, &count);
	size_t n = 0;
	for (size_t i = 0; i < count; i++) {
		if ((size_t)g[i].offset + g[i].size > len)
			continue;
		if (n < max) {
			regno[n] = g[i].regno;
			value[n] = jitmap__load(p + g[i].offset, g[i].size, order);
		}
		n++;
	}
	return n;
}

int jitmap_frame_regs_from_linux(jitmap_arch arch, jitmap_byte_order order, const void *gregs,
				 size_t len, jitmap_frame_regs *out)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	size_t count;
	if (!out || !gregs)
		return -EINVAL;
	if (!a || !layout(arch, &count) || a->pc < 0)
		return -ENOTSUP;
	uint16_t regno[JITMAP_UNWIND_MAX_REGS];
	uint64_t value[JITMAP_UNWIND_MAX_REGS];
	const size_t n = jitmap__linux_gregs(arch, order, gregs, len, regno, value,
					     JITMAP_UNWIND_MAX_REGS);
	memset(out, 0, sizeof(*out));
	bool pc = false;
	for (size_t i = 0; i < n && i < JITMAP_UNWIND_MAX_REGS; i++) {
		if (regno[i] == (unsigned)a->pc) {
			out->pc = value[i];
			pc = true;
		} else if (regno[i] < a->num_core_regs) {
			jitmap_frame_reg_set(out, regno[i], value[i]);
		}
	}
	return pc ? 0 : -EINVAL;
}

/* x86-64: System V ABI, LLVM's DWARF numbering (shared/reference/stackmap-format.md §4). The
 * instruction decoders recognise what LLVM and common JITs emit, no more: a pattern not
 * recognised makes the asking method decline. */
#include <string.h>

#include "arch.h"

static const char *const gpr[17] = {
	"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8",
	"r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip",
};
static const char *const seg[6] = {"es", "cs", "ss", "ds", "fs", "gs"};

static const char *reg_name(unsigned r)
{
	const jitmap_arch a = JITMAP_ARCH_X86_64;
	if (r <= 16)
		return gpr[r];
	if (r <= 32)
		return jitmap__numbered(a, r, "xmm", r - 17);
	if (r <= 40)
		return jitmap__numbered(a, r, "st", r - 33);
	if (r <= 48)
		return jitmap__numbered(a, r, "mm", r - 41);
	if (r == 49)
		return "eflags";
	if (r <= 55)
		return seg[r - 50];
	if (r == 58)
		return "fs_base";
	if (r == 59)
		return "gs_base";
	if (r >= 67 && r <= 82)
		return jitmap__numbered(a, r, "xmm", r - 67 + 16);
	if (r >= 118 && r <= 125)
		return jitmap__numbered(a, r, "k", r - 118);
	if (r >= 130 && r <= 145)
		return jitmap__numbered(a, r, "r", r - 130 + 16);
	return NULL;
}

/* rbx, rbp, rsp, r12-r15 (an unwinder always recovers rsp). */
static bool callee_saved(unsigned r)
{
	return r == 3 || r == 6 || r == 7 || (r >= 12 && r <= 15);
}

/* call rel32 (E8) and call r/m64 (FF /2) in its register and memory forms, with or without a
 * REX prefix. b[n - k] is the byte k before the return address. */
static bool call_before(const uint8_t *b, size_t n)
{
	if (n >= 5 && b[n - 5] == 0xe8)
		return true;
	for (size_t len = 2; len <= n && len <= 7; len++) {
		const uint8_t *p = b + n - len;
		size_t i = 0;
		if ((p[0] & 0xf0) == 0x40) /* REX */
			i = 1;
		if (len - i < 2 || p[i] != 0xff || ((p[i + 1] >> 3) & 7) != 2)
			continue;
		const unsigned mod = p[i + 1] >> 6, rm = p[i + 1] & 7;
		size_t want = i + 2;
		if (mod != 3 && rm == 4)
			want++; /* SIB */
		if (mod == 1)
			want += 1;
		else if (mod == 2 || (mod == 0 && rm == 5))
			want += 4;
		if (want == len)
			return true;
	}
	return false;
}

/* [endbr64] push %rbp; mov %rsp,%rbp (either encoding of the mov). The call pushed the
 * return address: it is at CFA - 8 in every frame. */
static void shape(const uint8_t *b, struct jitmap__shape *out)
{
	unsigned i = 0;
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		i = 4;
	*out = (struct jitmap__shape){.kind = JITMAP_PROLOGUE_NONE, .save_at = i,
				      .ra_known = true, .ra_from_cfa = -8};
	if (b[i] == 0x55 && b[i + 1] == 0x48 &&
	    ((b[i + 2] == 0x89 && b[i + 3] == 0xe5) || (b[i + 2] == 0x8b && b[i + 3] == 0xec))) {
		out->kind = JITMAP_PROLOGUE_FP;
		out->after_save = i + 1; /* push %rbp */
		out->fp_set_at = i + 4;
		out->cfa_from_fp = 16;
		out->cfa_after_save = 16;
	}
}

/* add/sub $imm,%rsp; lea disp(%rsp),%rsp; pop (LLVM's 8-byte adjustment at minsize). */
static bool moves_sp(const uint8_t *b, size_t n)
{
	if (n < 4)
		return false;
	if (b[0] == 0x48 && (b[1] == 0x83 || b[1] == 0x81) && (b[2] == 0xc4 || b[2] == 0xec))
		return true;
	if (b[0] == 0x48 && b[1] == 0x8d && (b[2] == 0x64 || b[2] == 0xa4) && b[3] == 0x24)
		return true;
	return (b[0] >= 0x58 && b[0] <= 0x5f) || (b[0] == 0x41 && b[1] >= 0x58 && b[1] <= 0x5f);
}

/* ret, rep ret. */
static bool is_return(const uint8_t *b, size_t n)
{
	return (n >= 1 && b[0] == 0xc3) || (n >= 2 && b[0] == 0xf3 && b[1] == 0xc3);
}

/* push %rbp, or mov %rsp,%rbp. */
static bool looks_like_prologue(const uint8_t *b, size_t n)
{
	if (n < 3)
		return false;
	return b[0] == 0x55 || (b[0] == 0x48 && b[1] == 0x89 && b[2] == 0xe5);
}

/* user_regs_struct: r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs
 * eflags rsp ss fs_base gs_base ds es fs gs (<sys/user.h>). */
static const struct jitmap__greg gregs[] = {
	{15, 0, 8},  {14, 8, 8},   {13, 16, 8},  {12, 24, 8},  {6, 32, 8},   {3, 40, 8},
	{11, 48, 8}, {10, 56, 8},  {9, 64, 8},   {8, 72, 8},   {0, 80, 8},   {2, 88, 8},
	{1, 96, 8},  {4, 104, 8},  {5, 112, 8},  /* orig_rax at 120 */ {16, 128, 8},
	{51, 136, 8}, {49, 144, 8}, {7, 152, 8}, {52, 160, 8}, {58, 168, 8}, {59, 176, 8},
	{53, 184, 8}, {50, 192, 8}, {54, 200, 8}, {55, 208, 8},
};

const struct jitmap__arch jitmap__x86_64 = {
	.id = JITMAP_ARCH_X86_64,
	.name = "x86-64",
	.aliases = (const char *const[]){"x86_64", "amd64", "i386:x86-64", "x86-64", NULL},
	.elf_machine = 62, /* EM_X86_64 */
	.pointer_size = 8,
	.default_order = JITMAP_ORDER_LITTLE,
	.sp = 7,
	.fp = 6,
	.ra = 16,
	.pc = 16,
	.num_core_regs = 17,
	.gregs = gregs,
	.num_gregs = sizeof(gregs) / sizeof(gregs[0]),
	.ra_in_register = false,
	/* LLVM's x86-64 MachineFrameInfo stack size covers the callee-saved pushes and the rbp
	 * push but not the return address the call pushed (measured: docs/unwinding.md). */
	.ra_slot = 8,
	.stackmap_rule = true,
	.has_frame_record = true,
	.saved_fp_at = 0,
	.ra_at = 8,
	.cfa_at = 16,
	.call_window = 7,
	.insn_window = 8,
	.reg_name = reg_name,
	.callee_saved = callee_saved,
	.call_before = call_before,
	.shape = shape,
	.prologue_text = "push %rbp; mov %rsp,%rbp",
	.fixed_cfa_at = true,
	.moves_sp = moves_sp,
	.is_return = is_return,
	.looks_like_prologue = looks_like_prologue,
};

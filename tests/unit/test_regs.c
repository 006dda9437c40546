/* test_regs.c: DWARF register names per architecture (stackmap-format.md §4: the first and
 * last number of every range, and the gaps around them), callee-saved sets, SP/FP numbers and
 * ELF machine numbers. */
#include "unit.h"

#include <sys/user.h>

#include "jitmap/unwind.h"

#define X86 JITMAP_ARCH_X86_64
#define A64 JITMAP_ARCH_AARCH64
#define PPC JITMAP_ARCH_PPC64
#define S390 JITMAP_ARCH_S390X
#define RV JITMAP_ARCH_RISCV64

static const struct {
	jitmap_arch arch;
	unsigned regno;
	const char *name; /* NULL: not a register there */
} names[] = {
	/* x86-64 */
	{X86, 0, "rax"}, {X86, 1, "rdx"}, {X86, 2, "rcx"}, {X86, 3, "rbx"}, {X86, 4, "rsi"},
	{X86, 5, "rdi"}, {X86, 6, "rbp"}, {X86, 7, "rsp"}, {X86, 8, "r8"}, {X86, 15, "r15"},
	{X86, 16, "rip"}, {X86, 17, "xmm0"}, {X86, 32, "xmm15"}, {X86, 33, "st0"},
	{X86, 40, "st7"}, {X86, 41, "mm0"}, {X86, 48, "mm7"}, {X86, 49, "eflags"},
	{X86, 50, "es"}, {X86, 51, "cs"}, {X86, 52, "ss"}, {X86, 53, "ds"}, {X86, 54, "fs"},
	{X86, 55, "gs"}, {X86, 56, NULL}, {X86, 57, NULL}, {X86, 58, "fs_base"},
	{X86, 59, "gs_base"}, {X86, 60, NULL}, {X86, 66, NULL}, {X86, 67, "xmm16"},
	{X86, 82, "xmm31"}, {X86, 83, NULL}, {X86, 117, NULL}, {X86, 118, "k0"},
	{X86, 125, "k7"}, {X86, 126, NULL}, {X86, 129, NULL}, {X86, 130, "r16"},
	{X86, 145, "r31"}, {X86, 146, NULL},
	/* AArch64 */
	{A64, 0, "x0"}, {A64, 29, "x29"}, {A64, 30, "x30"}, {A64, 31, "sp"}, {A64, 32, NULL},
	{A64, 45, NULL}, {A64, 46, "vg"}, {A64, 47, "ffr"}, {A64, 48, "p0"}, {A64, 63, "p15"},
	{A64, 64, "v0"}, {A64, 95, "v31"}, {A64, 96, "z0"}, {A64, 127, "z31"}, {A64, 128, NULL},
	/* PowerPC64 (LLVM's numbers, not GDB's) */
	{PPC, 0, "r0"}, {PPC, 1, "r1"}, {PPC, 31, "r31"}, {PPC, 32, "f0"}, {PPC, 63, "f31"},
	{PPC, 64, NULL}, {PPC, 65, "lr"}, {PPC, 66, "ctr"}, {PPC, 67, NULL}, {PPC, 68, "cr0"},
	{PPC, 75, "cr7"}, {PPC, 76, "xer"}, {PPC, 77, "vr0"}, {PPC, 108, "vr31"},
	{PPC, 109, "vrsave"}, {PPC, 110, NULL},
	/* s390x: DWARF 16-31 and 68-83 interleave even and odd registers */
	{S390, 0, "r0"}, {S390, 15, "r15"}, {S390, 16, "f0"}, {S390, 17, "f2"}, {S390, 19, "f6"},
	{S390, 20, "f1"}, {S390, 23, "f7"}, {S390, 24, "f8"}, {S390, 27, "f14"},
	{S390, 28, "f9"}, {S390, 31, "f15"}, {S390, 32, "c0"}, {S390, 47, "c15"},
	{S390, 48, "a0"}, {S390, 63, "a15"}, {S390, 64, "pswm"}, {S390, 65, "pswa"},
	{S390, 66, NULL}, {S390, 67, NULL},
	{S390, 68, "v16"}, {S390, 69, "v18"}, {S390, 71, "v22"}, {S390, 72, "v17"},
	{S390, 75, "v23"}, {S390, 76, "v24"}, {S390, 79, "v30"}, {S390, 80, "v25"},
	{S390, 83, "v31"}, {S390, 84, NULL},
	/* riscv64 */
	{RV, 0, "zero"}, {RV, 1, "ra"}, {RV, 2, "sp"}, {RV, 3, "gp"}, {RV, 4, "tp"},
	{RV, 5, "t0"}, {RV, 7, "t2"}, {RV, 8, "fp"}, {RV, 9, "s1"}, {RV, 10, "a0"},
	{RV, 17, "a7"}, {RV, 18, "s2"}, {RV, 27, "s11"}, {RV, 28, "t3"}, {RV, 31, "t6"},
	{RV, 32, "ft0"}, {RV, 39, "ft7"}, {RV, 40, "fs0"}, {RV, 41, "fs1"}, {RV, 42, "fa0"},
	{RV, 49, "fa7"}, {RV, 50, "fs2"}, {RV, 59, "fs11"}, {RV, 60, "ft8"}, {RV, 63, "ft11"},
	{RV, 64, NULL}, {RV, 95, NULL}, {RV, 96, "v0"}, {RV, 127, "v31"}, {RV, 128, NULL},
};

static void test_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		const char *got = jitmap_reg_name(names[i].arch, names[i].regno);
		const char *want = names[i].name;
		if (want ? !got || strcmp(got, want) : got != NULL)
			fail_msg("%s register %u: \"%s\", want \"%s\"", jitmap_arch_name(names[i].arch),
				 names[i].regno, got ? got : "(null)", want ? want : "(null)");
	}
}

/* Every name is short, static, and the same pointer on every call; beyond the tables and on
 * an unknown architecture there is none. */
static void test_names_everywhere(void **state)
{
	(void)state;
	for (int a = JITMAP_ARCH_X86_64; a <= JITMAP_ARCH_RISCV64; a++) {
		unsigned count = 0;
		for (unsigned r = 0; r < 1024; r++) {
			const char *n = jitmap_reg_name((jitmap_arch)a, r);
			if (!n)
				continue;
			count++;
			assert_true(n[0] != 0 && strlen(n) < 8);
			assert_ptr_equal(n, jitmap_reg_name((jitmap_arch)a, r));
			assert_true(r < 146);
		}
		assert_true(count >= 64);
		assert_null(jitmap_reg_name((jitmap_arch)a, UINT32_MAX));
	}
	for (unsigned r = 0; r < 200; r++) {
		assert_null(jitmap_reg_name(JITMAP_ARCH_UNKNOWN, r));
		assert_null(jitmap_reg_name((jitmap_arch)99, r));
	}
}

/* Callee-saved registers per ABI, written out here rather than derived. */
static const struct {
	jitmap_arch arch;
	const char *abi;
	unsigned regs[64];
	size_t n;
} saved[] = {
	{X86, "SysV: rbx rbp rsp r12-r15", {3, 6, 7, 12, 13, 14, 15}, 7},
	{A64, "AAPCS64: x19-x29, sp (not lr, not v8-v15 as a whole)",
	 {19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 31}, 12},
	{PPC, "ELFv2: r1 r2 r14-r31 f14-f31 cr2-cr4 vr20-vr31",
	 {1, 2, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
	  46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
	  70, 71, 72, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108}, 53},
	{S390, "s390x: r6-r15, f8-f15 (DWARF 24-31)",
	 {6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31}, 18},
	{RV, "LP64D: sp s0-s11 fs0-fs11",
	 {2, 8, 9, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 40, 41, 50, 51, 52, 53, 54, 55, 56,
	  57, 58, 59}, 25},
};

static void test_callee_saved(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(saved); i++) {
		for (unsigned r = 0; r < 256; r++) {
			bool want = false;
			for (size_t k = 0; k < saved[i].n; k++)
				want |= saved[i].regs[k] == r;
			if (jitmap_reg_is_callee_saved(saved[i].arch, r) != want)
				fail_msg("%s register %u (%s): callee-saved should be %d", saved[i].abi, r,
					 jitmap_reg_name(saved[i].arch, r) ? jitmap_reg_name(saved[i].arch, r) : "?",
					 want);
		}
	}
	for (unsigned r = 0; r < 256; r++)
		assert_false(jitmap_reg_is_callee_saved(JITMAP_ARCH_UNKNOWN, r));
}

static void test_sp_fp(void **state)
{
	(void)state;
	static const struct {
		jitmap_arch arch;
		int sp, fp;
		const char *sp_name, *fp_name;
	} cases[] = {
		{X86, 7, 6, "rsp", "rbp"},   {A64, 31, 29, "sp", "x29"}, {PPC, 1, 31, "r1", "r31"},
		{S390, 15, 11, "r15", "r11"}, {RV, 2, 8, "sp", "fp"},
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		assert_int_equal(jitmap_reg_sp(cases[i].arch), cases[i].sp);
		assert_int_equal(jitmap_reg_fp(cases[i].arch), cases[i].fp);
		assert_string_equal(jitmap_reg_name(cases[i].arch, (unsigned)cases[i].sp), cases[i].sp_name);
		assert_string_equal(jitmap_reg_name(cases[i].arch, (unsigned)cases[i].fp), cases[i].fp_name);
		/* the unwinder can always recover the stack pointer */
		assert_true(jitmap_reg_is_callee_saved(cases[i].arch, (unsigned)cases[i].sp));
	}
	assert_int_equal(jitmap_reg_sp(JITMAP_ARCH_UNKNOWN), -1);
	assert_int_equal(jitmap_reg_fp(JITMAP_ARCH_UNKNOWN), -1);
}

static void test_arches(void **state)
{
	(void)state;
	static const struct {
		unsigned machine;
		jitmap_arch arch;
		const char *name;
	} cases[] = {
		{62, X86, "x86-64"},      /* EM_X86_64 */
		{183, A64, "aarch64"},    /* EM_AARCH64 */
		{21, PPC, "ppc64"},       /* EM_PPC64 */
		{22, S390, "s390x"},      /* EM_S390 */
		{243, RV, "riscv64"},     /* EM_RISCV */
		{0, JITMAP_ARCH_UNKNOWN, "unknown"},
		{3, JITMAP_ARCH_UNKNOWN, "unknown"},  /* EM_386 */
		{20, JITMAP_ARCH_UNKNOWN, "unknown"}, /* EM_PPC */
		{40, JITMAP_ARCH_UNKNOWN, "unknown"}, /* EM_ARM */
		{8, JITMAP_ARCH_UNKNOWN, "unknown"},  /* EM_MIPS */
		{258, JITMAP_ARCH_UNKNOWN, "unknown"}, /* EM_LOONGARCH */
		{0xffff, JITMAP_ARCH_UNKNOWN, "unknown"},
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		assert_int_equal(jitmap_arch_from_elf_machine(cases[i].machine), cases[i].arch);
		assert_string_equal(jitmap_arch_name(jitmap_arch_from_elf_machine(cases[i].machine)),
				    cases[i].name);
	}
	assert_string_equal(jitmap_arch_name((jitmap_arch)42), "unknown");
}

/* Names as GDB (`show architecture`, gdb.Architecture.name()) and LLDB (the target triple)
 * give them. */
static void test_arch_names(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		jitmap_arch arch;
	} cases[] = {
		{"x86-64", X86},
		{"i386:x86-64", X86},
		{"x86_64-pc-linux-gnu", X86},
		{"x86_64", X86},
		{"aarch64", A64},
		{"arm64-apple-macosx", A64},
		{"aarch64-unknown-linux-gnu", A64},
		{"s390:64-bit", S390},
		{"s390x-ibm-linux", S390},
		{"powerpc:common64", PPC},
		{"powerpc64le-unknown-linux-gnu", PPC},
		{"riscv:rv64", RV},
		{"riscv64-unknown-linux-gnu", RV},
		{"i386", JITMAP_ARCH_UNKNOWN},       /* 32-bit x86 */
		{"i386:x64-32", JITMAP_ARCH_UNKNOWN}, /* x32 */
		{"s390:31-bit", JITMAP_ARCH_UNKNOWN},
		{"riscv:rv32", JITMAP_ARCH_UNKNOWN},
		{"arm", JITMAP_ARCH_UNKNOWN},
		{"", JITMAP_ARCH_UNKNOWN},
		{"-", JITMAP_ARCH_UNKNOWN},
		{"x86", JITMAP_ARCH_UNKNOWN},
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++)
		assert_int_equal(jitmap_arch_from_name(cases[i].name), cases[i].arch);
	assert_int_equal(jitmap_arch_from_name(NULL), JITMAP_ARCH_UNKNOWN);
}

/* -- The architecture tables (jitmap/arch.h) -- */

static void test_roles(void **state)
{
	(void)state;
	assert_int_equal(jitmap_reg_ra(JITMAP_ARCH_X86_64), 16);
	assert_int_equal(jitmap_reg_pc(JITMAP_ARCH_X86_64), 16);
	assert_int_equal(jitmap_reg_ra(JITMAP_ARCH_AARCH64), 30);
	assert_int_equal(jitmap_reg_pc(JITMAP_ARCH_AARCH64), 32);
	assert_int_equal(jitmap_reg_ra(JITMAP_ARCH_S390X), 14);
	assert_int_equal(jitmap_reg_pc(JITMAP_ARCH_S390X), 65); /* GDB's PSW address */
	assert_string_equal(jitmap_reg_name(JITMAP_ARCH_S390X, 65), "pswa");
	assert_int_equal(jitmap_arch_num_core_regs(JITMAP_ARCH_S390X), 16);
	assert_int_equal(jitmap_reg_ra(JITMAP_ARCH_RISCV64), 1);
	assert_int_equal(jitmap_reg_ra(JITMAP_ARCH_UNKNOWN), -1);
	assert_int_equal(jitmap_reg_pc((jitmap_arch)99), -1);
	assert_int_equal(jitmap_arch_num_core_regs(JITMAP_ARCH_X86_64), 17);
	assert_int_equal(jitmap_arch_pointer_size(JITMAP_ARCH_S390X), 8);
	assert_int_equal(jitmap_arch_pointer_size(JITMAP_ARCH_UNKNOWN), 0);
	assert_false(jitmap_arch_ra_in_register(JITMAP_ARCH_X86_64));
	assert_true(jitmap_arch_ra_in_register(JITMAP_ARCH_AARCH64));
	assert_true(jitmap_arch_ra_in_register(JITMAP_ARCH_S390X));
	assert_int_equal(jitmap_arch_from_elf_machine(22), JITMAP_ARCH_S390X);
}

/* The stackmap frame-size rule and the frame record. */
static void test_frames(void **state)
{
	(void)state;
	uint64_t cfa = 0, ra = 0;
	assert_int_equal(jitmap_arch_stackmap_cfa(JITMAP_ARCH_X86_64, 0x7000, 40, &cfa, &ra), 0);
	assert_int_equal(cfa, 0x7000 + 40 + 8);
	assert_int_equal(ra, 0x7000 + 40);
	assert_int_equal(jitmap_arch_stackmap_cfa(JITMAP_ARCH_X86_64, UINT64_MAX - 8, 8, &cfa, &ra),
			 -EOVERFLOW);
	assert_int_equal(jitmap_arch_stackmap_cfa(JITMAP_ARCH_X86_64, 0, UINT64_MAX, &cfa, &ra),
			 -EOVERFLOW);
	/* The return address arrives in a link register: not in the stackmap's frame. */
	assert_int_equal(jitmap_arch_stackmap_cfa(JITMAP_ARCH_AARCH64, 0x7000, 32, &cfa, &ra),
			 -ENOTSUP);
	assert_int_equal(jitmap_arch_stackmap_cfa(JITMAP_ARCH_UNKNOWN, 0, 0, &cfa, &ra), -ENOTSUP);
	/* The caller's SP at a record (verify's frame-size check): x86-64 adds the pushed
	 * return address; AArch64 and s390x (whose CFA is 160 above it) add nothing. */
	uint64_t csp = 0;
	assert_int_equal(jitmap_arch_stackmap_caller_sp(JITMAP_ARCH_X86_64, 0x7000, 40, &csp), 0);
	assert_int_equal(csp, 0x7030);
	assert_int_equal(jitmap_arch_stackmap_caller_sp(JITMAP_ARCH_AARCH64, 0x7000, 64, &csp), 0);
	assert_int_equal(csp, 0x7040);
	assert_int_equal(jitmap_arch_stackmap_caller_sp(JITMAP_ARCH_S390X, 0x7000, 176, &csp), 0);
	assert_int_equal(csp, 0x70b0);
	assert_int_equal(jitmap_arch_stackmap_caller_sp(JITMAP_ARCH_PPC64, 0x7000, 64, &csp),
			 -ENOTSUP);
	assert_int_equal(jitmap_arch_stackmap_caller_sp(JITMAP_ARCH_X86_64, UINT64_MAX - 8, 8, &csp),
			 -EOVERFLOW);
	assert_int_equal(jitmap_arch_stackmap_caller_sp(JITMAP_ARCH_AARCH64, 16, UINT64_MAX, &csp),
			 -EOVERFLOW);
	int fp_at = -1, ra_at = -1, cfa_at = -1;
	assert_int_equal(jitmap_arch_frame_record(JITMAP_ARCH_X86_64, &fp_at, &ra_at, &cfa_at), 0);
	assert_true(fp_at == 0 && ra_at == 8 && cfa_at == 16);
	assert_int_equal(jitmap_arch_frame_record(JITMAP_ARCH_AARCH64, &fp_at, &ra_at, &cfa_at), 0);
	assert_true(fp_at == 0 && ra_at == 8 && cfa_at == 16);
	assert_int_equal(jitmap_arch_frame_record(JITMAP_ARCH_RISCV64, &fp_at, &ra_at, &cfa_at), 0);
	assert_true(fp_at == -16 && ra_at == -8 && cfa_at == 0);
	assert_int_equal(jitmap_arch_frame_record(JITMAP_ARCH_S390X, NULL, NULL, NULL), -ENOTSUP);
}

/* The call before a return address, on byte sequences real code has. */
static void test_call_before(void **state)
{
	(void)state;
	static const struct {
		jitmap_arch arch;
		uint8_t bytes[8];
		size_t n;
		bool call;
		const char *what;
	} cases[] = {
		{JITMAP_ARCH_X86_64, {0x90, 0x90, 0xe8, 0x10, 0x00, 0x00, 0x00}, 7, true, "call rel32"},
		{JITMAP_ARCH_X86_64, {0xe8, 0x10, 0x00, 0x00, 0x00}, 5, true, "call rel32 at the start"},
		{JITMAP_ARCH_X86_64, {0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0xd0}, 7, true, "call *%rax"},
		{JITMAP_ARCH_X86_64, {0x90, 0x90, 0x90, 0x90, 0x41, 0xff, 0xd3}, 7, true, "call *%r11"},
		{JITMAP_ARCH_X86_64, {0x90, 0x90, 0x90, 0x90, 0xff, 0x55, 0x08}, 7, true,
		 "call *8(%rbp)"},
		{JITMAP_ARCH_X86_64, {0x90, 0x90, 0x90, 0x90, 0xff, 0x14, 0x24}, 7, true, "call *(%rsp)"},
		{JITMAP_ARCH_X86_64, {0x90, 0xff, 0x15, 0x00, 0x10, 0x00, 0x00}, 7, true,
		 "call *0x1000(%rip)"},
		{JITMAP_ARCH_X86_64, {0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90}, 7, false, "nops"},
		{JITMAP_ARCH_X86_64, {0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0xe0}, 7, false, "jmp *%rax"},
		{JITMAP_ARCH_X86_64, {0xd0}, 1, false, "one byte"},
		{JITMAP_ARCH_AARCH64, {0x10, 0x00, 0x00, 0x94}, 4, true, "bl"},
		{JITMAP_ARCH_AARCH64, {0x00, 0x01, 0x3f, 0xd6}, 4, true, "blr x8"},
		{JITMAP_ARCH_AARCH64, {0xc0, 0x03, 0x5f, 0xd6}, 4, false, "ret"},
		{JITMAP_ARCH_AARCH64, {0x10, 0x00, 0x00, 0x14}, 4, false, "b"},
		{JITMAP_ARCH_AARCH64, {0x3f, 0xd6}, 2, false, "half a word"},
		/* s390x words as s390x-linux-gnu-objdump shows them in cross-s390x.elf */
		{JITMAP_ARCH_S390X, {0xc0, 0xe5, 0xff, 0xff, 0xff, 0xeb}, 6, true, "brasl %r14"},
		{JITMAP_ARCH_S390X, {0x07, 0x07, 0xa7, 0xe5, 0x00, 0x08}, 6, true, "bras %r14"},
		{JITMAP_ARCH_S390X, {0x07, 0x07, 0x07, 0x07, 0x0d, 0xe1}, 6, true, "basr %r14,%r1"},
		{JITMAP_ARCH_S390X, {0xb9, 0x08, 0x00, 0x2c, 0x07, 0xfe}, 6, false, "br %r14"},
		{JITMAP_ARCH_S390X, {0xc0, 0xf4, 0xff, 0xff, 0xff, 0xeb}, 6, false, "jg (brcl 15)"},
		{JITMAP_ARCH_S390X, {0xe5}, 1, false, "one byte"},
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++)
		if (jitmap_arch_call_before(cases[i].arch, cases[i].bytes, cases[i].n) != cases[i].call)
			fail_msg("%s: %s", cases[i].what, cases[i].call ? "not a call" : "a call");
	assert_false(jitmap_arch_call_before(JITMAP_ARCH_X86_64, NULL, 7));
	assert_int_equal(jitmap_arch_call_window(JITMAP_ARCH_X86_64), 7);
	assert_int_equal(jitmap_arch_call_window(JITMAP_ARCH_AARCH64), 4);
	assert_int_equal(jitmap_arch_call_window(JITMAP_ARCH_S390X), 6);
	assert_int_equal(jitmap_arch_call_window(JITMAP_ARCH_UNKNOWN), 0);
}

/* The ABI calls bindings check themselves against. */
/* Linux's general registers (what a core's NT_PRSTATUS and PTRACE_GETREGSET hold): x86-64
 * from the C library's own user_regs_struct, s390x laid out by hand from s390_regs (psw
 * mask, psw addr, gprs[16], big-endian), the architecture's host, and the refusals. */
static void test_linux_gregs(void **state)
{
	(void)state;
	jitmap_frame_regs r;
#if defined(__x86_64__)
	struct user_regs_struct u;
	memset(&u, 0, sizeof(u));
	u.rax = 0xa0, u.rdx = 0xd0, u.rbx = 0xb0, u.rbp = 0xbb, u.rsp = 0x5500, u.r15 = 0xf15;
	u.rip = 0x401000, u.orig_rax = 0xdead;
	assert_int_equal(jitmap_frame_regs_from_linux(JITMAP_ARCH_X86_64, JITMAP_ORDER_LITTLE, &u,
						      sizeof(u), &r), 0);
	assert_int_equal(r.pc, 0x401000);
	static const struct {
		unsigned regno;
		uint64_t v;
	} want[] = {{0, 0xa0}, {1, 0xd0}, {3, 0xb0}, {6, 0xbb}, {7, 0x5500}, {15, 0xf15}};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_true(jitmap_frame_reg_known(&r, want[i].regno));
		assert_int_equal(r.reg[want[i].regno], want[i].v);
	}
	assert_false(jitmap_frame_reg_known(&r, 16)); /* the PC is in r.pc */
	assert_false(jitmap_frame_reg_known(&r, 49)); /* eflags: not an unwinder's register */
	jitmap_byte_order order;
	assert_int_equal(jitmap_arch_host(&order), JITMAP_ARCH_X86_64);
	assert_int_equal(order, JITMAP_ORDER_LITTLE);
	/* Cut before rip: no PC. */
	assert_int_equal(jitmap_frame_regs_from_linux(JITMAP_ARCH_X86_64, JITMAP_ORDER_LITTLE, &u,
						      120, &r), -EINVAL);
#endif
	uint8_t s390[208] = {0};
	for (unsigned k = 0; k < 8; k++) {
		s390[8 + k] = (uint8_t)(0x10 + k);           /* psw addr 0x1011121314151617 */
		s390[16 + 8 * 6 + k] = (uint8_t)(0x60 + k);  /* r6 */
		s390[16 + 8 * 15 + k] = (uint8_t)(0xf0 + k); /* r15 */
	}
	assert_int_equal(jitmap_frame_regs_from_linux(JITMAP_ARCH_S390X, JITMAP_ORDER_BIG, s390,
						      sizeof(s390), &r), 0);
	assert_int_equal(r.pc, UINT64_C(0x1011121314151617));
	assert_int_equal(r.reg[6], UINT64_C(0x6061626364656667));
	assert_int_equal(r.reg[15], UINT64_C(0xf0f1f2f3f4f5f6f7));
	assert_false(jitmap_frame_reg_known(&r, 48)); /* access registers: not tracked */
	assert_int_equal(jitmap_frame_regs_from_linux(JITMAP_ARCH_PPC64, JITMAP_ORDER_BIG, s390,
						      sizeof(s390), &r), -ENOTSUP);
	assert_int_equal(jitmap_frame_regs_from_linux(JITMAP_ARCH_S390X, JITMAP_ORDER_BIG, NULL, 0,
						      &r), -EINVAL);
}

static void test_abi(void **state)
{
	(void)state;
	assert_string_equal(jitmap_version(), JITMAP_TEST_VERSION);
	assert_int_equal(jitmap_sizeof("jitmap_record"), sizeof(jitmap_record));
	assert_int_equal(jitmap_sizeof("jitmap_value"), sizeof(jitmap_value));
	assert_int_equal(jitmap_sizeof("jitmap_eval_opts"), sizeof(jitmap_eval_opts));
	assert_int_equal(jitmap_sizeof("no_such_struct"), 0);
	assert_int_equal(jitmap_sizeof(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_names_everywhere),
		cmocka_unit_test(test_callee_saved),
		cmocka_unit_test(test_sp_fp),
		cmocka_unit_test(test_arches),
		cmocka_unit_test(test_arch_names),
		cmocka_unit_test(test_roles),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_call_before),
		cmocka_unit_test(test_linux_gregs),
		cmocka_unit_test(test_abi),
	};
	return cmocka_run_group_tests_name("regs", tests, NULL, NULL);
}

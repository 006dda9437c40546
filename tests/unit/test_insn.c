/* test_insn.c: instructions decoded with Capstone (arch/insn.c): lengths, calls, returns,
 * texts and register writes of real encodings (checked with GNU as for x86-64, AArch64 and
 * s390x), each call agreeing with the table's jitmap_arch_call_before; the call-sequence rule
 * (jitmap_arch_call_sequence) and the callee-saved rule (jitmap_arch_callee_saved_writes),
 * each with the cases that must answer yes and those that must not. The decoder is internal:
 * this test links the static archive (as test_producer reaches the producer's hook). */
#include "unit.h"

#include <pthread.h>

#include "internal.h"

#define X86 JITMAP_ARCH_X86_64
#define A64 JITMAP_ARCH_AARCH64
#define S390 JITMAP_ARCH_S390X

/* DWARF numbers */
enum { RAX = 0, RDX = 1, RCX = 2, RBX = 3, RBP = 6, R12 = 12, R14 = 14, R15 = 15 };
#define BIT(r) (UINT64_C(1) << (r))

/* AArch64 words, little-endian in memory. */
#define W(x) (uint8_t)(x), (uint8_t)((x) >> 8), (uint8_t)((x) >> 16), (uint8_t)((x) >> 24)

#define BASE UINT64_C(0x401000)

/* -- One instruction -- */

static const struct {
	jitmap_arch arch;
	uint8_t bytes[16];
	size_t n;       /* bytes given */
	unsigned len;   /* its length */
	bool call, ret;
	const char *text;
} insns[] = {
	/* x86-64: LLVM's patchpoint sequence, the calls, a return */
	{X86, {0x49, 0xbb, 0xef, 0xbe, 0xad, 0xde, 0xff, 0xff, 0xff, 0xff}, 10, 10, false, false,
	 "movabsq $0xffffffffdeadbeef, %r11"},
	{X86, {0x41, 0xff, 0xd3}, 3, 3, true, false, "callq *%r11"},
	{X86, {0xe8, 0x00, 0x00, 0x00, 0x00}, 5, 5, true, false, "callq 0x401005"},
	{X86, {0xff, 0x15, 0x00, 0x00, 0x00, 0x00}, 6, 6, true, false, "callq *(%rip)"},
	{X86, {0xff, 0xd0, 0x90}, 3, 2, true, false, "callq *%rax"},
	{X86, {0xc3}, 1, 1, false, true, "retq"},
	{X86, {0x55, 0x48, 0x89, 0xe5}, 4, 1, false, false, "pushq %rbp"},
	{X86, {0xbb, 0x2a, 0x00, 0x00, 0x00}, 5, 5, false, false, "movl $0x2a, %ebx"},
	/* AArch64: movz/movk/blr, bl, ret */
	{A64, {W(0xd2824690)}, 4, 4, false, false, "movz x16, #0x1234"},
	{A64, {W(0xf2aacf10)}, 4, 4, false, false, "movk x16, #0x5678, lsl #16"},
	{A64, {W(0xd63f0200)}, 4, 4, true, false, "blr x16"},
	{A64, {W(0x94000010)}, 4, 4, true, false, "bl #0x401040"},
	{A64, {W(0xd65f03c0)}, 4, 4, false, true, "ret"},
	{A64, {W(0xa9bf7bfd), W(0x910003fd)}, 8, 4, false, false, "stp x29, x30, [sp, #-0x10]!"},
	/* s390x (big-endian): brasl, bras, basr, br %r14 */
	{S390, {0xc0, 0xe5, 0x00, 0x00, 0x00, 0x10}, 6, 6, true, false, "brasl %r14, 0x401020"},
	{S390, {0xa7, 0xe5, 0x00, 0x04}, 4, 4, true, false, "bras %r14, 0x401008"},
	{S390, {0x0d, 0xe1}, 2, 2, true, false, "basr %r14, %r1"},
	{S390, {0x07, 0xfe}, 2, 2, false, true, "br %r14"},
	{S390, {0xeb, 0x6f, 0xf0, 0x30, 0x00, 0x24}, 6, 6, false, false, "stmg %r6, %r15, 0x30(%r15)"},
	{S390, {0xc0, 0x19, 0x12, 0x34, 0x56, 0x78}, 6, 6, false, false, "iilf %r1, 0x12345678"},
};

static void test_lengths_and_calls(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(insns); i++) {
		struct jitmap__insn in;
		const int rc = jitmap__insn_decode(insns[i].arch, insns[i].bytes, insns[i].n, BASE, &in);
		if (rc)
			fail_msg("case %zu (%s): %d", i, insns[i].text, rc);
		if (in.len != insns[i].len || in.call != insns[i].call || in.ret != insns[i].ret ||
		    strcmp(in.text, insns[i].text))
			fail_msg("case %zu: len %u call %d ret %d \"%s\", want %u %d %d \"%s\"", i,
				 in.len, in.call, in.ret, in.text, insns[i].len, insns[i].call,
				 insns[i].ret, insns[i].text);
		/* The table's backward decoder says the same of the instruction's bytes. */
		if (jitmap_arch_call_before(insns[i].arch, insns[i].bytes, in.len) != in.call)
			fail_msg("case %zu (%s): jitmap_arch_call_before disagrees", i, in.text);
	}
}

/* Bytes that are no whole instruction. */
static void test_not_instructions(void **state)
{
	(void)state;
	struct jitmap__insn in;
	static const uint8_t movabs[] = {0x49, 0xbb, 0xef, 0xbe, 0xad, 0xde, 0xff, 0xff, 0xff, 0xff};
	assert_int_equal(jitmap__insn_decode(X86, movabs, 9, BASE, &in), -EILSEQ); /* cut */
	assert_int_equal(jitmap__insn_decode(X86, (const uint8_t[]){0x06}, 1, BASE, &in), -EILSEQ);
	assert_int_equal(jitmap__insn_decode(X86, movabs, 0, BASE, &in), -EILSEQ);
	assert_int_equal(jitmap__insn_decode(A64, (const uint8_t[]){W(0xd63f0200)}, 3, BASE, &in),
			 -EILSEQ);
	assert_int_equal(jitmap__insn_decode(S390, (const uint8_t[]){0xc0, 0xe5, 0, 0}, 4, BASE, &in),
			 -EILSEQ);
	assert_int_equal(jitmap__insn_decode(X86, NULL, 4, BASE, &in), -EINVAL);
	assert_int_equal(jitmap__insn_decode(X86, movabs, 10, BASE, NULL), -EINVAL);
	assert_int_equal(jitmap__insn_decode(JITMAP_ARCH_PPC64, movabs, 4, BASE, &in), -ENOTSUP);
	assert_int_equal(jitmap__insn_decode(JITMAP_ARCH_RISCV64, movabs, 4, BASE, &in), -ENOTSUP);
	assert_int_equal(jitmap__insn_decode(JITMAP_ARCH_UNKNOWN, movabs, 4, BASE, &in), -ENOTSUP);
	assert_int_equal(jitmap__insn_decode((jitmap_arch)99, movabs, 4, BASE, &in), -ENOTSUP);
}

/* What an instruction writes, stores to the stack and loads from it, by DWARF number. */
static const struct {
	jitmap_arch arch;
	uint8_t bytes[8];
	size_t n;
	uint64_t writes, stores, loads;
} access_cases[] = {
	{X86, {0x89, 0xc3}, 2, BIT(RBX), 0, 0},                       /* movl %eax, %ebx */
	{X86, {0x45, 0x31, 0xe4}, 3, BIT(R12), 0, 0},                 /* xorl %r12d, %r12d */
	{X86, {0x0f, 0xa2}, 2, BIT(RAX) | BIT(RBX) | BIT(RCX) | BIT(RDX), 0, 0}, /* cpuid */
	{X86, {0x53}, 1, BIT(7), BIT(RBX), 0},                        /* pushq %rbx */
	{X86, {0x41, 0x57}, 2, BIT(7), BIT(R15), 0},                  /* pushq %r15 */
	{X86, {0x5b}, 1, BIT(RBX) | BIT(7), 0, BIT(RBX)},             /* popq %rbx */
	{X86, {0xc9}, 1, BIT(RBP) | BIT(7), 0, BIT(RBP)},             /* leave */
	{X86, {0x48, 0x89, 0x5c, 0x24, 0x08}, 5, 0, BIT(RBX), 0},     /* movq %rbx, 8(%rsp) */
	{X86, {0x48, 0x89, 0x5d, 0xf8}, 4, 0, BIT(RBX), 0},           /* movq %rbx, -8(%rbp) */
	{X86, {0x48, 0x89, 0x1f}, 3, 0, 0, 0},                        /* movq %rbx, (%rdi) */
	{X86, {0x48, 0x8b, 0x5c, 0x24, 0x08}, 5, BIT(RBX), 0, BIT(RBX)}, /* movq 8(%rsp), %rbx */
	{A64, {W(0xa90153f3)}, 4, 0, BIT(19) | BIT(20), 0},           /* stp x19, x20, [sp, #16] */
	{A64, {W(0xa94153f3)}, 4, BIT(19) | BIT(20), 0, BIT(19) | BIT(20)}, /* ldp x19, x20, [sp, #16] */
	{A64, {W(0x2a0103f3)}, 4, BIT(19), 0, 0},                     /* mov w19, w1 */
	{A64, {W(0x910003fd)}, 4, BIT(29), 0, 0},                     /* mov x29, sp */
	{A64, {W(0xd63f0200)}, 4, BIT(30), 0, 0},                     /* blr x16 */
};

static void test_register_access(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(access_cases); i++) {
		struct jitmap__insn in;
		assert_int_equal(jitmap__insn_decode(access_cases[i].arch, access_cases[i].bytes,
						     access_cases[i].n, BASE, &in), 0);
		assert_true(in.access_known);
		if (in.writes != access_cases[i].writes || in.stores != access_cases[i].stores ||
		    in.loads != access_cases[i].loads)
			fail_msg("case %zu (%s): writes %#llx stores %#llx loads %#llx", i, in.text,
				 (unsigned long long)in.writes, (unsigned long long)in.stores,
				 (unsigned long long)in.loads);
	}
	/* Capstone 4 gives no register access for SystemZ. */
	struct jitmap__insn in;
	assert_int_equal(jitmap__insn_decode(S390, (const uint8_t[]){0xb9, 0x04, 0x00, 0x62}, 4,
					     BASE, &in), 0);
	assert_false(in.access_known);
	assert_int_equal(in.writes, 0);
}

/* Several threads share each architecture's handle. */
static void *decode_many(void *arg)
{
	(void)arg;
	for (int k = 0; k < 2000; k++) {
		const size_t i = (size_t)k % ARRAY_LEN(insns);
		struct jitmap__insn in;
		if (jitmap__insn_decode(insns[i].arch, insns[i].bytes, insns[i].n, BASE, &in) ||
		    strcmp(in.text, insns[i].text))
			return (void *)1;
	}
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, decode_many, NULL), 0);
	for (int i = 0; i < 4; i++) {
		void *bad;
		assert_int_equal(pthread_join(t[i], &bad), 0);
		assert_null(bad);
	}
}

/* -- Call sequences -- */

/* movabs $0xffffffffdeadbeef, %r11; call *%r11 (llc's x86-64 patchpoint), 13 bytes */
#define PATCHPOINT 0x49, 0xbb, 0xef, 0xbe, 0xad, 0xde, 0xff, 0xff, 0xff, 0xff, 0x41, 0xff, 0xd3

static void test_call_sequence_yes(void **state)
{
	(void)state;
	char note[256];
	static const uint8_t pp[] = {PATCHPOINT};
	assert_int_equal(jitmap_arch_call_sequence(X86, pp, sizeof(pp), BASE, note, sizeof(note)), 1);
	assert_string_equal(note, "the call sequence that starts at the record returns here "
				  "(movabsq $0xffffffffdeadbeef, %r11; callq *%r11): a patchpoint");
	/* one call alone */
	static const uint8_t rel32[] = {0xe8, 0x00, 0x00, 0x00, 0x00};
	assert_int_equal(jitmap_arch_call_sequence(X86, rel32, 5, BASE, note, sizeof(note)), 1);
	assert_contains(note, "(callq 0x401005)");
	/* AArch64: movz/movk/movk/blr, and bl */
	static const uint8_t a64[] = {W(0xd2824690), W(0xf2aacf10), W(0xf2d35790), W(0xd63f0200)};
	assert_int_equal(jitmap_arch_call_sequence(A64, a64, 16, BASE, note, sizeof(note)), 1);
	assert_contains(note, "(movz x16, #0x1234; movk x16, #0x5678, lsl #16; movk x16, #0x9abc, "
			      "lsl #32; blr x16)");
	assert_int_equal(jitmap_arch_call_sequence(A64, (const uint8_t[]){W(0x94000010)}, 4, BASE,
						   note, sizeof(note)), 1);
	/* s390x: iilf %r1, ...; basr %r14, %r1, and brasl */
	static const uint8_t s390[] = {0xc0, 0x19, 0x12, 0x34, 0x56, 0x78, 0x0d, 0xe1};
	assert_int_equal(jitmap_arch_call_sequence(S390, s390, 8, BASE, note, sizeof(note)), 1);
	assert_contains(note, "(iilf %r1, 0x12345678; basr %r14, %r1)");
	assert_int_equal(jitmap_arch_call_sequence(S390, (const uint8_t[]){0xc0, 0xe5, 0, 0, 0, 0x10},
						   6, BASE, NULL, 0), 1);
	/* exactly the limit: 51 nops before the patchpoint */
	uint8_t at_limit[JITMAP_CALL_SEQUENCE_MAX];
	memset(at_limit, 0x90, sizeof(at_limit));
	memcpy(at_limit + sizeof(at_limit) - sizeof(pp), pp, sizeof(pp));
	assert_int_equal(jitmap_arch_call_sequence(X86, at_limit, sizeof(at_limit), BASE, NULL, 0), 1);
	/* a short note is cut, and terminated */
	char small[20];
	assert_int_equal(jitmap_arch_call_sequence(X86, pp, sizeof(pp), BASE, small, sizeof(small)), 1);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_true(!strncmp(small, "the call sequence t", sizeof(small) - 1));
}

static void test_call_sequence_no(void **state)
{
	(void)state;
	char note[256];
	static const uint8_t pp[] = {PATCHPOINT};
	static const struct {
		jitmap_arch arch;
		uint8_t bytes[80];
		size_t len;
		const char *why;
	} no[] = {
		{X86, {0xe8, 0, 0, 0, 0, 0x41, 0xff, 0xd3}, 8, "a second call inside"},
		{X86, {PATCHPOINT}, 12, "the call runs past the return address"},
		{X86, {PATCHPOINT, 0x90}, 14, "the sequence ends before the return address"},
		{X86, {0x49, 0xbb, 0xef, 0xbe, 0xad, 0xde, 0xff, 0xff, 0xff, 0xff}, 10, "no call"},
		{X86, {0x06, 0x41, 0xff, 0xd3}, 4, "bytes that are no instruction"},
		{X86, {0x00, 0x00, 0xe8, 0, 0, 0, 0}, 5, "an instruction across the call's start"},
		/* call *%fs:0x10: a call to Capstone, not one the table's call_before knows: the
		 * unwinder would not take the return address for one */
		{X86, {0x64, 0xff, 0x14, 0x25, 0x10, 0, 0, 0}, 8, "the decoders disagree"},
		{A64, {W(0x94000010), W(0xd63f0200)}, 8, "AArch64: a second call inside"},
		{A64, {W(0xd2824690), W(0xd63f0200)}, 6, "AArch64: a word cut"},
		{A64, {W(0xd2824690), W(0xd65f03c0)}, 8, "AArch64: the last is a return"},
		{S390, {0x0d, 0xe1, 0x0d, 0xe1}, 4, "s390x: a second call inside"},
		{S390, {0xc0, 0x19, 0x12, 0x34, 0x56, 0x78}, 6, "s390x: no call"},
		/* A stackmap's record that a call follows a few instructions later is no
		 * patchpoint's: its values do not hold at the return address (lli-14 on
		 * tests/consistency/between_records.ll: r14 overwritten after record 21). */
		{X86, {0x4c, 0x8d, 0x70, 0x07, 0x48, 0xb8, 0xef, 0xbe, 0xad, 0xde, 0, 0, 0, 0, 0xff,
		       0xd0}, 16, "lea 7(%rax), %r14 before movabs/call *%rax: a value moved"},
		{X86, {0x49, 0xbb, 0xef, 0xbe, 0xad, 0xde, 0xff, 0xff, 0xff, 0xff, 0xff, 0xd0}, 12,
		 "the target loaded into r11, the call through rax"},
		{X86, {0x48, 0x89, 0x04, 0x24, 0x41, 0xff, 0xd3}, 7, "a store before the call"},
		{X86, {0x53, 0x41, 0xff, 0xd3}, 4, "a push before the call"},
		{X86, {0x90, 0xe8, 0, 0, 0, 0}, 6, "an instruction before a direct call"},
		{A64, {W(0xd2824691), W(0xd63f0200)}, 8, "AArch64: x17 set, the call through x16"},
		{A64, {W(0xf90003e0), W(0xd63f0200)}, 8, "AArch64: a store before the call"},
		{S390, {0xa7, 0x29, 0x00, 0x05, 0x0d, 0xe1}, 6, "s390x: lghi %r2 before basr via %r1"},
		{S390, {0xb9, 0x04, 0x00, 0x12, 0x0d, 0xe1}, 6, "s390x: lgr (not known) before basr"},
	};
	for (size_t i = 0; i < ARRAY_LEN(no); i++) {
		strcpy(note, "untouched");
		const int rc = jitmap_arch_call_sequence(no[i].arch, no[i].bytes, no[i].len, BASE, note,
							 sizeof(note));
		if (rc != 0 || note[0])
			fail_msg("case %zu (%s): %d \"%s\"", i, no[i].why, rc, note);
	}
	/* over 64 bytes: 52 nops before the patchpoint */
	uint8_t over[JITMAP_CALL_SEQUENCE_MAX + 1];
	memset(over, 0x90, sizeof(over));
	memcpy(over + sizeof(over) - sizeof(pp), pp, sizeof(pp));
	assert_int_equal(jitmap_arch_call_sequence(X86, over, sizeof(over), BASE, note, sizeof(note)), 0);
	assert_int_equal(jitmap_arch_call_sequence(X86, pp, 0, BASE, note, sizeof(note)), 0);
	/* pseudo-random bytes never crash it, and never read past them (ASan builds) */
	uint32_t x = 12345;
	for (int k = 0; k < 3000; k++) {
		uint8_t junk[JITMAP_CALL_SEQUENCE_MAX];
		const size_t n = 1 + (size_t)k % sizeof(junk);
		for (size_t j = 0; j < n; j++)
			junk[j] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);
		uint8_t *heap = malloc(n);
		memcpy(heap, junk, n);
		const int rc = jitmap_arch_call_sequence((jitmap_arch)(1 + k % 5), heap, n, BASE, note,
							 sizeof(note));
		assert_true(rc == 0 || rc == 1 || rc == -ENOTSUP);
		free(heap);
	}
	/* misuse and architectures without a decoder */
	assert_int_equal(jitmap_arch_call_sequence(X86, NULL, 13, BASE, note, sizeof(note)), -EINVAL);
	assert_int_equal(jitmap_arch_call_sequence(X86, pp, 13, BASE, NULL, 8), -EINVAL);
	assert_int_equal(jitmap_arch_call_sequence(JITMAP_ARCH_PPC64, pp, 13, BASE, note, 8),
			 -ENOTSUP);
	assert_int_equal(jitmap_arch_call_sequence(JITMAP_ARCH_UNKNOWN, pp, 13, BASE, NULL, 0),
			 -ENOTSUP);
}

/* -- Callee-saved registers -- */

/* llc-14's patchpoint_c (examples/llvm-jit/programs/patchpoint.ll) at -O2, its pushes, body and
 * epilogue, cut short: saves by push, writes after them, restores by pop. */
static const uint8_t llvm_fn[] = {
	0x55,                   /* push %rbp */
	0x48, 0x89, 0xe5,       /* mov %rsp,%rbp */
	0x41, 0x57,             /* push %r15 */
	0x41, 0x56,             /* push %r14 */
	0x53,                   /* push %rbx */
	0x50,                   /* push %rax */
	0x41, 0x89, 0xd7,       /* mov %edx,%r15d */
	0x49, 0x89, 0xf6,       /* mov %rsi,%r14 */
	0x48, 0x89, 0xfb,       /* mov %rdi,%rbx */
	PATCHPOINT,
	0x4c, 0x01, 0xf0,       /* add %r14,%rax */
	0x48, 0x83, 0xc4, 0x08, /* add $8,%rsp */
	0x5b,                   /* pop %rbx */
	0x41, 0x5e,             /* pop %r14 */
	0x41, 0x5f,             /* pop %r15 */
	0x5d,                   /* pop %rbp */
	0xc3,                   /* ret */
	0xcc, 0xcc,             /* padding */
};

/* An ABI-breaking function: frame pointer, then rbx and r12 changed, never saved. */
static const uint8_t breaks_abi[] = {
	0x55,                         /* +0 push %rbp */
	0x48, 0x89, 0xe5,             /* +1 mov %rsp,%rbp */
	0xbb, 0x2a, 0x00, 0x00, 0x00, /* +4 mov $42,%ebx */
	0x45, 0x31, 0xe4,             /* +9 xor %r12d,%r12d */
	0x5d,                         /* pop %rbp */
	0xc3,                         /* ret */
};

static int check(jitmap_arch arch, const uint8_t *code, size_t len)
{
	jitmap_callee_saved_write w[8];
	return jitmap_arch_callee_saved_writes(arch, code, len, BASE, w, ARRAY_LEN(w));
}

static void test_callee_saved_found(void **state)
{
	(void)state;
	jitmap_callee_saved_write w[4];
	assert_int_equal(jitmap_arch_callee_saved_writes(X86, breaks_abi, sizeof(breaks_abi), BASE,
							 w, ARRAY_LEN(w)), 2);
	assert_int_equal(w[0].address, BASE + 4);
	assert_int_equal(w[0].regno, RBX);
	assert_string_equal(w[0].insn, "movl $0x2a, %ebx");
	assert_int_equal(w[1].address, BASE + 9);
	assert_int_equal(w[1].regno, R12);
	assert_string_equal(w[1].insn, "xorl %r12d, %r12d");
	/* less room than findings: the count, the first ones */
	memset(w, 0, sizeof(w));
	assert_int_equal(jitmap_arch_callee_saved_writes(X86, breaks_abi, sizeof(breaks_abi), BASE,
							 w, 1), 2);
	assert_int_equal(w[0].regno, RBX);
	assert_int_equal(w[1].regno, 0);
	assert_int_equal(jitmap_arch_callee_saved_writes(X86, breaks_abi, sizeof(breaks_abi), BASE,
							 NULL, 0), 2);

	static const struct {
		jitmap_arch arch;
		uint8_t code[24];
		size_t len;
		const char *why;
	} found[] = {
		{X86, {0xbb, 1, 0, 0, 0, 0x53, 0x5b, 0xc3}, 8, "written before it is pushed"},
		{X86, {0x48, 0x89, 0x1f, 0xbb, 1, 0, 0, 0, 0xc3}, 9,
		 "stored to the heap, not the stack: no save"},
		{X86, {0x48, 0x8b, 0x5c, 0x24, 0x08, 0xff, 0xe0}, 7,
		 "reloaded from the stack, then a jump, not a return"},
		{X86, {0x0f, 0xa2, 0xc3}, 3, "cpuid writes rbx"},
		{X86, {0x31, 0xed, 0xc3}, 3, "rbp changed without a frame-pointer prologue"},
		{A64, {W(0xaa0003f3), W(0xd65f03c0)}, 8, "AArch64: mov x19, x0 without a save"},
		{A64, {W(0x910003fd), W(0xd65f03c0)}, 8, "AArch64: x29 set, never saved"},
	};
	for (size_t i = 0; i < ARRAY_LEN(found); i++) {
		const int n = check(found[i].arch, found[i].code, found[i].len);
		if (n != 1)
			fail_msg("case %zu (%s): %d", i, found[i].why, n);
	}
}

static void test_callee_saved_fine(void **state)
{
	(void)state;
	static const struct {
		jitmap_arch arch;
		uint8_t code[64];
		size_t len;
		const char *why;
	} fine[] = {
		/* handjit_inner (examples/handjit): no pushes, rax and slots only */
		{X86, {0x48, 0x83, 0xec, 0x18, 0x48, 0x89, 0xf8, 0x48, 0xc1, 0xe0, 0x02, 0x48, 0x89,
		       0x44, 0x24, 0x08, 0x48, 0x83, 0xc4, 0x18, 0xc3}, 21, "a leaf that keeps to rax"},
		/* handjit_outer's start and end: push rbp; mov rbp,rsp; push rbx; push r12; writes */
		{X86, {0x55, 0x48, 0x89, 0xe5, 0x53, 0x41, 0x54, 0x48, 0x83, 0xec, 0x10, 0x48, 0x8d,
		       0x5c, 0x7f, 0x07, 0x49, 0x89, 0xfc, 0x48, 0x8d, 0x65, 0xf0, 0x41, 0x5c, 0x5b,
		       0x5d, 0xc3}, 28, "saved by push, restored by pop"},
		/* shrink-wrapped: test %rdi,%rdi; je; push %rbx; mov %rdi,%rbx; pop %rbx; ret */
		{X86, {0x48, 0x85, 0xff, 0x74, 0x05, 0x53, 0x48, 0x89, 0xfb, 0x5b, 0xc3}, 11,
		 "saved after an early exit"},
		{X86, {0x48, 0x89, 0x5c, 0x24, 0xf8, 0xbb, 1, 0, 0, 0, 0x48, 0x8b, 0x5c, 0x24, 0xf8,
		       0xc3}, 16, "saved to a slot by mov, reloaded"},
		{X86, {0x48, 0x8b, 0x5c, 0x24, 0x08, 0x41, 0x5c, 0xc3}, 8,
		 "reloads before a return (an epilogue)"},
		{X86, {0x55, 0x48, 0x89, 0xe5, 0xc9, 0xc3}, 6, "leave after a frame-pointer prologue"},
		/* examples/handjit-arm64's outer function: stp x29, x30; mov x29, sp; stp x19, x20;
		 * movz x19; movz x20; ...; ldp x19, x20; ldp x29, x30; ret */
		{A64, {W(0xa9bd7bfd), W(0x910003fd), W(0xa90153f3), W(0xd2809a53), W(0xd282c5d4),
		       W(0xd2800000), W(0xa94153f3), W(0xa8c37bfd), W(0xd65f03c0)}, 36,
		 "AArch64: the frame record and x19/x20 saved by stp"},
		/* a leaf: sub sp; movz x9; str x9, [sp, #8]; add sp; ret */
		{A64, {W(0xd10083ff), W(0xd2821249), W(0xf90007e9), W(0x910083ff), W(0xd65f03c0)}, 20,
		 "AArch64: a leaf that keeps to x9"},
		{X86, {0}, 0, "no code"},
	};
	for (size_t i = 0; i < ARRAY_LEN(fine); i++) {
		const int n = check(fine[i].arch, fine[i].code, fine[i].len);
		if (n != 0)
			fail_msg("case %zu (%s): %d", i, fine[i].why, n);
	}
	assert_int_equal(check(X86, llvm_fn, sizeof(llvm_fn)), 0);
	/* bytes that are no instruction end the walk: nothing after them is read as code */
	assert_int_equal(check(X86, (const uint8_t[]){0x06, 0xbb, 1, 0, 0, 0, 0xc3}, 7), 0);
}

static void test_callee_saved_declines(void **state)
{
	(void)state;
	static const uint8_t s390[] = {0xb9, 0x04, 0x00, 0x62, 0x07, 0xfe}; /* lgr %r6,%r2; br */
	assert_int_equal(check(S390, s390, sizeof(s390)), -ENOTSUP);
	assert_int_equal(check(JITMAP_ARCH_PPC64, s390, sizeof(s390)), -ENOTSUP);
	assert_int_equal(check(JITMAP_ARCH_UNKNOWN, s390, sizeof(s390)), -ENOTSUP);
	assert_int_equal(jitmap_arch_callee_saved_writes(X86, NULL, 0, BASE, NULL, 0), 0);
	assert_int_equal(jitmap_arch_callee_saved_writes(X86, NULL, 4, BASE, NULL, 0), -EINVAL);
	assert_int_equal(jitmap_arch_callee_saved_writes(X86, breaks_abi, 4, BASE, NULL, 2), -EINVAL);
	/* pseudo-random functions: no crash, every finding inside the code */
	uint32_t x = 777;
	for (int k = 0; k < 500; k++) {
		const size_t n = 1 + (size_t)k % 200;
		uint8_t *code = malloc(n);
		for (size_t j = 0; j < n; j++)
			code[j] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);
		jitmap_callee_saved_write w[16];
		const jitmap_arch arch = k % 2 ? X86 : A64;
		const int got = jitmap_arch_callee_saved_writes(arch, code, n, BASE, w, ARRAY_LEN(w));
		assert_true(got >= 0);
		for (int i = 0; i < got && i < (int)ARRAY_LEN(w); i++) {
			assert_true(w[i].address >= BASE && w[i].address < BASE + n);
			assert_true(jitmap_reg_is_callee_saved(arch, w[i].regno));
			assert_non_null(memchr(w[i].insn, 0, sizeof(w[i].insn)));
		}
		free(code);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lengths_and_calls),
		cmocka_unit_test(test_not_instructions),
		cmocka_unit_test(test_register_access),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_call_sequence_yes),
		cmocka_unit_test(test_call_sequence_no),
		cmocka_unit_test(test_callee_saved_found),
		cmocka_unit_test(test_callee_saved_fine),
		cmocka_unit_test(test_callee_saved_declines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

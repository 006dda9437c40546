/* fuzz_unwind: libFuzzer target for jitmap_unwind_step's methods that read the code and the
 * stack rather than CFI: the stackmap's frame size at a record, the function's own code
 * (walk.c: every path from its start to the PC) and the frame-pointer chain,
 * with each architecture table's instruction decoders (prologue shapes, the stores of a leaf
 * before the PC, SP moves, returns, the call before a return address) on code bytes that
 * come from the input.
 *
 * Input: a control byte, then four little-endian 16-bit words, then the code, then the
 * stack. Control bits 0-2: the architecture (modulo the number of jitmap_arch values, 0
 * meaning x86-64); bit 3: frame 0; bits 4-5: the methods (0 stackmap and frame pointer, 1
 * the code alone, proven steps only, 2 frame pointer, 3 all); bit 6: the function's range is
 * given (the code method needs it). The words: the
 * function's stack size in 8-byte units, the record's offset in the code (modulo the code's
 * length + 1), the code's length (at most what is left), the frame pointer's distance above
 * SP. The code sits at CODE, a one-function stackmap describes it with one record, and the
 * stack bytes sit at STACK; any read not wholly inside one of them fails. make-corpus.sh
 * writes seeds from the unit tests' AArch64, s390x and x86-64 functions.
 *
 * The answers are checked as fuzz_cfi checks them: a caller above the frame (only frame 0
 * with its return address still in the link register may share its SP), the CFA 160 bytes
 * above the caller's SP on s390x, no caller-saved register in the caller, a reason when
 * there is no caller.
 */
#include "fuzz_step.h"
#include "jitmap/producer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CODE UINT64_C(0x100000)
#define STACK UINT64_C(0x7fff0000)
#define SP_AT 64 /* SP's distance into the stack bytes */

struct mem {
	const uint8_t *code, *stack;
	size_t code_len, stack_len;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	(void)why;
	(void)why_len;
	const struct mem *m = ctx;
	if (addr >= CODE && addr - CODE <= m->code_len && len <= m->code_len - (addr - CODE)) {
		memcpy(buf, m->code + (addr - CODE), len);
		return 0;
	}
	if (addr >= STACK && addr - STACK <= m->stack_len && len <= m->stack_len - (addr - STACK)) {
		memcpy(buf, m->stack + (addr - STACK), len);
		return 0;
	}
	return -EFAULT;
}

static unsigned word16(const uint8_t *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 9)
		return 0;
	jitmap_arch arch = (jitmap_arch)((data[0] & 7) % (JITMAP_ARCH_RISCV64 + 1));
	if (arch == JITMAP_ARCH_UNKNOWN)
		arch = JITMAP_ARCH_X86_64;
	const bool innermost = data[0] & 8, range = data[0] & 64;
	static const uint32_t methods[] = {
		JITMAP_UNWIND_MASK(JITMAP_UNWIND_STACKMAP) |
			JITMAP_UNWIND_MASK(JITMAP_UNWIND_FRAME_POINTER),
		JITMAP_UNWIND_MASK(JITMAP_UNWIND_CODE) | JITMAP_UNWIND_PROVEN,
		JITMAP_UNWIND_MASK(JITMAP_UNWIND_FRAME_POINTER), 0};
	const uint64_t stack_size = 8 * (uint64_t)word16(data + 1);
	struct mem m = {0};
	m.code = data + 9;
	m.code_len = word16(data + 5);
	if (m.code_len > size - 9)
		m.code_len = size - 9;
	const uint32_t rec_off = (uint32_t)(word16(data + 3) % (m.code_len + 1));
	const uint64_t fp_off = word16(data + 7);
	m.stack = m.code + m.code_len;
	m.stack_len = size - 9 - m.code_len;

	/* One function at CODE with one record, in the target's byte order. */
	const jitmap_byte_order order = arch == JITMAP_ARCH_S390X ? JITMAP_ORDER_BIG
								 : JITMAP_ORDER_LITTLE;
	jitmap_smbuilder *b = jitmap_smbuilder_new(order);
	jitmap_error err;
	void *bytes = NULL;
	size_t len = 0;
	CHECK(b);
	CHECK(jitmap_smbuilder_add_function(b, CODE, stack_size, &err) == 0);
	CHECK(jitmap_smbuilder_add_record(b, 1, rec_off, NULL, 0, NULL, 0, &err) == 0);
	CHECK(jitmap_smbuilder_finish(b, &bytes, &len) == 0);
	jitmap_smbuilder_free(b);
	JITMAP_OPTS(jitmap_parse_opts, popts, .order = order, .arch = arch);
	jitmap_stackmap *sm = jitmap_stackmap_parse(bytes, len, &popts, &err);
	CHECK(sm);

	unsigned sp, fp, ra;
	CHECK(jitmap_unwind_arch_regs(arch, &sp, &fp, &ra) == 0);
	jitmap_frame_regs regs;
	memset(&regs, 0, sizeof(regs));
	regs.pc = CODE + rec_off;
	for (unsigned r = 0; r < 32; r++)
		jitmap_frame_reg_set(&regs, r, UINT64_C(0x7fff0000) + 0x100 * r);
	jitmap_frame_reg_set(&regs, sp, STACK + SP_AT);
	jitmap_frame_reg_set(&regs, fp, STACK + SP_AT + fp_off);
	if (ra != sp)
		jitmap_frame_reg_set(&regs, ra, CODE + 0x40);
	const jitmap_unwind_code code = {.arch = arch, .sm = sm, .is_innermost = innermost,
					 .func_lo = range ? CODE : 0,
					 .func_hi = range ? CODE + m.code_len : 0,
					 .methods = methods[(data[0] >> 4) & 3], .order = order};
	const jitmap_target target = {&m, NULL, fake_read};
	jitmap_unwind_result res;
	char why[512];
	const int rc = jitmap_unwind_step(&code, &regs, &target, &res, why, sizeof(why));
	check_step(arch, innermost, &regs, rc, &res, why, sizeof(why), true);
	CHECK(rc != -ESRCH && (rc != 0 || res.method != JITMAP_UNWIND_CFI)); /* no CFI given */
	jitmap_stackmap_free(sm);
	free(bytes);
	return 0;
}

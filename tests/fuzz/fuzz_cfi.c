/* fuzz_cfi: libFuzzer target for jitmap_cfi_new and jitmap_unwind_step, the unwinder's entry
 * points for untrusted call frame information.
 *
 * Input: one control byte, then the section. Control bits 0-1: what the bytes are (0 and 2
 * .eh_frame, 1 .debug_frame, 3 both: the same bytes given twice); bits 2-4: the architecture
 * (modulo the number of jitmap_arch values). make-corpus.sh writes the .eh_frame of objects
 * compiled from the seeds with a control byte in front.
 *
 * A section that opens is probed at PCs across the addresses its FDEs can take, in frame 0
 * and as an outer frame, against a fake target whose memory holds bytes derived from the
 * address (some pages unreadable). The answers are checked: a caller above the frame, a CFA
 * that is the caller's SP (s390x: 160 bytes above it), a reason when there is no caller, FDE ranges that hold the PC.
 * A section that does not open must say why.
 */
#include "fuzz_step.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define EH_ADDR UINT64_C(0x100000)

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	(void)why;
	(void)why_len;
	(void)ctx;
	if ((addr & 0xf000) == 0x3000)
		return -EFAULT;
	uint8_t *b = buf;
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)((addr + i) * 0x9d + 0x17);
	return 0;
}

static void probe(const jitmap_cfi *cfi, jitmap_arch arch, uint64_t pc)
{
	uint64_t lo = 0, hi = 0;
	if (jitmap_cfi_covers(cfi, pc, &lo, &hi))
		CHECK(lo <= pc && pc < hi);
	unsigned sp, fp, ra;
	CHECK(jitmap_unwind_arch_regs(arch, &sp, &fp, &ra) == 0);
	static const jitmap_target target = {NULL, NULL, fake_read};
	for (int innermost = 0; innermost < 2; innermost++) {
		jitmap_frame_regs regs;
		memset(&regs, 0, sizeof(regs));
		regs.pc = pc;
		for (unsigned r = 0; r < 32; r++)
			jitmap_frame_reg_set(&regs, r, UINT64_C(0x7fff0000) + 0x100 * r);
		jitmap_frame_reg_set(&regs, sp, UINT64_C(0x7fff8000));
		const jitmap_unwind_code code = {.arch = arch, .cfi = cfi, .is_innermost = innermost};
		jitmap_unwind_result res;
		char why[256];
		const int rc = jitmap_unwind_step(&code, &regs, &target, &res, why, sizeof(why));
		check_step(arch, innermost, &regs, rc, &res, why, sizeof(why), false);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const unsigned kind = data[0] & 3;
	jitmap_arch arch = (jitmap_arch)(((data[0] >> 2) & 7) % (JITMAP_ARCH_RISCV64 + 1));
	if (arch == JITMAP_ARCH_UNKNOWN)
		arch = JITMAP_ARCH_X86_64;
	const size_t len = size - 1;
	/* An exact-size copy, so that AddressSanitizer sees any read past the section. */
	uint8_t *buf = malloc(len ? len : 1);
	CHECK(buf);
	if (len)
		memcpy(buf, data + 1, len);

	jitmap_error err;
	const void *eh = kind != 1 ? buf : NULL;
	const void *df = kind & 1 ? buf : NULL;
	jitmap_cfi *cfi = jitmap_cfi_new(arch, eh, eh ? len : 0, EH_ADDR, df, df ? len : 0, &err);
	free(buf); /* the object keeps copies */
	if (!cfi) {
		CHECK(err.code < 0 && errno == -err.code);
		CHECK(memchr(err.reason, '\0', sizeof(err.reason)) != NULL);
		CHECK(err.reason[0] != '\0');
		return 0;
	}
	/* pc-relative FDEs of a section at EH_ADDR land near it; .debug_frame addresses are
	 * absolute and small in the seeds. */
	const uint64_t span = len + 0x400;
	const uint64_t step = span / 48 + 1;
	for (uint64_t off = 0; off < span; off += step) {
		probe(cfi, arch, EH_ADDR + off);
		probe(cfi, arch, off);
	}
	jitmap_cfi_free(cfi);
	return 0;
}

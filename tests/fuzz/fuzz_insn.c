/* fuzz_insn: libFuzzer target for the instruction decoder (arch/insn.c, Capstone) and the two
 * calls that walk runs of instructions, jitmap_arch_call_sequence and
 * jitmap_arch_callee_saved_writes, on code bytes that come from the input.
 *
 * Input: a control byte, then the code. Control bits 0-2: the architecture (modulo the number
 * of jitmap_arch values, 0 meaning x86-64: ppc64 and RISC-V check the -ENOTSUP paths). The
 * code is copied to a buffer of exactly its length, so that AddressSanitizer sees a read past
 * it. make-corpus.sh writes seeds from the unit tests' encodings (tests/unit/test_insn.c).
 *
 * Checked: each decode at each offset is a whole instruction within the bytes given, with a
 * terminated text, no register outside the architecture's general ones, and not both a call
 * and a return; a call sequence is no longer than JITMAP_CALL_SEQUENCE_MAX, ends with a call
 * the table's jitmap_arch_call_before agrees with, and has its note; each callee-saved
 * finding lies in the code, names a callee-saved register other than SP, and the count is
 * the same however much room is given.
 */
#include "fuzz_common.h"
#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ADDRESS UINT64_C(0x7f0000001000)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	jitmap_arch arch = (jitmap_arch)((data[0] & 7) % (JITMAP_ARCH_RISCV64 + 1));
	if (arch == JITMAP_ARCH_UNKNOWN)
		arch = JITMAP_ARCH_X86_64;
	const size_t len = size - 1;
	uint8_t *code = malloc(len ? len : 1);
	CHECK(code);
	memcpy(code, data + 1, len);
	const bool decoded = arch == JITMAP_ARCH_X86_64 || arch == JITMAP_ARCH_AARCH64 ||
			     arch == JITMAP_ARCH_S390X;
	const unsigned core = jitmap_arch_num_core_regs(arch);

	/* Every offset, as a walk that lost its way would start. */
	for (size_t off = 0; off < len && off < 256; off++) {
		struct jitmap__insn in;
		const int rc = jitmap__insn_decode(arch, code + off, len - off, ADDRESS + off, &in);
		CHECK(decoded ? rc == 0 || rc == -EILSEQ : rc == -ENOTSUP);
		if (rc)
			continue;
		CHECK(in.len >= 1 && in.len <= len - off);
		CHECK(memchr(in.text, 0, sizeof(in.text)) != NULL && in.text[0]);
		CHECK(!(in.call && in.ret) && !(in.branch && (in.call || in.ret)));
		const uint64_t regs = in.writes | in.stores | in.loads;
		CHECK(core >= 64 || (regs >> core) == 0);
		CHECK(in.access_known || regs == 0);
	}

	/* The call-sequence rule on the first bytes, as a frame model would ask it. */
	char note[512];
	const size_t seq = len < JITMAP_CALL_SEQUENCE_MAX + 8 ? len : JITMAP_CALL_SEQUENCE_MAX + 8;
	int rc = jitmap_arch_call_sequence(arch, code, seq, ADDRESS, note, sizeof(note));
	CHECK(decoded ? rc == 0 || rc == 1 : rc == -ENOTSUP);
	CHECK(memchr(note, 0, sizeof(note)) != NULL);
	if (rc == 1) {
		CHECK(seq >= 1 && seq <= JITMAP_CALL_SEQUENCE_MAX);
		CHECK(jitmap_arch_call_before(arch, code, seq));
		CHECK(!strncmp(note, "the call sequence that starts at the record returns here (", 58));
	} else {
		CHECK(note[0] == 0);
	}

	/* The callee-saved rule over the whole code. */
	jitmap_callee_saved_write w[8];
	rc = jitmap_arch_callee_saved_writes(arch, code, len, ADDRESS, w, 8);
	const bool checked = arch == JITMAP_ARCH_X86_64 || arch == JITMAP_ARCH_AARCH64;
	CHECK(checked ? rc >= 0 : rc == -ENOTSUP);
	for (int i = 0; i < rc && i < 8; i++) {
		CHECK(w[i].address >= ADDRESS && w[i].address < ADDRESS + len);
		CHECK(i == 0 || w[i].address >= w[i - 1].address);
		CHECK(jitmap_reg_is_callee_saved(arch, w[i].regno));
		CHECK((int)w[i].regno != jitmap_reg_sp(arch));
		CHECK(memchr(w[i].insn, 0, sizeof(w[i].insn)) != NULL);
	}
	if (rc > 0)
		CHECK(jitmap_arch_callee_saved_writes(arch, code, len, ADDRESS, NULL, 0) == rc);
	free(code);
	return 0;
}

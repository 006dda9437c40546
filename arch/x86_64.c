/* x86-64: System V ABI, LLVM's DWARF numbering (docs/architectures.md). The
 * instruction decoders recognise what LLVM and common JITs emit, no more: a pattern not
 * recognised makes the asking method decline. */
#include <string.h>

#include "internal.h"

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

/* The DWARF number of the register an instruction names with 4 bits (REX's extension bit
 * on top of the 3 in the opcode or ModRM byte). */
static const uint8_t dwarf_of[16] = {0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15};

/* A callee-saved register the prologue has not saved (by DWARF number; `saved`: a bit per
 * register saved so far). rsp is none: it is the stack the prologue moves. */
static bool unsaved(unsigned dw, unsigned saved)
{
	return dw != 7 && callee_saved(dw) && !(saved >> dw & 1);
}

/* Whether the instruction at `p` (`n` bytes there) is one of the common forms that write a
 * register, or store one, and the register is a callee-saved one the prologue did not save:
 * then the saves were not all in the prologue (or the code does not keep the ABI), and
 * nothing is known of the unsaved ones. Forms: mov/lea/add/sub/and/or/xor between registers
 * or from memory (the destination in ModRM.reg, or ModRM.rm when mod = 3), a store
 * (mov %reg,mem: the stored register), xchg (both), mov $imm,%reg. */
static bool writes_unsaved(const uint8_t *p, size_t n, unsigned saved)
{
	size_t i = 0;
	unsigned rex = 0;
	if (n && (p[0] & 0xf0) == 0x40) {
		rex = p[0];
		i = 1;
	}
	if (i >= n)
		return false;
	const uint8_t op = p[i];
	if (op >= 0xb8 && op <= 0xbf) /* mov $imm,%reg */
		return unsaved(dwarf_of[(op - 0xb8) | (rex & 1) << 3], saved);
	if (i + 1 >= n)
		return false;
	const unsigned modrm = p[i + 1], mod = modrm >> 6;
	const unsigned reg = dwarf_of[((modrm >> 3) & 7) | (rex & 4) << 1];
	const unsigned rm = dwarf_of[(modrm & 7) | (rex & 1) << 3];
	switch (op) {
	case 0x89: /* mov %reg,r/m: a store of reg, or a write of rm */
		return mod == 3 ? unsaved(rm, saved) : unsaved(reg, saved);
	case 0x01: case 0x09: case 0x21: case 0x29: case 0x31: /* add/or/and/sub/xor %reg,r/m */
		return mod == 3 && unsaved(rm, saved);
	case 0x8b: case 0x8d: case 0x03: case 0x0b: case 0x23: case 0x2b: case 0x33:
		return unsaved(reg, saved); /* mov/lea/add/or/and/sub/xor r/m,%reg */
	case 0x87: /* xchg */
		return unsaved(reg, saved) || (mod == 3 && unsaved(rm, saved));
	default:
		return false;
	}
}

/* A save the prologue makes: `dw`'s caller value at CFA + cfa_off from offset `after` on.
 * False when the table is full. */
static bool note_saved(struct jitmap__shape *out, unsigned dw, size_t after, int64_t cfa_off)
{
	if (out->nsaved >= sizeof(out->saved) / sizeof(out->saved[0]))
		return false;
	out->saved[out->nsaved].reg = (uint16_t)dw;
	out->saved[out->nsaved].after = (uint16_t)after;
	out->saved[out->nsaved].cfa_off = (int32_t)cfa_off;
	out->nsaved++;
	return true;
}

/* The prologues LLVM, GCC and hand-written JITs begin with:
 *   [endbr64] [push %rbp; mov %rsp,%rbp] {push %reg | sub $imm,%rsp | mov %reg,%reg}
 * The call pushed the return address: it is at CFA - 8 in every frame. With the frame
 * pointer, the CFA is rbp + 16 once it is set. Each push of a callee-saved register is a
 * save (the slot CFA - 8 - the bytes pushed so far); a push of another register (LLVM's
 * `push %rax` for alignment) and `sub` move SP only; a register-to-register mov between
 * registers that are caller-saved or already saved (GCC moves arguments into them between
 * its pushes) changes nothing the frame says, but a `sub` after one is the body's (LLVM's
 * room for a call's stack arguments follows its moves); a mov to or from an unsaved
 * callee-saved register means the saves are not all seen. The first other instruction ends
 * the prologue: the saves are complete when it lies in the window and writes no unsaved
 * callee-saved register in the forms writes_unsaved knows (the rest of the body is not
 * decoded). */
static void shape(const uint8_t *b, size_t n, struct jitmap__shape *out)
{
	size_t i = 0;
	if (n >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		i = 4;
	*out = (struct jitmap__shape){.kind = JITMAP_PROLOGUE_NONE, .save_at = (unsigned)i,
				      .ra_known = true, .ra_from_cfa = -8};
	unsigned saved = 0;     /* a bit per DWARF register saved */
	uint64_t pushed = 0;    /* bytes below the return address */
	bool moved = false;     /* a mov was passed over: a `sub` now is the body's */
	if (i + 4 <= n && b[i] == 0x55 && b[i + 1] == 0x48 &&
	    ((b[i + 2] == 0x89 && b[i + 3] == 0xe5) || (b[i + 2] == 0x8b && b[i + 3] == 0xec))) {
		out->kind = JITMAP_PROLOGUE_FP;
		out->after_save = (unsigned)i + 1; /* push %rbp */
		out->fp_set_at = (unsigned)i + 4;
		out->cfa_from_fp = 16;
		out->cfa_after_save = 16;
		note_saved(out, 6, i + 1, -16);
		saved |= 1u << 6;
		pushed = 8;
		i += 4;
	}
	for (;;) {
		if (i >= n)
			return; /* the window ends inside the prologue: not all seen */
		const uint8_t *p = b + i;
		const size_t left = n - i;
		unsigned r = 16;
		size_t len = 0;
		if (p[0] >= 0x50 && p[0] <= 0x57) {
			r = p[0] - 0x50u;
			len = 1;
		} else if (left >= 2 && p[0] == 0x41 && p[1] >= 0x50 && p[1] <= 0x57) {
			r = 8 + p[1] - 0x50u;
			len = 2;
		} else if (moved && left >= 4 && p[0] == 0x48 && (p[1] == 0x83 || p[1] == 0x81) &&
			   p[2] == 0xec) {
			break; /* after a mov: the body's (room for a call's stack arguments) */
		} else if (left >= 4 && p[0] == 0x48 && p[1] == 0x83 && p[2] == 0xec) {
			if (p[3] == 0 || p[3] >= 0x80)
				return; /* sub of 0 or of a negative byte: not a prologue's */
			pushed += p[3];
			i += 4;
			continue;
		} else if (left >= 7 && p[0] == 0x48 && p[1] == 0x81 && p[2] == 0xec) {
			const uint32_t imm = (uint32_t)p[3] | (uint32_t)p[4] << 8 |
					     (uint32_t)p[5] << 16 | (uint32_t)p[6] << 24;
			if (imm == 0 || imm >= 0x80000000u)
				return;
			pushed += imm;
			i += 7;
			continue;
		} else if (left >= 3 && (p[0] & 0xf0) == 0x40 && (p[0] & 8) &&
			   (p[1] == 0x89 || p[1] == 0x8b) && p[2] >> 6 == 3) {
			const unsigned a = dwarf_of[((p[2] >> 3) & 7) | (p[0] & 4) << 1];
			const unsigned c = dwarf_of[(p[2] & 7) | (p[0] & 1) << 3];
			/* to or from an unsaved one: changed, or kept elsewhere (a leaf's way) */
			if (unsaved(a, saved) || unsaved(c, saved))
				return;
			if (a == 7 || c == 7)
				break; /* mov %rsp,%reg: the body's (a dynamic frame's base) */
			moved = true;
			i += 3;
			continue;
		} else {
			break;
		}
		const unsigned dw = dwarf_of[r];
		if (dw == 7)
			return; /* push %rsp */
		pushed += 8;
		if (callee_saved(dw)) {
			/* pushed twice: not a prologue this decoder knows */
			if (saved >> dw & 1 ||
			    !note_saved(out, dw, i + len, -(int64_t)(8 + pushed)))
				return;
			saved |= 1u << dw;
		}
		i += len;
	}
	if (writes_unsaved(b + i, n - i, saved))
		return;
	out->saves_complete = true;
	out->frame_size = pushed;
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

/* add $imm,%rsp; lea disp(%rsp),%rsp; pop %reg; ... then ret: where the return address is,
 * from SP at the first of them. */
static bool epilogue(const uint8_t *b, size_t n, uint64_t *ra_from_sp)
{
	uint64_t up = 0;
	for (size_t i = 0; i < n;) {
		const uint8_t *p = b + i;
		const size_t left = n - i;
		if (is_return(p, left)) {
			*ra_from_sp = up;
			return true;
		}
		if (p[0] >= 0x58 && p[0] <= 0x5f) {
			up += 8, i += 1;
		} else if (left >= 2 && p[0] == 0x41 && p[1] >= 0x58 && p[1] <= 0x5f) {
			up += 8, i += 2;
		} else if (left >= 4 && p[0] == 0x48 && p[1] == 0x83 && p[2] == 0xc4) {
			if (p[3] & 0x80)
				return false; /* a negative add: not an epilogue */
			up += p[3], i += 4;
		} else if (left >= 7 && p[0] == 0x48 && p[1] == 0x81 && p[2] == 0xc4) {
			const uint32_t imm = jitmap__load(p + 3, 4, JITMAP_ORDER_LITTLE);
			if (imm & 0x80000000u)
				return false;
			up += imm, i += 7;
		} else if (left >= 5 && p[0] == 0x48 && p[1] == 0x8d && p[2] == 0x64 && p[3] == 0x24) {
			if (p[4] & 0x80)
				return false;
			up += p[4], i += 5;
		} else if (left >= 8 && p[0] == 0x48 && p[1] == 0x8d && p[2] == 0xa4 && p[3] == 0x24) {
			const uint32_t d = jitmap__load(p + 4, 4, JITMAP_ORDER_LITTLE);
			if (d & 0x80000000u)
				return false;
			up += d, i += 8;
		} else {
			return false;
		}
	}
	return false;
}

/* push %rbp, or mov %rsp,%rbp. */
static bool looks_like_prologue(const uint8_t *b, size_t n)
{
	if (n < 3)
		return false;
	return b[0] == 0x55 || (b[0] == 0x48 && b[1] == 0x89 && b[2] == 0xe5);
}


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
	.epilogue = epilogue,
	.looks_like_prologue = looks_like_prologue,
};

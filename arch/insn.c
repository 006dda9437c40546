/* insn.c: instructions decoded with Capstone (insn.h), and the two public calls that walk
 * runs of them: whether bytes are a patchpoint's call sequence, and which instructions of a
 * function change a callee-saved register it did not save (include/jitmap/arch.h). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <capstone/capstone.h>
#include <dlfcn.h>

#include "internal.h"

/* -- Capstone, loaded at the first instruction decoded --
 *
 * Not linked: loading libcapstone applies its 77,000 relocations, 12 ms for every program
 * that loads libjitmap (jitmap-dump, jitmap-stack, GDB's and LLDB's Python side, the GDB
 * plugin), most of which never decode an instruction. The library of the version whose
 * header this was compiled with (its structs are that version's), by its SONAME. */
#define CS_STR_(x) #x
#define CS_STR(x) CS_STR_(x)
#define CS_SONAME "libcapstone.so." CS_STR(CS_API_MAJOR)

static struct {
	void *dl;
	cs_err (*open)(cs_arch, cs_mode, csh *);
	cs_err (*option)(csh, cs_opt_type, size_t);
	cs_insn *(*malloc)(csh);
	void (*free)(cs_insn *, size_t);
	cs_err (*close)(csh *);
	bool (*disasm_iter)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *);
	bool (*insn_group)(csh, const cs_insn *, unsigned int);
	const char *(*reg_name)(csh, unsigned int);
	cs_err (*regs_access)(csh, const cs_insn *, cs_regs, uint8_t *, cs_regs, uint8_t *);
} cs;

static bool load_capstone(void)
{
	cs.dl = dlopen(CS_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!cs.dl)
		return false;
#define SYM(field, name) (*(void **)&cs.field = dlsym(cs.dl, name)) != NULL
	if (SYM(open, "cs_open") && SYM(option, "cs_option") && SYM(malloc, "cs_malloc") &&
	    SYM(free, "cs_free") && SYM(close, "cs_close") && SYM(disasm_iter, "cs_disasm_iter") &&
	    SYM(insn_group, "cs_insn_group") && SYM(reg_name, "cs_reg_name") &&
	    SYM(regs_access, "cs_regs_access"))
		return true;
#undef SYM
	dlclose(cs.dl);
	cs.dl = NULL;
	return false;
}

/* -- Decoders -- */

/* Capstone's register numbers are below this on every architecture here (X86_REG_ENDING is
 * the largest, about 240). */
#define CS_REGS 512
_Static_assert(X86_REG_ENDING <= CS_REGS && ARM64_REG_ENDING <= CS_REGS &&
		       SYSZ_REG_ENDING <= CS_REGS,
	       "a Capstone register number past the map");

/* The longest instruction of any architecture here (x86-64: 15 bytes). */
#define INSN_MAX 16

struct decoder {
	jitmap_arch arch;
	cs_arch cs;
	cs_mode mode;
	/* Whether Capstone's operands carry access flags (what is read, what written). */
	bool operand_access;
	pthread_mutex_t lock; /* a handle keeps state while it decodes and prints */
	csh handle;
	cs_insn *insn; /* one instruction's room, with its detail (cs_malloc) */
	int err;       /* 0, or why the handle could not be opened */
	/* Capstone register -> DWARF number (-1: not a general register). */
	int8_t dwarf[CS_REGS];
};

static struct decoder decoders[] = {
	{.arch = JITMAP_ARCH_X86_64, .cs = CS_ARCH_X86, .mode = CS_MODE_64,
	 .operand_access = true, .lock = PTHREAD_MUTEX_INITIALIZER},
	/* AArch64 instructions are little-endian words whatever the data byte order. */
	{.arch = JITMAP_ARCH_AARCH64, .cs = CS_ARCH_ARM64, .mode = CS_MODE_LITTLE_ENDIAN,
	 .operand_access = true, .lock = PTHREAD_MUTEX_INITIALIZER},
	/* s390x is big-endian only. */
	{.arch = JITMAP_ARCH_S390X, .cs = CS_ARCH_SYSZ, .mode = CS_MODE_BIG_ENDIAN,
	 .operand_access = false, .lock = PTHREAD_MUTEX_INITIALIZER},
};
#define NUM_DECODERS (sizeof(decoders) / sizeof(decoders[0]))

static pthread_once_t opened = PTHREAD_ONCE_INIT;

static struct decoder *decoder_of(jitmap_arch arch)
{
	for (size_t i = 0; i < NUM_DECODERS; i++)
		if (decoders[i].arch == arch)
			return &decoders[i];
	return NULL;
}

/* The table's name of the whole register that Capstone's `name` is (a part of): "ebx",
 * "bl" -> "rbx"; "r12d" -> "r12"; "w19" -> "x19"; s390x "6" -> "r6". Written into `out`. */
static const char *whole_name(jitmap_arch arch, const char *name, char *out, size_t len)
{
	static const char *const x86[][5] = {
		{"rax", "eax", "ax", "al", "ah"}, {"rbx", "ebx", "bx", "bl", "bh"},
		{"rcx", "ecx", "cx", "cl", "ch"}, {"rdx", "edx", "dx", "dl", "dh"},
		{"rsi", "esi", "si", "sil", NULL}, {"rdi", "edi", "di", "dil", NULL},
		{"rbp", "ebp", "bp", "bpl", NULL}, {"rsp", "esp", "sp", "spl", NULL},
	};
	switch (arch) {
	case JITMAP_ARCH_X86_64:
		for (size_t i = 0; i < sizeof(x86) / sizeof(x86[0]); i++)
			for (size_t k = 0; k < 5 && x86[i][k]; k++)
				if (!strcmp(name, x86[i][k]))
					return x86[i][0];
		/* r8-r15 and their parts r8d, r8w, r8b */
		if (name[0] == 'r' && name[1] >= '0' && name[1] <= '9') {
			snprintf(out, len, "%s", name);
			const size_t n = strlen(out);
			if (out[n - 1] == 'd' || out[n - 1] == 'w' || out[n - 1] == 'b')
				out[n - 1] = 0;
			return out;
		}
		return name;
	case JITMAP_ARCH_AARCH64:
		if (!strcmp(name, "wsp"))
			return "sp";
		if (name[0] == 'w' && name[1] >= '0' && name[1] <= '9') {
			snprintf(out, len, "x%s", name + 1);
			return out;
		}
		return name;
	case JITMAP_ARCH_S390X:
		if (name[0] >= '0' && name[0] <= '9') {
			snprintf(out, len, "r%s", name);
			return out;
		}
		return name;
	default:
		return name;
	}
}

/* Capstone's registers to DWARF numbers, through the architecture table's names of its
 * general registers. */
static void map_registers(struct decoder *d)
{
	const struct jitmap__arch *a = jitmap__arch(d->arch);
	memset(d->dwarf, -1, sizeof(d->dwarf));
	for (unsigned id = 1; id < CS_REGS; id++) {
		const char *name = cs.reg_name(d->handle, id);
		if (!name || !name[0])
			continue;
		char buf[16];
		const char *whole = whole_name(d->arch, name, buf, sizeof(buf));
		for (unsigned r = 0; r < a->num_core_regs && r < 64; r++) {
			const char *t = a->reg_name(r);
			if ((int)r != a->pc && t && !strcmp(t, whole)) {
				d->dwarf[id] = (int8_t)r;
				break;
			}
		}
	}
}

static void open_decoders(void)
{
	const bool loaded = load_capstone();
	for (size_t i = 0; i < NUM_DECODERS; i++) {
		struct decoder *d = &decoders[i];
		if (!loaded) {
			d->err = -ENOTSUP; /* jitmap__insn_problem says why */
			continue;
		}
		const cs_err e = cs.open(d->cs, d->mode, &d->handle);
		if (e != CS_ERR_OK) {
			d->err = e == CS_ERR_MEM ? -ENOMEM : -ENOTSUP;
			continue;
		}
		cs.option(d->handle, CS_OPT_DETAIL, CS_OPT_ON);
		if (d->cs == CS_ARCH_X86) /* GDB's default syntax (Capstone's is Intel's) */
			cs.option(d->handle, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
		d->insn = cs.malloc(d->handle);
		if (!d->insn) {
			cs.close(&d->handle);
			d->err = -ENOMEM;
			continue;
		}
		map_registers(d);
	}
}

/* At unload (the GDB plugin can be unloaded and loaded again). */
__attribute__((destructor)) static void close_decoders(void)
{
	for (size_t i = 0; i < NUM_DECODERS; i++) {
		struct decoder *d = &decoders[i];
		pthread_mutex_lock(&d->lock);
		if (d->insn) {
			cs.free(d->insn, 1);
			d->insn = NULL;
			cs.close(&d->handle);
			d->err = -ENOTSUP;
		}
		pthread_mutex_unlock(&d->lock);
	}
	if (cs.dl)
		dlclose(cs.dl);
	cs.dl = NULL;
}

int jitmap__insn_ready(jitmap_arch arch)
{
	struct decoder *d = decoder_of(arch);
	if (!d || !jitmap__arch(arch))
		return -ENOTSUP;
	pthread_once(&opened, open_decoders);
	return d->err;
}

/* Whether Capstone says what instructions write and store on `arch`. */
static bool access_known(jitmap_arch arch)
{
	const struct decoder *d = decoder_of(arch);
	return d && d->operand_access;
}

static uint64_t bit(const struct decoder *d, unsigned cs_reg)
{
	return cs_reg < CS_REGS && d->dwarf[cs_reg] >= 0 ? UINT64_C(1) << d->dwarf[cs_reg] : 0;
}

/* A register operand: its Capstone number and access; a memory operand: its base and access. */
struct operand {
	bool mem;
	unsigned reg; /* the register, or the memory operand's base */
	uint8_t access;
};

static size_t operands(const struct decoder *d, const cs_insn *in, struct operand *op, size_t max)
{
	size_t n = 0;
	if (d->cs == CS_ARCH_X86) {
		const cs_x86 *x = &in->detail->x86;
		for (unsigned k = 0; k < x->op_count && n < max; k++) {
			if (x->operands[k].type == X86_OP_REG)
				op[n++] = (struct operand){false, x->operands[k].reg, x->operands[k].access};
			else if (x->operands[k].type == X86_OP_MEM)
				op[n++] = (struct operand){true, x->operands[k].mem.base,
							   x->operands[k].access};
		}
	} else if (d->cs == CS_ARCH_ARM64) {
		const cs_arm64 *x = &in->detail->arm64;
		for (unsigned k = 0; k < x->op_count && n < max; k++) {
			if (x->operands[k].type == ARM64_OP_REG)
				op[n++] = (struct operand){false, x->operands[k].reg, x->operands[k].access};
			else if (x->operands[k].type == ARM64_OP_MEM)
				op[n++] = (struct operand){true, x->operands[k].mem.base,
							   x->operands[k].access};
		}
	}
	return n;
}

/* What the instruction writes, stores to the stack and loads from it (operand_access only). */
static void reg_access(const struct decoder *d, const struct jitmap__arch *a, const cs_insn *in,
		       struct jitmap__insn *out)
{
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0;
	if (cs.regs_access(d->handle, in, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return;
	out->access_known = true;
	for (unsigned k = 0; k < nwr; k++)
		out->writes |= bit(d, wr[k]);
	for (unsigned k = 0; k < nrd; k++)
		out->reads |= bit(d, rd[k]);

	const uint64_t stack = (a->sp >= 0 ? UINT64_C(1) << a->sp : 0) |
			       (a->fp >= 0 ? UINT64_C(1) << a->fp : 0);
	struct operand op[8];
	const size_t n = operands(d, in, op, sizeof(op) / sizeof(op[0]));
	bool mem_write = false, mem_read = false;
	for (size_t k = 0; k < n; k++)
		out->writes_memory |= op[k].mem && (op[k].access & CS_AC_WRITE);
	if (d->cs == CS_ARCH_X86 && in->id == X86_INS_PUSH)
		out->writes_memory = true;
	if (out->call && n && !op[0].mem && bit(d, op[0].reg))
		out->call_reg = d->dwarf[op[0].reg]; /* call *%r11, blr x16 */
	for (size_t k = 0; k < n; k++) {
		if (op[k].mem && (bit(d, op[k].reg) & stack)) {
			mem_write |= op[k].access & CS_AC_WRITE;
			mem_read |= op[k].access & CS_AC_READ;
		}
	}
	if (d->cs == CS_ARCH_X86 && in->id == X86_INS_PUSH)
		mem_write = true; /* the store to the stack is implicit */
	if (d->cs == CS_ARCH_X86 && in->id == X86_INS_POP)
		mem_read = true;
	if (d->cs == CS_ARCH_X86 && in->id == X86_INS_LEAVE && a->fp >= 0)
		out->loads |= UINT64_C(1) << a->fp; /* mov %rbp,%rsp; pop %rbp */
	for (size_t k = 0; k < n; k++) {
		if (op[k].mem)
			continue;
		if (mem_write && (op[k].access & CS_AC_READ))
			out->stores |= bit(d, op[k].reg);
		if (mem_read && (op[k].access & CS_AC_WRITE))
			out->loads |= bit(d, op[k].reg);
	}
}

/* What an x86-64 instruction does to rsp and rbp (insn.h). Operands are told apart by their
 * kinds, not their places (Capstone's order follows the syntax printed). */
static void x86_stack(const struct decoder *d, const struct jitmap__arch *a, const cs_insn *in,
		      struct jitmap__insn *out)
{
	const cs_x86 *x = &in->detail->x86;
	const unsigned sp = X86_REG_RSP, fp = X86_REG_RBP;
	const cs_x86_op *reg = NULL, *imm = NULL, *mem = NULL, *reg2 = NULL;
	for (unsigned k = 0; k < x->op_count; k++) {
		const cs_x86_op *o = &x->operands[k];
		if (o->type == X86_OP_REG && !reg)
			reg = o;
		else if (o->type == X86_OP_REG)
			reg2 = o;
		else if (o->type == X86_OP_IMM)
			imm = o;
		else if (o->type == X86_OP_MEM)
			mem = o;
	}
	out->push_reg = out->pop_reg = -1;
	const uint64_t sp_bit = UINT64_C(1) << a->sp;
	switch (in->id) {
	case X86_INS_PUSH:
	case X86_INS_POP: {
		/* pushq/popq: 8 bytes; pushw/popw: 2. */
		const unsigned size = x->op_count ? x->operands[0].size : 8;
		const bool push = in->id == X86_INS_PUSH;
		out->sp = JITMAP__SP_ADD;
		out->sp_delta = push ? -(int64_t)(size ? size : 8) : (int64_t)(size ? size : 8);
		if (reg && !imm && !mem && size == 8 && bit(d, reg->reg)) {
			if (push)
				out->push_reg = d->dwarf[reg->reg];
			else
				out->pop_reg = d->dwarf[reg->reg];
		}
		if (!push && reg && reg->reg == sp)
			out->sp = JITMAP__SP_UNKNOWN; /* pop %rsp */
		return;
	}
	case X86_INS_PUSHFQ:
		out->sp = JITMAP__SP_ADD;
		out->sp_delta = -8;
		return;
	case X86_INS_POPFQ:
		out->sp = JITMAP__SP_ADD;
		out->sp_delta = 8;
		return;
	case X86_INS_LEAVE: /* mov %rbp,%rsp; pop %rbp */
		out->sp = JITMAP__SP_FROM_FP;
		out->sp_delta = 8;
		out->pop_reg = a->fp;
		return;
	case X86_INS_CALL:
		if (imm) {
			out->target_known = true;
			out->target = (uint64_t)imm->imm;
		}
		return; /* the callee's ret takes back what the call pushed */
	case X86_INS_ADD:
	case X86_INS_SUB:
		if (reg && reg->reg == sp && imm && !mem && !reg2) {
			out->sp = JITMAP__SP_ADD;
			out->sp_delta = in->id == X86_INS_ADD ? imm->imm : -imm->imm;
			return;
		}
		break;
	case X86_INS_LEA:
		/* lea d(%rsp),%rsp and lea d(%rsp),%rbp: no index. */
		if (reg && mem && mem->mem.base == sp && mem->mem.index == X86_REG_INVALID &&
		    mem->mem.segment == X86_REG_INVALID) {
			if (reg->reg == sp) {
				out->sp = JITMAP__SP_ADD;
				out->sp_delta = mem->mem.disp;
				return;
			}
			if (reg->reg == fp) {
				out->fp_from_sp = true;
				out->fp_delta = mem->mem.disp;
				return;
			}
		}
		break;
	case X86_INS_MOV:
		/* mov %rsp,%rbp and mov %rbp,%rsp: which one is written, Capstone's access says. */
		if (reg && reg2 && !mem && !imm && reg->size == 8 && reg2->size == 8) {
			const cs_x86_op *dst = (reg->access & CS_AC_WRITE) ? reg : reg2;
			const cs_x86_op *src = dst == reg ? reg2 : reg;
			if (dst->reg == fp && src->reg == sp) {
				out->fp_from_sp = true;
				return;
			}
			if (dst->reg == sp && src->reg == fp) {
				out->sp = JITMAP__SP_FROM_FP;
				return;
			}
		}
		break;
	default:
		if (cs.insn_group(d->handle, in, CS_GRP_JUMP) && imm) {
			out->target_known = true;
			out->target = (uint64_t)imm->imm;
		}
		break;
	}
	if ((out->writes & sp_bit) && !out->ret)
		out->sp = JITMAP__SP_UNKNOWN;
}

/* Capstone 4.0 says nothing of what a SystemZ instruction reads or writes: what a call
 * sequence is made of is known here by name. An s390x patchpoint (llc: llilf/iilf/iihf into
 * %r1, then basr %r14, %r1) loads the call's target with instructions that set a register
 * from an immediate and nothing else, and calls through it. */
static void sysz_setup(const struct decoder *d, const cs_insn *in, struct jitmap__insn *out)
{
	const cs_sysz *x = &in->detail->sysz;
	switch (in->id) {
	case SYSZ_INS_IILF: case SYSZ_INS_IIHF: case SYSZ_INS_LLILF: case SYSZ_INS_LLIHF:
	case SYSZ_INS_LGFI: case SYSZ_INS_LGHI: case SYSZ_INS_LLILL: case SYSZ_INS_LLILH:
	case SYSZ_INS_LLIHL: case SYSZ_INS_LLIHH: case SYSZ_INS_IILL: case SYSZ_INS_IILH:
	case SYSZ_INS_IIHL: case SYSZ_INS_IIHH:
		if (x->op_count >= 1 && x->operands[0].type == SYSZ_OP_REG &&
		    bit(d, x->operands[0].reg)) {
			out->access_known = true;
			out->writes = bit(d, x->operands[0].reg);
		}
		break;
	case SYSZ_INS_BASR: /* basr %r14, %rN: a call through %rN */
		if (x->op_count >= 2 && x->operands[1].type == SYSZ_OP_REG &&
		    bit(d, x->operands[1].reg))
			out->call_reg = d->dwarf[x->operands[1].reg];
		break;
	default:
		break;
	}
}

/* Append `s` to the text of `cap` bytes at `dst`, `*used` of them used, as far as it fits. */
static void append(char *dst, size_t cap, size_t *used, const char *s)
{
	while (*s && *used + 1 < cap)
		dst[(*used)++] = *s++;
	if (*used < cap)
		dst[*used] = 0;
}

static bool is_call(const struct decoder *d, const cs_insn *in)
{
	if (cs.insn_group(d->handle, in, CS_GRP_CALL))
		return true;
	/* Capstone 4 files these under CS_GRP_JUMP alone. */
	if (d->cs == CS_ARCH_ARM64)
		return in->id == ARM64_INS_BL || in->id == ARM64_INS_BLR;
	if (d->cs == CS_ARCH_SYSZ)
		return in->id == SYSZ_INS_BRASL || in->id == SYSZ_INS_BRAS ||
		       in->id == SYSZ_INS_BASR;
	return false;
}

int jitmap__insn_decode(jitmap_arch arch, const uint8_t *b, size_t n, uint64_t address,
			struct jitmap__insn *out)
{
	if ((!b && n) || !out)
		return -EINVAL;
	const int ready = jitmap__insn_ready(arch);
	if (ready)
		return ready;
	if (!n)
		return -EILSEQ;
	struct decoder *d = decoder_of(arch);
	const struct jitmap__arch *a = jitmap__arch(arch);
	/* Capstone is given at most one instruction's worth, copied: were one of its decoders
	 * ever to look past the size it is told, it would read this buffer, never past the
	 * caller's bytes. */
	uint8_t buf[2 * INSN_MAX] = {0};
	const size_t m = n < INSN_MAX ? n : INSN_MAX;
	memcpy(buf, b, m);

	int rc = -EILSEQ;
	pthread_mutex_lock(&d->lock);
	const uint8_t *p = buf;
	size_t left = m;
	uint64_t at = address;
	if (d->insn && cs.disasm_iter(d->handle, &p, &left, &at, d->insn) && d->insn->size > 0 &&
	    d->insn->size <= m) {
		const cs_insn *in = d->insn;
		*out = (struct jitmap__insn){.len = in->size, .call_reg = -1};
		size_t used = 0; /* a longer text is cut: Capstone's operands run to 160 bytes */
		append(out->text, sizeof(out->text), &used, in->mnemonic);
		if (in->op_str[0]) {
			append(out->text, sizeof(out->text), &used, " ");
			append(out->text, sizeof(out->text), &used, in->op_str);
		}
		out->call = is_call(d, in);
		out->ret = cs.insn_group(d->handle, in, CS_GRP_RET) ||
			   (a->is_return && a->is_return(buf, in->size));
		out->branch = !out->call && !out->ret && cs.insn_group(d->handle, in, CS_GRP_JUMP);
		out->push_reg = out->pop_reg = -1;
		if (d->operand_access)
			reg_access(d, a, in, out);
		else if (d->cs == CS_ARCH_SYSZ)
			sysz_setup(d, in, out);
		if (d->cs == CS_ARCH_X86)
			x86_stack(d, a, in, out);
		else if (!out->access_known || (out->writes & (UINT64_C(1) << a->sp)))
			out->sp = JITMAP__SP_UNKNOWN;
		rc = 0;
	}
	pthread_mutex_unlock(&d->lock);
	return rc;
}

/* -- Call sequences -- */

int jitmap_arch_call_sequence(jitmap_arch arch, const uint8_t *code, size_t len,
			      uint64_t address, char *note, size_t note_len)
{
	if ((!code && len) || (!note && note_len))
		return -EINVAL;
	if (note_len)
		note[0] = 0;
	const int ready = jitmap__insn_ready(arch);
	if (ready)
		return ready;
	if (!len || len > JITMAP_CALL_SEQUENCE_MAX)
		return 0;
	const struct jitmap__arch *a = jitmap__arch(arch);
	/* At most one instruction per byte, each text at most JITMAP__INSN_TEXT. */
	char list[JITMAP_CALL_SEQUENCE_MAX * 24];
	size_t used = 0;
	list[0] = 0;
	/* What the instructions before the call write: a patchpoint's sequence only loads the
	 * call's target into the register it calls through (x86-64: movabs $target, %r11;
	 * AArch64: movz/movk x16). Anything else (a value moved, a store) means the code after the
	 * record changed the frame, and the record no longer describes the return address: the
	 * record of a stackmap that a call follows, a few instructions later, is not a patchpoint's
	 * (its values read at the return address would be wrong: a register overwritten since). */
	uint64_t written = 0;
	bool setup_unknown = false, stored = false;
	unsigned count = 0;
	for (size_t off = 0; off < len;) {
		struct jitmap__insn in;
		const int rc = jitmap__insn_decode(arch, code + off, len - off, address + off, &in);
		if (rc == -EILSEQ)
			return 0; /* not code, or an instruction that runs past the return address */
		if (rc)
			return rc;
		off += in.len;
		count++;
		const bool last = off == len;
		if (in.call != last || (!last && (in.branch || in.ret)))
			return 0; /* a call or a jump inside, or a last instruction that is no call */
		/* The unwinder asks the table whether a call ends at a return address: a yes
		 * here must be a yes there. */
		if (last && !(a->call_before && a->call_before(code, len)))
			return 0;
		if (!last) {
			setup_unknown |= !in.access_known;
			written |= in.writes;
			stored |= in.writes_memory;
		} else if (count > 1) {
			/* Only the register the call goes through may have been set up. */
			if (setup_unknown || stored || in.call_reg < 0 ||
			    (written & ~(UINT64_C(1) << in.call_reg)))
				return 0;
		}
		if (used)
			append(list, sizeof(list), &used, "; ");
		append(list, sizeof(list), &used, in.text);
	}
	if (note_len)
		snprintf(note, note_len,
			 "the call sequence that starts at the record returns here (%s): a patchpoint",
			 list);
	return 1;
}

/* -- Callee-saved registers -- */

/* How far past an epilogue's reload the walk looks for its return. */
#define EPILOGUE_MAX 16

/* Whether a return comes after the instruction that ends at `off`, before any call or jump
 * (and within EPILOGUE_MAX instructions): the reload there is an epilogue's restore. */
static bool returns_after(jitmap_arch arch, const uint8_t *code, size_t len, uint64_t address,
			  size_t off)
{
	for (unsigned k = 0; k < EPILOGUE_MAX && off < len; k++) {
		struct jitmap__insn in;
		if (jitmap__insn_decode(arch, code + off, len - off, address + off, &in))
			return false;
		if (in.ret)
			return true;
		if (in.call || in.branch)
			return false;
		off += in.len;
	}
	return false;
}

int jitmap_arch_callee_saved_writes(jitmap_arch arch, const uint8_t *code, size_t len,
				    uint64_t address, jitmap_callee_saved_write *out, size_t max)
{
	if ((!code && len) || (!out && max))
		return -EINVAL;
	const int ready = jitmap__insn_ready(arch);
	if (ready)
		return ready;
	if (!access_known(arch))
		return -ENOTSUP;
	const struct jitmap__arch *a = jitmap__arch(arch);

	/* The callee-saved general registers, SP aside. */
	uint64_t kept = 0;
	for (unsigned r = 0; r < a->num_core_regs && r < 64; r++)
		if (a->callee_saved(r) && (int)r != a->sp && (int)r != a->pc)
			kept |= UINT64_C(1) << r;

	/* saved[r]: where the instruction that saved register r ends (SIZE_MAX: none yet): a
	 * write from there on comes after the save. */
	size_t saved[64];
	for (unsigned r = 0; r < 64; r++)
		saved[r] = SIZE_MAX;
	if (a->shape && len) {
		/* The shape reads a whole window: a shorter function is padded with zeros (which
		 * decode as no prologue), as the unwinder pads a function at a mapping's end. */
		uint8_t head[JITMAP__SHAPE_WINDOW] = {0};
		memcpy(head, code, len < sizeof(head) ? len : sizeof(head));
		struct jitmap__shape sh;
		memset(&sh, 0, sizeof(sh));
		a->shape(head, len < sizeof(head) ? len : sizeof(head), &sh);
		const unsigned ns = sh.nsaved < sizeof(sh.saved) / sizeof(sh.saved[0])
					    ? sh.nsaved
					    : sizeof(sh.saved) / sizeof(sh.saved[0]);
		for (unsigned i = 0; i < ns; i++)
			if (sh.saved[i].reg < 64 && sh.saved[i].after < saved[sh.saved[i].reg])
				saved[sh.saved[i].reg] = sh.saved[i].after;
		if (sh.kind == JITMAP_PROLOGUE_FP && a->fp >= 0 && a->fp < 64 &&
		    sh.after_save < saved[a->fp])
			saved[a->fp] = sh.after_save;
	}

	size_t found = 0;
	for (size_t off = 0; off < len;) {
		struct jitmap__insn in;
		const int rc = jitmap__insn_decode(arch, code + off, len - off, address + off, &in);
		if (rc == -EILSEQ)
			break; /* what follows may be data, not code */
		if (rc)
			return rc;
		const uint64_t bad = in.writes & kept;
		for (unsigned r = 0; bad && r < 64; r++) {
			if (!(bad >> r & 1) || (saved[r] != SIZE_MAX && saved[r] <= off))
				continue;
			if ((in.loads >> r & 1) && returns_after(arch, code, len, address, off + in.len))
				continue;
			if (found < max) {
				out[found] = (jitmap_callee_saved_write){.address = address + off,
									 .regno = r};
				size_t used = 0;
				append(out[found].insn, sizeof(out[found].insn), &used, in.text);
			}
			if (found < INT_MAX)
				found++;
		}
		for (unsigned r = 0; in.stores && r < 64; r++)
			if ((in.stores >> r & 1) && off + in.len < saved[r])
				saved[r] = off + in.len;
		off += in.len;
	}
	return (int)found;
}

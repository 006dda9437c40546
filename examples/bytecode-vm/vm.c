/* jitmap-vm: a small bytecode interpreter with an LLVM JIT that registers its deopt layouts,
 * so that debuggers with jitmap show the interpreter frames a JIT frame stands for.
 *
 * The VM runs Demo.sumSquares(n) (the sum of square(i) for i = 1..n) in its interpreter, then
 * compiles it with the JIT (Demo.square inlined) and runs the compiled code. Each tier stops
 * at the SAFEPOINT bytecode in Demo.square. There the interpreter has two frames (square
 * above sumSquares); the compiled code has one machine frame, and a statepoint whose deopt
 * state holds both interpreter frames, as a deoptimizing runtime would rebuild them: for each
 * frame, innermost first, its bytecode index, its locals, its expression stack. The JIT
 * registers its code through libjitmap-producer with one deopt layout per safepoint (which
 * deopt value is which method's bci, local and stack entry), stored in the registered image.
 *
 * Output lines start with "jitmap-vm: ". Truth lines, at the --stop-at'th safepoint call of
 * each tier (innermost frame first, k = 0, 1):
 *   interp call=C k=K method=M bci=B LOCAL=V ... stack=V,V
 *   vframe call=C site=ID k=K method=M bci=B LOCAL=V ... stack=V,V
 * then "tiers agree" when both said the same, and "result n=N interp=R jit=R ok".
 * At that safepoint the interpreter calls vm_interp_stop() and the compiled code (through
 * vm_safepoint) vm_jit_stop(): the places for a breakpoint. With --abort, vm_jit_stop aborts
 * (a core with the compiled frame on the stack).
 *
 *   jitmap-vm [--n N] [--stop-at C] [--abort]
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/Scalar.h>
#include <llvm-c/Transforms/Utils.h>

#include "jitmap/producer.h"

#define EXPORT __attribute__((visibility("default"), noinline))

/* -- Bytecode -- */

enum op { PUSH, LOAD, STORE, ADD, MUL, GT, JNZ, JMP, CALL, RET, SAFEPOINT };
static const char *const op_names[] = {"push", "load", "store", "add", "mul", "gt",
				       "jnz", "jmp", "call", "ret", "safepoint"};

struct insn {
	enum op op;
	int64_t arg; /* PUSH: the constant; LOAD/STORE: a local; JNZ/JMP: a bci; CALL: a method */
};

struct method {
	const char *name;
	int nargs, nlocals;
	const char *const *local_names;
	const struct insn *code;
	int ncode;
};

enum { M_SUM, M_SQUARE, NMETHODS };

static const struct insn sum_code[] = {
	/* 0 */ {PUSH, 0},  {STORE, 2}, /* acc = 0 */
	/* 2 */ {PUSH, 1},  {STORE, 1}, /* i = 1 */
	/* 4 */ {LOAD, 1},  {LOAD, 0},  {GT, 0},    {JNZ, 18}, /* while !(i > n) */
	/* 8 */ {LOAD, 2},  {LOAD, 1},  {CALL, M_SQUARE},      /* acc stays on the stack */
	/* 11 */ {ADD, 0},  {STORE, 2}, /* acc = acc + square(i) */
	/* 13 */ {LOAD, 1}, {PUSH, 1},  {ADD, 0},   {STORE, 1}, /* i = i + 1 */
	/* 17 */ {JMP, 4},
	/* 18 */ {LOAD, 2}, {RET, 0},
};
static const struct insn square_code[] = {
	/* 0 */ {LOAD, 0}, {LOAD, 0}, {MUL, 0}, {STORE, 1}, /* y = x * x */
	/* 4 */ {SAFEPOINT, 0},
	/* 5 */ {LOAD, 1}, {RET, 0},
};
static const char *const sum_locals[] = {"n", "i", "acc"};
static const char *const square_locals[] = {"x", "y"};

static const struct method methods[NMETHODS] = {
	[M_SUM] = {"Demo.sumSquares", 1, 3, sum_locals, sum_code,
		   sizeof(sum_code) / sizeof(sum_code[0])},
	[M_SQUARE] = {"Demo.square", 1, 2, square_locals, square_code,
		      sizeof(square_code) / sizeof(square_code[0])},
};

#define MAX_STACK 8
#define MAX_FRAMES 4

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("jitmap-vm: error: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("jitmap-vm: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
}

/* -- What both tiers report at a safepoint -- */

/* One interpreter frame as the tier sees it at a safepoint. */
struct vframe {
	int method, bci;
	int64_t locals[8];
	int64_t stack[MAX_STACK];
	int depth;
};

static int stop_at = 3;
static int do_abort;
static char interp_truth[MAX_FRAMES][512], jit_truth[MAX_FRAMES][512];
static int interp_frames, jit_frames;

/* Each tier calls its function at the --stop-at'th safepoint: where to break. */
EXPORT void vm_interp_stop(void)
{
	__asm__ volatile("" ::: "memory");
}

EXPORT void vm_jit_stop(void)
{
	__asm__ volatile("" ::: "memory");
	if (do_abort)
		abort();
}

/* Print the frames (innermost first) and keep the text for the comparison. */
static void report(const char *tier, int call, int64_t site, const struct vframe *f, int n,
		   char out[][512])
{
	for (int k = 0; k < n; k++) {
		const struct method *m = &methods[f[k].method];
		char *p = out[k], *end = out[k] + sizeof(out[k]);
		p += snprintf(p, (size_t)(end - p), "k=%d method=%s bci=%d", k, m->name, f[k].bci);
		for (int i = 0; i < m->nlocals; i++)
			p += snprintf(p, (size_t)(end - p), " %s=%" PRId64, m->local_names[i],
				      f[k].locals[i]);
		p += snprintf(p, (size_t)(end - p), " stack=");
		for (int i = 0; i < f[k].depth; i++)
			p += snprintf(p, (size_t)(end - p), "%s%" PRId64, i ? "," : "", f[k].stack[i]);
		if (site >= 0)
			say("vframe call=%d site=%" PRId64 " %s", call, site, out[k]);
		else
			say("interp call=%d %s", call, out[k]);
	}
	(void)tier;
}

/* -- The interpreter -- */

static int interp_calls;

struct iframe {
	int method, pc, sp;
	int64_t locals[8];
	int64_t stack[MAX_STACK];
};

static int64_t interpret(int method, int64_t arg)
{
	struct iframe frames[MAX_FRAMES];
	int nf = 1;
	memset(frames, 0, sizeof(frames));
	frames[0].method = method;
	frames[0].locals[0] = arg;
	for (;;) {
		struct iframe *f = &frames[nf - 1];
		const struct insn *in = &methods[f->method].code[f->pc];
		int64_t a, b;
		switch (in->op) {
		case PUSH:
			f->stack[f->sp++] = in->arg;
			break;
		case LOAD:
			f->stack[f->sp++] = f->locals[in->arg];
			break;
		case STORE:
			f->locals[in->arg] = f->stack[--f->sp];
			break;
		case ADD:
		case MUL:
		case GT:
			b = f->stack[--f->sp];
			a = f->stack[--f->sp];
			f->stack[f->sp++] = in->op == ADD ? a + b : in->op == MUL ? a * b : a > b;
			break;
		case JNZ:
			if (f->stack[--f->sp]) {
				f->pc = (int)in->arg;
				continue;
			}
			break;
		case JMP:
			f->pc = (int)in->arg;
			continue;
		case CALL: {
			const struct method *callee = &methods[in->arg];
			struct iframe *g = &frames[nf++];
			memset(g, 0, sizeof(*g));
			g->method = (int)in->arg;
			f->sp -= callee->nargs;
			memcpy(g->locals, &f->stack[f->sp], (size_t)callee->nargs * sizeof(int64_t));
			continue; /* f->pc stays at the CALL while the callee runs */
		}
		case RET: {
			const int64_t v = f->stack[--f->sp];
			if (--nf == 0)
				return v;
			struct iframe *caller = &frames[nf - 1];
			caller->stack[caller->sp++] = v;
			caller->pc++;
			continue;
		}
		case SAFEPOINT:
			if (++interp_calls == stop_at) {
				struct vframe v[MAX_FRAMES];
				for (int k = 0; k < nf; k++) {
					const struct iframe *s = &frames[nf - 1 - k];
					v[k] = (struct vframe){.method = s->method, .bci = s->pc,
							       .depth = s->sp};
					memcpy(v[k].locals, s->locals, sizeof(s->locals));
					memcpy(v[k].stack, s->stack, sizeof(s->stack));
				}
				interp_frames = nf;
				report("interp", interp_calls, -1, v, nf, interp_truth);
				vm_interp_stop();
			}
			break;
		}
		f->pc++;
	}
}

/* -- The JIT: bytecode to LLVM IR, one machine function per compiled method -- */

/* A safepoint site of compiled code: its statepoint ID, the inlined frames there (innermost
 * first), and each frame's deopt values: bci, locals, stack, in that order. */
struct site {
	int64_t id;
	int nframes;
	struct {
		int method, bci, depth;
	} frames[MAX_FRAMES];
};
static struct site sites[16];
static int nsites;

struct ir {
	char *buf;
	size_t len, cap;
	int tmp;
};

static void emit(struct ir *ir, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		const int n = vsnprintf(ir->buf + ir->len, ir->cap - ir->len, fmt, ap);
		va_end(ap);
		if ((size_t)n < ir->cap - ir->len) {
			ir->len += (size_t)n;
			return;
		}
		ir->cap = ir->cap * 2 + (size_t)n + 1;
		if (!(ir->buf = realloc(ir->buf, ir->cap)))
			die("out of memory");
	}
}

/* The expression stack depth before each bci (the bytecode verifier's job in a real VM). */
static void depths(const struct method *m, int *depth)
{
	for (int i = 0; i < m->ncode; i++)
		depth[i] = -1;
	depth[0] = 0;
	for (int changed = 1; changed;) {
		changed = 0;
		for (int i = 0; i < m->ncode; i++) {
			if (depth[i] < 0)
				continue;
			const struct insn *in = &m->code[i];
			int d = depth[i];
			switch (in->op) {
			case PUSH: case LOAD: d++; break;
			case STORE: case JNZ: d--; break;
			case ADD: case MUL: case GT: d--; break;
			case CALL: d += 1 - methods[in->arg].nargs; break;
			default: break;
			}
			int next[2] = {i + 1, -1};
			if (in->op == JNZ)
				next[1] = (int)in->arg;
			if (in->op == JMP)
				next[0] = (int)in->arg;
			if (in->op == RET)
				next[0] = -1;
			for (int k = 0; k < 2; k++)
				if (next[k] >= 0 && next[k] < m->ncode && depth[next[k]] < 0) {
					depth[next[k]] = d;
					changed = 1;
				}
		}
	}
}

/* One inlined method's frame during translation. */
struct tframe {
	int method, id; /* id: its allocas' prefix */
	int call_bci;   /* in the caller: the CALL that inlined it */
	int depth[64];
};

static void translate(struct ir *ir, struct tframe *chain, int nchain, const char *ret_block,
		      const char *ret_slot);

static int frame_ids;
static struct ir allocas; /* the entry block's allocas (mem2reg promotes those only) */

static void frame_allocas(int id, int nlocals)
{
	for (int i = 0; i < nlocals; i++)
		emit(&allocas, "  %%f%d.l%d = alloca i64\n", id, i);
	for (int i = 0; i < MAX_STACK; i++)
		emit(&allocas, "  %%f%d.s%d = alloca i64\n", id, i);
}

static void translate(struct ir *ir, struct tframe *chain, int nchain, const char *ret_block,
		      const char *ret_slot)
{
	struct tframe *f = &chain[nchain - 1];
	const struct method *m = &methods[f->method];
	const int id = f->id;
	/* Arguments: the caller stored them in our first locals already. */
	emit(ir, "  br label %%f%d.b0\n", id);
	for (int bci = 0; bci < m->ncode; bci++) {
		const struct insn *in = &m->code[bci];
		const int d = f->depth[bci];
		emit(ir, "f%d.b%d:  ; %s %s\n", id, bci, m->name, op_names[in->op]);
		if (d < 0) {
			emit(ir, "  unreachable\n");
			continue;
		}
		const int t = ir->tmp;
		ir->tmp += 4;
		switch (in->op) {
		case PUSH:
			emit(ir, "  store i64 %" PRId64 ", i64* %%f%d.s%d\n", in->arg, id, d);
			break;
		case LOAD:
			emit(ir, "  %%t%d = load i64, i64* %%f%d.l%" PRId64 "\n", t, id, in->arg);
			emit(ir, "  store i64 %%t%d, i64* %%f%d.s%d\n", t, id, d);
			break;
		case STORE:
			emit(ir, "  %%t%d = load i64, i64* %%f%d.s%d\n", t, id, d - 1);
			emit(ir, "  store i64 %%t%d, i64* %%f%d.l%" PRId64 "\n", t, id, in->arg);
			break;
		case ADD:
		case MUL:
		case GT:
			emit(ir, "  %%t%d = load i64, i64* %%f%d.s%d\n", t, id, d - 2);
			emit(ir, "  %%t%d = load i64, i64* %%f%d.s%d\n", t + 1, id, d - 1);
			if (in->op == GT) {
				emit(ir, "  %%t%d = icmp sgt i64 %%t%d, %%t%d\n", t + 3, t, t + 1);
				emit(ir, "  %%t%d = zext i1 %%t%d to i64\n", t + 2, t + 3);
			} else {
				emit(ir, "  %%t%d = %s nsw i64 %%t%d, %%t%d\n", t + 2,
				     in->op == ADD ? "add" : "mul", t, t + 1);
			}
			emit(ir, "  store i64 %%t%d, i64* %%f%d.s%d\n", t + 2, id, d - 2);
			break;
		case JNZ:
			emit(ir, "  %%t%d = load i64, i64* %%f%d.s%d\n", t, id, d - 1);
			emit(ir, "  %%t%d = icmp ne i64 %%t%d, 0\n", t + 1, t);
			emit(ir, "  br i1 %%t%d, label %%f%d.b%" PRId64 ", label %%f%d.b%d\n", t + 1, id,
			     in->arg, id, bci + 1);
			continue;
		case JMP:
			emit(ir, "  br label %%f%d.b%" PRId64 "\n", id, in->arg);
			continue;
		case CALL: {
			/* Inline the callee: its locals take the arguments, its RET stores the
			 * result where they were and comes back to bci + 1. */
			const struct method *callee = &methods[in->arg];
			struct tframe *g = &chain[nchain];
			g->call_bci = bci;
			char back[32], slot[32];
			snprintf(back, sizeof(back), "f%d.b%d", id, bci + 1);
			snprintf(slot, sizeof(slot), "f%d.s%d", id, d - callee->nargs);
			const int gid = frame_ids;
			frame_allocas(gid, callee->nlocals);
			for (int i = 0; i < callee->nargs; i++) {
				emit(ir, "  %%t%d = load i64, i64* %%f%d.s%d\n", t + i, id,
				     d - callee->nargs + i);
				emit(ir, "  store i64 %%t%d, i64* %%f%d.l%d\n", t + i, gid, i);
			}
			g->method = (int)in->arg;
			g->id = frame_ids++;
			depths(callee, g->depth);
			translate(ir, chain, nchain + 1, back, slot);
			continue;
		}
		case RET:
			emit(ir, "  %%t%d = load i64, i64* %%f%d.s%d\n", t, id, d - 1);
			if (ret_block) {
				emit(ir, "  store i64 %%t%d, i64* %%%s\n", t, ret_slot);
				emit(ir, "  br label %%%s\n", ret_block);
			} else {
				emit(ir, "  ret i64 %%t%d\n", t);
			}
			continue;
		case SAFEPOINT: {
			/* A statepoint calling vm_safepoint(site, values) with every inlined
			 * frame's state as its deopt bundle, innermost first: bci, locals,
			 * stack. The same values go to vm_safepoint in memory for its truth
			 * lines. */
			struct site *s = &sites[nsites];
			s->id = 1000 + nsites;
			s->nframes = nchain;
			int nvals = 0;
			char deopt[2048] = "";
			size_t dl = 0;
			for (int k = 0; k < nchain; k++) {
				const struct tframe *fr = &chain[nchain - 1 - k];
				const struct method *fm = &methods[fr->method];
				const int fbci = k == 0 ? bci : chain[nchain - k].call_bci;
				const int fdepth = k == 0 ? d
							  : fr->depth[fbci] -
								    methods[chain[nchain - k].method].nargs;
				s->frames[k].method = fr->method;
				s->frames[k].bci = fbci;
				s->frames[k].depth = fdepth;
				dl += (size_t)snprintf(deopt + dl, sizeof(deopt) - dl, "%si64 %d",
						       dl ? ", " : "", fbci);
				nvals++;
				for (int i = 0; i < fm->nlocals + fdepth; i++) {
					const int v = ir->tmp++;
					if (i < fm->nlocals)
						emit(ir, "  %%t%d = load i64, i64* %%f%d.l%d\n", v,
						     fr->id, i);
					else
						emit(ir, "  %%t%d = load i64, i64* %%f%d.s%d\n", v,
						     fr->id, i - fm->nlocals);
					emit(ir, "  %%p%d = getelementptr [32 x i64], [32 x i64]* %%vals, "
						 "i64 0, i64 %d\n", v, nvals);
					emit(ir, "  store i64 %%t%d, i64* %%p%d\n", v, v);
					dl += (size_t)snprintf(deopt + dl, sizeof(deopt) - dl,
							       ", i64 %%t%d", v);
					nvals++;
				}
			}
			/* vals[0] would be the bci: vm_safepoint knows the bcis from the site. */
			emit(ir, "  %%vp%d = getelementptr [32 x i64], [32 x i64]* %%vals, i64 0, i64 0\n",
			     t);
			emit(ir,
			     "  %%tok%d = call token (i64, i32, void (i64, i64*)*, i32, i32, ...) "
			     "@llvm.experimental.gc.statepoint.p0f_isVoidi64p0i64f(i64 %" PRId64
			     ", i32 0, void (i64, i64*)* elementtype(void (i64, i64*)) @vm_safepoint, "
			     "i32 2, i32 0, i64 %" PRId64
			     ", i64* %%vp%d, i32 0, i32 0) [ \"deopt\"(%s) ]\n",
			     t, s->id, s->id, t, deopt);
			nsites++;
			break;
		}
		}
		emit(ir, "  br label %%f%d.b%d\n", id, bci + 1);
	}
}

/* The IR of `method` compiled with its callees inlined, as function @jit.<name>. */
static char *compile_ir(int method)
{
	struct ir body = {0}, out = {0};
	struct tframe chain[MAX_FRAMES];
	frame_ids = 0;
	chain[0].method = method;
	chain[0].id = frame_ids++;
	depths(&methods[method], chain[0].depth);
	frame_allocas(0, methods[method].nlocals);
	translate(&body, chain, 1, NULL, NULL);
	emit(&out, "declare void @vm_safepoint(i64, i64*)\n"
		   "declare token @llvm.experimental.gc.statepoint.p0f_isVoidi64p0i64f(i64, i32, "
		   "void (i64, i64*)*, i32, i32, ...)\n\n");
	emit(&out, "define i64 @\"jit.%s\"(i64 %%a0) gc \"statepoint-example\" {\nentry:\n",
	     methods[method].name);
	emit(&out, "  %%vals = alloca [32 x i64]\n%s", allocas.buf);
	emit(&out, "  store i64 %%a0, i64* %%f0.l0\n%s}\n", body.buf);
	free(body.buf);
	free(allocas.buf);
	allocas = (struct ir){0};
	return out.buf;
}

/* -- Running compiled code: MCJIT with a memory manager that sees where sections go -- */

struct block {
	void *addr;
	size_t size, used;
	int prot;
};
static struct block blocks[16];
static int nblocks;
static uint64_t code_addr, code_size, sm_addr, sm_size, eh_addr, eh_size;

static uint8_t *allocate(uintptr_t size, int prot)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const size_t len = (size + page - 1) / page * page + page;
	if (nblocks == 16)
		return NULL;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	blocks[nblocks++] = (struct block){p, len, size, prot};
	return p;
}

static uint8_t *allocate_code(void *opaque, uintptr_t size, unsigned align, unsigned id,
			      const char *name)
{
	(void)opaque, (void)align, (void)id, (void)name;
	uint8_t *p = allocate(size, PROT_READ | PROT_EXEC);
	if (p && !code_addr) {
		code_addr = (uint64_t)(uintptr_t)p;
		code_size = size;
	}
	return p;
}

static uint8_t *allocate_data(void *opaque, uintptr_t size, unsigned align, unsigned id,
			      const char *name, LLVMBool read_only)
{
	(void)opaque, (void)align, (void)id;
	uint8_t *p = allocate(size, read_only ? PROT_READ : PROT_READ | PROT_WRITE);
	if (p && name && !strcmp(name, ".llvm_stackmaps")) {
		sm_addr = (uint64_t)(uintptr_t)p;
		sm_size = size;
	} else if (p && name && !strcmp(name, ".eh_frame")) {
		eh_addr = (uint64_t)(uintptr_t)p;
		eh_size = size;
	}
	return p;
}

static LLVMBool finalize(void *opaque, char **err)
{
	(void)opaque;
	for (int i = 0; i < nblocks; i++) {
		if (blocks[i].prot & PROT_EXEC)
			__builtin___clear_cache((char *)blocks[i].addr,
						(char *)blocks[i].addr + blocks[i].size);
		if (mprotect(blocks[i].addr, blocks[i].size, blocks[i].prot)) {
			*err = strdup("mprotect failed");
			return 1;
		}
	}
	return 0;
}

static void destroy(void *opaque)
{
	(void)opaque;
}

/* The deopt layouts of the compiled sites: for each frame, its method by name, its bci and
 * each local and stack entry by deopt index (the order the SAFEPOINT translation wrote). */
static jitmap_deopt_layout layouts[16];
static jitmap_vframe_layout layout_frames[16][MAX_FRAMES];
static jitmap_vslot layout_slots[16][MAX_FRAMES][16];

static size_t build_layouts(void)
{
	for (int s = 0; s < nsites; s++) {
		uint32_t at = 0;
		for (int k = 0; k < sites[s].nframes; k++) {
			const struct method *m = &methods[sites[s].frames[k].method];
			jitmap_vframe_layout *f = &layout_frames[s][k];
			jitmap_vslot *slots = layout_slots[s][k];
			f->method = (jitmap_vref){.kind = JITMAP_VREF_NAME, .name = m->name};
			f->bci = (jitmap_vref){.kind = JITMAP_VREF_DEOPT, .number = at++};
			for (int i = 0; i < m->nlocals; i++)
				slots[i] = (jitmap_vslot){at++, m->local_names[i]};
			for (int i = 0; i < sites[s].frames[k].depth; i++)
				slots[m->nlocals + i] = (jitmap_vslot){at++, NULL};
			f->locals = slots;
			f->num_locals = (uint16_t)m->nlocals;
			f->stack = slots + m->nlocals;
			f->num_stack = (uint16_t)sites[s].frames[k].depth;
		}
		layouts[s] = (jitmap_deopt_layout){.record_id = (uint64_t)sites[s].id,
						   .frames = layout_frames[s],
						   .num_frames = (uint32_t)sites[s].nframes};
	}
	return (size_t)nsites;
}

static int jit_calls;

/* Called by compiled code at each safepoint: `vals` holds what the deopt bundle holds, in
 * its order, but for the bcis (the site says them). */
EXPORT void vm_safepoint(int64_t site_id, const int64_t *vals)
{
	if (++jit_calls != stop_at)
		return;
	const struct site *s = &sites[site_id - 1000];
	struct vframe v[MAX_FRAMES];
	int at = 0;
	for (int k = 0; k < s->nframes; k++) {
		const struct method *m = &methods[s->frames[k].method];
		v[k] = (struct vframe){.method = s->frames[k].method, .bci = s->frames[k].bci,
				       .depth = s->frames[k].depth};
		at++; /* the bci's slot */
		for (int i = 0; i < m->nlocals; i++)
			v[k].locals[i] = vals[at++];
		for (int i = 0; i < v[k].depth; i++)
			v[k].stack[i] = vals[at++];
	}
	jit_frames = s->nframes;
	report("jit", jit_calls, site_id, v, s->nframes, jit_truth);
	if (jit_frames != interp_frames)
		die("the tiers disagree: %d frames interpreted, %d compiled", interp_frames,
		    jit_frames);
	for (int k = 0; k < jit_frames; k++)
		if (strcmp(jit_truth[k], interp_truth[k]))
			die("the tiers disagree at frame %d: \"%s\" / \"%s\"", k, interp_truth[k],
			    jit_truth[k]);
	say("tiers agree call=%d frames=%d", jit_calls, jit_frames);
	vm_jit_stop();
}

int main(int argc, char **argv)
{
	int64_t n = 5;
	static const struct option opts[] = {{"n", required_argument, 0, 'n'},
					     {"stop-at", required_argument, 0, 's'},
					     {"abort", no_argument, 0, 'a'},
					     {"help", no_argument, 0, 'h'},
					     {0, 0, 0, 0}};
	for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
		if (c == 'n')
			n = strtoll(optarg, NULL, 0);
		else if (c == 's')
			stop_at = atoi(optarg);
		else if (c == 'a')
			do_abort = 1;
		else {
			fprintf(c == 'h' ? stdout : stderr,
				"usage: jitmap-vm [--n N] [--stop-at C] [--abort]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (n < 1 || n > 1000 || stop_at < 1 || stop_at > n)
		die("want 1 <= --stop-at <= --n <= 1000");
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* Tier 0: the interpreter. */
	const int64_t want = interpret(M_SUM, n);
	say("interpreted n=%" PRId64 " result=%" PRId64, n, want);

	/* Tier 1: compile Demo.sumSquares with Demo.square inlined. */
	char *text = compile_ir(M_SUM);
	if (getenv("JITMAP_VM_PRINT_IR"))
		fputs(text, stderr);
	LLVMInitializeNativeTarget();
	LLVMInitializeNativeAsmPrinter();
	LLVMInitializeNativeAsmParser();
	LLVMLinkInMCJIT();
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(text, strlen(text), "vm");
	LLVMModuleRef mod;
	char *msg = NULL;
	if (LLVMParseIRInContext(ctx, buf, &mod, &msg))
		die("the JIT's IR does not parse: %s", msg);
	if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg))
		die("the JIT's IR does not verify: %s", msg);
	LLVMDisposeMessage(msg);
	char *triple = LLVMGetDefaultTargetTriple();
	LLVMSetTarget(mod, triple);
	LLVMDisposeMessage(triple);
	/* The allocas of the translation become SSA values (the deopt values with them). */
	LLVMPassManagerRef pm = LLVMCreatePassManager();
	LLVMAddPromoteMemoryToRegisterPass(pm);
	LLVMAddInstructionCombiningPass(pm);
	LLVMAddCFGSimplificationPass(pm);
	LLVMRunPassManager(pm, mod);
	LLVMDisposePassManager(pm);

	struct LLVMMCJITCompilerOptions mo;
	LLVMInitializeMCJITCompilerOptions(&mo, sizeof(mo));
	mo.OptLevel = 2;
	mo.MCJMM = LLVMCreateSimpleMCJITMemoryManager(NULL, allocate_code, allocate_data, finalize,
						      destroy);
	LLVMExecutionEngineRef ee;
	if (LLVMCreateMCJITCompilerForModule(&ee, mod, &mo, sizeof(mo), &msg))
		die("cannot create the JIT: %s", msg);
	char fname[64];
	snprintf(fname, sizeof(fname), "jit.%s", methods[M_SUM].name);
	const uint64_t fn = LLVMGetFunctionAddress(ee, fname);
	if (!fn || !sm_addr || fn < code_addr || fn >= code_addr + code_size)
		die("no compiled code or no stackmap (function 0x%" PRIx64 ", stackmap 0x%" PRIx64 ")",
		    fn, sm_addr);
	say("compiled method=%s addr=0x%" PRIx64 " size=%" PRIu64 " stackmaps=0x%" PRIx64
	    " sites=%d", methods[M_SUM].name, fn, code_addr + code_size - fn, sm_addr, nsites);

	/* Register it with the debuggers, with the deopt layouts. */
	const jitmap_jit_function f = {fname, fn, code_addr + code_size - fn};
	const jitmap_jit_region region = {
		.address = code_addr, .size = code_size, .functions = &f, .num_functions = 1,
		.stackmap = (const void *)(uintptr_t)sm_addr, .stackmap_size = sm_size,
		.eh_frame = (const void *)(uintptr_t)eh_addr, .eh_frame_size = eh_size,
	};
	JITMAP_OPTS(jitmap_jit_region_opts, ro, .layouts = layouts, .num_layouts = build_layouts());
	jitmap_error err;
	jitmap_jit_entry *entry = jitmap_jit_register_opts(&region, &ro, &err);
	if (!entry)
		die("jitmap_jit_register_opts: %s (at %" PRIu64 ")", err.reason, err.offset);
	for (int s = 0; s < nsites; s++)
		say("layout site=%" PRId64 " frames=%d", sites[s].id, sites[s].nframes);

	const int64_t got = ((int64_t(*)(int64_t))(uintptr_t)fn)(n);
	say("result n=%" PRId64 " interp=%" PRId64 " jit=%" PRId64 " %s", n, want, got,
	    got == want ? "ok" : "WRONG");
	jitmap_jit_unregister(entry);
	LLVMDisposeExecutionEngine(ee);
	LLVMContextDispose(ctx);
	free(text);
	say("done");
	return got == want ? 0 : 1;
}

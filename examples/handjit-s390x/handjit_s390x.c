/* jitmap-handjit-s390x: a JIT that writes s390x machine code by hand, without unwind tables,
 * and describes it only with a stackmap it builds and registers through libjitmap-producer
 * (in the host's byte order: big-endian). Cross-built (s390x-linux-gnu-gcc, static) and run
 * under qemu-s390x. The s390x sibling of examples/handjit-arm64.
 *
 *   handjit_s390x_outer   the ABI's prologue: stmg %r6,%r15,48(%r15) into the register save
 *                         area its caller allocated, then aghi %r15,-200 (its own frame: a
 *                         160-byte save area for its callees, stack slots at 160-199). VM
 *                         locals live in callee-saved registers (r6, r7, r10) and stack
 *                         slots; it calls the inner function: statepoint 2001 at the return
 *                         address (deopt values of every kind, two GC roots (obj, obj) and
 *                         (obj, obj + 16) of a malloc'd object, a gc alloca). With --depth N
 *                         it first calls itself N times (record 2003 after that call).
 *   handjit_s390x_inner   a leaf: aghi %r15,-32, no stmg, its return address stays in r14;
 *                         record 2002 (a plain stackmap record, every location kind) at the
 *                         instruction after its stop (with --trap `.insn e,0x0001`, the
 *                         software breakpoint GDB uses on s390; else nopr).
 *
 * Every 64-bit value has eight distinct bytes, and each 4-byte value sits next to four other
 * distinct bytes (the low half of a 64-bit register on big-endian; the first four bytes of an
 * eight-byte slot), so a value read in the wrong byte order, or the wrong half, differs.
 *
 * Truth lines ("jitmap-handjit-s390x: record id=N pc=0x... local0=V ... stack_size=S") give
 * each record's location values in order; the addresses among them (the Direct locations'
 * frame objects, the GC object) are printed by a C function the outer JIT function calls
 * with its stack pointer before it calls the leaf. Under qemu-s390x the trap is SIGILL, and
 * the PSW then points past it (an operation exception suppresses the instruction): the stop
 * is at the record. Without a debugger qemu writes a guest core. Without --trap the program
 * returns from the JIT code and prints "result ... ok".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "jitmap/producer.h"

#define PROG "jitmap-handjit-s390x"

/* -- s390x encodings (z/Architecture Principles of Operation; checked with
 * s390x-linux-gnu-objdump) -- */

struct code {
	uint8_t *p;
	size_t n;
};

static void put(struct code *c, const uint8_t *b, size_t len)
{
	memcpy(c->p + c->n, b, len);
	c->n += len;
}

static void be16(uint8_t *b, uint16_t v) { b[0] = (uint8_t)(v >> 8); b[1] = (uint8_t)v; }
static void be32(uint8_t *b, uint32_t v) { be16(b, (uint16_t)(v >> 16)); be16(b + 2, (uint16_t)v); }

/* RSY-a / RXY-a: op1 R1R3|R1X2 B2|DL(hi) DL(lo) DH op2, a 20-bit signed displacement. */
static void rsy(struct code *c, uint8_t op1, uint8_t op2, unsigned r1, unsigned r3, unsigned b2,
		int32_t d)
{
	const uint32_t u = (uint32_t)d & 0xfffffu;
	const uint8_t b[6] = {op1, (uint8_t)(r1 << 4 | r3), (uint8_t)(b2 << 4 | (u & 0xfff) >> 8),
			      (uint8_t)u, (uint8_t)(u >> 12), op2};
	put(c, b, 6);
}
static void stmg(struct code *c, unsigned r1, unsigned r3, int32_t d) { rsy(c, 0xeb, 0x24, r1, r3, 15, d); }
static void lmg(struct code *c, unsigned r1, unsigned r3, int32_t d) { rsy(c, 0xeb, 0x04, r1, r3, 15, d); }
/* stg %rR,D(%r15) */
static void stg(struct code *c, unsigned r, int32_t d) { rsy(c, 0xe3, 0x24, r, 0, 15, d); }

/* RI-a: op R1|op2 I2 (16 bits). */
static void ri(struct code *c, uint8_t op, uint8_t op2, unsigned r1, int16_t i)
{
	uint8_t b[4] = {op, (uint8_t)(r1 << 4 | op2)};
	be16(b + 2, (uint16_t)i);
	put(c, b, 4);
}
static void aghi(struct code *c, unsigned r, int16_t i) { ri(c, 0xa7, 0xb, r, i); }
static void lghi(struct code *c, unsigned r, int16_t i) { ri(c, 0xa7, 0x9, r, i); }

/* RIL-a/b: op R1|op2 I2 (32 bits). */
static void ril(struct code *c, uint8_t op2, unsigned r1, uint32_t i)
{
	uint8_t b[6] = {0xc0, (uint8_t)(r1 << 4 | op2)};
	be32(b + 2, i);
	put(c, b, 6);
}
/* %rR = v: iihf (insert immediate high) then iilf (low). */
static void load64(struct code *c, unsigned r, uint64_t v)
{
	ril(c, 0x8, r, (uint32_t)(v >> 32));
	ril(c, 0x9, r, (uint32_t)v);
}
/* brasl %r14,to (the offset in halfwords from this instruction). */
static void brasl(struct code *c, uint64_t base, uint64_t to)
{
	ril(c, 0x5, 14, (uint32_t)(int32_t)(((int64_t)to - (int64_t)(base + c->n)) / 2));
}

/* RRE: B9 op 00 R1R2. */
static void rre(struct code *c, uint8_t op, unsigned r1, unsigned r2)
{
	const uint8_t b[4] = {0xb9, op, 0, (uint8_t)(r1 << 4 | r2)};
	put(c, b, 4);
}
static void lgr(struct code *c, unsigned r1, unsigned r2) { rre(c, 0x04, r1, r2); }
static void ltgr(struct code *c, unsigned r1, unsigned r2) { rre(c, 0x02, r1, r2); }

/* la %rR,D(%rB) (RX-a, a 12-bit displacement). */
static void la(struct code *c, unsigned r, unsigned b2, uint16_t d)
{
	const uint8_t b[4] = {0x41, (uint8_t)(r << 4), (uint8_t)(b2 << 4 | d >> 8), (uint8_t)d};
	put(c, b, 4);
}
/* basr %r14,%rR; br %r14; nopr; the software breakpoint. */
static void basr(struct code *c, unsigned r) { put(c, (const uint8_t[]){0x0d, (uint8_t)(0xe0 | r)}, 2); }
static void br14(struct code *c) { put(c, (const uint8_t[]){0x07, 0xfe}, 2); }
/* brc M,+halfwords: returns the offset of the instruction, to patch with patch_brc. */
static size_t brc(struct code *c, unsigned mask)
{
	const size_t at = c->n;
	ri(c, 0xa7, 0x4, mask, 0);
	return at;
}
static void patch_brc(struct code *c, size_t at, size_t to) { be16(c->p + at + 2, (uint16_t)((to - at) / 2)); }

/* -- The VM's values -- */

#define OUTER_FRAME 200
#define INNER_FRAME 32
#define RECORD_OUTER 2001
#define RECORD_INNER 2002
#define RECORD_RECURSE 2003

/* The outer function's locals. The 4-byte ones come with other bytes beside them: r10's high
 * half, the slot's last four bytes. */
static const uint64_t R6 = 0x1122334455667788, R7 = 0x2132435465768798,
		      R10 = 0xa1a2a3a40a0b0c0d, SLOT160 = 0x3142536475869708,
		      SLOT168 = 0x1a2b3c4dc1c2c3c4, POOL_OUTER = 0x4152637485960718;
static const int32_t CONST_OUTER = -123456789;
/* The leaf's. */
static const uint64_t R2 = 0x5162738495a6b7c8, R3 = 0xb1b2b3b41b2c3d4e,
		      SLOT8 = 0x6172839405162738, SLOT24 = 0x2a3b4c5dd1d2d3d4,
		      SLOT16 = 0x0f1e2d3c4b5a6978, POOL_INNER = 0x718293a4b5c6d7e8;
static const int32_t CONST_INNER = -5;

static uint64_t code_outer, code_inner, pc_outer, pc_inner, pc_recurse, gc_object;
static long depth;

static uint64_t hi32(uint64_t v) { return v >> 32; }
static uint64_t lo32(uint64_t v) { return v & 0xffffffffu; }

/* Called by the deepest outer frame with its stack pointer, before it calls the leaf: the
 * truth, with the addresses the Direct locations will hold (the leaf's SP is this one minus
 * its frame). */
static void report(uint64_t sp)
{
	const uint64_t leaf_sp = sp - INNER_FRAME;
	printf(PROG ": record id=%d pc=0x%" PRIx64 " local0=0 local1=0 local2=7 local3=%" PRIu64
	       " local4=%" PRIu64 " local5=%" PRIu64 " local6=%" PRIu64 " local7=%" PRIu64
	       " local8=%" PRIu64 " local9=%" PRIu64 " local10=%" PRIu64 " local11=%" PRIu64
	       " local12=%" PRIu64 " local13=%" PRIu64 " local14=%" PRIu64 " stack_size=%d"
	       " gc_object=0x%" PRIx64 " sp=0x%" PRIx64 "\n",
	       RECORD_OUTER, pc_outer, R6, R7, lo32(R10), SLOT160, hi32(SLOT168),
	       (uint64_t)(int64_t)CONST_OUTER, POOL_OUTER, gc_object, gc_object, gc_object,
	       gc_object + 16, sp + 184, OUTER_FRAME, gc_object, sp);
	printf(PROG ": record id=%d pc=0x%" PRIx64 " local0=%" PRIu64 " local1=%" PRIu64
	       " local2=%" PRIu64 " local3=%" PRIu64 " local4=%" PRIu64 " local5=%" PRIu64
	       " local6=%" PRIu64 " local7=%" PRIu64 " stack_size=%d\n",
	       RECORD_INNER, pc_inner, R2, lo32(R3), SLOT8, leaf_sp + 16,
	       (uint64_t)(int64_t)CONST_INNER, POOL_INNER, R6, hi32(SLOT24), INNER_FRAME);
	if (depth)
		printf(PROG ": record id=%d pc=0x%" PRIx64 " local0=%" PRIu64 " local1=%" PRIu64
		       " local2=%" PRIu64 " local3=%" PRIu64 " stack_size=%d frames=%ld\n",
		       RECORD_RECURSE, pc_recurse, R6, R7, lo32(R10), SLOT160, OUTER_FRAME, depth);
}

/* -- The code -- */

enum { OUTER_OFF = 0, INNER_OFF = 0x100, CODE_SIZE = 0x200 };

/* outer(depth %r2, object %r3, report %r4) */
static void write_outer(struct code *c, uint64_t base, uint64_t inner, uint32_t *rec_outer,
			uint32_t *rec_recurse)
{
	stmg(c, 6, 15, 48);
	aghi(c, 15, -OUTER_FRAME);
	lgr(c, 9, 2);  /* the depth */
	lgr(c, 8, 3);  /* the GC object: base of both roots */
	lgr(c, 13, 4); /* report */
	load64(c, 6, R6);
	load64(c, 7, R7);
	load64(c, 10, R10);
	load64(c, 1, SLOT160);
	stg(c, 1, 160);
	load64(c, 1, SLOT168);
	stg(c, 1, 168);
	la(c, 1, 8, 16); /* the derived pointer, object + 16, in a slot */
	stg(c, 1, 176);
	stg(c, 8, 184); /* the gc alloca: a frame object holding the object */
	ltgr(c, 9, 9);
	const size_t to_leaf = brc(c, 8); /* jz */
	lgr(c, 2, 9);
	aghi(c, 2, -1);
	lgr(c, 3, 8);
	lgr(c, 4, 13);
	brasl(c, base, base); /* itself */
	*rec_recurse = (uint32_t)c->n;
	const size_t to_done = brc(c, 15); /* j */
	patch_brc(c, to_leaf, c->n);
	lgr(c, 2, 15);
	basr(c, 13); /* report(sp) */
	brasl(c, base, inner);
	*rec_outer = (uint32_t)c->n;
	patch_brc(c, to_done, c->n);
	lghi(c, 2, 0);
	lmg(c, 6, 15, 48 + OUTER_FRAME);
	br14(c);
}

static void write_inner(struct code *c, int trap, uint32_t *rec_inner)
{
	aghi(c, 15, -INNER_FRAME);
	load64(c, 1, SLOT8);
	stg(c, 1, 8);
	load64(c, 1, SLOT16);
	stg(c, 1, 16);
	load64(c, 1, SLOT24);
	stg(c, 1, 24);
	load64(c, 2, R2);
	load64(c, 3, R3);
	put(c, trap ? (const uint8_t[]){0x00, 0x01} : (const uint8_t[]){0x07, 0x00}, 2);
	*rec_inner = (uint32_t)c->n;
	lghi(c, 2, 0); /* not an SP move: the stackmap rule checks the instruction at a record */
	aghi(c, 15, INNER_FRAME);
	br14(c);
}

int main(int argc, char **argv)
{
	int trap = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--trap")) {
			trap = 1;
		} else if (!strcmp(argv[i], "--depth") && i + 1 < argc) {
			depth = strtol(argv[++i], NULL, 0);
		} else {
			fprintf(stderr, "usage: " PROG " [--trap] [--depth N]\n");
			return 2;
		}
	}
	if (depth < 0 || depth > 100000) {
		fprintf(stderr, PROG ": --depth from 0 to 100000\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	const uint64_t base = (uint64_t)(uintptr_t)page;
	code_outer = base + OUTER_OFF;
	code_inner = base + INNER_OFF;
	uint32_t rec_outer, rec_recurse, rec_inner;
	struct code o = {page + OUTER_OFF, 0}, in = {page + INNER_OFF, 0};
	write_outer(&o, code_outer, code_inner, &rec_outer, &rec_recurse);
	write_inner(&in, trap, &rec_inner);
	if (o.n > INNER_OFF - OUTER_OFF || in.n > CODE_SIZE - INNER_OFF) {
		fprintf(stderr, PROG ": code too long\n");
		return 1;
	}
	__builtin___clear_cache((char *)page, (char *)page + CODE_SIZE);
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC)) {
		perror("mprotect");
		return 1;
	}
	pc_outer = code_outer + rec_outer;
	pc_inner = code_inner + rec_inner;
	pc_recurse = code_outer + rec_recurse;
	uint64_t *object = malloc(64);
	if (!object)
		return 1;
	memset(object, 0x5a, 64);
	gc_object = (uint64_t)(uintptr_t)object;

	/* The stackmap, in the host's byte order (big-endian). Stack sizes are what the
	 * prologue subtracts from r15, as LLVM's SystemZ backend writes them: the caller's SP is
	 * SP + size, the CFA 160 above it. */
	jitmap_error err = {0};
	jitmap_smbuilder *b = jitmap_smbuilder_new(JITMAP_ORDER_AUTO);
	jitmap_location pool_outer, pool_inner, const_outer, const_inner;
	if (!b || jitmap_smbuilder_constant(b, POOL_OUTER, &pool_outer) ||
	    jitmap_smbuilder_constant(b, POOL_INNER, &pool_inner) ||
	    jitmap_smbuilder_constant(b, (uint64_t)(int64_t)CONST_OUTER, &const_outer) ||
	    jitmap_smbuilder_constant(b, (uint64_t)(int64_t)CONST_INNER, &const_inner)) {
		fprintf(stderr, PROG ": stackmap constants\n");
		return 1;
	}
	/* The statepoint's shape (stackmap-format.md §2): calling convention, flags, number of
	 * deopt values; the deopt values; (base, derived) pairs; gc allocas (Direct) last. */
	const jitmap_location outer_locs[] = {
		{JITMAP_LOC_CONSTANT, 8, 0, 0},
		{JITMAP_LOC_CONSTANT, 8, 0, 0},
		{JITMAP_LOC_CONSTANT, 8, 0, 7},
		{JITMAP_LOC_REGISTER, 8, 6, 0},
		{JITMAP_LOC_REGISTER, 8, 7, 0},
		{JITMAP_LOC_REGISTER, 4, 10, 0}, /* the low half of r10 */
		{JITMAP_LOC_INDIRECT, 8, 15, 160},
		{JITMAP_LOC_INDIRECT, 4, 15, 168},
		const_outer,
		pool_outer,
		{JITMAP_LOC_REGISTER, 8, 8, 0}, /* (object, object) */
		{JITMAP_LOC_REGISTER, 8, 8, 0},
		{JITMAP_LOC_REGISTER, 8, 8, 0}, /* (object, object + 16) */
		{JITMAP_LOC_INDIRECT, 8, 15, 176},
		{JITMAP_LOC_DIRECT, 8, 15, 184}, /* gc alloca */
	};
	const jitmap_location recurse_locs[] = {
		{JITMAP_LOC_REGISTER, 8, 6, 0},
		{JITMAP_LOC_REGISTER, 8, 7, 0},
		{JITMAP_LOC_REGISTER, 4, 10, 0},
		{JITMAP_LOC_INDIRECT, 8, 15, 160},
	};
	const jitmap_location inner_locs[] = {
		{JITMAP_LOC_REGISTER, 8, 2, 0},
		{JITMAP_LOC_REGISTER, 4, 3, 0},
		{JITMAP_LOC_INDIRECT, 8, 15, 8},
		{JITMAP_LOC_DIRECT, 8, 15, 16},
		const_inner,
		pool_inner,
		{JITMAP_LOC_REGISTER, 8, 6, 0}, /* the caller's, untouched by the leaf */
		{JITMAP_LOC_INDIRECT, 4, 15, 24},
	};
#define N(a) (sizeof(a) / sizeof((a)[0]))
	void *sm = NULL;
	size_t sm_size = 0;
	if (jitmap_smbuilder_add_function(b, code_outer, OUTER_FRAME, &err) ||
	    jitmap_smbuilder_add_record(b, RECORD_RECURSE, rec_recurse, recurse_locs,
					N(recurse_locs), NULL, 0, &err) ||
	    jitmap_smbuilder_add_record(b, RECORD_OUTER, rec_outer, outer_locs, N(outer_locs),
					NULL, 0, &err) ||
	    jitmap_smbuilder_add_function(b, code_inner, INNER_FRAME, &err) ||
	    jitmap_smbuilder_add_record(b, RECORD_INNER, rec_inner, inner_locs, N(inner_locs),
					NULL, 0, &err) ||
	    jitmap_smbuilder_finish(b, &sm, &sm_size)) {
		fprintf(stderr, PROG ": stackmap: %s\n", err.reason);
		return 1;
	}
	jitmap_smbuilder_free(b);
	const jitmap_jit_function fns[] = {
		{"handjit_s390x_outer", code_outer, o.n},
		{"handjit_s390x_inner", code_inner, in.n},
	};
	const jitmap_jit_region region = {.address = base, .size = CODE_SIZE, .functions = fns,
					  .num_functions = 2, .stackmap = sm,
					  .stackmap_size = sm_size};
	jitmap_jit_entry *e = jitmap_jit_register(&region, &err);
	if (!e) {
		fprintf(stderr, PROG ": register: %s\n", err.reason);
		return 1;
	}
	/* The stackmap's NumFunctions (bytes 4-7) as written: 00000002 in big-endian. */
	const uint8_t *h = sm;
	printf(PROG ": code outer=0x%" PRIx64 " inner=0x%" PRIx64 " stackmap=%02x%02x%02x%02x\n",
	       code_outer, code_inner, h[4], h[5], h[6], h[7]);
	const long r = ((long (*)(long, uint64_t, void (*)(uint64_t)))(uintptr_t)code_outer)(
		depth, gc_object, report);
	printf(PROG ": result %ld ok\n", r);
	jitmap_jit_unregister(e);
	free(sm);
	free(object);
	return 0;
}

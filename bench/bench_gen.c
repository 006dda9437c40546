/* bench_gen: make the inputs of the benchmarks.
 *
 *   bench_gen section OUT [--mb M | --records N] [--big] [--seed S]
 *       A valid version 3 stackmap section (raw bytes) of at least M MB (default 16) or of
 *       exactly N records, written the way LLVM lays it out (stackmap-format.md §1): one
 *       blob per 4096 functions, as a linked program has one per object file; per blob a
 *       deduplicated constant pool; per record 1 to 12 locations of every kind, a tenth of
 *       them shaped like statepoints, a sixth with live-outs like patchpoints. Functions get
 *       linked, non-overlapping addresses and 16-byte alignment, and instruction offsets are
 *       multiples of 4, so any PC of the form record PC + 2 is a miss.
 *   bench_gen ir OUT [--functions N] [--seed S]
 *       LLVM IR (typed pointers, for llc-14) of N functions (default 20000) full of
 *       stackmaps, patchpoints and statepoints, to compile into a large ELF object.
 *
 * The output depends only on the arguments (a fixed pseudo-random sequence).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -- Pseudo-random numbers (splitmix64) -- */

static uint64_t rng_state = 0x6a09e667f3bcc909u;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static unsigned between(unsigned lo, unsigned hi)
{
	return lo + (unsigned)(rnd() % (hi - lo + 1));
}

/* True with probability `percent`/100. */
static int chance(unsigned percent)
{
	return rnd() % 100 < percent;
}

/* -- Output buffer -- */

struct out {
	unsigned char *p;
	size_t len, cap;
	int big;
};

static void put(struct out *o, uint64_t v, unsigned size)
{
	if (o->len + size > o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 1 << 20;
		unsigned char *p = realloc(o->p, cap);
		if (!p) {
			fprintf(stderr, "bench_gen: out of memory\n");
			exit(1);
		}
		o->p = p;
		o->cap = cap;
	}
	for (unsigned i = 0; i < size; i++) {
		unsigned shift = 8 * (o->big ? size - 1 - i : i);
		o->p[o->len++] = (unsigned char)(v >> shift);
	}
}

static void pad8(struct out *o)
{
	while (o->len % 8)
		put(o, 0, 1);
}

/* -- Raw sections -- */

enum { REGISTER = 1, DIRECT, INDIRECT, CONSTANT, CONSTANT_INDEX };

#define FUNCS_PER_BLOB 4096
#define MAX_LOCS 12

struct loc {
	unsigned kind, size, reg;
	int32_t offset;
};

static struct loc random_location(unsigned num_constants)
{
	static const unsigned gpr[] = {0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15};
	unsigned k = between(0, 99);
	struct loc l = {0, 8, 0, 0};
	if (k < 35) {
		l.kind = REGISTER;
		if (chance(10)) {
			l.reg = between(17, 32); /* xmm: LLVM writes 16 for float and double */
			l.size = 16;
		} else {
			l.reg = gpr[rnd() % (sizeof(gpr) / sizeof(gpr[0]))];
			l.size = chance(20) ? 4 : 8;
		}
	} else if (k < 60) {
		l.kind = INDIRECT;
		l.reg = chance(70) ? 7 : 6;
		l.offset = l.reg == 7 ? (int32_t)(8 * between(0, 40)) : -(int32_t)(8 * between(1, 40));
		l.size = chance(15) ? 16 : chance(20) ? 4 : 8;
	} else if (k < 70) {
		l.kind = DIRECT;
		l.reg = chance(50) ? 7 : 6;
		l.offset = l.reg == 7 ? (int32_t)(8 * between(0, 40)) : -(int32_t)(8 * between(1, 40));
	} else if (k < 90 || num_constants == 0) {
		l.kind = CONSTANT;
		l.offset = chance(80) ? (int32_t)between(0, 100) : (int32_t)(uint32_t)rnd();
	} else {
		l.kind = CONSTANT_INDEX;
		l.offset = (int32_t)between(0, num_constants - 1);
	}
	return l;
}

static void put_location(struct out *o, const struct loc *l)
{
	put(o, l->kind, 1);
	put(o, 0, 1);
	put(o, l->size, 2);
	put(o, l->reg, 2);
	put(o, 0, 2);
	put(o, (uint32_t)l->offset, 4);
}

/* One record: a statepoint shape, or a stackmap/patchpoint of 1 to 12 locations. */
static void put_record(struct out *o, uint32_t ioff, unsigned num_constants)
{
	struct loc locs[MAX_LOCS];
	unsigned n = 0, nlive = 0;
	uint64_t id;

	if (chance(10)) {
		id = 2882400000u; /* what RewriteStatepointsForGC writes by default */
		unsigned deopt = between(0, 3), pairs = between(1, 3);
		locs[n++] = (struct loc){CONSTANT, 8, 0, 0};
		locs[n++] = (struct loc){CONSTANT, 8, 0, chance(20) ? 2 : 0};
		locs[n++] = (struct loc){CONSTANT, 8, 0, (int32_t)deopt};
		for (unsigned i = 0; i < deopt; i++) {
			locs[n] = random_location(num_constants);
			if (locs[n].kind == DIRECT)
				locs[n].kind = INDIRECT;
			n++;
		}
		for (unsigned i = 0; i < pairs; i++) {
			struct loc base = {INDIRECT, 8, 7, (int32_t)(8 * between(0, 20))};
			locs[n++] = base;
			if (chance(70))
				locs[n++] = base;
			else
				locs[n++] = (struct loc){INDIRECT, 8, 7, (int32_t)(8 * between(0, 20))};
		}
	} else {
		id = chance(5) ? UINT64_MAX : chance(80) ? between(1, 100000) : rnd();
		n = between(1, MAX_LOCS);
		for (unsigned i = 0; i < n; i++)
			locs[i] = random_location(num_constants);
		if (chance(18))
			nlive = between(1, 6);
	}

	put(o, id, 8);
	put(o, ioff, 4);
	put(o, 0, 2);
	put(o, n, 2);
	for (unsigned i = 0; i < n; i++)
		put_location(o, &locs[i]);
	pad8(o);
	put(o, 0, 2);
	put(o, nlive, 2);
	unsigned reg = 0;
	for (unsigned i = 0; i < nlive; i++) {
		reg += between(1, 3); /* sorted, as StackMapLivenessAnalysis leaves them */
		put(o, reg, 2);
		put(o, 0, 1);
		put(o, 8, 1);
	}
	pad8(o);
}

/* Records in a function: mostly few, sometimes many (loops with safepoints). */
static unsigned records_in_function(void)
{
	return chance(90) ? between(1, 4) : between(5, 40);
}

/* Write blobs until `max_records` records or `min_bytes` bytes, whichever comes first. */
static void make_section(struct out *o, uint64_t max_records, uint64_t min_bytes)
{
	uint64_t records = 0, address = 0x401000;
	while (records < max_records && o->len < min_bytes) {
		/* Plan the blob's functions first: the header and function table come first. */
		static unsigned counts[FUNCS_PER_BLOB];
		unsigned nf = 0;
		uint64_t nr = 0;
		while (nf < FUNCS_PER_BLOB && records + nr < max_records) {
			unsigned c = records_in_function();
			if (c > max_records - records - nr)
				c = (unsigned)(max_records - records - nr);
			counts[nf++] = c;
			nr += c;
			/* Stop a byte-sized section near its goal (about 100 bytes a record). */
			if (max_records == UINT64_MAX && o->len + nr * 100 >= min_bytes)
				break;
		}
		const unsigned nc = chance(10) ? 0 : between(1, 64);
		put(o, 3, 1);
		put(o, 0, 1);
		put(o, 0, 2);
		put(o, nf, 4);
		put(o, nc, 4);
		put(o, nr, 4);
		/* Offsets are chosen per function below; remember where each function field is. */
		static uint32_t offsets[FUNCS_PER_BLOB][40];
		for (unsigned f = 0; f < nf; f++) {
			uint32_t off = between(4, 40) * 4;
			for (unsigned k = 0; k < counts[f]; k++) {
				offsets[f][k] = off;
				/* A few records share a PC with the one before, as LLVM can emit. */
				if (!(k + 1 < counts[f] && chance(2)))
					off += between(1, 16) * 4;
			}
			put(o, address, 8);
			put(o, chance(3) ? UINT64_MAX : 16 + 8 * between(0, 60), 8);
			put(o, counts[f], 8);
			address += (off + 64 + 15) & ~(uint64_t)15;
		}
		for (unsigned c = 0; c < nc; c++)
			put(o, chance(50) ? ((uint64_t)1 << 32) + c : rnd(), 8);
		for (unsigned f = 0; f < nf; f++)
			for (unsigned k = 0; k < counts[f]; k++)
				put_record(o, offsets[f][k], nc);
		records += nr;
		/* Linkers may leave zero padding between objects' blobs. */
		if (chance(20))
			put(o, 0, 8);
	}
}

/* -- LLVM IR -- */

static void ir_operand(FILE *f, unsigned fn, unsigned i)
{
	(void)fn;
	switch (between(0, 11)) {
	case 0: fprintf(f, "i64 %%a"); break;
	case 1: fprintf(f, "i64 %%b"); break;
	case 2: fprintf(f, "i32 %%c"); break;
	case 3: fprintf(f, "double %%d"); break;
	case 4: fprintf(f, "i64 %%x"); break;
	case 5: fprintf(f, "i64* %%s0"); break;
	case 6: fprintf(f, "[4 x i64]* %%s1"); break;
	case 7: fprintf(f, "i64 %u", between(0, 1000)); break;
	case 8: fprintf(f, "i64 -%u", between(1, 1000)); break;
	case 9: /* pool constants, shared by many records */
		fprintf(f, "i64 %" PRIu64, ((uint64_t)1 << 33) + between(0, 200));
		break;
	case 10: fprintf(f, "i64 %%e"); break;
	default: fprintf(f, "i64 %%y%u", i % 3); break;
	}
}

static void ir_operands(FILE *f, unsigned fn, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		fputs(", ", f);
		ir_operand(f, fn, i);
	}
}

static void make_ir(FILE *f, unsigned functions)
{
	fputs("; Generated by bench_gen ir: functions full of stackmaps, patchpoints and\n"
	      "; statepoints, for the jitmap benchmarks. Typed pointers, for llc-14.\n"
	      "declare void @llvm.experimental.stackmap(i64, i32, ...)\n"
	      "declare void @llvm.experimental.patchpoint.void(i64, i32, i8*, i32, ...)\n"
	      "declare i64 @llvm.experimental.patchpoint.i64(i64, i32, i8*, i32, ...)\n"
	      "declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)\n"
	      "declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32, i32)\n"
	      "declare void @ext(i64)\n"
	      "declare void @safepoint()\n\n",
	      f);
	unsigned id = 1;
	for (unsigned fn = 0; fn < functions; fn++) {
		const int sp = chance(20);
		fprintf(f,
			"define i64 @bench_fn%u(i64 %%a, i64 %%b, i32 %%c, double %%d, i64 %%e, "
			"i8 addrspace(1)* %%p)%s {\n"
			"entry:\n"
			"  %%s0 = alloca i64, align 8\n"
			"  %%s1 = alloca [4 x i64], align 8\n"
			"  store i64 %%a, i64* %%s0\n"
			"  %%x = mul i64 %%a, %%b\n"
			"  %%y0 = add i64 %%x, %%e\n"
			"  %%y1 = xor i64 %%y0, %%b\n"
			"  %%y2 = sub i64 %%y1, %%a\n",
			fn, sp ? " gc \"statepoint-example\"" : "");
		const unsigned maps = between(2, 5);
		for (unsigned m = 0; m < maps; m++) {
			fprintf(f, "  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 %u, i32 0", id++);
			ir_operands(f, fn, between(1, 12));
			fputs(")\n", f);
			if (chance(40))
				fprintf(f, "  call void @ext(i64 %%y%u)\n", m % 3);
		}
		fprintf(f, "  %%r = call i64 (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.i64("
			   "i64 %u, i32 16, i8* null, i32 0", id++);
		ir_operands(f, fn, between(1, 6));
		fputs(")\n", f);
		if (sp) {
			fprintf(f,
				"  %%tok = call token (i64, i32, void ()*, i32, i32, ...) "
				"@llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, "
				"void ()* elementtype(void ()) @safepoint, i32 0, i32 0, i32 0, i32 0) "
				"[ \"deopt\"(i64 %%a, i32 %u, i64 %%r), \"gc-live\"(i8 addrspace(1)* %%p) ]\n"
				"  %%p.rel = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8("
				"token %%tok, i32 0, i32 0)\n"
				"  %%pi = ptrtoint i8 addrspace(1)* %%p.rel to i64\n"
				"  %%r1 = add i64 %%r, %%pi\n",
				between(0, 100));
		} else {
			fputs("  %r1 = add i64 %r, 1\n", f);
		}
		fputs("  %v = load i64, i64* %s0\n"
		      "  %t0 = add i64 %r1, %v\n"
		      "  %t1 = add i64 %t0, %y0\n"
		      "  %t2 = add i64 %t1, %y1\n"
		      "  %t3 = add i64 %t2, %y2\n"
		      "  ret i64 %t3\n"
		      "}\n\n",
		      f);
	}
}

/* -- Command line -- */

static int usage(void)
{
	fputs("usage: bench_gen section OUT [--mb M | --records N] [--big] [--seed S]\n"
	      "       bench_gen ir OUT [--functions N] [--seed S]\n",
	      stderr);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return usage();
	const char *mode = argv[1], *path = argv[2];
	uint64_t mb = 16, records = UINT64_MAX, functions = 20000;
	int big = 0;
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--big"))
			big = 1;
		else if (i + 1 < argc && !strcmp(a, "--mb"))
			mb = strtoull(argv[++i], NULL, 0);
		else if (i + 1 < argc && !strcmp(a, "--records"))
			records = strtoull(argv[++i], NULL, 0);
		else if (i + 1 < argc && !strcmp(a, "--functions"))
			functions = strtoull(argv[++i], NULL, 0);
		else if (i + 1 < argc && !strcmp(a, "--seed"))
			rng_state ^= strtoull(argv[++i], NULL, 0);
		else
			return usage();
	}
	FILE *f = fopen(path, "wb");
	if (!f) {
		perror(path);
		return 1;
	}
	if (!strcmp(mode, "section")) {
		struct out o = {.big = big};
		make_section(&o, records, records == UINT64_MAX ? mb << 20 : UINT64_MAX);
		fwrite(o.p, 1, o.len, f);
		free(o.p);
	} else if (!strcmp(mode, "ir")) {
		make_ir(f, (unsigned)functions);
	} else {
		fclose(f);
		return usage();
	}
	if (fclose(f)) {
		perror(path);
		return 1;
	}
	return 0;
}

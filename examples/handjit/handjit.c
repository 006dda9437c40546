/* handjit.c: jitmap-handjit, a JIT that writes x86-64 machine code by hand.
 *
 * It stands for the JITs that do not use LLVM (LuaJIT, Dart, HotSpot-style "lightweight
 * frames"): no unwind tables at all, one function with a frame pointer and one without, and VM
 * values that live only in callee-saved registers and stack slots at calls into the runtime.
 * Those values can be found only through the stack map this JIT writes with jitmap's builder
 * and registers, with both functions in one entry, through jitmap's producer API.
 *
 *   main --call--> handjit_outer (push rbp; mov rbp,rsp; push rbx; push r12; sub rsp,16)
 *                  --call--> handjit_inner (sub rsp,24 only)
 *                            --call--> jitmap_handjit_safepoint (C; break here)
 *
 * Before each call it reports the true values (read from its registers and slots by the JIT
 * code itself) as machine-parseable lines, so tests can compare what a debugger shows:
 *
 *   jitmap-handjit: record id=N function=NAME pc=0x.. sp=0x.. cfa=0x.. stack_size=N
 *                   local0=V ... local5=V          (one line; values as unsigned decimal)
 *
 * `pc` is the record's PC (the call's return address), `sp` the function's stack pointer at the
 * call, `cfa` its caller's stack pointer (sp + stack_size + 8). localK is location K of the
 * record (a `kinds` line names their kinds; Direct values are the address).
 *
 * Usage: jitmap-handjit [--abort] [--pause] [--unregister] [--image FILE] [--ykllvm]
 *   --abort       abort() inside the safepoint (for core files)
 *   --pause       wait inside the safepoint (at most 300 s) until a debugger attaches and
 *                 sets jitmap_handjit_resume = 1 (for `gdb -p`)
 *   --unregister  unregister the code before exit, and say so
 *   --image FILE  also write the registered ELF image to FILE
 *   --ykllvm      write the stack map in ykllvm's layout (with extras): the same records,
 *                 locations 2 and 3 one live variable (variables 0 1 2 2 3 4), and spill
 *                 tables (handjit_outer keeps rbp and saves rbx and r12; handjit_inner
 *                 neither); "kinds" says the grouping
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jitmap/jitmap.h" /* jitmap_loc_kind_name, for the truth lines */
#include "jitmap/producer.h"

#define EXPORT __attribute__((visibility("default"), noinline, used))
#define EXPORT_DATA __attribute__((visibility("default"), used))

/* -- The runtime the JIT code calls -- */

enum { OUTER_ID = 1001, INNER_ID = 1002, NUM_LOCALS = 6 };

/* DWARF register numbers (x86-64 psABI). */
enum { DW_RBX = 3, DW_RBP = 6, DW_RSP = 7, DW_R12 = 12 };

#define POOL_CONSTANT UINT64_C(0x1122334455667788) /* too wide for a Constant: pooled, shared */

struct record_info {
	uint64_t id;
	const char *function;
	uint64_t pc, stack_size;
	jitmap_location locs[NUM_LOCALS];
	uint64_t constants[NUM_LOCALS]; /* the values of the constant locations */
};

static struct record_info records[2];

/* The record PCs (outer, inner), for debugger scripts that need an address in each JIT
 * function without unwinding to it: `info symbol *(unsigned long *)&jitmap_handjit_truth_pc`. */
EXPORT_DATA uint64_t jitmap_handjit_truth_pc[2];
static int abort_in_safepoint, pause_in_safepoint, busy_ms;
EXPORT_DATA volatile int jitmap_handjit_resume;

static const struct record_info *record_by_id(uint64_t id)
{
	for (size_t i = 0; i < sizeof(records) / sizeof(records[0]); i++)
		if (records[i].id == id)
			return &records[i];
	return NULL;
}

/* Called by the JIT code just before the call a record describes, with the values it holds in
 * the record's first four locations and its stack pointer (the same at the call: nothing is
 * pushed in between). */
EXPORT void jitmap_handjit_report(uint64_t id, uint64_t v0, uint64_t v1, uint64_t v2,
				  uint64_t v3, uint64_t sp)
{
	const struct record_info *r = record_by_id(id);
	if (!r) {
		fprintf(stderr, "jitmap-handjit: no record %" PRIu64 "\n", id);
		abort();
	}
	const uint64_t v[NUM_LOCALS] = {v0, v1, v2, v3, r->constants[4], r->constants[5]};
	printf("jitmap-handjit: kinds id=%" PRIu64, id);
	for (int i = 0; i < NUM_LOCALS; i++)
		printf(" local%d=%s", i, jitmap_loc_kind_name(r->locs[i].kind));
	printf("\njitmap-handjit: record id=%" PRIu64 " function=%s pc=0x%" PRIx64 " sp=0x%" PRIx64
	       " cfa=0x%" PRIx64 " stack_size=%" PRIu64,
	       id, r->function, r->pc, sp, sp + r->stack_size + 8, r->stack_size);
	for (int i = 0; i < NUM_LOCALS; i++)
		printf(" local%d=%" PRIu64, i, v[i]);
	printf("\n");
	fflush(stdout);
}

/* Where users break: the JIT frames are its callers. */
EXPORT void jitmap_handjit_safepoint(uint64_t id)
{
	printf("jitmap-handjit: safepoint id=%" PRIu64 "\n", id);
	fflush(stdout);
	if (pause_in_safepoint) {
		printf("jitmap-handjit: paused pid=%ld\n", (long)getpid());
		fflush(stdout);
		for (int ms = 0; !jitmap_handjit_resume && ms < 300000; ms += 10)
			usleep(10000);
		printf("jitmap-handjit: resumed%s\n", jitmap_handjit_resume ? "" : " (timeout)");
	}
	if (abort_in_safepoint)
		abort();
	/* --busy: CPU time spent under the JIT frames, for a sampling profiler (perf record). */
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (t = t0; busy_ms && (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 <
			 busy_ms;)
		clock_gettime(CLOCK_MONOTONIC, &t);
	__asm__ volatile("" ::: "memory");
}

/* -- Emitting machine code -- */

struct emit {
	uint8_t *p;
	size_t len, cap;
};

static void bytes(struct emit *e, const void *b, size_t n)
{
	if (e->len + n > e->cap) {
		fprintf(stderr, "jitmap-handjit: code buffer full\n");
		exit(1);
	}
	memcpy(e->p + e->len, b, n);
	e->len += n;
}

#define B(e, ...) bytes((e), (const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__}))

static void imm32(struct emit *e, uint32_t v)
{
	bytes(e, &v, 4); /* x86-64 is little-endian, as is the host */
}

static void imm64(struct emit *e, uint64_t v)
{
	bytes(e, &v, 8);
}

/* mov rax, imm64; call rax (the runtime may be beyond rel32 reach of the code buffer). */
static void call_abs(struct emit *e, void *fn)
{
	B(e, 0x48, 0xb8);
	imm64(e, (uint64_t)(uintptr_t)fn);
	B(e, 0xff, 0xd0);
}

static void align16(struct emit *e)
{
	while (e->len % 16)
		B(e, 0xcc); /* int3 */
}

/* The VM values, computed in C the same way as the machine code does, to check the result. */
static uint64_t expected_result(uint64_t x)
{
	const uint64_t rbx = 3 * x + 7, r12 = x ^ 0x5a5a, slot = x + 1000;
	const uint64_t y = rbx + 1;
	return (4 * y + (y - 5)) + rbx + r12 + slot;
}

/* -- ykllvm's layout (--ykllvm) --
 *
 * The builder writes LLVM's layout; yk's JITs write ykllvm's. Rewritten here record by record:
 * the count at +14 becomes a count of live variables, each a u8 count of locations, and each
 * location gets a u16 count of extra places (none) before its offset; after the records, a
 * spill table per function. Returns a new section, or NULL. */
static const uint8_t yk_vars[NUM_LOCALS] = {0, 1, 2, 2, 3, 4}; /* location -> variable */

static void put(uint8_t *p, size_t *n, uint64_t v, unsigned width)
{
	for (unsigned i = 0; i < width; i++)
		p[(*n)++] = (uint8_t)(v >> (8 * i));
}

static uint8_t *to_ykllvm(const uint8_t *in, size_t len, size_t *out_len)
{
	uint32_t nf, nc, nr;
	memcpy(&nf, in + 4, 4), memcpy(&nc, in + 8, 4), memcpy(&nr, in + 12, 4);
	uint8_t *out = calloc(1, 2 * len + 64);
	if (!out)
		return NULL;
	size_t at = 16 + 24 * (size_t)nf + 8 * (size_t)nc, n = at;
	memcpy(out, in, at);
	for (uint32_t r = 0; r < nr; r++) {
		uint16_t nloc, nlive;
		memcpy(&nloc, in + at + 14, 2);
		memcpy(out + n, in + at, 14), n += 14;
		put(out, &n, yk_vars[nloc - 1] + 1, 2);
		at += 16;
		for (uint16_t l = 0; l < nloc; l++, at += 12) {
			if (l == 0 || yk_vars[l] != yk_vars[l - 1]) {
				uint8_t count = 0;
				for (uint16_t k = l; k < nloc && yk_vars[k] == yk_vars[l]; k++)
					count++;
				out[n++] = count;
			}
			memcpy(out + n, in + at, 8), n += 8;
			put(out, &n, 0, 2); /* no extra places */
			memcpy(out + n, in + at + 8, 4), n += 4;
		}
		at = (at + 7) & ~(size_t)7;
		n = (n + 7) & ~(size_t)7;
		memcpy(&nlive, in + at + 2, 2);
		const size_t tail = (4 + 4 * (size_t)nlive + 7) & ~(size_t)7;
		memcpy(out + n, in + at, tail), n += tail, at += tail;
	}
	/* handjit_outer: a frame pointer; rbx and r12 pushed (frame indexes -2, -3). */
	put(out, &n, 1, 1), put(out, &n, 0, 1), put(out, &n, 2, 4);
	put(out, &n, DW_RBX, 2), put(out, &n, 0, 2), put(out, &n, (uint32_t)-2, 4);
	put(out, &n, DW_R12, 2), put(out, &n, 0, 2), put(out, &n, (uint32_t)-3, 4);
	/* handjit_inner: none */
	put(out, &n, 0, 1), put(out, &n, 0, 1), put(out, &n, 0, 4);
	*out_len = n;
	return out;
}

/* -- main -- */

int main(int argc, char **argv)
{
	int unregister = 0, ykllvm = 0;
	const char *image_path = NULL, *perf_dir = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--abort"))
			abort_in_safepoint = 1;
		else if (!strcmp(argv[i], "--pause"))
			pause_in_safepoint = 1;
		else if (!strcmp(argv[i], "--unregister"))
			unregister = 1;
		else if (!strcmp(argv[i], "--image") && i + 1 < argc)
			image_path = argv[++i];
		else if (!strcmp(argv[i], "--perf") && i + 1 < argc)
			perf_dir = argv[++i];
		else if (!strcmp(argv[i], "--busy") && i + 1 < argc)
			busy_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--ykllvm"))
			ykllvm = 1;
		else {
			fprintf(stderr, "usage: jitmap-handjit [--abort] [--pause] [--unregister] "
				"[--image FILE] [--perf DIR] [--busy MS] [--ykllvm]\n");
			return 2;
		}
	}
	/* --perf DIR: tell perf too (/tmp/perf-PID.map and DIR/jit-PID.dump). */
	if (perf_dir) {
		const int rc = jitmap_perf_open(JITMAP_PERF_MAP | JITMAP_PERF_JITDUMP, perf_dir);
		if (rc) {
			fprintf(stderr, "jitmap-handjit: perf files: %s\n", strerror(-rc));
			return 1;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	const size_t cap = 4096;
	uint8_t *code = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("jitmap-handjit: mmap");
		return 1;
	}
	struct emit e = {code, 0, cap};
	const uint64_t base = (uint64_t)(uintptr_t)code;

	/* handjit_outer(x): frame pointer; VM values in rbx, r12 and the slot [rbp-24].
	 * Frame: saved rbp, rbx, r12, 16 bytes of slots: stack size 40, and rsp = rbp - 32 is
	 * 16-byte aligned at its calls. */
	const size_t outer = e.len;
	B(&e, 0x55);                            /* push rbp */
	B(&e, 0x48, 0x89, 0xe5);                /* mov rbp, rsp */
	B(&e, 0x53);                            /* push rbx */
	B(&e, 0x41, 0x54);                      /* push r12 */
	B(&e, 0x48, 0x83, 0xec, 0x10);          /* sub rsp, 16 */
	B(&e, 0x48, 0x8d, 0x5c, 0x7f, 0x07);    /* lea rbx, [rdi+rdi*2+7] */
	B(&e, 0x49, 0x89, 0xfc);                /* mov r12, rdi */
	B(&e, 0x49, 0x81, 0xf4);                /* xor r12, 0x5a5a */
	imm32(&e, 0x5a5a);
	B(&e, 0x48, 0x8d, 0x87);                /* lea rax, [rdi+1000] */
	imm32(&e, 1000);
	B(&e, 0x48, 0x89, 0x45, 0xe8);          /* mov [rbp-24], rax */
	B(&e, 0xbf);                            /* mov edi, OUTER_ID */
	imm32(&e, OUTER_ID);
	B(&e, 0x48, 0x89, 0xde);                /* mov rsi, rbx */
	B(&e, 0x4c, 0x89, 0xe2);                /* mov rdx, r12 */
	B(&e, 0x48, 0x8b, 0x4d, 0xe8);          /* mov rcx, [rbp-24] */
	B(&e, 0x4c, 0x8d, 0x45, 0xe8);          /* lea r8, [rbp-24] */
	B(&e, 0x49, 0x89, 0xe1);                /* mov r9, rsp */
	call_abs(&e, (void *)jitmap_handjit_report);
	B(&e, 0x48, 0x8d, 0x7b, 0x01);          /* lea rdi, [rbx+1] */
	B(&e, 0xe8);                            /* call handjit_inner (rel32, patched below) */
	const size_t call_inner_fixup = e.len;
	imm32(&e, 0);
	const size_t outer_record = e.len - outer; /* the return address */
	B(&e, 0x48, 0x01, 0xd8);                /* add rax, rbx */
	B(&e, 0x4c, 0x01, 0xe0);                /* add rax, r12 */
	B(&e, 0x48, 0x03, 0x45, 0xe8);          /* add rax, [rbp-24] */
	B(&e, 0x48, 0x8d, 0x65, 0xf0);          /* lea rsp, [rbp-16] */
	B(&e, 0x41, 0x5c);                      /* pop r12 */
	B(&e, 0x5b);                            /* pop rbx */
	B(&e, 0x5d);                            /* pop rbp */
	B(&e, 0xc3);                            /* ret */
	const size_t outer_size = e.len - outer;
	align16(&e);

	/* handjit_inner(y): no frame pointer, no pushes: sub rsp, 24 only. VM values in the
	 * slots [rsp+8] and [rsp+16], and the caller's pinned rbx, which it never touches. */
	const size_t inner = e.len;
	B(&e, 0x48, 0x83, 0xec, 0x18);          /* sub rsp, 24 */
	B(&e, 0x48, 0x89, 0xf8);                /* mov rax, rdi */
	B(&e, 0x48, 0xc1, 0xe0, 0x02);          /* shl rax, 2 */
	B(&e, 0x48, 0x89, 0x44, 0x24, 0x08);    /* mov [rsp+8], rax */
	B(&e, 0x48, 0x8d, 0x47, 0xfb);          /* lea rax, [rdi-5] */
	B(&e, 0x48, 0x89, 0x44, 0x24, 0x10);    /* mov [rsp+16], rax */
	B(&e, 0xbf);                            /* mov edi, INNER_ID */
	imm32(&e, INNER_ID);
	B(&e, 0x48, 0x89, 0xde);                /* mov rsi, rbx */
	B(&e, 0x48, 0x8b, 0x54, 0x24, 0x08);    /* mov rdx, [rsp+8] */
	B(&e, 0x48, 0x8b, 0x4c, 0x24, 0x10);    /* mov rcx, [rsp+16] */
	B(&e, 0x4c, 0x8d, 0x44, 0x24, 0x08);    /* lea r8, [rsp+8] */
	B(&e, 0x49, 0x89, 0xe1);                /* mov r9, rsp */
	call_abs(&e, (void *)jitmap_handjit_report);
	B(&e, 0xbf);                            /* mov edi, INNER_ID */
	imm32(&e, INNER_ID);
	call_abs(&e, (void *)jitmap_handjit_safepoint);
	const size_t inner_record = e.len - inner;
	B(&e, 0x48, 0x8b, 0x44, 0x24, 0x08);    /* mov rax, [rsp+8] */
	B(&e, 0x48, 0x03, 0x44, 0x24, 0x10);    /* add rax, [rsp+16] */
	B(&e, 0x48, 0x83, 0xc4, 0x18);          /* add rsp, 24 */
	B(&e, 0xc3);                            /* ret */
	const size_t inner_size = e.len - inner;
	const size_t code_size = e.len;

	const int32_t rel = (int32_t)((int64_t)inner - (int64_t)(call_inner_fixup + 4));
	memcpy(code + call_inner_fixup, &rel, 4);

	/* The stack map: one record per call into code that can stop (the return address),
	 * with the real frame sizes. */
	jitmap_smbuilder *smb = jitmap_smbuilder_new(JITMAP_ORDER_AUTO);
	if (!smb) {
		perror("jitmap-handjit: jitmap_smbuilder_new");
		return 1;
	}
	records[0] = (struct record_info){
		.id = OUTER_ID, .function = "handjit_outer", .pc = base + outer + outer_record,
		.stack_size = 40,
		.locs = {
			{JITMAP_LOC_REGISTER, 8, DW_RBX, 0},
			{JITMAP_LOC_REGISTER, 8, DW_R12, 0},
			{JITMAP_LOC_INDIRECT, 8, DW_RBP, -24},
			{JITMAP_LOC_DIRECT, 8, DW_RBP, -24},
		},
		.constants = {[4] = 42, [5] = POOL_CONSTANT},
	};
	records[1] = (struct record_info){
		.id = INNER_ID, .function = "handjit_inner", .pc = base + inner + inner_record,
		.stack_size = 24,
		.locs = {
			{JITMAP_LOC_REGISTER, 8, DW_RBX, 0},
			{JITMAP_LOC_INDIRECT, 8, DW_RSP, 8},
			{JITMAP_LOC_INDIRECT, 8, DW_RSP, 16},
			{JITMAP_LOC_DIRECT, 8, DW_RSP, 8},
		},
		.constants = {[4] = (uint64_t)-7, [5] = POOL_CONSTANT},
	};
	const size_t starts[2] = {outer, inner}, offsets[2] = {outer_record, inner_record};
	jitmap_handjit_truth_pc[0] = records[0].pc;
	jitmap_handjit_truth_pc[1] = records[1].pc;
	jitmap_error err;
	for (int i = 0; i < 2; i++) {
		struct record_info *r = &records[i];
		if (jitmap_smbuilder_constant(smb, r->constants[4], &r->locs[4]) ||
		    jitmap_smbuilder_constant(smb, r->constants[5], &r->locs[5]) ||
		    jitmap_smbuilder_add_function(smb, base + starts[i], r->stack_size, &err) ||
		    jitmap_smbuilder_add_record(smb, r->id, (uint32_t)offsets[i], r->locs,
						NUM_LOCALS, NULL, 0, &err)) {
			fprintf(stderr, "jitmap-handjit: stack map: %s\n", err.reason);
			return 1;
		}
	}
	void *stackmap;
	size_t stackmap_size;
	if (jitmap_smbuilder_finish(smb, &stackmap, &stackmap_size)) {
		fprintf(stderr, "jitmap-handjit: stack map: out of memory\n");
		return 1;
	}
	jitmap_smbuilder_free(smb);
	if (ykllvm) {
		size_t yk_size;
		void *yk = to_ykllvm(stackmap, stackmap_size, &yk_size);
		if (!yk) {
			fprintf(stderr, "jitmap-handjit: stack map: out of memory\n");
			return 1;
		}
		free(stackmap);
		stackmap = yk;
		stackmap_size = yk_size;
		printf("jitmap-handjit: ykllvm variables=%u,%u,%u,%u,%u,%u\n", yk_vars[0], yk_vars[1],
		       yk_vars[2], yk_vars[3], yk_vars[4], yk_vars[5]);
	}

	if (mprotect(code, cap, PROT_READ | PROT_EXEC)) {
		perror("jitmap-handjit: mprotect");
		return 1;
	}

	/* One registration for both functions. `stackmap` is the live copy: it stays. */
	const jitmap_jit_function fns[2] = {
		{"handjit_outer", base + outer, outer_size},
		{"handjit_inner", base + inner, inner_size},
	};
	const jitmap_jit_region region = {
		.address = base, .size = code_size, .functions = fns, .num_functions = 2,
		.stackmap = stackmap, .stackmap_size = stackmap_size,
	};
	jitmap_jit_entry *entry = jitmap_jit_register(&region, &err);
	if (!entry) {
		fprintf(stderr, "jitmap-handjit: register: %s\n", err.reason);
		return 1;
	}
	size_t image_size;
	const void *image = jitmap_jit_entry_image(entry, &image_size);
	if (image_path) {
		FILE *f = fopen(image_path, "wb");
		if (!f || fwrite(image, 1, image_size, f) != image_size || fclose(f)) {
			perror(image_path);
			return 1;
		}
	}
	printf("jitmap-handjit: function name=handjit_outer address=0x%" PRIx64 " size=%zu"
	       " stack_size=40 frame=rbp\n", base + outer, outer_size);
	printf("jitmap-handjit: function name=handjit_inner address=0x%" PRIx64 " size=%zu"
	       " stack_size=24 frame=none\n", base + inner, inner_size);
	printf("jitmap-handjit: stackmap address=0x%" PRIxPTR " size=%zu\n", (uintptr_t)stackmap,
	       stackmap_size);
	printf("jitmap-handjit: registered image=0x%" PRIxPTR " size=%zu functions=2\n",
	       (uintptr_t)image, image_size);

	const uint64_t x = 4242;
	uint64_t (*outer_fn)(uint64_t) = (uint64_t (*)(uint64_t))(uintptr_t)(base + outer);
	const uint64_t got = outer_fn(x), want = expected_result(x);
	printf("jitmap-handjit: result=%" PRIu64 " expected=%" PRIu64 "\n", got, want);
	if (got != want)
		return 1;

	if (unregister) {
		jitmap_jit_unregister(entry);
		printf("jitmap-handjit: unregistered\n");
		free(stackmap);
		munmap(code, cap);
	}
	jitmap_perf_close();
	printf("jitmap-handjit: done\n");
	return 0;
}

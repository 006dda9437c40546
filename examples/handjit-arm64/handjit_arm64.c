/* jitmap-handjit-arm64: a JIT that writes AArch64 machine code by hand, without unwind
 * tables, and describes it only with a stackmap it builds and registers through
 * libjitmap-producer. Cross-built (aarch64-linux-gnu-gcc, static) and run under qemu-aarch64.
 *
 *   handjit_arm64_outer   a frame record: stp x29, x30, [sp, #-48]!; mov x29, sp; it keeps VM
 *                         locals in x19 and x20 (callee-saved, saved in its frame) and in a
 *                         stack slot, and calls the inner function: record 1001 at the return
 *                         address; with --depth N it first calls itself N times (record 1003
 *                         after that call: N more frames, for the benchmark);
 *   handjit_arm64_inner   frameless and a leaf: sub sp, sp, #32, its return address stays in
 *                         x30; a VM local in a stack slot; record 1002 at the instruction
 *                         where it stops (`brk #1000` with --trap, else a nop).
 *
 * Truth lines ("jitmap-handjit-arm64: record id=N local0=V ... stack_size=S") give each
 * record's location values in order; "code outer=0x... inner=0x..." the functions. With
 * --trap the inner function traps (SIGTRAP: under a debugger, a stop in JIT code with no
 * breakpoint; without one, qemu-aarch64 writes a guest core). Without --trap the program
 * returns from the JIT code and prints "result ... ok".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "jitmap/producer.h"

#define X9 9
#define X19 19
#define X20 20
#define SP 31

static uint32_t movz(unsigned rd, uint16_t imm) { return 0xd2800000u | (uint32_t)imm << 5 | rd; }
/* str Xt, [sp, #off] (off a multiple of 8) */
static uint32_t str_sp(unsigned rt, unsigned off) { return 0xf9000000u | (off / 8) << 10 | SP << 5 | rt; }
static uint32_t bl(uint64_t from, uint64_t to)
{
	return 0x94000000u | (uint32_t)(((int64_t)(to - from) / 4) & 0x3ffffff);
}

enum { OUTER_OFF = 0, INNER_OFF = 0x60, CODE_SIZE = 0x80 };
#define RECORD_OUTER 1001
#define RECORD_INNER 1002
#define RECORD_RECURSE 1003

int main(int argc, char **argv)
{
	int trap = 0;
	long depth = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--trap")) {
			trap = 1;
		} else if (!strcmp(argv[i], "--depth") && i + 1 < argc) {
			depth = strtol(argv[++i], NULL, 0);
		} else {
			fprintf(stderr, "usage: jitmap-handjit-arm64 [--trap] [--depth N]\n");
			return 2;
		}
	}
	if (depth < 0 || depth > 100000) {
		fprintf(stderr, "jitmap-handjit-arm64: --depth from 0 to 100000\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	uint32_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	const uint64_t base = (uint64_t)(uintptr_t)code;
	const uint64_t outer = base + OUTER_OFF, inner = base + INNER_OFF;
	uint32_t *o = code + OUTER_OFF / 4, *in = code + INNER_OFF / 4;
	size_t n = 0;
	o[n++] = 0xa9bd7bfd; /* stp x29, x30, [sp, #-48]! */
	o[n++] = 0x910003fd; /* mov x29, sp */
	o[n++] = 0xa90153f3; /* stp x19, x20, [sp, #16] */
	o[n++] = movz(X19, 1234);
	o[n++] = movz(X20, 5678);
	o[n++] = movz(X9, 777);
	o[n++] = str_sp(X9, 40); /* [sp, #40]: the VM local in a stack slot */
	/* x0 (the depth) > 0: call itself with x0 - 1 (record 1003 after that call); else the
	 * inner function (record 1001). */
	o[n++] = 0xb4000080; /* cbz x0, +16 */
	o[n++] = 0xd1000400; /* sub x0, x0, #1 */
	o[n] = bl(outer + 4 * n, outer);
	n++;
	const uint32_t record_recurse = (uint32_t)(4 * n);
	o[n++] = 0x14000002; /* b +8 */
	o[n] = bl(outer + 4 * n, inner);
	n++;
	const uint32_t record_outer = (uint32_t)(4 * n); /* the return address */
	o[n++] = 0xd2800000; /* mov x0, #0 */
	o[n++] = 0xa94153f3; /* ldp x19, x20, [sp, #16] */
	o[n++] = 0xa8c37bfd; /* ldp x29, x30, [sp], #48 */
	o[n++] = 0xd65f03c0; /* ret */
	const size_t outer_size = 4 * n;

	n = 0;
	in[n++] = 0xd10083ff; /* sub sp, sp, #32 */
	in[n++] = movz(X9, 4242);
	in[n++] = str_sp(X9, 8);
	const uint32_t record_inner = (uint32_t)(4 * n);
	in[n++] = trap ? 0xd4207d00 /* brk #1000 */ : 0xd503201f /* nop */;
	in[n++] = 0x910083ff; /* add sp, sp, #32 */
	in[n++] = 0xd65f03c0; /* ret */
	const size_t inner_size = 4 * n;
	__builtin___clear_cache((char *)code, (char *)code + CODE_SIZE);
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC)) {
		perror("mprotect");
		return 1;
	}

	/* The stackmap: stack sizes are whole frames (AArch64: the caller's SP is SP + size). */
	jitmap_error err;
	jitmap_smbuilder *b = jitmap_smbuilder_new(JITMAP_ORDER_AUTO);
	const jitmap_location outer_locs[] = {
		{JITMAP_LOC_REGISTER, 8, X19, 0},
		{JITMAP_LOC_REGISTER, 8, X20, 0},
		{JITMAP_LOC_INDIRECT, 8, SP, 40},
		{JITMAP_LOC_CONSTANT, 8, 0, 11},
	};
	const jitmap_location inner_locs[] = {
		{JITMAP_LOC_INDIRECT, 8, SP, 8},
		{JITMAP_LOC_REGISTER, 8, X19, 0}, /* the caller's, untouched by the leaf */
		{JITMAP_LOC_CONSTANT, 8, 0, 7},
	};
	void *sm = NULL;
	size_t sm_size = 0;
	if (!b || jitmap_smbuilder_add_function(b, outer, 48, &err) ||
	    jitmap_smbuilder_add_record(b, RECORD_RECURSE, record_recurse, outer_locs, 4, NULL, 0,
					&err) ||
	    jitmap_smbuilder_add_record(b, RECORD_OUTER, record_outer, outer_locs, 4, NULL, 0, &err) ||
	    jitmap_smbuilder_add_function(b, inner, 32, &err) ||
	    jitmap_smbuilder_add_record(b, RECORD_INNER, record_inner, inner_locs, 3, NULL, 0, &err) ||
	    jitmap_smbuilder_finish(b, &sm, &sm_size)) {
		fprintf(stderr, "jitmap-handjit-arm64: stackmap: %s\n", err.reason);
		return 1;
	}
	jitmap_smbuilder_free(b);
	const jitmap_jit_function fns[] = {
		{"handjit_arm64_outer", outer, outer_size},
		{"handjit_arm64_inner", inner, inner_size},
	};
	const jitmap_jit_region region = {.address = base, .size = CODE_SIZE, .functions = fns,
					  .num_functions = 2, .stackmap = sm,
					  .stackmap_size = sm_size};
	jitmap_jit_entry *e = jitmap_jit_register(&region, &err);
	if (!e) {
		fprintf(stderr, "jitmap-handjit-arm64: register: %s\n", err.reason);
		return 1;
	}
	printf("jitmap-handjit-arm64: code outer=0x%" PRIx64 " inner=0x%" PRIx64 "\n", outer, inner);
	printf("jitmap-handjit-arm64: record id=%d pc=0x%" PRIx64
	       " local0=1234 local1=5678 local2=777 local3=11 stack_size=48\n",
	       RECORD_OUTER, outer + record_outer);
	printf("jitmap-handjit-arm64: record id=%d pc=0x%" PRIx64
	       " local0=4242 local1=1234 local2=7 stack_size=32\n",
	       RECORD_INNER, inner + record_inner);
	if (depth)
		printf("jitmap-handjit-arm64: record id=%d pc=0x%" PRIx64
		       " local0=1234 local1=5678 local2=777 local3=11 stack_size=48 frames=%ld\n",
		       RECORD_RECURSE, outer + record_recurse, depth);
	const long r = ((long (*)(long))(uintptr_t)outer)(depth);
	printf("jitmap-handjit-arm64: result %ld ok\n", r);
	jitmap_jit_unregister(e);
	free(sm);
	return 0;
}

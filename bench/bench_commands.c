/* bench_commands: a JIT with many stackmap records registered, for timing jitmap's GDB commands.
 *
 *   bench_commands [--records N] [--entries E]
 *
 * Emits N/4 functions of 32 bytes (default N = 100,000 records, 4 per function, 3 locations
 * each: a register, a stack slot, a constant) and registers them through jitmap's producer API
 * in E entries (default 1: GDB's registration is O(E^2)). Function 0 is real code that keeps
 * 4242 in rbx across a call to bench_commands_stop(), where the debugger breaks, with record 0
 * at the return address; it is called twice (two stops), so a benchmark can time a command at
 * a fresh stop after a first one. The other functions are int3 filler: their records are
 * there to be indexed, never reached. x86-64 only. Exit 0, or 1 on a failure, 2 on usage.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "jitmap/producer.h"

enum { FN_SLOT = 32, RECORDS_PER_FN = 4 };

__attribute__((visibility("default"), noinline, used)) void bench_commands_stop(int round)
{
	__asm__ volatile("" : : "r"(round) : "memory");
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_commands [--records N] [--entries E]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	size_t records = 100000, entries = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--records") && i + 1 < argc)
			records = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--entries") && i + 1 < argc)
			entries = strtoull(argv[++i], NULL, 10);
		else
			usage();
	}
	const size_t nfn = (records + RECORDS_PER_FN - 1) / RECORDS_PER_FN;
	if (!nfn || !entries || entries > nfn)
		usage();
	const size_t size = nfn * FN_SLOT;
	uint8_t *code = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("bench_commands: mmap");
		return 1;
	}
	memset(code, 0xcc, size);
	/* Function 0: push rbx; mov ebx, 4242; movabs rax, stop; call rax; pop rbx; ret (the round
	 * number stays in edi, where main put it, for the stop function). */
	size_t n = 0;
	code[n++] = 0x53;
	code[n++] = 0xbb;
	const uint32_t v = 4242;
	memcpy(code + n, &v, 4);
	n += 4;
	code[n++] = 0x48;
	code[n++] = 0xb8;
	const uint64_t target = (uint64_t)(uintptr_t)bench_commands_stop;
	memcpy(code + n, &target, 8);
	n += 8;
	code[n++] = 0xff;
	code[n++] = 0xd0;
	const uint32_t live_offset = (uint32_t)n;
	code[n++] = 0x5b;
	code[n++] = 0xc3;
	if (mprotect(code, size, PROT_READ | PROT_EXEC)) {
		perror("bench_commands: mprotect");
		return 1;
	}

	jitmap_jit_function *fns = calloc(nfn, sizeof(*fns));
	char (*names)[32] = calloc(nfn, sizeof(*names));
	if (!fns || !names) {
		perror("bench_commands: calloc");
		return 1;
	}
	const size_t per_entry = (nfn + entries - 1) / entries;
	size_t made = 0;
	for (size_t e = 0; e < entries; e++) {
		const size_t first = e * per_entry;
		const size_t last = first + per_entry < nfn ? first + per_entry : nfn;
		if (first >= last)
			break;
		jitmap_smbuilder *b = jitmap_smbuilder_new(JITMAP_ORDER_AUTO);
		jitmap_error err;
		if (!b)
			return 1;
		for (size_t f = first; f < last; f++) {
			const uint64_t addr = (uint64_t)(uintptr_t)code + f * FN_SLOT;
			snprintf(names[f], sizeof(names[f]), "bench_fn_%zu", f);
			fns[f] = (jitmap_jit_function){names[f], addr, FN_SLOT};
			if (jitmap_smbuilder_add_function(b, addr, 8, &err))
				goto fail;
			for (unsigned r = 0; r < RECORDS_PER_FN && made < records; r++, made++) {
				const jitmap_location locs[3] = {
					{JITMAP_LOC_REGISTER, 8, 3, 0},
					{JITMAP_LOC_INDIRECT, 8, 7, 8 * (int32_t)r},
					{JITMAP_LOC_CONSTANT, 8, 0, (int32_t)made},
				};
				const uint32_t off = f == 0 && r == 0 ? live_offset : 20 + 2 * r;
				if (jitmap_smbuilder_add_record(b, made, off, locs, 3, NULL, 0, &err))
					goto fail;
			}
			continue;
		fail:
			fprintf(stderr, "bench_commands: stack map: %s\n", err.reason);
			return 1;
		}
		void *sm;
		size_t sm_size;
		if (jitmap_smbuilder_finish(b, &sm, &sm_size))
			return 1;
		jitmap_smbuilder_free(b);
		const jitmap_jit_region region = {
			.address = fns[first].address, .size = (last - first) * FN_SLOT,
			.functions = fns + first, .num_functions = last - first,
			.stackmap = sm, .stackmap_size = sm_size,
		};
		if (!jitmap_jit_register(&region, &err)) {
			fprintf(stderr, "bench_commands: register: %s\n", err.reason);
			return 1;
		}
	}
	printf("bench_commands: records=%zu functions=%zu entries=%zu\n", made, nfn, entries);
	fflush(stdout);
	void (*live)(int) = (void (*)(int))(uintptr_t)code;
	live(1);
	live(2);
	return 0;
}

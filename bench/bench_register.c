/* bench_register: what registering N JIT functions costs, batched or one entry per function.
 *
 *   bench_register N (--batched | --per-function | --none) [--time] [--unregister]
 *
 * Emits N tiny real functions (`mov eax, i; ret`, 16 bytes apart) into an mmap'd region, makes
 * it executable, registers them through jitmap's producer API, calls every one of them (so the
 * code is real and the sum is checked), then calls bench_register_done(), where a debugger
 * breaks: bench/register.sh times `gdb -batch` from its start to that breakpoint and the
 * process's exit.
 *
 *   --batched       one jitmap_jit_register with all N functions (one jit_code_entry);
 *   --per-function  N registrations of one function each (N entries): what GDB handles in
 *                   O(N^2), since each registration is a stop in __jit_debug_register_code
 *                   and a new objfile, and GDB scans its objfiles on each;
 *   --none          emit and call the functions, register nothing (the fixed cost);
 *   --time          print the wall time of the registration calls alone, to stdout:
 *                   "register: N functions in E entries: T us";
 *   --unregister    unregister every entry before bench_register_done() (and time that too).
 *
 * x86-64 only. Exit 0 when every function returned its own index, 1 otherwise, 2 on usage.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "jitmap/producer.h"

enum { SLOT = 16, FN_SIZE = 6 }; /* b8 imm32 (mov eax, imm32) + c3 (ret), padded with int3 */

/* The debugger's breakpoint: after every registration, before exit. Exported and kept out of
 * line, so `break bench_register_done` finds one address that is always reached. */
__attribute__((visibility("default"), noinline, used)) void bench_register_done(size_t n,
										 uint64_t sum)
{
	__asm__ volatile("" : : "r"(n), "r"(sum) : "memory");
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_register N (--batched | --per-function | --none) [--time]"
			" [--unregister]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	enum { NONE, BATCHED, PER_FUNCTION } mode = NONE;
	int have_mode = 0, timed = 0, unregister = 0;
	size_t n = 0;
	for (int i = 1; i < argc; i++) {
		char *end;
		if (!strcmp(argv[i], "--batched"))
			mode = BATCHED, have_mode++;
		else if (!strcmp(argv[i], "--per-function"))
			mode = PER_FUNCTION, have_mode++;
		else if (!strcmp(argv[i], "--none"))
			mode = NONE, have_mode++;
		else if (!strcmp(argv[i], "--time"))
			timed = 1;
		else if (!strcmp(argv[i], "--unregister"))
			unregister = 1;
		else if (argv[i][0] != '-' && (n = strtoul(argv[i], &end, 10)) > 0 && !*end &&
			 n <= 10000000)
			continue;
		else
			usage();
	}
	if (n == 0 || have_mode != 1)
		usage();

	/* -- The code: N functions, each returning its index -- */
	const size_t cap = n * SLOT;
	uint8_t *code = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("bench_register: mmap");
		return 1;
	}
	memset(code, 0xcc, cap); /* int3 between functions */
	for (size_t i = 0; i < n; i++) {
		const uint32_t imm = (uint32_t)i;
		code[i * SLOT] = 0xb8;
		memcpy(code + i * SLOT + 1, &imm, 4); /* x86-64 and the host: little-endian */
		code[i * SLOT + 5] = 0xc3;
	}
	if (mprotect(code, cap, PROT_READ | PROT_EXEC)) {
		perror("bench_register: mprotect");
		return 1;
	}
	const uint64_t base = (uint64_t)(uintptr_t)code;

	/* Names and descriptions are made before the clock starts: they are the JIT's business. */
	char (*names)[32] = malloc(n * sizeof(*names));
	jitmap_jit_function *fns = malloc(n * sizeof(*fns));
	const size_t num_entries = mode == BATCHED ? 1 : mode == PER_FUNCTION ? n : 0;
	jitmap_jit_entry **entries = calloc(num_entries ? num_entries : 1, sizeof(*entries));
	if (!names || !fns || !entries) {
		fprintf(stderr, "bench_register: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "jit_fn_%zu", i);
		fns[i] = (jitmap_jit_function){names[i], base + i * SLOT, FN_SIZE};
	}

	/* -- Registration -- */
	jitmap_error err;
	const double t0 = now_us();
	if (mode == BATCHED) {
		const jitmap_jit_region r = {.address = base, .size = cap, .functions = fns,
					     .num_functions = n};
		entries[0] = jitmap_jit_register(&r, &err);
	} else if (mode == PER_FUNCTION) {
		for (size_t i = 0; i < n; i++) {
			const jitmap_jit_region r = {.address = fns[i].address, .size = SLOT,
						     .functions = &fns[i], .num_functions = 1};
			if (!(entries[i] = jitmap_jit_register(&r, &err)))
				break;
		}
	}
	const double t1 = now_us();
	for (size_t i = 0; i < num_entries; i++)
		if (!entries[i]) {
			fprintf(stderr, "bench_register: register: %s\n", err.reason);
			return 1;
		}
	if (timed)
		printf("register: %zu functions in %zu entries: %.0f us\n", n, num_entries, t1 - t0);

	/* -- Run the code -- */
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t (*fn)(void) = (uint32_t (*)(void))(uintptr_t)fns[i].address;
		const uint32_t got = fn();
		if (got != (uint32_t)i) {
			fprintf(stderr, "bench_register: %s returned %" PRIu32 "\n", names[i], got);
			return 1;
		}
		sum += got;
	}
	if (sum != (uint64_t)n * (n - 1) / 2) {
		fprintf(stderr, "bench_register: sum %" PRIu64 " is wrong\n", sum);
		return 1;
	}

	if (unregister) {
		const double u0 = now_us();
		for (size_t i = 0; i < num_entries; i++)
			jitmap_jit_unregister(entries[i]);
		const double u1 = now_us();
		if (timed)
			printf("unregister: %zu entries: %.0f us\n", num_entries, u1 - u0);
	}
	bench_register_done(n, sum);
	/* Without --unregister the entries stay registered until exit, as a JIT's code usually
	 * does; the debugger drops them when the process goes. */
	free(entries);
	free(fns);
	free(names);
	return 0;
}

/* core_prog.c: a program that publishes an empty GDB JIT descriptor in its own executable and
 * aborts, for tests/differential/core.sh (a core of it run through a symbolic link, then read
 * by jitmap-dump with --exe naming the link, a moved and renamed copy, or another program). */
#include <stdint.h>
#include <stdlib.h>

struct jit_descriptor {
	uint32_t version, action_flag;
	void *relevant_entry, *first_entry;
};

/* CORE_PROG_NO_DESCRIPTOR: the descriptor comes from a shared library (this file built with
 * CORE_PROG_LIBRARY), for the --sysroot cases. */
#ifndef CORE_PROG_NO_DESCRIPTOR
struct jit_descriptor __jit_debug_descriptor = {1, 0, 0, 0};

void __attribute__((noinline)) __jit_debug_register_code(void)
{
	__asm__ volatile("" ::: "memory");
}
#else
void __jit_debug_register_code(void);
#endif

#ifndef CORE_PROG_LIBRARY
int main(void)
{
	__jit_debug_register_code();
	abort();
}
#endif

/* aot_main.c: the C half of gdb-commands-aot (see aot.ll): calls the AOT-compiled aot_work,
 * which stops in aot_stop with stackmap record 700 in its caller's frame. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

int64_t aot_work(int64_t a);

__attribute__((visibility("default"), noinline)) void aot_stop(int64_t id)
{
	__asm__ volatile("" : : "r"(id) : "memory");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("jitmap-aot: result=%" PRId64 "\n", aot_work(21));
	return 0;
}

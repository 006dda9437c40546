/* dwarf_jit.c: JIT code with DWARF, for test_gdb_llvm_jit.sh: compiled to IR with `clang -g`
 * at test time and run by jitmap-demo-jit --ir in place of its stackmaps program (same entry,
 * stackmaps_main(a, b)). GDB's own reader gives these frames lines and variables; with jitmap
 * loaded they must stay exactly the same (the reader declines objects with .debug_info). */
#include <stdint.h>

void jitmap_demo_safepoint(int64_t id);

__attribute__((noinline)) int64_t dwarf_helper(int64_t x, int32_t y)
{
	int64_t local = x * 3 + y;
	jitmap_demo_safepoint(100);
	return local;
}

int64_t stackmaps_main(int64_t a, int32_t b)
{
	int64_t r = dwarf_helper(a, b);
	return r + 1;
}

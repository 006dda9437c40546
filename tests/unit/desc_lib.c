/* desc_lib.c: a shared library for test_process's test_scan_file_hashed. It defines a JIT
 * descriptor (GDB's layout) among other data objects and a function, and is linked stripped
 * with a GNU hash table only, so that its .dynsym is the one place its symbols are named. */
#include <stdint.h>

struct {
	uint32_t version, action_flag;
	uint64_t relevant_entry, first_entry;
} __jit_debug_descriptor = {1, 0, 0, 0};

/* Names to fill the table's buckets and chains. */
int jitmap_test_a = 1, jitmap_test_b = 2, jitmap_test_c = 3, jitmap_test_d = 4;
const char jitmap_test_e[] = "e";

int jitmap_test_function(void)
{
	return jitmap_test_a + jitmap_test_b + jitmap_test_c + jitmap_test_d + jitmap_test_e[0];
}

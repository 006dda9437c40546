/* debug_lib.c: a shared library for test_debugfile. Its JIT descriptor (GDB's layout) is
 * hidden, so that no .dynsym names it: once the library is stripped, only its separate debug
 * file does, as with Debian's mono-sgen. Built twice, the second time with
 * JITMAP_OTHER_BUILD: another build (another build ID, other addresses) of the same name. */
#include <stdint.h>

__attribute__((visibility("hidden"))) struct {
	uint32_t version, action_flag;
	uint64_t relevant_entry, first_entry;
} __jit_debug_descriptor = {1, 0, 0, 0};

#ifdef JITMAP_OTHER_BUILD
__attribute__((visibility("hidden"))) uint64_t jitmap_test_padding[64] = {1};
#endif

int jitmap_test_debug_function(void)
{
	return (int)__jit_debug_descriptor.version;
}

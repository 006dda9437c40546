/* debuginfo_cache.h: libdwfl's find_debuginfo callback for jitmap-stack, with separate debug
 * files whose DWARF is compressed decompressed once into a cache (debuginfo_cache.c). */
#ifndef JITMAP_TOOLS_DEBUGINFO_CACHE_H
#define JITMAP_TOOLS_DEBUGINFO_CACHE_H

#include <elfutils/libdwfl.h>

/* dwfl_standard_find_debuginfo, then the cached uncompressed copy of what it found. */
int stack_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			 GElf_Addr base, const char *file_name, const char *debuglink_file,
			 GElf_Word debuglink_crc, char **debuginfo_file_name);

#endif

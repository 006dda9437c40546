/* cxx_names.h: C++ function names as GDB prints them in a backtrace, for jitmap-stack
 * (cxx_names.c). */
#ifndef JITMAP_TOOLS_CXX_NAMES_H
#define JITMAP_TOOLS_CXX_NAMES_H

#include <stdbool.h>

/* The name GDB 13 shows for a native function whose symbol is `symbol` (a mangled C++
 * name, "_Z..."): `described` (DWARF describes the function at the frame's PC), as GDB's
 * DWARF reader names it, without parameters or return type ("ns::Box<long>::wait");
 * else the symbol demangled ("ns::Box<long>::wait(int) const"), as GDB prints a minimal
 * symbol. A malloc'd string, or NULL when `symbol` is not mangled or cannot be demangled
 * (then the symbol is the name). */
char *stack_cxx_name(const char *symbol, bool described);

#endif

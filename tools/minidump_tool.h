/* minidump_tool.h: what the parts of jitmap-minidump share. It reads a process as jitmap-stack
 * does (stack_tool.h: the stopped process, libdwfl, the walk), then:
 *   minidump_jit.c    the JIT code on the stacks as modules, and their symbol files;
 *   jitmap-minidump.c options, and the order of it all (main): the dump itself is the
 *                     library's (jitmap_minidump_write, minidump.h).
 */
#ifndef JITMAP_TOOLS_MINIDUMP_TOOL_H
#define JITMAP_TOOLS_MINIDUMP_TOOL_H

#include <jitmap/breakpad.h>
#include <jitmap/minidump.h>

#include "stack_tool.h"

#define MAX_MODULE_IMAGES 16

/* A JIT object or code mapping, as a module of the dump (those that overlap made one). */
struct jit_module {
	uint64_t base, size;
	/* the JIT interface's images in it, whose symbols its file lists (none: a perf map's
	 * mapping) */
	const jitmap_image *images[MAX_MODULE_IMAGES];
	unsigned nimages;
	uint8_t id[16];            /* a hash of its bytes (jitmap_breakpad_code_id) */
	bool unique;               /* none of its bytes could be read: an ID of this dump's */
	char name[32];             /* "jit-" and the identifier's first bytes */
	jitmap_breakpad_sym *sym;  /* its symbol file */
};

struct jit_modules {
	struct jit_module *v;
	size_t n, cap;
	jitmap_minidump_range *mem; /* the JIT frames' function bytes */
	size_t nmem, capmem;
	size_t unplaced;            /* JIT frames no module could hold */
	size_t unique;              /* modules identified for this dump alone */
	uint64_t hashed;            /* bytes hashed for the identifiers */
	size_t rows;                /* STACK CFI rows written */
	size_t refused;             /* rules the symbol file cannot state */
};

/* The modules of the JIT frames `t`'s walk found, with their symbol files' records: 0, or
 * -ENOMEM. */
int minidump_jit_collect(struct target *t, struct jit_modules *jm);
/* Each module's symbol file, under `dir` in a symbol store's layout: 0, or -1 (said). */
int minidump_jit_write_symbols(struct jit_modules *jm, const char *dir);
void minidump_jit_free(struct jit_modules *jm);

#endif

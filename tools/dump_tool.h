/* dump_tool.h: what jitmap-dump's parts share. jitmap-dump.c reads the command line and
 * opens each input; dump_print.c writes a stackmap (and an image's deopt layouts) as text or
 * JSON; dump_core.c dumps a core's JIT entries; dump_readobj.c writes llvm-readobj's text. */
#ifndef JITMAP_TOOLS_DUMP_TOOL_H
#define JITMAP_TOOLS_DUMP_TOOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jitmap/jitmap.h"

enum format { FMT_TEXT, FMT_JSON, FMT_READOBJ };

struct options {
	enum format format;
	jitmap_statepoint_mode sp_mode;
	uint64_t *sp_ids;
	size_t num_sp_ids;
	jitmap_byte_order order; /* for raw sections */
	jitmap_arch arch;        /* for raw sections */
	const char *exe;         /* for core files: the executable, if it has moved */
	const char *sysroot;     /* for core files: where the mapped files are */
};

/* -- Text and JSON (dump_print.c) -- */

/* Each blob of `sm`: its header line, constants, functions and their records. */
void dump_print_text(FILE *out, const jitmap_stackmap *sm, const struct options *o);
/* The lines of an image's deopt layouts (.jitmap_deopt), indented by two. */
void dump_print_text_layouts(FILE *out, const jitmap_layouts *l);
/* One input file's JSON object and its newline: `sm` NULL for a file without stackmaps,
 * `layouts` NULL for one without deopt layouts. */
void dump_print_json(FILE *out, const char *file, const jitmap_stackmap *sm,
		     const jitmap_layouts *layouts, const char *kind, const struct options *o);
/* The fields of one stackmap inside an object: ", "arch": ..., "blobs": [...]". */
void dump_print_json_stackmap(FILE *out, const jitmap_stackmap *sm, const struct options *o);
/* ", "deopt_layouts": [...]" inside an object. */
void dump_print_json_layouts(FILE *out, const jitmap_layouts *l);

/* -- Core files (dump_core.c) -- */

/* Every JIT entry a core file (or a compressed one) registered, in `o`'s format; 0, or 1
 * when the core, a descriptor or an entry could not be read (said on standard error). */
int dump_core(FILE *out, const char *path, const struct options *o);

#endif

/* core.h: process memory and symbols from a Linux core file, for jitmap-dump.
 *
 * A core holds the writable memory of the process (PT_LOAD segments with file contents) and,
 * in its NT_FILE note, which file was mapped where. Memory the core does not hold (read-only
 * file mappings, dumped as zero-length segments) is read from those files; symbols (the JIT
 * descriptor) are looked up in their symbol tables and moved by their load bias. Nothing in
 * the core is trusted: every offset and size is checked against the file it points into.
 */
#ifndef JITMAP_TOOLS_CORE_H
#define JITMAP_TOOLS_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "jitmap/jitmap.h"

struct core;

/* Open the core file at `path`. `exe` (may be NULL) replaces the mapped file with the same
 * base name (for a core whose executable has moved). Returns NULL with `err` filled. */
struct core *core_open(const char *path, const char *exe, jitmap_error *err);
void core_free(struct core *c);

/* The core's machine (e_machine) and byte order. */
unsigned core_machine(const struct core *c);
jitmap_byte_order core_byte_order(const struct core *c);

/* A target whose read_mem reads the process's memory (read_reg is NULL). */
jitmap_target core_target(struct core *c);

/* Every definition of data symbol `name` in the mapped files, at its address in the process.
 * Stores at most `max` addresses (and the file each is in, when `files` is not NULL) and
 * returns how many there are. */
size_t core_find_symbol(struct core *c, const char *name, uint64_t *out, const char **files,
			size_t max);

/* Problems met while opening (mapped files missing or unreadable): one sentence each, in
 * order; NULL past the end. */
const char *core_warning(const struct core *c, size_t i);

#endif /* JITMAP_TOOLS_CORE_H */

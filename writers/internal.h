/* internal.h (writers): what the writers share: the plan of a small core (core_small.c),
 * which the core handler's stream (core_stream.c) writes. Writers read a stopped process
 * through the targets layer and write files; nothing below them writes. */
#ifndef JITMAP_WRITERS_INTERNAL_H
#define JITMAP_WRITERS_INTERNAL_H

#include "../targets/internal.h"

/* -- Small cores (core_small.c) -- */

/* A PT_LOAD segment of the full core, as its program header says. */
struct jitmap__small_seg {
	uint64_t vaddr, memsz, filesz, offset;
	unsigned flags;
};

/* Memory a small core keeps: [lo, lo + ...) in whole pages, why (JITMAP_CORE_KEPT_* bits). */
struct jitmap__small_range {
	uint64_t lo, hi;
	unsigned why;
};

/* The ranges a small core keeps of the process `core` describes (its threads, mappings and
 * auxiliary vector; `core` may hold its notes only), its memory read through `mem`, its
 * segments `segs` (sorted by vaddr): sorted, merged, into *out (the caller frees it), and how
 * many JIT descriptors its files define. 0, or -ENOMEM, -ENOTSUP (no libelf). A range whose
 * bytes cannot be read is left out, not failed. */
int jitmap__small_plan(jitmap_core *core, const jitmap_target *mem,
		       const struct jitmap__small_seg *segs, size_t nsegs, uint64_t stack_bytes,
		       struct jitmap__small_range **out, size_t *nout, size_t *descriptors);
/* Whether the file `core` maps at `page` (a page's address) holds the bytes `mem` reads
 * there: 1, 0 (no file, another file's bytes, or one of the two cannot be read), -ENOMEM.
 * Memory a small core leaves out that its file holds is read from the file, as a kernel
 * core's undumped code; the rest is the core's to say it lacks. */
int jitmap__small_file_holds(jitmap_core *core, const jitmap_target *mem, uint64_t page);

/* Memory left out of a small core, as its note lists it: a growing array. */
struct jitmap__small_left {
	struct jitmap__core_left *v;
	size_t n, cap;
};
/* [lo, hi) of a segment with p_flags `flags` added (nothing when empty; joined to the last
 * range when it goes on from it alike), `in_file` when its mapped file holds those bytes as
 * the process had them: 0, or -ENOMEM. */
int jitmap__small_left_add(struct jitmap__small_left *l, uint64_t lo, uint64_t hi,
			   unsigned flags, bool in_file);
/* `l` with the pages its mapped files hold as `mem` reads them (jitmap__small_file_holds)
 * marked in_file, at most 2^18 pages compared; those bytes added to *from_files. 0, or
 * -ENOMEM. */
int jitmap__small_refine_left(jitmap_core *core, const jitmap_target *mem,
			      struct jitmap__small_left *l, uint64_t *from_files);
/* A note segment's bytes (`len` at `b`, byte order `order`) with NT_FILE less the memory of
 * `l` no file may stand for: a new copy (malloc'd, *out_len), or NULL to keep them. */
uint8_t *jitmap__small_notes_less(jitmap_byte_order order, const struct jitmap__small_left *l,
				  const uint8_t *b, size_t len, size_t *out_len);

#endif /* JITMAP_WRITERS_INTERNAL_H */

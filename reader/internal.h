/* internal.h (reader): the stackmap layer's own structures, for the layers above: a parsed
 * section (struct jitmap_stackmap), its PC index, and what reading a location needs. */
#ifndef JITMAP_READER_INTERNAL_H
#define JITMAP_READER_INTERNAL_H

#include "../arch/internal.h"
#include "../common/internal.h"

/* The name of the stackmap section LLVM writes. */
#define JITMAP__STACKMAP_SECTION ".llvm_stackmaps"

#define JITMAP_NO_FUNCTION ((size_t)-1)

/* The PC index of one stackmap (index.c): a node per record that has a PC, in Eytzinger
 * order (node k's children are 2k and 2k + 1), 1-based. Narrow nodes hold pc - base in 32
 * bits; wide ones the PC itself. */
struct jitmap__pc_index {
	void *nodes;
	size_t len;
	size_t mapped; /* bytes mmap'd, or 0 when from aligned_alloc */
	uint64_t base;
	bool narrow;
};

struct jitmap_stackmap {
	jitmap_byte_order order;
	jitmap_arch arch;
	size_t num_blobs, num_functions, num_constants, num_records;
	size_t num_locations, num_live_outs;
	jitmap_blob *blobs;
	jitmap_function *functions;
	uint64_t *constants;
	jitmap_record *records;
	jitmap_location *locations;
	jitmap_live_out *live_outs;
	size_t mapped;            /* how functions, records, locations and live_outs, one block
				   * from functions on, were allocated (jitmap__big_alloc) */
	char **names;             /* per function, owned; functions[i].name points here */
	uint64_t *sizes;          /* per function: its symbol's size in bytes, 0 when unknown */

	/* Dialects (jitmap_dialect): per blob; ykllvm's groupings, NULL in sections without. */
	uint8_t *blob_dialects;
	struct jitmap__record_vars {
		size_t first;     /* into live_vars */
		uint16_t num;
	} *record_vars;           /* per record */
	struct jitmap__live_var {
		uint16_t first;   /* its first location, in its record */
		uint8_t count;
	} *live_vars;             /* per live variable */
	uint16_t *location_vars;  /* per location: its live variable, in its record */
	struct jitmap__loc_extras {
		size_t first;     /* into extras */
		uint16_t num;
	} *loc_extras;            /* per location */
	int16_t *extras;
	struct jitmap__spill_table {
		uint8_t known, has_fp;
		uint32_t num;
		size_t first;     /* into spills */
	} *spill_tables;          /* per function */
	jitmap_spill *spills;

	/* The PC index is rebuilt lazily after addresses change (relocation, bias). */
	int index_dirty;
	uint64_t generation; /* bumped when addresses change, so jitmap_index notices too */
	struct jitmap__pc_index index;
	struct jitmap__pc_index by_address; /* the functions, the same way (node: a function) */
};

/* Register `regno` of the frame at `level` through `t` as an 8-byte integer in `order`, with
 * the outer-frame rule (jitmap_location_eval_frame's): 0, or a negative errno with `why`. */
int jitmap__frame_reg(jitmap_arch arch, jitmap_byte_order order, const jitmap_target *t,
		      unsigned level, unsigned regno, uint64_t *v, char *why, size_t why_len);

/* Rebuild the PC index if addresses changed; returns 0 or -ENOMEM. */
int jitmap__stackmap_reindex(jitmap_stackmap *sm);
/* The live variable location `i` of `rec` belongs to (jitmap_record_live_var's index): O(1). */
size_t jitmap__location_live_var(const jitmap_stackmap *sm, const jitmap_record *rec, size_t i);
/* A register's name in the stackmap's architecture, or "R#N" (written to `tmp`) for a number it
 * does not name: the one spelling of an unnamed register (eval.c). */
const char *jitmap__reg_label(const jitmap_stackmap *sm, unsigned regno, char *tmp, size_t len);
/* Free the PC index's nodes (the struct itself is the caller's). */
void jitmap__pc_index_free(struct jitmap__pc_index *ix);

#endif /* JITMAP_READER_INTERNAL_H */

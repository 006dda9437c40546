/* types.h: the types libjitmap (the reader) and libjitmap-producer share: errors, byte
 * orders, stackmap locations and live-outs, deopt layouts. Included by jitmap.h and producer.h; a JIT that
 * only registers code needs this header and producer.h, not the reader's. */
#ifndef JITMAP_TYPES_H
#define JITMAP_TYPES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef JITMAP_API
#define JITMAP_API __attribute__((visibility("default")))
#endif

/* -- Options -- */

/* Options carry their size (libbpf's convention), so that fields can be added: set `sz` to
 * sizeof the struct (JITMAP_OPTS does), leave unknown fields zero. A call given options whose
 * sz is smaller than the field itself, or with non-zero bytes past what the library knows,
 * fails with -EINVAL. */
#define JITMAP_OPTS(TYPE, NAME, ...) TYPE NAME = {.sz = sizeof(TYPE), __VA_ARGS__}

/* -- Errors -- */

/* Where and why input was rejected. `offset` is a byte offset into the input that was
 * being parsed (the section, or the ELF file); `reason` is one sentence without a trailing
 * period. `code` is the negative errno value the call returned. */
typedef struct jitmap_error {
	int code;
	uint64_t offset;
	char reason[192];
} jitmap_error;

/* -- The stackmap model -- */

typedef enum jitmap_byte_order {
	JITMAP_ORDER_AUTO = 0, /* guess from the header: see jitmap_stackmap_parse */
	JITMAP_ORDER_LITTLE,
	JITMAP_ORDER_BIG,
} jitmap_byte_order;

typedef enum jitmap_loc_kind {
	JITMAP_LOC_REGISTER = 1,       /* value in a register */
	JITMAP_LOC_DIRECT = 2,         /* value is the address reg + offset (a frame object) */
	JITMAP_LOC_INDIRECT = 3,       /* value is in memory at [reg + offset] */
	JITMAP_LOC_CONSTANT = 4,       /* value is the sign-extended 32-bit offset field */
	JITMAP_LOC_CONSTANT_INDEX = 5, /* value is the constant pool entry `offset` */
} jitmap_loc_kind;

typedef struct jitmap_location {
	jitmap_loc_kind kind;
	uint16_t size;      /* bytes (v1/v2 sections store one byte) */
	uint16_t dwarf_reg; /* LLVM DWARF register number; 0 for constants */
	int32_t offset;     /* offset, small constant, or constant pool index (blob-relative) */
} jitmap_location;

typedef struct jitmap_live_out {
	uint16_t dwarf_reg;
	uint8_t size;
} jitmap_live_out;

/* -- Deopt layouts --
 *
 * How a statepoint's deopt values form the interpreter frames its compiled code stands for
 * (the frames a deoptimization would rebuild), as a runtime states it: for a record ID
 * (optionally in one function), its frames innermost first, each with a method, a bytecode
 * index, and which deopt values are its locals and its expression stack. For a record that is
 * not a statepoint the indexes are the record's location indexes. libjitmap-producer stores
 * layouts in the image a JIT registers (section `.jitmap_deopt`, docs/deopt-layouts.md);
 * libjitmap reads them back (jitmap_image_layouts). */

typedef enum jitmap_vref_kind {
	JITMAP_VREF_NONE = 0,   /* absent (a bci may be) */
	JITMAP_VREF_NUMBER = 1, /* `number` itself */
	JITMAP_VREF_DEOPT = 2,  /* the deopt value at index `number` (< 2^32) */
	JITMAP_VREF_NAME = 3,   /* `name` (a method only) */
} jitmap_vref_kind;

typedef struct jitmap_vref {
	jitmap_vref_kind kind;
	uint64_t number;
	const char *name;
} jitmap_vref;

/* A local or a stack entry: deopt value `index`, named `name` (NULL: unnamed). */
typedef struct jitmap_vslot {
	uint32_t index;
	const char *name;
} jitmap_vslot;

typedef struct jitmap_vframe_layout {
	jitmap_vref method;
	jitmap_vref bci;
	const jitmap_vslot *locals;
	uint16_t num_locals;
	uint16_t num_stack;
	const jitmap_vslot *stack;
} jitmap_vframe_layout;

typedef struct jitmap_deopt_layout {
	uint64_t record_id;
	const char *function; /* NULL: records of that ID in any function */
	const jitmap_vframe_layout *frames; /* innermost first */
	uint32_t num_frames;
} jitmap_deopt_layout;

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_TYPES_H */

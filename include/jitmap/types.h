/* types.h: the types libjitmap (the reader) and libjitmap-producer share: errors, byte
 * orders, stackmap locations and live-outs. Included by jitmap.h and producer.h; a JIT that
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

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_TYPES_H */

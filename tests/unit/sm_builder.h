/* sm_builder.h: a small test-only writer of LLVM stackmap sections.
 *
 * Describe a blob (version, byte order, functions, constants, records) and emit the bytes as
 * docs/stackmap-format.md lays them out. Records belong to the function added
 * last before them, which is how RecordCount (v2, v3) is computed. After smb_emit the layout
 * fields say where each part landed (blob-relative offsets), so hostile tests can patch exact
 * fields and predict exact error offsets.
 */
#ifndef JITMAP_TEST_SM_BUILDER_H
#define JITMAP_TEST_SM_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "jitmap/jitmap.h"

#define SMB_MAX_FUNCTIONS 16
#define SMB_MAX_CONSTANTS 8
#define SMB_MAX_RECORDS 32
#define SMB_MAX_LOCATIONS 16
#define SMB_MAX_LIVE_OUTS 8

struct smb_loc {
	uint8_t kind; /* jitmap_loc_kind, or any byte for hostile input */
	uint16_t size;
	uint16_t reg;
	int32_t offset;
};

struct smb_live_out {
	uint16_t reg;
	uint8_t size;
};

struct smb_function {
	uint64_t address, stack_size, record_count;
	size_t at; /* layout: where its entry starts */
};

struct smb_record {
	uint64_t id;
	uint32_t offset;
	size_t function;
	unsigned num_locs, num_live_outs;
	struct smb_loc locs[SMB_MAX_LOCATIONS];
	struct smb_live_out live_outs[SMB_MAX_LIVE_OUTS];
	/* layout */
	size_t at;                        /* the record's ID field */
	size_t loc_at[SMB_MAX_LOCATIONS]; /* each location */
	size_t loc_pad_at, loc_pad_len;   /* v3 padding after the locations (0 or 4 bytes) */
	size_t live_header_at;            /* the u16 padding before NumLiveOuts */
	size_t live_at[SMB_MAX_LIVE_OUTS];
	size_t end_pad_at, end_pad_len;   /* padding after the live-outs (0 or 4 bytes) */
	size_t end;
};

typedef struct sm_builder {
	int version;
	jitmap_byte_order order;
	unsigned num_functions, num_constants, num_records;
	struct smb_function functions[SMB_MAX_FUNCTIONS];
	uint64_t constants[SMB_MAX_CONSTANTS];
	struct smb_record records[SMB_MAX_RECORDS];
	size_t constants_at; /* layout: the first constant */
	size_t size;         /* layout: bytes emitted */
} sm_builder;

/* Bytes owned by the caller (free with sm_bytes_free). */
typedef struct sm_bytes {
	uint8_t *data;
	size_t len;
} sm_bytes;

void smb_init(sm_builder *b, int version, jitmap_byte_order order);
void smb_function(sm_builder *b, uint64_t address, uint64_t stack_size);
/* Returns the constant's blob-relative index. */
unsigned smb_constant(sm_builder *b, uint64_t value);
/* A record of the last function added (of none, if no function was added). */
void smb_record(sm_builder *b, uint64_t id, uint32_t offset);
/* A location / live-out of the last record added. */
void smb_loc(sm_builder *b, uint8_t kind, uint16_t size, uint16_t reg, int32_t offset);
void smb_live_out(sm_builder *b, uint16_t reg, uint8_t size);

/* Emit the blob (and fill the layout fields). */
sm_bytes smb_emit(sm_builder *b);

/* Append `src` to `dst` after `pad` zero bytes. */
void sm_bytes_cat(sm_bytes *dst, const sm_bytes *src, size_t pad);
/* Append `n` zero bytes. */
void sm_bytes_pad(sm_bytes *dst, size_t n);
sm_bytes sm_bytes_copy(const sm_bytes *src);
void sm_bytes_free(sm_bytes *b);
/* The whole file at `path` (the test fails when it cannot be read). */
sm_bytes sm_read_file(const char *path);
/* The header of the section called `name` of the ELF64 image in `obj` (host byte order),
 * writable in place; aborts when there is none. Returns an Elf64_Shdr *. */
void *sm_elf64_section(sm_bytes *obj, const char *name);

/* Store / load an unsigned integer of `size` (1..8) bytes in `order`. */
void sm_put(uint8_t *p, uint64_t v, size_t size, jitmap_byte_order order);
uint64_t sm_get(const uint8_t *p, size_t size, jitmap_byte_order order);

#endif /* JITMAP_TEST_SM_BUILDER_H */

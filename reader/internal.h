/* internal.h: what the modules of libjitmap share and the public header does not show. */
#ifndef JITMAP_INTERNAL_H
#define JITMAP_INTERNAL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jitmap/jitmap.h"
#include "../common/bytes.h"

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

/* -- ELF files for other modules (elf.c) -- */

struct Elf;
/* The name of the stackmap section LLVM writes. */
#define JITMAP__STACKMAP_SECTION ".llvm_stackmaps"
/* The value of the first defined data symbol (STT_OBJECT) `name` in the symbol tables of
 * `elf`, in section order: 0, or -ENOENT. */
int jitmap__elf_data_symbol(struct Elf *elf, const char *name, uint64_t *value);
/* The address of the first section `name` placed in memory (sh_addr != 0): 0, or -ENOENT. */
int jitmap__elf_section_address(struct Elf *elf, const char *name, uint64_t *addr);

/* Build IDs (NT_GNU_BUILD_ID, "GNU" 3): the note that tells one build of a file from another.
 * Each returns the ID's length (at most JITMAP__MAX_BUILD_ID bytes, into `out`), or 0 when
 * there is none to be read: of an open ELF (its PT_NOTE segments); of the file at `path` (a
 * regular file only); of the ELF image whose headers are mapped at `addr` in target `t` (its
 * first page: the program headers and, in every linked file ld writes, the notes). */
#define JITMAP__MAX_BUILD_ID 64
#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif
size_t jitmap__elf_build_id(struct Elf *elf, uint8_t *out);
size_t jitmap__file_build_id(const char *path, uint8_t *out);
size_t jitmap__fd_build_id(int fd, uint8_t *out);
size_t jitmap__buffer_build_id(void *buf, size_t len, uint8_t *out); /* headers in memory */
size_t jitmap__target_build_id(const jitmap_target *t, uint64_t addr, uint8_t *out);
/* The build ID `id` (`n` bytes) as lowercase hex, as GDB and eu-unstrip print it, into `buf`. */
void jitmap__build_id_hex(const uint8_t *id, size_t n, char *buf, size_t len);

/* -- Many reads at once (live.c) -- */

struct jitmap__read {
	uint64_t addr;
	void *buf;
	size_t len;
	bool done; /* set by jitmap__read_many: all `len` bytes are in `buf` */
};
/* Read r[0..n) in as few system calls as the target allows: a live process's targets
 * (jitmap_live_target, jitmap_live_thread_target) through process_vm_readv, up to 1024 reads
 * a call. Each read done says so; one not done (unmapped, or the system refused the call) is
 * the caller's to read through read_mem, which says why it cannot be read. -ENOTSUP for any
 * other target (none done), else 0. */
int jitmap__read_many(const jitmap_target *t, struct jitmap__read *r, size_t n);

/* What opening an image (jitmap_image_open_target, JITMAP_IMAGE_SKIP_STACKMAP) would find
 * at scan time, read from its header and section headers alone (elf.c): for the process
 * model's lazy scans (process.c), which open an image only when a PC falls in its code. */
#define JITMAP__GLANCE_MAX_CODE 8
struct jitmap__glance {
	jitmap_arch arch;
	jitmap_byte_order order;
	size_t num_code;
	jitmap_image_range code[JITMAP__GLANCE_MAX_CODE]; /* as jitmap_image_code_range gives them */
};
/* 0 when the `len` bytes at `buf` are a whole image whose opening is sure to succeed, to find
 * the code ranges, architecture and byte order in `g`, and to find nothing a scan reports
 * (no .jitmap_deopt section, no symbol table whose values are addresses); -EINVAL for
 * anything else, unusual or not understood (the image is then opened at once, as before).
 * Read through libelf (elf_memory: `buf` writable, and not changed). */
int jitmap__image_glance(void *buf, size_t len, struct jitmap__glance *g);

/* -- The process model for the frame model (process.c) -- */

struct jitmap_process;
/* Where a stackmap of the process came from: the name the user sees ("JIT entry 0x...", a
 * file's path, the name an image was handed in with), its image, its notes. */
struct jitmap__stackmap_source {
	const char *name;
	const jitmap_image *image;
	const char *const *notes;
	size_t num_notes;
};
/* The process's stackmaps: the last scan's sources in their order, then the images handed
 * in. Element `i` (NULL when it has no stackmap, or past the end) and, when `out` is not NULL,
 * where it came from. */
size_t jitmap__process_num_stackmaps(const struct jitmap_process *p);
const jitmap_stackmap *jitmap__process_stackmap(const struct jitmap_process *p, size_t i,
						struct jitmap__stackmap_source *out);

/* Register `regno` of the frame at `level` through `t` as an 8-byte integer in `order`, with
 * the outer-frame rule (jitmap_location_eval_frame's): 0, or a negative errno with `why`. */
int jitmap__frame_reg(jitmap_arch arch, jitmap_byte_order order, const jitmap_target *t,
		      unsigned level, unsigned regno, uint64_t *v, char *why, size_t why_len);

/* Fill `err` (may be NULL) and return `code` (a negative errno). */
int jitmap__fail(jitmap_error *err, int code, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Rebuild the PC index if addresses changed; returns 0 or -ENOMEM. */
int jitmap__stackmap_reindex(jitmap_stackmap *sm);
/* An array of `bytes`, zeroed, faulted in by as few faults as can be (index.c says how);
 * freed by jitmap__big_free with the *mapped it set. NULL when out of memory. */
void *jitmap__big_alloc(size_t bytes, size_t *mapped);
void jitmap__big_free(void *p, size_t mapped);
/* The live variable location `i` of `rec` belongs to (jitmap_record_live_var's index): O(1). */
size_t jitmap__location_live_var(const jitmap_stackmap *sm, const jitmap_record *rec, size_t i);
/* A register's name in the stackmap's architecture, or "R#N" (written to `tmp`) for a number it
 * does not name: the one spelling of an unnamed register (eval.c). */
const char *jitmap__reg_label(const jitmap_stackmap *sm, unsigned regno, char *tmp, size_t len);
/* Free the PC index's nodes (the struct itself is the caller's). */
void jitmap__pc_index_free(struct jitmap__pc_index *ix);
/* Sort keys[0..n) (and vals with them, when not NULL) by LSD radix, a byte at a time, the
 * bytes all keys share skipped (JIT addresses share their top bytes), nothing done when the
 * keys are in order already; stable, so equal keys keep their order. tk and tv are scratch
 * of n elements. */
void jitmap__radix_sort(uint64_t *keys, uint32_t *vals, size_t n, uint64_t *tk, uint32_t *tv);


/* libbpf's OPTS_VALID: an options struct that carries its size `sz` first is valid when sz
 * covers at least that field and every byte past what this library knows (`known` bytes) is
 * zero (fields of a newer caller this library cannot honour). */
static inline bool jitmap__opts_valid(const void *opts, size_t sz, size_t known)
{
	if (sz < sizeof(size_t))
		return false;
	for (size_t i = known; i < sz; i++)
		if (((const uint8_t *)opts)[i])
			return false;
	return true;
}

/* Give the caller a struct the library fills (its first field `size_t sz`, set by the caller
 * to the size it knows): the fields of `full` (`size` bytes) as far as the caller's sz goes,
 * none past it (a program built against an older, shorter struct gets its fields). 0, or
 * -EINVAL when out is NULL or its sz does not even cover the sz. */
static inline int jitmap__give(void *out, const void *full, size_t size)
{
	size_t sz;
	if (!out)
		return -EINVAL;
	memcpy(&sz, out, sizeof(sz));
	if (sz < sizeof(size_t))
		return -EINVAL;
	memcpy((char *)out + sizeof(size_t), (const char *)full + sizeof(size_t),
	       (sz < size ? sz : size) - sizeof(size_t));
	return 0;
}

/* Whether `field` of the options at `opts` lies inside the caller's sz. */
#define JITMAP_OPTS_HAS(opts, field) \
	((opts)->sz >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field))

/* Make room for `need` elements of `size` bytes in the array at *arrayp (capacity *cap),
 * doubling: 0, or -ENOMEM (the array is left as it was). */
static inline int jitmap__grow(void *arrayp, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap * 2 : 16;
	while (n < need)
		n *= 2;
	if (n > SIZE_MAX / size)
		return -ENOMEM;
	void *a = realloc(*(void **)arrayp, n * size);
	if (!a)
		return -ENOMEM;
	*(void **)arrayp = a;
	*cap = n;
	return 0;
}

static inline uint64_t jitmap__align8(uint64_t x)
{
	return (x + 7) & ~(uint64_t)7;
}

/* A cache line's multiple (the start of an array in a block shared with others). */
static inline size_t jitmap__align64(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

/* -- A core's files, for the process model (core.c) -- */

struct jitmap_core;
/* One file a core maps (NT_FILE's, or one the library placed without it), opened as `elf`
 * with its load bias (`bias_known` false when no mapping of its first page says where it is
 * loaded); or, for one that cannot be opened, `elf` NULL and `why` (strerror's words). A
 * nonzero return stops the walk. */
typedef int (*jitmap__core_file_fn)(void *ctx, const char *path, struct Elf *elf,
				    bool bias_known, uint64_t bias, const char *why);
/* Call `fn` for each file of the core that is ELF or cannot be opened (files the caller said
 * not to open, JITMAP_CORE_NO_FILES, are left out): 0, or what `fn` returned. */
int jitmap__core_each_file(struct jitmap_core *c, jitmap__core_file_fn fn, void *ctx);

#endif /* JITMAP_INTERNAL_H */

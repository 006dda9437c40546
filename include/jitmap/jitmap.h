/* jitmap.h: the public API of libjitmap.
 *
 * libjitmap reads LLVM stackmap sections (.llvm_stackmaps, versions 1 to 3, either byte order,
 * several blobs concatenated), validates every byte, indexes the records by absolute PC,
 * decodes statepoint records, names DWARF registers per architecture, evaluates locations
 * through injected target callbacks, and finds stackmaps in ELF images through libelf.
 *
 * Conventions (house style):
 *   - Functions returning int return 0 or a negative errno value.
 *   - Constructors return NULL and set errno; when given a jitmap_error, they also fill it
 *     with the byte offset and the reason of a parse failure.
 *   - Destructors accept NULL.
 *   - Pointers returned by accessors stay valid until the owning object is freed.
 *   - Threads: the register and architecture calls, jitmap_strerror, jitmap_version and
 *     jitmap_sizeof may be called from any thread. An object (a stackmap, an index, an
 *     image, a CFI table, a core, a process) may be used from one thread at a time; reading
 *     one parsed stackmap from several threads is safe only after its PC index is built
 *     (any lookup builds it; changing addresses, as relocation and bias do, makes it stale).
 *     Evaluation and unwinding call the caller's target callbacks on the calling thread.
 */
#ifndef JITMAP_JITMAP_H
#define JITMAP_JITMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "jitmap/arch.h"
#include "jitmap/types.h"

#ifdef __cplusplus
extern "C" {
#endif


/* -- Errors (jitmap_error: types.h) -- */

/* The library's version ("0.1.0"), and the size of the public struct named `type_name`
 * ("jitmap_record", ...; 0 for a name it does not know): for bindings that mirror a struct,
 * to check that they match this build. */
JITMAP_API const char *jitmap_version(void);
JITMAP_API size_t jitmap_sizeof(const char *type_name);
/* The offset of `field` in the public struct `type_name` (SIZE_MAX for a struct or field it
 * does not list), and the value of the public constant or enumerator `name`
 * ("JITMAP_LOC_REGISTER", ...; 0, or -ENOENT): for bindings that mirror a struct or copy a
 * constant, to check each field and each value against this build, not only the sizes. */
JITMAP_API size_t jitmap_offsetof(const char *type_name, const char *field);
JITMAP_API int jitmap_constant(const char *name, int64_t *value);

/* Words for a negative errno value returned by this library (never NULL; static storage). */
JITMAP_API const char *jitmap_strerror(int code);

/* -- Architectures and registers -- */

/* jitmap_arch and the architecture tables' other calls: jitmap/arch.h (included above). */

/* Short name of an architecture ("x86-64", "aarch64", ...); "unknown" for anything else. */
JITMAP_API const char *jitmap_arch_name(jitmap_arch arch);

/* The architecture of an ELF e_machine value, JITMAP_ARCH_UNKNOWN if not supported. */
JITMAP_API jitmap_arch jitmap_arch_from_elf_machine(unsigned e_machine);

/* The architecture a debugger names: jitmap's own name, GDB's ("i386:x86-64", "aarch64",
 * "s390:64-bit", "riscv:rv64", "powerpc:common64") or a target triple, whole or its first
 * component ("x86_64-pc-linux-gnu", "arm64"). JITMAP_ARCH_UNKNOWN for anything else
 * (32-bit variants included) and for NULL. */
JITMAP_API jitmap_arch jitmap_arch_from_name(const char *name);

/* The register that LLVM's DWARF number `regno` denotes on `arch`, named as GDB names it
 * ("rbx", "x29", "r31", "f4", "s0"), or NULL when the number is not a register there. */
JITMAP_API const char *jitmap_reg_name(jitmap_arch arch, unsigned regno);

/* The DWARF number of the stack pointer, frame pointer and return address column of `arch`
 * (-1 when unknown). */
JITMAP_API int jitmap_reg_sp(jitmap_arch arch);
JITMAP_API int jitmap_reg_fp(jitmap_arch arch);

/* Whether `regno` is preserved across calls by the standard ABI of `arch` (so that its value
 * in an outer frame can be recovered by an unwinder). */
JITMAP_API bool jitmap_reg_is_callee_saved(jitmap_arch arch, unsigned regno);

/* -- The stackmap model (jitmap_byte_order, jitmap_location, jitmap_live_out: types.h) -- */

/* Name of a location kind as in the JSON contract ("register", "direct", ...). */
JITMAP_API const char *jitmap_loc_kind_name(jitmap_loc_kind kind);



typedef struct jitmap_function {
	uint64_t address;     /* relocated (and load-biased) address of the function */
	uint64_t raw_address; /* the bytes as stored in the section (0 in unrelocated objects) */
	uint64_t stack_size;  /* UINT64_MAX for dynamic or realigned frames */
	uint64_t record_count;
	size_t first_record;  /* index into the stackmap's records */
	size_t blob;          /* index of the blob holding this function */
	uint64_t section_offset; /* where its Function Address field sits in the section */
	const char *name;     /* set by the ELF layer from the symbol table; NULL if unknown */
} jitmap_function;

typedef struct jitmap_record {
	uint64_t id;
	uint32_t instruction_offset;
	uint16_t flags;       /* the reserved u16 (0 as LLVM writes it) */
	uint16_t num_locations;
	uint16_t num_live_outs;
	const jitmap_location *locations;
	const jitmap_live_out *live_outs;
	size_t function;      /* index of the owning function */
	size_t blob;
	uint64_t section_offset; /* where the record starts in the section */
	uint32_t raw_instruction_offset; /* as stored (before relocations; llvm-readobj's) */
} jitmap_record;

typedef struct jitmap_blob {
	uint8_t version;      /* 1, 2 or 3 */
	uint64_t section_offset;
	uint64_t size;        /* bytes of the section this blob spans */
	uint32_t num_functions, num_constants, num_records;
	size_t first_function, first_constant, first_record;
} jitmap_blob;

typedef struct jitmap_stackmap jitmap_stackmap;

/* Options structs carry their size: JITMAP_OPTS (types.h). */

typedef struct jitmap_parse_opts {
	size_t sz;            /* sizeof(jitmap_parse_opts) */
	jitmap_byte_order order;
	jitmap_arch arch;     /* recorded for register names; may stay UNKNOWN */
	/* A field added here: name it in JITMAP__OPTS_VALID in reader/parse.c. */
} jitmap_parse_opts;

/* Parse a whole stackmap section of `len` bytes at `buf`: one or more blobs laid end to end,
 * each blob starting at an 8-byte aligned offset after the previous one (zero bytes between
 * blobs are skipped). The bytes are copied; `buf` may be freed after the call. `opts` may be
 * NULL (byte order AUTO, arch unknown).
 *
 * With JITMAP_ORDER_AUTO the byte order is the one in which the first header's counts claim
 * fewer bytes (in the wrong order they are 256 times larger or more); little-endian wins a
 * tie.
 *
 * Returns a new stackmap, or NULL with errno set (EINVAL for malformed input, ENOMEM) and
 * `*err` filled when `err` is not NULL. Nothing is allocated by an unchecked count: every
 * count is checked against the bytes that remain before any allocation or read. */
JITMAP_API jitmap_stackmap *jitmap_stackmap_parse(const void *buf, size_t len,
						  const jitmap_parse_opts *opts,
						  jitmap_error *err);
JITMAP_API void jitmap_stackmap_free(jitmap_stackmap *sm);

JITMAP_API jitmap_byte_order jitmap_stackmap_byte_order(const jitmap_stackmap *sm);
JITMAP_API jitmap_arch jitmap_stackmap_arch(const jitmap_stackmap *sm);
JITMAP_API size_t jitmap_stackmap_num_blobs(const jitmap_stackmap *sm);
JITMAP_API size_t jitmap_stackmap_num_functions(const jitmap_stackmap *sm);
JITMAP_API size_t jitmap_stackmap_num_records(const jitmap_stackmap *sm);
/* Of them, those with a PC (what an index holds of this stackmap): all but the records of a
 * version 1 blob with several functions. */
JITMAP_API size_t jitmap_stackmap_num_records_with_pc(const jitmap_stackmap *sm);
JITMAP_API size_t jitmap_stackmap_num_constants(const jitmap_stackmap *sm);
/* Element `i`, or NULL when `i` is out of range. */
JITMAP_API const jitmap_blob *jitmap_stackmap_blob(const jitmap_stackmap *sm, size_t i);
JITMAP_API const jitmap_function *jitmap_stackmap_function(const jitmap_stackmap *sm, size_t i);
JITMAP_API const jitmap_record *jitmap_stackmap_record(const jitmap_stackmap *sm, size_t i);
/* Constant `i` of the whole section (blob-relative index + blob's first_constant). */
JITMAP_API int jitmap_stackmap_constant(const jitmap_stackmap *sm, size_t i, uint64_t *value);

/* The function owning a record. */
JITMAP_API const jitmap_function *jitmap_record_function(const jitmap_stackmap *sm,
							 const jitmap_record *rec);
/* The absolute PC of a record: its function's address + instruction offset. */
JITMAP_API uint64_t jitmap_record_pc(const jitmap_stackmap *sm, const jitmap_record *rec);

/* The constant value of a CONSTANT or CONSTANT_INDEX location: a small constant is the
 * sign-extended offset field; an index is resolved in the record's blob. -EINVAL for other
 * kinds. (Indexes were range-checked by the parser.) */
JITMAP_API int jitmap_location_constant(const jitmap_stackmap *sm, const jitmap_record *rec,
					const jitmap_location *loc, uint64_t *value);

/* -- Dialects --
 *
 * ykllvm (the LLVM of the yk meta-tracing JIT) writes version 3 sections of its own layout:
 * the header, functions and constants are LLVM's, but a record counts live variables, each
 * with its own count of locations (`-yk-stackmap-add-locs`, which yk always passes, also
 * gives each location a list of extra places the value is kept, and each function a table of
 * callee-saved spills after the records). jitmap_stackmap_parse tells the layouts apart by
 * their bytes (docs/stackmap-format.md, "ykllvm"), never reads one as the other, and flattens
 * a yk record's locations into jitmap_record.locations in order; these say how they group. */
typedef enum jitmap_dialect {
	JITMAP_DIALECT_LLVM = 0,      /* LLVM's own layout */
	JITMAP_DIALECT_YK = 1,        /* ykllvm: live variables, 12-byte locations */
	JITMAP_DIALECT_YK_EXTRAS = 2, /* ykllvm -yk-stackmap-add-locs: extra places, spills */
} jitmap_dialect;

/* "llvm", "ykllvm", "ykllvm-extras"; NULL for another value. */
JITMAP_API const char *jitmap_dialect_name(jitmap_dialect d);
/* The layout of blob `i` (JITMAP_DIALECT_LLVM for an index out of range). */
JITMAP_API jitmap_dialect jitmap_blob_dialect(const jitmap_stackmap *sm, size_t i);
/* The live variables of a record: ykllvm's count; in LLVM's layout each location is one.
 * live_var sets the first location index and the count of variable `i`: 0, or -ERANGE. */
JITMAP_API size_t jitmap_record_num_live_vars(const jitmap_stackmap *sm, const jitmap_record *rec);
JITMAP_API int jitmap_record_live_var(const jitmap_stackmap *sm, const jitmap_record *rec,
				      size_t i, uint16_t *first_location, uint16_t *num_locations);
/* The extra places of location `loc` of `rec` (JITMAP_DIALECT_YK_EXTRAS): their count, and
 * *extras pointing at them (a value >= 0 is a DWARF register, < 0 a byte offset from the
 * frame pointer). 0 in every other dialect. */
JITMAP_API size_t jitmap_location_extras(const jitmap_stackmap *sm, const jitmap_record *rec,
					 size_t loc, const int16_t **extras);

/* One callee-saved register spill of a function (JITMAP_DIALECT_YK_EXTRAS): `frame_index` is
 * the compiler's frame index of the slot (-2, -3, ...), not a byte offset. */
typedef struct jitmap_spill {
	uint16_t dwarf_reg;
	int32_t frame_index;
} jitmap_spill;

/* Function `i`'s spill table: 0 with *has_fp (whether it keeps a frame pointer; -1 when the
 * dialect does not say), *spills and *num set; -ERANGE for an index out of range. */
JITMAP_API int jitmap_function_spills(const jitmap_stackmap *sm, size_t i, int *has_fp,
				      const jitmap_spill **spills, size_t *num);

/* Set the absolute address of the function whose Function Address field sits at
 * `section_offset` (the ELF layer calls this when it applies relocations). -ENOENT if no
 * function field is there. */
JITMAP_API int jitmap_stackmap_set_function_address(jitmap_stackmap *sm, uint64_t section_offset,
						    uint64_t address);
/* Fill what `sm` lacks from `from`, another parse of the same section (say, the registered copy
 * of a JIT object, which libjitmap relocates, while the live section is not relocated yet):
 * when both have the same functions at the same section offsets, each function of `sm` whose
 * address is 0 takes `from`'s address, and each without a name takes `from`'s name. Returns
 * the number of addresses filled, -EINVAL when the layouts differ (nothing is changed), or
 * -ENOMEM. */
JITMAP_API int jitmap_stackmap_merge(jitmap_stackmap *sm, const jitmap_stackmap *from);
/* Set the instruction offset of the record whose Instruction Offset field sits at
 * `field_offset` in the section (a relocation resolved it). Returns 0 or -ENOENT. */
JITMAP_API int jitmap_stackmap_set_instruction_offset(jitmap_stackmap *sm, uint64_t field_offset,
						      uint32_t value);
/* Add `bias` to every function address (for executables and libraries loaded at a bias). */
JITMAP_API void jitmap_stackmap_add_bias(jitmap_stackmap *sm, uint64_t bias);
/* The size in bytes of function `i` (its symbol's st_size; 0 when unknown), which bounds
 * jitmap_stackmap_nearest. jitmap_image_name_functions sets it from the image's symbols and
 * jitmap_stackmap_merge carries it over. set returns 0 or -ERANGE. */
JITMAP_API int jitmap_stackmap_set_function_size(jitmap_stackmap *sm, size_t i, uint64_t size);
JITMAP_API uint64_t jitmap_stackmap_function_size(const jitmap_stackmap *sm, size_t i);
/* Give the function `i` a name; the string is copied. */
JITMAP_API int jitmap_stackmap_set_function_name(jitmap_stackmap *sm, size_t i, const char *name);

/* Records at exactly `pc`. Several records can share one PC (LLVM emits that); they come in
 * section order. Stores at most `max` record pointers in `out` (which may be NULL when max is
 * 0) and returns how many records there are at `pc` in all (0 if none). O(log n). */
JITMAP_API size_t jitmap_stackmap_lookup(const jitmap_stackmap *sm, uint64_t pc,
					 const jitmap_record **out, size_t max);

/* Records with ID `id`, in section order. Stores at most `max` record pointers in `out` (NULL
 * when max is 0) and returns how many records have that ID in all. O(number of records). */
JITMAP_API size_t jitmap_stackmap_find_id(const jitmap_stackmap *sm, uint64_t id,
					  const jitmap_record **out, size_t max);

/* The function whose records surround `pc`: the one with the greatest address <= pc, and the
 * nearest records before and after `pc` in it (either may be NULL). For "no record here; the
 * nearest are ..." messages. Returns 0, or -ENOENT when no function starts at or before pc, or
 * when pc lies past that function's end (its size is known: a return address may equal the
 * end): code between stackmap functions belongs to functions without records. */
JITMAP_API int jitmap_stackmap_nearest(const jitmap_stackmap *sm, uint64_t pc,
				       const jitmap_record **before, const jitmap_record **after);

/* -- Statepoints -- */

/* How statepoint records are recognised. LLVM's format does not mark them: a statepoint is
 * a record whose shape fits (see jitmap_statepoint_decode). AUTO decodes by shape; ALL treats
 * every record as a statepoint (and reports those whose shape does not fit); NONE decodes
 * none. A list of IDs overrides the mode per record: see jitmap_statepoint_wanted. */
typedef enum jitmap_statepoint_mode {
	JITMAP_STATEPOINT_AUTO = 0,
	JITMAP_STATEPOINT_ALL,
	JITMAP_STATEPOINT_NONE,
} jitmap_statepoint_mode;

typedef struct jitmap_statepoint_info {
	uint64_t calling_convention;
	uint64_t flags;
	size_t num_deopt;
	const jitmap_location *deopt;      /* points into the record's locations */
	size_t num_gc_pairs;
	const jitmap_location *gc_pairs;   /* 2 * num_gc_pairs locations: base, derived, base, ... */
	size_t num_gc_allocas;
	const jitmap_location *gc_allocas; /* trailing Direct locations */
} jitmap_statepoint_info;

/* Decode `rec` as a statepoint. The shape rule: at least 3 locations; the first three are
 * small constants (calling convention, flags, deopt count N); flags has no bits beyond
 * GCTransition|DeoptLiveIn; N <= locations - 3; after the deopt values, the trailing Direct
 * locations are gc allocas and the rest pair up (an even count) as (base, derived), and no
 * pair location is Direct. Returns 0 and fills `out` when the shape fits, -EINVAL when it does
 * not (with the reason in `why` when not NULL, `why_len` bytes). */
JITMAP_API int jitmap_statepoint_decode(const jitmap_stackmap *sm, const jitmap_record *rec,
					jitmap_statepoint_info *out, char *why, size_t why_len);

/* Whether `rec` is to be shown as a statepoint under `mode` (with `ids`/`num_ids` overriding:
 * under AUTO or ALL, a listed ID is never decoded; under NONE, a listed ID is decoded). */
JITMAP_API bool jitmap_statepoint_wanted(const jitmap_stackmap *sm, const jitmap_record *rec,
					 jitmap_statepoint_mode mode, const uint64_t *ids,
					 size_t num_ids);

/* -- Indexes over many stackmaps -- */

/* An index of the records of several stackmaps (one per JIT entry, say) by absolute PC.
 * Stackmaps are added and removed by pointer; the index does not own them. */
typedef struct jitmap_index jitmap_index;

typedef struct jitmap_hit {
	const jitmap_stackmap *stackmap;
	const jitmap_record *record;
} jitmap_hit;

JITMAP_API jitmap_index *jitmap_index_new(void);
JITMAP_API void jitmap_index_free(jitmap_index *idx);
/* Returns 0, -EEXIST if already present, -ENOMEM. */
JITMAP_API int jitmap_index_add(jitmap_index *idx, const jitmap_stackmap *sm);
/* Returns 0, or -ENOENT if `sm` is not in the index. */
JITMAP_API int jitmap_index_remove(jitmap_index *idx, const jitmap_stackmap *sm);
/* How many records the index holds: those with a PC (a version 1 blob with several functions
 * gives its records none). */
JITMAP_API size_t jitmap_index_num_records(jitmap_index *idx);
/* Like jitmap_stackmap_lookup, over every stackmap in the index. */
JITMAP_API size_t jitmap_index_lookup(jitmap_index *idx, uint64_t pc, jitmap_hit *out,
				      size_t max);

/* -- Evaluating locations -- */

/* How a front end reaches the stopped frame. Registers are named by LLVM DWARF number.
 * read_reg fills `size` bytes (at most 64) with the register's contents in target byte
 * order: for registers up to 8 bytes, the value as a `size`-byte integer. It returns 0, or a
 * negative errno and may fill `why` (why_len bytes) with a reason such as "caller-saved
 * register not saved in an outer frame". read_mem reads `len` bytes at `addr`. */
typedef struct jitmap_target {
	void *ctx;
	int (*read_reg)(void *ctx, unsigned regno, void *buf, size_t size, char *why,
			size_t why_len);
	int (*read_mem)(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			size_t why_len);
} jitmap_target;

#define JITMAP_VALUE_MAX 256

typedef struct jitmap_value {
	bool available;
	bool is_address;       /* DIRECT: `u` is the address reg + offset */
	uint16_t size;         /* bytes */
	uint64_t u;            /* the value when size <= 8 (zero-extended) */
	uint64_t address;      /* INDIRECT: the address read from; DIRECT: same as u */
	uint8_t bytes[JITMAP_VALUE_MAX]; /* the value in target byte order when size > 8 */
	char why[160];         /* when !available, why: "register rbx not available: <the target's
				* reason>", "memory at 0x... not readable: ...", ... (no
				* "unavailable" prefix: front ends add their own) */
} jitmap_value;

/* Evaluate `loc` of `rec` in a frame reached through `target`. Always fills `out`: an
 * unavailable value says why. Returns 0 when available, else the negative errno. */
JITMAP_API int jitmap_location_eval(const jitmap_stackmap *sm, const jitmap_record *rec,
				    const jitmap_location *loc, const jitmap_target *target,
				    jitmap_value *out);

/* Where the frame being evaluated stands, for jitmap_location_eval_frame. The struct carries
 * its size (libbpf's convention): set `sz` to sizeof(jitmap_eval_opts); fields the library
 * does not know must be zero. */
typedef struct jitmap_eval_opts {
	size_t sz;
	unsigned frame_level; /* 0: the innermost frame (the stop); > 0: an outer frame */
	/* A field added here: name it in JITMAP__OPTS_VALID in reader/eval.c. */
} jitmap_eval_opts;

/* jitmap_location_eval, with the outer-frame rule decided here rather than by each front end.
 * In an outer frame (frame_level > 0) a caller-saved register (jitmap_reg_is_callee_saved is
 * false) holds the value of an inner frame, never this frame's, unless the unwinder recovered
 * it from a save slot. So `target->read_reg` answers one of:
 *   0          the register's value in this frame as the debugger unwound it: trusted in an
 *              outer frame only for callee-saved registers;
 *   1          (JITMAP_REG_RECOVERED) the value was recovered from a save slot: trusted;
 *   -ENOENT    the register was not saved in this frame (GDB's <not saved>);
 *   another negative errno, with `why` filled: unreadable.
 * A register that cannot be trusted is unavailable with the reason "caller-saved, and not
 * saved in frame N" (or "not saved in frame N" for a callee-saved one). `opts` may be NULL
 * (frame 0). Returns as jitmap_location_eval, or -EINVAL for bad `opts`. */
#define JITMAP_REG_RECOVERED 1
JITMAP_API int jitmap_location_eval_frame(const jitmap_stackmap *sm, const jitmap_record *rec,
					  const jitmap_location *loc,
					  const jitmap_target *target,
					  const jitmap_eval_opts *opts, jitmap_value *out);

/* Format a location's place as the front ends show it: "rbx", "[rsp+16]", "rbp-8",
 * "const 42", "const#1 9000000000" (a pool constant: its index, then its value). Returns
 * the length snprintf would have written. */
JITMAP_API int jitmap_location_format(const jitmap_stackmap *sm, const jitmap_record *rec,
				      const jitmap_location *loc, char *buf, size_t len);

/* A register of `sm`'s architecture as the front ends show it: its name ("rbx"), or "R#40"
 * for a DWARF number that names no register there. Returns as jitmap_location_format. */
JITMAP_API int jitmap_stackmap_reg_label(const jitmap_stackmap *sm, unsigned regno, char *buf,
					 size_t len);

/* -- ELF images -- */

typedef struct jitmap_image jitmap_image;

/* Open an ELF object, executable, shared library (by path) or an ELF image in memory (the
 * bytes are copied). The `.llvm_stackmaps` section, when present, is parsed; in relocatable
 * objects its relocations are applied to the Function Address fields (x86-64, AArch64,
 * PPC64, s390x, RISC-V absolute 64-bit relocations) and RISC-V's ADD32/SUB32 pairs to the
 * Instruction Offset fields (raw_instruction_offset keeps the stored value), using each
 * symbol's section sh_addr (0 in files, the load address in LLVM's JIT copies); a relocation
 * of another type leaves its field as stored and adds a warning (jitmap_image_warning).
 * Function names come from the symbol table. Returns NULL with errno set and `*err` filled on
 * failure; a file without a stackmap section is not a failure (see jitmap_image_stackmap). */
JITMAP_API jitmap_image *jitmap_image_open_file(const char *path, jitmap_error *err);
JITMAP_API jitmap_image *jitmap_image_open_memory(const void *buf, size_t len,
						  jitmap_error *err);
JITMAP_API void jitmap_image_free(jitmap_image *img);

/* ELF files whose sections are compressed (SHF_COMPRESSED; Debian's separate debug files, for
 * one): libdw inflates every debug section of such a file each time it opens it, so a tool
 * that opens one often keeps an uncompressed copy (jitmap-stack's debuginfo cache).
 *
 * jitmap_elf_compressed: 1 when the ELF file open on `fd` has a compressed section, 0 when it
 * has none or is not ELF; `*uncompressed_size` (may be NULL) the size all its sections would
 * have uncompressed (the headers' ch_size). Reads through `fd` from offset 0 on, without moving
 * its file offset.
 *
 * jitmap_elf_decompress: write to `out` (open for reading and writing, empty) a copy of the
 * ELF file open on `in` with every compressed section inflated, and its headers and layout
 * updated. 0, or a negative errno value (EINVAL: `in` is not ELF or a section cannot be
 * inflated; the errors of reading and writing); on failure `out` holds nothing usable. */
JITMAP_API int jitmap_elf_compressed(int fd, uint64_t *uncompressed_size);
JITMAP_API int jitmap_elf_decompress(int in, int out);

/* Flags of jitmap_image_open_target. */
#define JITMAP_IMAGE_SKIP_STACKMAP 1u /* locate .llvm_stackmaps, do not read or parse it */

/* Open an ELF image of `size` bytes at `addr` in target memory (a JIT's registered object),
 * reading through `target->read_mem` only the header, the section headers and the contents
 * of the sections libjitmap uses. With JITMAP_IMAGE_SKIP_STACKMAP the stackmap section is
 * not read: jitmap_image_stackmap_section still says where it is loaded, and
 * jitmap_image_stackmap returns NULL (for callers that read the live section at its sh_addr,
 * which also saves reading the copy). The caller caps `size`. Returns NULL with errno and
 * `*err` as jitmap_image_open_memory, or with the target's reason when a read fails
 * (err->offset: the image offset that could not be read). */
JITMAP_API jitmap_image *jitmap_image_open_target(const jitmap_target *target, uint64_t addr,
						  uint64_t size, unsigned flags, jitmap_error *err);

/* The build ID (NT_GNU_BUILD_ID) of the ELF image whose headers are mapped at `addr` in target
 * memory (a loaded module's first page: where ld puts the program headers and notes): its
 * length, with the ID in `out` (`len` bytes; 20 for GNU ld's), or 0 when there is none to
 * read. For a debugger that checks the file it reads for a module against what the process
 * maps (jitmap_stopped_build_id_at does the same for a core or a process the library
 * opened). */
JITMAP_API size_t jitmap_image_build_id_at(const jitmap_target *target, uint64_t addr,
					   uint8_t *out, size_t len);

JITMAP_API jitmap_arch jitmap_image_arch(const jitmap_image *img);
/* ELF e_type (1 REL, 2 EXEC, 3 DYN, 4 CORE) and e_machine. */
JITMAP_API unsigned jitmap_image_elf_type(const jitmap_image *img);
JITMAP_API unsigned jitmap_image_elf_machine(const jitmap_image *img);
/* The parsed stackmap, or NULL when the image has none. Owned by the image. */
JITMAP_API jitmap_stackmap *jitmap_image_stackmap(const jitmap_image *img);
/* Where `.llvm_stackmaps` says it is loaded (sh_addr) and its size; -ENOENT without one. */
JITMAP_API int jitmap_image_stackmap_section(const jitmap_image *img, uint64_t *addr,
					     uint64_t *size);
/* Set the load bias of the image (0 at open; a new call replaces the old bias): function
 * addresses and symbols move by it. For executables and shared libraries loaded at a bias. */
JITMAP_API void jitmap_image_set_load_bias(jitmap_image *img, uint64_t bias);
/* Name each function of `sm` that has no name and starts exactly at a function symbol of
 * `img` (after bias), with that symbol's name: for a stackmap read elsewhere (the live section
 * of a JIT object) than from the image. Returns how many were named, or -ENOMEM. */
JITMAP_API int jitmap_image_name_functions(const jitmap_image *img, jitmap_stackmap *sm);
/* The function symbol containing `addr` (after bias), with `*offset` = addr - start; NULL if
 * none. */
JITMAP_API const char *jitmap_image_symbolize(const jitmap_image *img, uint64_t addr,
					      uint64_t *offset);

/* -- What a debugger's JIT reader needs from an image -- */

/* Options of jitmap_image_open_memory_opts; `sz` = sizeof(jitmap_image_opts) (libbpf's
 * convention: fields added later must be zero when unknown). */
typedef struct jitmap_image_opts {
	size_t sz;
	unsigned flags; /* JITMAP_IMAGE_SKIP_STACKMAP */
	/* A field added here: name it in JITMAP__OPTS_VALID in files/elf.c. */
} jitmap_image_opts;

/* jitmap_image_open_memory with options. With JITMAP_IMAGE_SKIP_STACKMAP the stackmap section
 * is located, not parsed: a section placed in memory (sh_addr != 0) is for the caller to read
 * live; one that is not placed keeps the image's bytes (jitmap_image_stackmap_copy). */
JITMAP_API jitmap_image *jitmap_image_open_memory_opts(const void *buf, size_t len,
						       const jitmap_image_opts *opts,
						       jitmap_error *err);

/* ELFCLASS32 (1) or ELFCLASS64 (2), and the image's byte order. */
JITMAP_API unsigned jitmap_image_elf_class(const jitmap_image *img);
JITMAP_API jitmap_byte_order jitmap_image_byte_order(const jitmap_image *img);

/* Executable sections placed in memory (SHF_ALLOC | SHF_EXECINSTR, sh_addr != 0), in section
 * order, as [lo, hi) without the load bias; after them, the range of each function named in
 * DWARF alone (JITMAP_SYMBOL_FROM_DWARF) that lies outside them (Mono's xdebug images hold an
 * empty .text, their methods' code at its JIT addresses). */
typedef struct jitmap_image_range {
	uint64_t lo, hi;
} jitmap_image_range;
JITMAP_API size_t jitmap_image_num_code_ranges(const jitmap_image *img);
JITMAP_API const jitmap_image_range *jitmap_image_code_range(const jitmap_image *img, size_t i);

/* Function symbols (STT_FUNC of .symtab and .dynsym), sorted by address (then the larger
 * first). `address` is where the function is (for ET_REL: sh_addr of its section + st_value,
 * which LLVM's JITs patch to the load address). Flags: */
#define JITMAP_SYMBOL_ABSOLUTE 1u         /* SHN_ABS: debuggers' PC lookups skip it */
#define JITMAP_SYMBOL_IN_CODE 2u          /* its section is executable (SHF_EXECINSTR) */
#define JITMAP_SYMBOL_VALUE_IS_ADDRESS 4u /* ET_REL whose st_value is an absolute address: every
					   * function of a placed section lies outside it read as
					   * an offset and inside it read as an address (some
					   * hand-written JITs); debuggers place it wrongly */
#define JITMAP_SYMBOL_FROM_DWARF 8u       /* no symbol: a DW_TAG_subprogram of .debug_info
					   * (name, low_pc, high_pc) where no function symbol is
					   * (Mono's xdebug images name their methods so) */
typedef struct jitmap_image_symbol_info {
	size_t sz; /* set by the caller: sizeof(jitmap_image_symbol_info), as jitmap_source_info's */
	uint64_t address, size;
	const char *name; /* owned by the image */
	unsigned flags;
} jitmap_image_symbol_info;
JITMAP_API size_t jitmap_image_num_symbols(const jitmap_image *img);
/* Fill `*out` (its sz set) with symbol `i`: 0, -ERANGE past the end, -EINVAL for a bad sz. */
JITMAP_API int jitmap_image_symbol(const jitmap_image *img, size_t i,
				   jitmap_image_symbol_info *out);
/* What was read around while opening, one sentence each: a relocation of the stackmap
 * section that jitmap does not know (that field keeps its stored bytes; the rest is read). */
JITMAP_API size_t jitmap_image_num_warnings(const jitmap_image *img);
JITMAP_API const char *jitmap_image_warning(const jitmap_image *img, size_t i);
/* Whether the image's function symbols were read as JITMAP_SYMBOL_VALUE_IS_ADDRESS. */
JITMAP_API bool jitmap_image_symbol_values_are_addresses(const jitmap_image *img);
/* The first STT_FILE symbol's name, or NULL. */
JITMAP_API const char *jitmap_image_file_name(const jitmap_image *img);
/* Whether the image has a non-empty .debug_info (a debugger reads its DWARF itself). */
JITMAP_API bool jitmap_image_has_debug_info(const jitmap_image *img);
/* A .eh_frame placed in memory: its address (with bias) and size; -ENOENT without one. */
JITMAP_API int jitmap_image_eh_frame(const jitmap_image *img, uint64_t *addr, uint64_t *size);
/* The bytes of .debug_frame (NULL, *len 0 when absent or when relocations target it: its
 * addresses would not be filled in). Owned by the image. */
JITMAP_API const void *jitmap_image_debug_frame(const jitmap_image *img, size_t *len);
/* With JITMAP_IMAGE_SKIP_STACKMAP, the image's bytes of a .llvm_stackmaps not placed in
 * memory (NULL, *len 0 otherwise). Owned by the image. */
JITMAP_API const void *jitmap_image_stackmap_copy(const jitmap_image *img, size_t *len);

/* -- An image as a file for a debugger -- */

/* Copy the ELF64 image `buf` (`len` bytes, as a JIT registered it) with its code: each
 * section placed in memory as code (SHF_ALLOC | SHF_EXECINSTR, sh_addr != 0) that the image
 * leaves empty (SHT_NOBITS: the code stays in the process, as in libjitmap-producer's and
 * LuaJIT's images) becomes SHT_PROGBITS holding the sh_size bytes read through
 * `target->read_mem` at its sh_addr, appended after the image's bytes; nothing else changes.
 * For a debugger given the image as a file: LLDB reads read-only sections from a module's
 * file, and since LLDB 19 an allocated SHT_NOBITS section reads as zeros there.
 *
 * `*out_len` is the room at `out` on entry and the copy's length on return. Returns the
 * number of sections filled (0: the copy is the image as it was); -ENOSPC when `out` is NULL
 * or `*out_len` too small: nothing is written, `*out_len` is the length needed (the code is
 * not read then); -EINVAL for bad arguments or an image whose section headers are not
 * ELF64's inside it; -EFBIG past 256 MiB of code; the target's error when code cannot be
 * read. Failures other than -ENOSPC fill `*err` (err->offset: the section header's offset). */
JITMAP_API int jitmap_image_with_code(const void *buf, size_t len, const jitmap_target *target,
				      void *out, size_t *out_len, jitmap_error *err);

/* -- Deopt layouts (jitmap_deopt_layout: types.h) -- */

/* The deopt layouts of one image or section, parsed and checked. */
typedef struct jitmap_layouts jitmap_layouts;

/* Parse a `.jitmap_deopt` section (`len` bytes, byte order `order`; JITMAP_ORDER_AUTO: the
 * host's). Every count, index and string is checked before use: on malformed bytes returns
 * NULL with errno EINVAL and `err` (may be NULL) saying where (a byte offset in the section)
 * and what; ENOMEM. A layout repeating another's record ID and function is malformed. */
JITMAP_API jitmap_layouts *jitmap_layouts_parse(const void *bytes, size_t len,
						jitmap_byte_order order, jitmap_error *err);
JITMAP_API void jitmap_layouts_free(jitmap_layouts *l);
JITMAP_API size_t jitmap_layouts_count(const jitmap_layouts *l);
/* Layout `i` (NULL past the end); its pointers are owned by `l`. */
JITMAP_API const jitmap_deopt_layout *jitmap_layouts_get(const jitmap_layouts *l, size_t i);
/* The layout for record `record_id` in `function` (may be NULL): one given for that function
 * first, then one for any function; NULL when none. O(log n). */
JITMAP_API const jitmap_deopt_layout *jitmap_layouts_find(const jitmap_layouts *l,
							  uint64_t record_id,
							  const char *function);
/* The layouts an image carries (its `.jitmap_deopt`), or NULL without them. When the section
 * is malformed the image still opens: NULL here, and jitmap_image_layouts_problem says why
 * ("offset 0x..: ..."). Owned by the image. */
JITMAP_API const jitmap_layouts *jitmap_image_layouts(const jitmap_image *img);
JITMAP_API const char *jitmap_image_layouts_problem(const jitmap_image *img);

/* -- The GDB JIT interface, read from a target -- */

/* The data symbol under which a JIT publishes its list head (GDB manual, "JIT Interface"):
 * what a tool looks up in a process's files (jitmap_stopped_find_symbol,
 * jitmap_process_scan_file). */
#define JITMAP_JIT_DESCRIPTOR_SYMBOL "__jit_debug_descriptor"

/* The list head a JIT publishes as `__jit_debug_descriptor`. */
typedef struct jitmap_jit_descriptor {
	uint64_t address;     /* where it was read */
	uint32_t version;     /* 1 */
	uint32_t action_flag; /* 0 no action, 1 register, 2 unregister */
	uint64_t relevant_entry, first_entry;
} jitmap_jit_descriptor;

/* One `struct jit_code_entry` of the list, as read from the target. */
typedef struct jitmap_jit_code {
	uint64_t entry;        /* where the jit_code_entry itself sits */
	uint64_t prev;         /* its prev pointer, as stored (not checked) */
	uint64_t symfile_addr; /* the registered image */
	uint64_t symfile_size; /* its size in bytes, as stored: not checked, cap before reading */
} jitmap_jit_code;

typedef struct jitmap_jit_list jitmap_jit_list;

/* The default cap on entries walked (GDB itself takes minutes to register far fewer). */
#define JITMAP_JIT_LIST_LIMIT 100000

/* Read the descriptor at `descriptor` and walk its list of code entries, through
 * `target->read_mem` only (read_reg is not used). Pointers are 64-bit in byte order `order`:
 * the target's (for a core, jitmap_stopped_byte_order). AUTO takes the order in which the
 * descriptor's version word reads 1 (the host's when it reads 1 in neither). At most `limit`
 * entries are read (0: JITMAP_JIT_LIST_LIMIT).
 *
 * Returns NULL with errno set and `*err` filled when there is no list at all: the descriptor
 * is not readable (EFAULT, or the target's code), its version is not 1 (EPROTO), ENOMEM.
 * Otherwise returns the list. A walk that meets a problem stops there and keeps the entries
 * before it; jitmap_jit_list_status then says what stopped it (code -ELOOP: an entry comes
 * again, a cycle; -E2BIG: more than `limit` entries; -EFAULT or the target's code: an entry
 * is not readable; offset: the entry's address) and has code 0 when the whole list was read.
 * Every entry is read once; the walk never revisits memory. */
JITMAP_API jitmap_jit_list *jitmap_jit_list_read(const jitmap_target *target,
						 uint64_t descriptor, jitmap_byte_order order,
						 size_t limit, jitmap_error *err);
JITMAP_API void jitmap_jit_list_free(jitmap_jit_list *list);
JITMAP_API const jitmap_jit_descriptor *jitmap_jit_list_descriptor(const jitmap_jit_list *list);
JITMAP_API size_t jitmap_jit_list_count(const jitmap_jit_list *list);
/* Entry `i` in list order, or NULL when out of range. */
JITMAP_API const jitmap_jit_code *jitmap_jit_list_code(const jitmap_jit_list *list, size_t i);
JITMAP_API const jitmap_error *jitmap_jit_list_status(const jitmap_jit_list *list);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_JITMAP_H */

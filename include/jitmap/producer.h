/* producer.h: the producer half of libjitmap, for JITs.
 *
 * Two tools for a JIT that wants its code to be debuggable with jitmap, GDB and LLDB:
 *
 *   - a stackmap builder, for JITs that emit machine code themselves: it writes the
 *     `.llvm_stackmaps` format (version 3, byte-exact as LLVM lays it out), which the reader
 *     half of this library, `llvm-readobj --stackmap` and every other stackmap consumer read;
 *
 *   - registration of a region of code with the debuggers through the GDB JIT interface
 *     (`__jit_debug_descriptor`, `__jit_debug_register_code`). One registration carries many
 *     functions: GDB does O(n) work per registration and per lookup, so registering n code
 *     entries costs O(n^2) (16,000 entries: 18 s), and batching is the remedy.
 *
 * Conventions are those of jitmap.h: 0 or a negative errno; constructors return NULL, set
 * errno and fill a jitmap_error when given one; destructors accept NULL. For the calls of
 * this header, jitmap_error.offset is the index of the offending argument element (location,
 * live-out, function) unless stated otherwise, and reason is one sentence saying what is wrong.
 */
#ifndef JITMAP_PRODUCER_H
#define JITMAP_PRODUCER_H

#include <stddef.h>
#include <stdint.h>

#include "jitmap/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* -- Stackmap builder -- */

/* A stackmap under construction: one v3 blob. Functions are added in order; records belong to
 * the function added last. The constant pool is deduplicated and indexed in order of first
 * use, as LLVM does. Not thread-safe: one builder per thread. */
typedef struct jitmap_smbuilder jitmap_smbuilder;

/* A new, empty builder writing in byte order `order` (JITMAP_ORDER_AUTO: the host's).
 * Returns NULL with errno ENOMEM, or EINVAL for an unknown order. */
JITMAP_API jitmap_smbuilder *jitmap_smbuilder_new(jitmap_byte_order order);
JITMAP_API void jitmap_smbuilder_free(jitmap_smbuilder *b);

/* Start a function at absolute `address` whose frame is `stack_size` bytes below the return
 * address, in LLVM's sense: everything the function pushes or allocates (saved frame pointer
 * and callee-saved registers included), so that at a record the caller's stack pointer is
 * SP + stack_size + 8 on x86-64; UINT64_MAX for frames of dynamic size. Returns 0, -EINVAL
 * (2^32 - 1 functions already) or -ENOMEM; `err` may be NULL. */
JITMAP_API int jitmap_smbuilder_add_function(jitmap_smbuilder *b, uint64_t address,
					     uint64_t stack_size, jitmap_error *err);

/* Add a record to the current function: `id`, `instruction_offset` from the function's start
 * (for a call, the offset of its return address), `num_locations` locations and
 * `num_live_outs` live-out registers (each array may be NULL when its count is 0); both are
 * copied. Returns 0, -ENOMEM, or -EINVAL with the reason in `err` (may be NULL) when: no
 * function was added; a count exceeds 65535 (LLVM writes such a call site as an ID UINT64_MAX
 * record with no locations instead: do that yourself if you want it); a location has an
 * unknown kind or size 0; a constant has a register; a ConstantIndex names no constant of
 * this builder; a live-out has size 0; or the record count would pass 2^32 - 1. On failure
 * the builder is unchanged. */
JITMAP_API int jitmap_smbuilder_add_record(jitmap_smbuilder *b, uint64_t id,
					   uint32_t instruction_offset,
					   const jitmap_location *locations, size_t num_locations,
					   const jitmap_live_out *live_outs, size_t num_live_outs,
					   jitmap_error *err);

/* The location of the 64-bit constant `value`, as LLVM writes it: a Constant (size 8) when it
 * fits a sign-extended 32-bit field, else a ConstantIndex (size 8) into the pool, adding the
 * value to the pool on its first use (a value used again reuses its entry; a pool entry stays
 * even if no record uses it). Fills `*out`; returns 0, -ENOMEM or -EINVAL (pool full). */
JITMAP_API int jitmap_smbuilder_constant(jitmap_smbuilder *b, uint64_t value,
					 jitmap_location *out);

/* The stackmap as bytes: exactly LLVM's v3 layout (header, functions, constants, records with
 * their padding, all reserved bytes zero), so that jitmap_stackmap_parse and
 * `llvm-readobj --stackmap` read it back as built. `*bytes` is malloc'd and owned by the
 * caller, `*len` a multiple of 8 (16 for a builder without functions). The builder is not
 * changed and may grow and be finished again. Returns 0 or -ENOMEM. */
JITMAP_API int jitmap_smbuilder_finish(const jitmap_smbuilder *b, void **bytes, size_t *len);

/* -- Registering code with debuggers -- */

/* One function of a region. `name` is copied at registration. */
typedef struct jitmap_jit_function {
	const char *name;
	uint64_t address;
	uint64_t size;
} jitmap_jit_function;

/* A region of JIT code and what describes it. Only `address`, `size` and the functions are
 * required. The optional stackmap and .eh_frame are the live bytes in this process: the image
 * gets a copy of each, placed (sh_addr) at the live bytes' own address, which is where the
 * debuggers read them (jitmap reads the stackmap there, as it does for LLVM's JIT objects), so
 * the caller keeps them alive and unchanged until it unregisters. The stackmap's function
 * addresses must be absolute and inside the region; .eh_frame's PC-relative encodings must be
 * relative to where its bytes are. */
typedef struct jitmap_jit_region {
	uint64_t address;                       /* start of the code */
	uint64_t size;                          /* bytes of code, > 0 */
	const jitmap_jit_function *functions;   /* num_functions >= 1, within the region, */
	size_t num_functions;                   /* disjoint, sizes > 0, names non-empty */
	const void *stackmap;                   /* .llvm_stackmaps, v1-v3; NULL for none */
	size_t stackmap_size;
	const void *eh_frame;                   /* .eh_frame; NULL for none */
	size_t eh_frame_size;
} jitmap_jit_region;

/* Build, without registering, the in-memory ELF image that jitmap_jit_register registers: an
 * ELF64 relocatable object of the host's machine and byte order, as LLVM's JIT objects are,
 * with sections placed at runtime addresses: `.text` (SHT_NOBITS, at the code), `.eh_frame`
 * and `.llvm_stackmaps` (copies, at the live bytes' addresses), and `.symtab` with one global
 * STT_FUNC symbol per function. GDB's built-in JIT reader (BFD), LLDB's JITLoaderGDB and
 * jitmap_image_open_memory all read it.
 *
 * Validates `region` first: on a zero-sized region or function, a missing or empty name, a
 * function outside the region or overlapping another (err->offset: the function's index), a
 * stackmap that does not parse in the host's byte order, or a stackmap function or record PC
 * outside the region (err->offset: the byte offset within the stackmap), returns -EINVAL with
 * the reason in `err` (may be NULL); -ENOMEM; or -ENOTSUP on a host whose ELF machine number
 * is not known here. On success `*image` is malloc'd and owned by the caller. */
JITMAP_API int jitmap_jit_build_image(const jitmap_jit_region *region, void **image,
				      size_t *size, jitmap_error *err);

/* -- Deopt layouts: interpreter frames for debuggers --
 *
 * A runtime can say how a statepoint's deopt values form the interpreter frames its compiled
 * code stands for (jitmap_deopt_layout, types.h): debuggers with jitmap then show those
 * frames ("virtual frames") under the JIT frame in `bt`, `info stackmap` and jitmap-stack,
 * with each local's value. Given at registration, the layouts are stored in the registered
 * image (section `.jitmap_deopt`, docs/deopt-layouts.md), so they are in every core of the
 * process too. */

/* Options of jitmap_jit_build_image_opts and jitmap_jit_register_opts; `sz` =
 * sizeof(jitmap_jit_region_opts) (JITMAP_OPTS). Copied: the caller may free them after the
 * call. */
typedef struct jitmap_jit_region_opts {
	size_t sz;
	const jitmap_deopt_layout *layouts; /* stored in the image's .jitmap_deopt */
	size_t num_layouts;
	/* A field added here: name it in jitmap_jit_build_image_opts' check (producer.c). */
} jitmap_jit_region_opts;

/* jitmap_jit_build_image with options (NULL: none). Besides its checks, on -EINVAL (with
 * err->offset the layout's index): a layout with no frames, a method that is absent, an empty
 * name or of unknown kind, a deopt index past 2^32, a count of slots without slots, two layouts
 * for the same record and function, a layout whose record ID is not in the region's (version
 * 3) stackmap or whose function is not one of the region's, layouts without a stackmap. Deopt
 * indexes are not checked against the records: a debugger shows a layout that does not fit
 * its record with the reason. */
JITMAP_API int jitmap_jit_build_image_opts(const jitmap_jit_region *region,
					   const jitmap_jit_region_opts *opts, void **image,
					   size_t *size, jitmap_error *err);

/* The `.jitmap_deopt` section of `n` layouts in byte order `order` (JITMAP_ORDER_AUTO: the
 * host's), checked as above except against a stackmap; for a JIT that writes its own object
 * files. Strings are stored once. `*bytes` is malloc'd, `*len` a multiple of 8. 0, -EINVAL or
 * -ENOMEM. */
JITMAP_API int jitmap_jit_encode_layouts(const jitmap_deopt_layout *layouts, size_t n,
					 jitmap_byte_order order, void **bytes, size_t *len,
					 jitmap_error *err);

/* A registered region: one jit_code_entry in `__jit_debug_descriptor`. */
typedef struct jitmap_jit_entry jitmap_jit_entry;

/* Register `region` with any attached or later-attaching debugger. The image is built and the
 * region validated (as jitmap_jit_build_image) before the descriptor is touched; then, under
 * one process-wide lock, the entry is linked at the head of the list, relevant_entry and
 * action_flag (JIT_REGISTER_FN) are set and `__jit_debug_register_code` is called, where the
 * debugger reads it. Between calls the descriptor rests with action_flag JIT_NOACTION and
 * relevant_entry NULL, so it never points at freed memory. Thread-safe.
 *
 * This library defines `__jit_debug_descriptor` (version 1) and `__jit_debug_register_code`.
 * If the process has another definition (libLLVM's), the dynamic linker binds every user to
 * the first one loaded, but each definer keeps its own lock: do not register from two such
 * libraries at the same time.
 *
 * Returns the entry, or NULL with errno set and `err` filled as for jitmap_jit_build_image. */
JITMAP_API jitmap_jit_entry *jitmap_jit_register(const jitmap_jit_region *region,
						 jitmap_error *err);

/* jitmap_jit_register with options (NULL: none), checked as jitmap_jit_build_image_opts. */
JITMAP_API jitmap_jit_entry *jitmap_jit_register_opts(const jitmap_jit_region *region,
						      const jitmap_jit_region_opts *opts,
						      jitmap_error *err);

/* Unregister and free `entry`: under the lock, unlink it, set relevant_entry and
 * JIT_UNREGISTER_FN, call `__jit_debug_register_code`; only after the debugger has been told is
 * the memory freed. Accepts NULL. The region's code, stackmap and .eh_frame may be freed after
 * this returns. Thread-safe (but each entry is unregistered once). */
JITMAP_API void jitmap_jit_unregister(jitmap_jit_entry *entry);

/* The registered ELF image of `entry` (what the debugger reads at symfile_addr), its size in
 * `*size`. Owned by the entry; valid until jitmap_jit_unregister. */
JITMAP_API const void *jitmap_jit_entry_image(const jitmap_jit_entry *entry, size_t *size);

/* -- Telling Linux perf too --
 *
 * One registration for every tool: what jitmap_jit_register registers is written, once asked
 * for here, to the files perf reads for JIT code, so that `perf report` and `perf script`
 * name the functions GDB, LLDB and jitmap name. jitmap itself reads these files too, for the
 * runtimes that write only them (jitmap/perfmap.h). */

#define JITMAP_PERF_MAP 1u     /* /tmp/perf-PID.map: a "START SIZE NAME" line per function */
#define JITMAP_PERF_JITDUMP 2u /* DIR/jit-PID.dump: a code load per function, with its code
				  bytes, for `perf record -k mono` and `perf inject --jit` */

/* From now on, tell perf about each function registered (jitmap_jit_register), in the files
 * of `flags` (JITMAP_PERF_MAP, JITMAP_PERF_JITDUMP, or both; 0 stops, as jitmap_perf_close).
 * The jitdump goes to `jitdump_dir` (NULL: the current directory, as perf's tools expect),
 * mapped executable once so that perf finds it. Code registered before is not written. Calling
 * it again starts over (the jitdump file anew). Thread-safe. Returns 0, -EINVAL for unknown
 * flags, or the errno of a file that cannot be created (then neither is written). */
JITMAP_API int jitmap_perf_open(unsigned flags, const char *jitdump_dir);
/* Stop, ending the jitdump with its close record. Thread-safe; safe without an open. */
JITMAP_API void jitmap_perf_close(void);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_PRODUCER_H */

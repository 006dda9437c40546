/* process.h: the stackmaps of one process, live or a core (libjitmap's process model).
 *
 * A jitmap_process is the one owner of "which stackmaps does this process have": the JIT
 * entries registered through `__jit_debug_descriptor` lists and the ahead-of-time compiled
 * files a debugger has loaded. It reads them through a jitmap_target (only read_mem), so the
 * same code serves GDB, LLDB, core files and tools without a debugger. The policy lives here
 * once:
 *
 *   - a JIT entry's image is opened from target memory without its stackmap copy, and its
 *     stackmap is parsed from the **live** section at the section's sh_addr (LLVM registers
 *     an unrelocated copy; MCJIT relocates the live section only after registering it);
 *   - function addresses the live section does not hold yet (0: MCJIT before finalization)
 *     come from the registered copy, whose relocations libjitmap applies (a note says so);
 *     a live section that cannot be read or parsed falls back to the registered copy;
 *   - names come from each image's function symbols, sizes too (so that code without records
 *     between two functions is not attributed to either);
 *   - a loaded file's stackmap is read from memory (relocated by the dynamic linker) when
 *     every function address is set there, else from the file moved by the load bias;
 *   - staleness: an entry is reused while its (entry, image address, image size) and its
 *     image's first 64 bytes are unchanged; its live section is re-read (and re-parsed only
 *     when its bytes changed) until it has been seen with every address set, and again when
 *     its first 64 bytes change; a file is reopened when its size or modification time
 *     changes;
 *   - one PC index (jitmap_index) over every stackmap, changed only when stackmaps come or go;
 *   - JIT code by address (jitmap_process_code_at): an image's code is its executable sections
 *     placed in memory, merged where they touch (a section over 64 GiB is not code), and its
 *     functions are its function symbols inside that code, sorted, one per address (the
 *     largest), each cut at the next and a symbol without a size reaching the next function
 *     or the end of its code (hand-written code);
 *   - each JIT image's call frame information is read once, when first asked for
 *     (jitmap_process_code_cfi): its .eh_frame from target memory at its placed address (the
 *     live bytes, relocated by the JIT), its .debug_frame from the image; kept with the
 *     image; a read that failed is tried again after the next recheck or scan;
 *   - staleness of images handed in (GDB never says when an entry goes away): an image is
 *     stale when its code changed or became unreadable since it was first used: the first
 *     16 bytes of its first function (else of its code) are sampled at its first use (MCJIT
 *     writes relocations into code after registering it; prologues hold none) and compared
 *     once after each jitmap_process_recheck, at the stop's refresh: the first
 *     jitmap_process_image_code_at or jitmap_process_image_stackmap after it, or
 *     jitmap_process_scan_end (a lookup by PC and jitmap_frame_describe never compare, read an
 *     image again or drop one). A stale image is dropped
 *     (as jitmap_process_remove_image drops one) and reported with why
 *     (jitmap_process_take_dropped); one whose code cannot be read at its first use is not
 *     used until a later stop can read it. With JITMAP_PROCESS_REPLACE_IMAGES, an image handed
 *     in also replaces the images handed in before it whose code it overlaps (a JIT reusing
 *     memory, a program run again);
 *   - problems per source (and for the whole process: a corrupt descriptor list), as text.
 *
 * Each stackmap is parsed once per process object, and indexed once: a section read at the same
 * address with the same bytes by two sources (the same JIT entry found by a descriptor walk
 * and handed in as an image: GDB's JIT reader and jitmap's commands share one process) is one
 * parse. A scan is: jitmap_process_scan_begin, then
 * jitmap_process_scan_descriptor / jitmap_process_scan_object / jitmap_process_scan_file for
 * each place to look (or jitmap_process_scan_stopped for every place a core names), then
 * jitmap_process_scan_end, which drops what was not seen again and updates the index.
 * Pointers returned by accessors (stackmaps, images, the index, strings) stay valid until the
 * next jitmap_process_scan_end or jitmap_process_flush.
 *
 * Not thread-safe: one thread at a time per process object.
 */
#ifndef JITMAP_PROCESS_H
#define JITMAP_PROCESS_H

#include "jitmap/core.h"
#include "jitmap/jitmap.h"
#include "jitmap/perfmap.h"
#include "jitmap/stopped.h"
#include "jitmap/unwind.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jitmap_process jitmap_process;

/* Options (libbpf's convention: set `sz` to sizeof(jitmap_process_opts); fields added later
 * must be zero when unknown). Zero limits take the defaults. */
typedef struct jitmap_process_opts {
	size_t sz;
	size_t max_entries;   /* JIT entries walked per descriptor (default 100,000) */
	uint64_t max_image;   /* a registered image larger than this is not read (256 MiB) */
	uint64_t max_section; /* nor a stackmap section (256 MiB) */
	unsigned flags;       /* JITMAP_PROCESS_* */
	/* Where jitmap_process_scan_file looks for the separate debug file of a stripped file,
	 * ':'-separated (GDB's debug-file-directory); NULL: "/usr/lib/debug". (A core's are
	 * jitmap_stopped_opts.debug_dirs.) */
	const char *debug_dirs;
	/* A field added here: name it in JITMAP__OPTS_VALID in model/process.c. */
} jitmap_process_opts;

/* A JIT entry's stackmap is read when something asks for its code (jitmap_process_code_at)
 * rather than at every scan: for a tool that looks at a few frames of a process with thousands
 * of entries. The index then holds the stackmaps read so far, and a source's `stackmap` is
 * NULL until its code was asked for. So is its `image`, when a look at the image's bytes
 * (its header and section headers) found where its code is and nothing a scan would report;
 * any other image is opened at the scan, as without this flag. A stackmap read once is read
 * again by the policy at each later scan, as without this flag, not at a lookup. */
#define JITMAP_PROCESS_LAZY 1u
/* An image handed in (jitmap_process_add_image) replaces every image handed in before it
 * whose code overlaps its own: for a debugger that is never told when an entry goes away
 * (GDB's JIT reader), a new image over old code means the old one is gone. Each image
 * replaced is reported as jitmap_process_take_dropped reports a stale one. */
#define JITMAP_PROCESS_REPLACE_IMAGES 2u

/* A process read through `target` (copied; its ctx must outlive the process). NULL with errno
 * set (EINVAL for bad options or a target without read_mem, ENOMEM). */
JITMAP_API jitmap_process *jitmap_process_new(const jitmap_target *target,
					      const jitmap_process_opts *opts);
JITMAP_API void jitmap_process_free(jitmap_process *p);
/* Forget everything read (as after the process was restarted). */
JITMAP_API void jitmap_process_flush(jitmap_process *p);
/* Read through `target` from now on (copied; its ctx must outlive its use); the one it
 * replaces goes to `previous` unless NULL. For two clients of one process in one debugger,
 * each reading memory its own way (GDB's JIT reader through GDB's callback, jitmap's commands
 * through GDB's Python API): each sets its target while it calls in. 0 or -EINVAL. */
JITMAP_API int jitmap_process_set_target(jitmap_process *p, const jitmap_target *target,
					 jitmap_target *previous);

/* -- Scanning -- */

JITMAP_API int jitmap_process_scan_begin(jitmap_process *p);
/* Walk the JIT entry list of the descriptor at `addr`; `where` names it in messages ("lli-14",
 * "libLLVM-14.so.1"). Problems are recorded, not returned: returns 0, or -ENOMEM. */
JITMAP_API int jitmap_process_scan_descriptor(jitmap_process *p, uint64_t addr,
					      const char *where);
/* A loaded file whose .llvm_stackmaps the debugger placed at `section_address`. */
JITMAP_API int jitmap_process_scan_object(jitmap_process *p, const char *path,
					  uint64_t section_address);
/* A file the process has loaded, its addresses moved by `bias` (0 for an executable at its
 * linked addresses): the JIT descriptor it defines, if any (the data symbol
 * JITMAP_JIT_DESCRIPTOR_SYMBOL of .symtab or .dynsym, or for a stripped file of its separate
 * debug file, found as GDB finds it: jitmap_process_opts.debug_dirs), is walked as
 * jitmap_process_scan_descriptor walks one, `where` (NULL: `path`) naming it; its
 * .llvm_stackmaps, if it has one, is read as jitmap_process_scan_object reads one. A file that
 * cannot be opened or is not ELF adds nothing. For a tool that lists a process's modules
 * itself (jitmap-stack with libdwfl). Returns how many descriptors the file defines (0 or 1),
 * or -ENOMEM. */
JITMAP_API int jitmap_process_scan_file(jitmap_process *p, const char *path, uint64_t bias,
					const char *where);
/* Every place a core says stackmaps may be: each file it maps (NT_FILE) or the library placed
 * without NT_FILE (jitmap_stopped_placed_file: `exe` and the dynamic linker's libraries),
 * moved by its load bias, as jitmap_process_scan_file reads one: the JIT descriptor it
 * defines is walked in the core's byte order, named by the file's path, and its
 * .llvm_stackmaps read. `p` must read the core's memory (a target from jitmap_stopped_target
 * or jitmap_stopped_thread_target of `s`); call it between scan_begin and scan_end. What it
 * cannot do is recorded as a problem of the process, not returned: a file the core maps that
 * cannot be opened ("PATH (mapped by the core) cannot be opened (No such file or directory):
 * ..."; files the core was opened not to read, JITMAP_STOPPED_NO_FILES, are not, nor
 * mappings of memory: shared memory, memfds, devices, by the rule docs/jitmap-stack.md gives;
 * a library deleted since is a file), a file that defines a descriptor or a stackmap section
 * at no known place (no mapping of its first page), and each descriptor's problems
 * (jitmap_process_descriptor). Files that are not ELF, or define neither, add nothing.
 * Returns how many JIT descriptors it found (walked or not: an unreadable one counts; one
 * named by two files once), -EINVAL when `p` or `s` is NULL, -ENOTSUP for a live process (its
 * modules are scanned one by one: jitmap_process_scan_file), or -ENOMEM (what was found so
 * far stays). */
JITMAP_API int jitmap_process_scan_stopped(jitmap_process *p, jitmap_stopped *s);
/* Drop the sources not seen since scan_begin and update the index. Returns 0 or -ENOMEM. */
JITMAP_API int jitmap_process_scan_end(jitmap_process *p);

/* -- What was found -- */

typedef enum jitmap_source_kind {
	JITMAP_SOURCE_JIT = 1,    /* a registered JIT entry */
	JITMAP_SOURCE_OBJECT = 2, /* a loaded file */
} jitmap_source_kind;

/* Filled by the library: set `sz` to sizeof(jitmap_source_info) before the call (libbpf's
 * convention for structs a library fills: a program built against an older, shorter struct
 * gets the fields it knows, none past them). */
typedef struct jitmap_source_info {
	size_t sz;
	jitmap_source_kind kind;
	const char *name;         /* "JIT entry 0x...", or the file's path */
	uint64_t descriptor;      /* JIT: the descriptor whose list holds the entry */
	uint64_t entry;           /* JIT: the jit_code_entry's address */
	uint64_t symfile_addr, symfile_size; /* JIT: the registered image */
	uint64_t section_address; /* where .llvm_stackmaps is in memory (0: not placed) */
	uint64_t section_size;
	uint64_t bias;            /* object: the load bias */
	jitmap_stackmap *stackmap; /* NULL when none could be read */
	bool live;                /* stackmap parsed from the bytes in memory */
	const jitmap_image *image; /* for names (jitmap_image_symbolize); NULL if unreadable,
				    * or not opened yet (JITMAP_PROCESS_LAZY) */
	size_t num_problems, num_notes;
	/* live: how many function addresses were 0 in memory (the section not relocated yet:
	 * MCJIT before finalization) and were taken from the registered copy; 0: none. Its
	 * first note says so, in words for people: a client acts on this count. */
	size_t num_unrelocated;
} jitmap_source_info;

/* The sources of the last scan, in the order they were seen (JIT entries, then objects; a
 * file without a stackmap section is not listed). */
JITMAP_API size_t jitmap_process_num_sources(const jitmap_process *p);
/* Fill `*out` (its sz set) for source `i`: 0, -ERANGE, or -EINVAL for a bad sz. */
JITMAP_API int jitmap_process_source(const jitmap_process *p, size_t i, jitmap_source_info *out);
/* Problem `k` of source `i` (why something could not be read), note `k` (what the user should
 * know: "read from the registered copy: ..."); NULL past the end. */
JITMAP_API const char *jitmap_process_source_problem(const jitmap_process *p, size_t i,
						     size_t k);
JITMAP_API const char *jitmap_process_source_note(const jitmap_process *p, size_t i, size_t k);
/* The JIT descriptors of the last scan, in the order they were walked (each address once),
 * and how far each list was read: a count is stated only where the list was read to its end.
 *   readable false: the descriptor itself could not be read (or is not version 1): how
 *                   many entries its list has is unknown; `problem` says why (naming the
 *                   address that could not be read and, in a core, what is missing there);
 *   complete false: `num_entries` entries were read, then the walk stopped (a cycle, an
 *                   unreadable entry, more than max_entries): the list's length is unknown;
 *   complete true:  the list has exactly `num_entries` entries; `problem` is NULL.
 * Strings as the sources' (valid until the next scan_begin or flush). */
typedef struct jitmap_descriptor_info {
	size_t sz;           /* set by the caller: sizeof(jitmap_descriptor_info), as above */
	uint64_t address;
	const char *where;   /* as given to scan_descriptor; a file's path for scan_file/core */
	bool readable, complete;
	size_t num_entries;
	const char *problem;
} jitmap_descriptor_info;

JITMAP_API size_t jitmap_process_num_descriptors(const jitmap_process *p);
/* Files of the last scan's core that could not be looked into (jitmap_process_scan_stopped: a
 * mapped file that cannot be opened, or one that defines a descriptor at no known place;
 * each is a problem of the process too). A JIT descriptor in one of them is not in the list
 * above: with any, how many descriptors and entries the process has is unknown. */
JITMAP_API size_t jitmap_process_num_unread_files(const jitmap_process *p);
/* Fill `*out` (its sz set) for descriptor `i`: 0, -ERANGE, or -EINVAL for a bad sz. */
JITMAP_API int jitmap_process_descriptor(const jitmap_process *p, size_t i,
					 jitmap_descriptor_info *out);
/* Problems of the process as a whole (a descriptor or its list). */
JITMAP_API size_t jitmap_process_num_problems(const jitmap_process *p);
JITMAP_API const char *jitmap_process_problem(const jitmap_process *p, size_t k);
/* How many of the process's images (JIT entries and files of the scans, images handed in;
 * until they are freed) carry deopt layouts (jitmap_image_layouts): O(1), for a front end that
 * shows interpreter frames only when some runtime registered layouts. */
JITMAP_API size_t jitmap_process_num_layout_images(const jitmap_process *p);
/* One PC index over every stackmap of the last scan (owned by the process). */
JITMAP_API jitmap_index *jitmap_process_index(const jitmap_process *p);

/* -- JIT code by address -- */

/* What the process knows of the JIT code at an address: the source (a scan's JIT entry or an
 * image handed in), the code range of its image that holds the address, and the function
 * there (the policy above says how code ranges and functions are made from the image's
 * sections and symbols). Pointers as the source's (valid as jitmap_process_source's, and for
 * an image handed in until it is removed or dropped). */
typedef struct jitmap_code_info {
	const char *source;       /* "JIT entry 0x...", or the name an image was handed in with */
	uint64_t entry;           /* its jit_code_entry's address; 0 for an image handed in */
	uint64_t image_id;        /* an image handed in: its id; 0 for a scan's source */
	uint64_t lo, hi;          /* the code range [lo, hi) holding the address */
	const jitmap_image *image;
	const jitmap_stackmap *stackmap;   /* its stackmap as last read; NULL if none */
	const char *function;     /* the function holding the address; NULL if none */
	uint64_t function_lo, function_hi; /* its range; 0, 0 when there is none */
} jitmap_code_info;

/* The JIT code at `addr` among the last scan's JIT entries and the images handed in (those
 * that are not stale: see the policy), its stackmap read if it was not yet (its first use;
 * reading it again is a scan's or the stop's refresh, never a lookup's): 0, or -ENOENT when no
 * image's code holds it, -ENOMEM. O(log n) after the
 * first call following a scan. Where images of the same code range overlap exactly (a runtime
 * registering its own image beside the one LLVM registers), the first in
 * jitmap_process_source's order answers (the newest registration), then the first image
 * handed in. */
JITMAP_API int jitmap_process_code_at(jitmap_process *p, uint64_t addr, jitmap_code_info *out);
/* The perf maps and jitdump files of the process (jitmap/perfmap.h), made at the first call
 * and owned by the process (NULL with errno ENOMEM). Once it has files,
 * jitmap_process_code_at answers with their code where no image of the process holds the
 * address: `source` is "perf map PATH" or "jitdump PATH", `function` the name the file
 * gives, `lo`/`hi` and `function_lo`/`function_hi` the code object's range; `image`,
 * `stackmap`, `entry` and `image_id` are NULL and 0 (jitmap_process_code_cfi has no CFI for
 * them: a jitdump's, where it gives one, is jitmap_perfmap_cfi's). jitmap_process_flush
 * keeps it: its files are the user's choice (add them again to read what changed:
 * jitmap_perfmap_add_file costs nothing for a file that did not). */
JITMAP_API jitmap_perfmap *jitmap_process_perfmap(jitmap_process *p);
/* As jitmap_process_code_at among the images handed in only, and without reading a
 * stackmap: `stackmap` is what the image had when last read (NULL before its first
 * jitmap_process_image_stackmap, which gives the current one). For a debugger's JIT reader,
 * which is asked about every frame of the process, its own and foreign ones alike: O(log n),
 * and one read of the image's code sample per image used and stop. 0, -ENOENT, -ENOMEM. */
JITMAP_API int jitmap_process_image_code_at(jitmap_process *p, uint64_t addr,
					    jitmap_code_info *out);
/* The call frame information of the image `code` is in (`code` as jitmap_process_code_at or
 * jitmap_process_image_code_at filled it, its image still kept), read once (see the policy)
 * and owned by the process (freed with the image). NULL when there is none: with *why NULL
 * when the image has neither .eh_frame nor .debug_frame, else *why says why (a section that
 * cannot be read or is malformed; also a problem of the source, tried again after the next
 * recheck or scan). `why` may be NULL; *why is valid as the source's problems. */
JITMAP_API const jitmap_cfi *jitmap_process_code_cfi(jitmap_process *p,
						     const jitmap_code_info *code,
						     const char **why);

/* -- Images handed in by a debugger --
 *
 * GDB's JIT reader interface gives a reader each registered image's bytes, not the entry that
 * holds them, and never says when an entry goes away. Such an image is handed in here: it is
 * opened from the bytes given (copied as needed: the caller's buffer may go once the call
 * returns), and its stackmap read at first use (jitmap_process_image_stackmap) under the same
 * rules as a JIT entry's (the live section; names and sizes from its symbols), with one
 * difference: the bytes are gone by then, so a live section MCJIT has not relocated yet has
 * no registered copy to take addresses from (they read 0 until a recheck finds them set).
 * An image whose section is not placed in memory (sh_addr 0) is read from its own copy at
 * once. It is kept across scans until removed, its stackmap in the process's index once
 * read, and listed by jitmap_process_image, not jitmap_process_source. */

/* Hand in an image (`where` names it in messages, e.g. "JIT image 3"); its id in *id. What
 * went wrong reading it is a problem of the image (jitmap_process_image_problem), not an
 * error: returns 0, -EINVAL or -ENOMEM. */
JITMAP_API int jitmap_process_add_image(jitmap_process *p, const void *image, size_t size,
					const char *where, uint64_t *id);
/* Forget image `id`: its stackmap leaves the index (unless a scan's source shares it) and,
 * when nothing else holds it, is freed at the next recheck or scan_end. 0 or -ENOENT. */
JITMAP_API int jitmap_process_remove_image(jitmap_process *p, uint64_t id);
/* Target memory may have changed (a stop): each image handed in that was used is looked at
 * again (its code sample compared: staleness; its live section read again by the policy) once,
 * at the stop's refresh: the next jitmap_process_image_code_at or jitmap_process_image_stackmap,
 * or jitmap_process_scan_end. O(1) itself (a debugger may call it at each registration).
 * Stackmaps returned for images before this call must not be used after it (nor after a
 * scan_end). */
JITMAP_API void jitmap_process_recheck(jitmap_process *p);
/* Image `id`'s stackmap (NULL when it has none or none could be read: see its problems; NULL
 * too when the image is stale, and then dropped, or its code cannot be read at its first
 * use), its live section read at its first use, and again at the stop's refresh after a
 * recheck (this call is one): while MCJIT has not relocated it, and when its first bytes
 * changed since it was parsed. */
JITMAP_API const jitmap_stackmap *jitmap_process_image_stackmap(jitmap_process *p,
								uint64_t id);
/* Image `id`'s code as jitmap_process_code_at sees it (the policy above): its code ranges,
 * sorted and disjoint, and its functions, sorted, disjoint and inside them (each with its
 * range and symbol name), for a debugger that gives its own symbols (GDB's JIT reader's
 * blocks). Owned by the process, valid while the image is kept. Any pointer may be NULL.
 * 0, -ENOENT, or -ENOMEM. */
typedef struct jitmap_code_function {
	uint64_t lo, hi;
	const char *name;
} jitmap_code_function;
JITMAP_API int jitmap_process_image_code(jitmap_process *p, uint64_t id,
					 const jitmap_image_range **ranges, size_t *num_ranges,
					 const jitmap_code_function **functions,
					 size_t *num_functions);
/* The images handed in that the process dropped (stale, or replaced: see the policy) since
 * the last call, in the order dropped: at most `max` of them into `out` (which may be NULL
 * when max is 0), those forgotten; returns how many it filled. `why` is one sentence ("JIT
 * entry 3: its code at 0x7f...: the bytes changed since it was first used"), valid until the
 * next call. A client that keeps state per image (GDB's JIT reader) asks after each call that
 * may drop one, and forgets theirs. */
typedef struct jitmap_dropped_image {
	uint64_t id;
	bool replaced; /* by a newer image over the same code; else stale */
	const char *why;
} jitmap_dropped_image;
JITMAP_API size_t jitmap_process_take_dropped(jitmap_process *p, jitmap_dropped_image *out,
					      size_t max);
/* What is known of image `id` (kind JITMAP_SOURCE_JIT, `entry` and `symfile_addr` 0): 0 or
 * -ENOENT. Its problem `k`, NULL past the end. */
JITMAP_API int jitmap_process_image(const jitmap_process *p, uint64_t id,
				    jitmap_source_info *out);
JITMAP_API const char *jitmap_process_image_problem(const jitmap_process *p, uint64_t id,
						    size_t k);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_PROCESS_H */

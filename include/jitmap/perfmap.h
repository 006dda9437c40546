/* perfmap.h: JIT code named by perf maps and jitdump files.
 *
 * Most JIT runtimes never register their code with GDB's JIT interface; many tell Linux perf
 * where it is instead:
 *   - a perf map, /tmp/perf-PID.map: one "START SIZE NAME" line per code object, START and
 *     SIZE in hexadecimal (with or without 0x); the runtime appends as it compiles, and a
 *     later line over the same addresses wins (code freed, the memory reused). V8 and Node.js
 *     (--perf-basic-prof), CPython 3.12+ (-X perf), Ruby's YJIT, .NET, Julia, wasmtime;
 *   - a jitdump file, jit-PID.dump (perf's binary format, either byte order): code loads,
 *     moves, source lines and unwinding tables, in the order they happened. The runtime maps
 *     it into its own address space so that perf finds it: a live process's /proc/PID/maps
 *     names it. V8 and Node.js (--perf-prof), the JVM through an agent, wasmtime.
 *
 * A jitmap_perfmap reads such files and answers which code holds an address: the newest
 * description of those bytes (in each file, the last line or record over them; across files,
 * the file added last). Its code is found as the JIT code of a process (jitmap_process_perfmap:
 * jitmap_process_code_at answers with it where no registered image holds the address). Such
 * frames are unwound by the call frame information a jitdump gives for the code
 * (jitmap_perfmap_cfi: CPython's -X perf_jit trampolines, which keep no frame pointer, V8's
 * --perf-prof-unwinding-info), else by frame pointers, which most of these runtimes keep.
 *
 * Untrusted input: a line that is not "START SIZE NAME", a range that wraps or is larger than
 * JITMAP_PERFMAP_MAX_RANGE, a jitdump record that does not fit: each is a problem (file and
 * line, or record and offset), and the rest is used. Not thread-safe (one thread at a time).
 */
#ifndef JITMAP_PERFMAP_H
#define JITMAP_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

#include "jitmap/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jitmap_perfmap jitmap_perfmap;
typedef struct jitmap_cfi jitmap_cfi; /* unwind.h (C11 allows the typedef twice) */
typedef struct jitmap_stopped jitmap_stopped; /* stopped.h */

/* No single code object is larger: a line or record saying so names no code (a hostile or
 * broken "0 ffffffffffffffff everything" would otherwise name every frame). */
#define JITMAP_PERFMAP_MAX_RANGE (UINT64_C(1) << 30)

/* An empty map; NULL with errno ENOMEM. */
JITMAP_API jitmap_perfmap *jitmap_perfmap_new(void);
JITMAP_API void jitmap_perfmap_free(jitmap_perfmap *m);

/* Add the text of a perf map, named `origin` in problems and answers (its path). The lines
 * that are not "START SIZE NAME" are problems; the others are kept. Adding the same origin
 * again replaces what it said (a live process's map grows: read it again). Returns how many
 * code ranges it named, or -EINVAL (NULL arguments), -ENOMEM. */
JITMAP_API int jitmap_perfmap_add_perf_map(jitmap_perfmap *m, const char *text, size_t len,
					   const char *origin);

/* Add the bytes of a jitdump file, as above. Its code loads and moves are kept, the source
 * lines of its debug-info records, and the .eh_frame of its unwinding-information records
 * (each for the code load that follows it, and for the places that code moves to:
 * jitmap_perfmap_cfi); a file whose header is not jitdump's (magic
 * "JiTD", version 1) adds nothing and fills `err` (may be NULL) with the offset and reason:
 * -EINVAL. A record that does not fit ends the reading there, as a problem (a live runtime
 * may be writing it). Returns how many code ranges it named, or -EINVAL, -ENOMEM. */
JITMAP_API int jitmap_perfmap_add_jitdump(jitmap_perfmap *m, const void *data, size_t len,
					  const char *origin, jitmap_error *err);

/* Read the file at `path`: a jitdump when it starts with jitdump's magic, else a perf map.
 * Reading a path already added again replaces what it said, and costs nothing when the file
 * did not change (size, modification time, inode). Returns how many code ranges it named, or
 * a negative errno (the file cannot be read: also a problem naming it; -EINVAL: not jitdump
 * after its magic, with `err` as above). */
JITMAP_API int jitmap_perfmap_add_file(jitmap_perfmap *m, const char *path, jitmap_error *err);

/* The files a live process `pid` wrote for perf, found where the runtimes put them: its
 * /tmp/perf-PID.map (the PID the process sees itself as, in its own mount namespace, through
 * /proc/PID/root, named by its own path when the process shares this one's root) and the
 * jitdump files it maps (/proc/PID/maps: jit-*.dump). Each is read as
 * jitmap_perfmap_add_file reads one (again at each call: what changed is read again). Returns
 * how many files were found (0: none), or -ENOMEM; a file found but unreadable is a problem. */
JITMAP_API int jitmap_perfmap_add_process(jitmap_perfmap *m, int pid);

/* The perf maps and jitdump files a core carries (jitmap-core-handler's notes: core.h;
 * jitmap_stopped_jit_file), each added as jitmap_perfmap_add_file adds one, by the path the
 * crashed process named it (its source "perf map PATH (in the core)";
 * jitmap_perfmap_sym.in_core). The stopped process must outlive the map's answers. Returns
 * how many files were added (0 for a live process, whose files are on its disk:
 * jitmap_perfmap_add_process), or -EINVAL, -ENOMEM. */
JITMAP_API int jitmap_perfmap_add_core(jitmap_perfmap *m, jitmap_stopped *s);

/* What a perf map or a jitdump says of an address. Set `sz` to sizeof(jitmap_perfmap_sym)
 * (libbpf's convention, as jitmap_source_info). Strings stay valid until the origin is added
 * again or the map is freed. */
/* Which kind of file a jitmap_perfmap_sym comes from. */
typedef enum jitmap_perfmap_kind {
	JITMAP_PERFMAP_MAP = 1,     /* a perf map: START SIZE NAME lines */
	JITMAP_PERFMAP_JITDUMP = 2, /* a jitdump file (its code-load records) */
} jitmap_perfmap_kind;

typedef struct jitmap_perfmap_sym {
	size_t sz;
	const char *name;        /* as the runtime wrote it ("JS:*fib /x/app.js:3:13") */
	uint64_t lo, hi;         /* the code object [lo, hi) the line or record gave */
	const char *origin;      /* the file's path, as added */
	const char *source;      /* "perf map /tmp/perf-1.map", "jitdump /x/jit-1.dump" */
	unsigned line;           /* perf map: its line (from 1); jitdump: its record (from 1) */
	const char *file;        /* jitdump debug info: the source file at the address, or NULL */
	unsigned file_line;      /* and its line (0: none) */
	jitmap_perfmap_kind kind; /* the file's kind (0 from a library older than this field) */
	int in_core;             /* 1: the file was read from a core's notes (jitmap_perfmap_add_core) */
} jitmap_perfmap_sym;

/* The code at `addr`: 0, or -ENOENT when no file names it (-EINVAL for a bad sz). O(log n)
 * per file after the first lookup following an add. */
JITMAP_API int jitmap_perfmap_lookup(jitmap_perfmap *m, uint64_t addr, jitmap_perfmap_sym *out);

/* The call frame information of the code at `addr`, from the jitdump record that gave its
 * unwinding information (JIT_CODE_UNWINDING_INFO, id 4, written before the code's load): its
 * .eh_frame, read at the address perf inject places it, ALIGN_8(code size) after the code's
 * start, where the writers' pc-relative FDE addresses point from (CPython 3.13, V8; moved
 * with the code by a code move, as perf moves it). The code at `addr` is the one
 * jitmap_perfmap_lookup answers with (the newest description of those bytes; an older file's
 * unwinding information for them is not used).
 * The jitmap_cfi is built at the first call for that code (jitmap_cfi_new, for the
 * architecture of the jitdump's header, elf_mach) and owned by the map: valid until the file
 * is added again (when it changed) or the map is freed; do not free it. Use it as
 * jitmap_unwind_code.cfi (unwind.h).
 * Returns 0 with *cfi set, and an FDE of it covers `addr`; else *cfi is NULL (when `cfi` is
 * not NULL) and:
 *   -ENOENT   no file names `addr`, or the code there has no unwinding information (a perf
 *             map's; a jitdump without the record, or V8's empty one), or its FDEs do not
 *             cover `addr`;
 *   -EINVAL   NULL arguments, or the code's .eh_frame is malformed;
 *   -ENOTSUP  the jitdump's architecture is one jitmap does not unwind;
 *   -ENOMEM   (tried again at the next call).
 * A malformed .eh_frame or an unknown architecture is said once as a problem of the file
 * (jitmap_perfmap_problem), at the first call that meets it. */
JITMAP_API int jitmap_perfmap_cfi(jitmap_perfmap *m, uint64_t addr, const jitmap_cfi **cfi);

/* How many files were added, and how many code ranges they name now. */
JITMAP_API size_t jitmap_perfmap_num_files(const jitmap_perfmap *m);
JITMAP_API size_t jitmap_perfmap_num_ranges(jitmap_perfmap *m);
/* File `i`: its path (NULL past the end), and in *num_ranges (may be NULL) how many code
 * objects it names. */
JITMAP_API const char *jitmap_perfmap_file(const jitmap_perfmap *m, size_t i,
					   size_t *num_ranges);
/* 1 when file `i` was read from a core's notes (jitmap_perfmap_add_core), 0 when not or past
 * the end. */
JITMAP_API int jitmap_perfmap_file_in_core(const jitmap_perfmap *m, size_t i);
/* What could not be read, one sentence each ("/tmp/perf-1.map:17: no SIZE after START";
 * lines past the first few are counted in one last problem). NULL past the end. */
JITMAP_API size_t jitmap_perfmap_num_problems(const jitmap_perfmap *m);
JITMAP_API const char *jitmap_perfmap_problem(const jitmap_perfmap *m, size_t k);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_PERFMAP_H */

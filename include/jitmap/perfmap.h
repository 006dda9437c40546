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
 * jitmap_process_code_at answers with it where no registered image holds the address), and
 * such frames are unwound by frame pointers, which these runtimes keep.
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

/* Add the bytes of a jitdump file, as above. Its code loads and moves are kept, and the
 * source lines of its debug-info records; a file whose header is not jitdump's (magic
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

/* What a perf map or a jitdump says of an address. Set `sz` to sizeof(jitmap_perfmap_sym)
 * (libbpf's convention, as jitmap_source_info). Strings stay valid until the origin is added
 * again or the map is freed. */
typedef struct jitmap_perfmap_sym {
	size_t sz;
	const char *name;        /* as the runtime wrote it ("JS:*fib /x/app.js:3:13") */
	uint64_t lo, hi;         /* the code object [lo, hi) the line or record gave */
	const char *origin;      /* the file's path, as added */
	const char *source;      /* "perf map /tmp/perf-1.map", "jitdump /x/jit-1.dump" */
	unsigned line;           /* perf map: its line (from 1); jitdump: its record (from 1) */
	const char *file;        /* jitdump debug info: the source file at the address, or NULL */
	unsigned file_line;      /* and its line (0: none) */
} jitmap_perfmap_sym;

/* The code at `addr`: 0, or -ENOENT when no file names it (-EINVAL for a bad sz). O(log n)
 * per file after the first lookup following an add. */
JITMAP_API int jitmap_perfmap_lookup(jitmap_perfmap *m, uint64_t addr, jitmap_perfmap_sym *out);

/* How many files were added, and how many code ranges they name now. */
JITMAP_API size_t jitmap_perfmap_num_files(const jitmap_perfmap *m);
JITMAP_API size_t jitmap_perfmap_num_ranges(jitmap_perfmap *m);
/* File `i`: its path (NULL past the end), and in *num_ranges (may be NULL) how many code
 * objects it names. */
JITMAP_API const char *jitmap_perfmap_file(const jitmap_perfmap *m, size_t i,
					   size_t *num_ranges);
/* What could not be read, one sentence each ("/tmp/perf-1.map:17: no SIZE after START";
 * lines past the first few are counted in one last problem). NULL past the end. */
JITMAP_API size_t jitmap_perfmap_num_problems(const jitmap_perfmap *m);
JITMAP_API const char *jitmap_perfmap_problem(const jitmap_perfmap *m, size_t k);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_PERFMAP_H */

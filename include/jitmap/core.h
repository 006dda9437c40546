/* core.h: Linux core files in libjitmap, beside the stopped process that reads them.
 *
 * A core is read as a stopped process (stopped.h: jitmap_stopped_open_core, and every
 * question of it asked of that handle). What stays here takes no stopped process: which
 * compression a file has and decompressing one for a debugger that reads cores itself, the
 * layout of the notes jitmap-core-handler adds to a core (its JIT files, the small-core note),
 * and the writer that adds them to a core streaming past (jitmap_core_add_jit_files).
 * Conventions as in jitmap.h.
 */
#ifndef JITMAP_CORE_H
#define JITMAP_CORE_H

#include <signal.h>

#include "jitmap/jitmap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* -- Compressed cores --
 *
 * A core file stored compressed (systemd-coredump's core.*.zst; lz4 frames and xz too), known
 * by its first bytes and not by its name, is opened by jitmap_stopped_open_core as the core it
 * holds: decompressed as a stream into an unlinked temporary file ($TMPDIR, else /var/tmp, else /tmp)
 * whose blocks of zeros are holes. Memory is bounded by the compression's window (zstd's up to
 * 128 MiB, lz4's blocks, xz's dictionary, refused past 1 GiB), not by the core's size; the
 * disk holds the core's pages that are not zero. A stream cut short gives the core as far as
 * it came out, with a warning (jitmap_stopped_warning) saying so. */

/* The compression the first `len` bytes of a file say it has: "zstd", "lz4", "xz", or NULL. */
JITMAP_API const char *jitmap_compression_of(const void *head, size_t len);
/* Decompress the compressed core file at `path` as jitmap_stopped_open_core does, for a
 * debugger that reads cores itself (GDB's core-file of /proc/self/fd/N): the descriptor of the
 * unlinked temporary file, read-write (the caller closes it), with `note` (`note_len` bytes;
 * may be NULL) a sentence when the stream was cut short, else ""; or a negative errno with
 * `err` filled: -EINVAL when the file is not compressed, or not as jitmap reads it; -EINTR
 * once *interrupt (may be NULL) is nonzero. */
JITMAP_API int jitmap_core_decompress(const char *path, const volatile sig_atomic_t *interrupt,
				      char *note, size_t note_len, jitmap_error *err);

/* -- JIT files carried in the core (jitmap-core-handler) --
 *
 * Perf maps and jitdump files are not in a core: they are files in the crashed process's /tmp.
 * jitmap_core_add_jit_files (jitmap-core-handler, which the kernel's core_pattern runs while
 * the process still exists) adds them as notes, in a PT_NOTE segment of its own placed after
 * the core's notes, and every reader of the core uses them as a live process's files. Each
 * file is one note named "JITMAP" (JITMAP_CORE_NOTE_NAME), of type JITMAP_CORE_NOTE_FILE,
 * whose descriptor is, in the core's byte order:
 *   u32 version (1)   u32 kind (jitmap_perfmap_kind: 1 a perf map, 2 a jitdump)
 *   u64 size          the bytes of the file that follow
 *   u32 path_len      the path's bytes with its NUL
 *   u32 flags         JITMAP_CORE_FILE_CUT: the file was larger; its first `size` bytes
 *   path              as the process named it ("/tmp/perf-42.map"), NUL-terminated, then
 *                     zeros to a multiple of 8
 *   bytes             the file's, then zeros to a multiple of 4
 * A note of type JITMAP_CORE_NOTE_PROBLEM holds one sentence (NUL-terminated): a file the
 * handler found and could not add, and why; it is read as a warning of the core. A reader
 * asks the JIT files of jitmap_stopped_jit_file (stopped.h). */
#define JITMAP_CORE_NOTE_NAME "JITMAP"
#define JITMAP_CORE_NOTE_FILE 1u
#define JITMAP_CORE_NOTE_PROBLEM 2u
#define JITMAP_CORE_NOTE_SMALL 3u
#define JITMAP_CORE_FILE_CUT 1u

/* -- Small cores (jitmap-core-handler --small) --
 *
 * A small core keeps only what the stacks, the JIT frames and their values need (the
 * JITMAP_CORE_KEPT_* ranges below, in whole pages); every other byte the kernel dumped is
 * left out: no PT_LOAD covers it. It says so in one "JITMAP" note of type
 * JITMAP_CORE_NOTE_SMALL, in the core's byte order:
 *   u32 version (1)   u32 kept (ranges)   u32 left (ranges)   u32 0
 *   u64 stack_bytes   the bound on each thread's stack above its stack pointer
 *   kept x {u64 start, u64 end, u32 why (JITMAP_CORE_KEPT_* bits), u32 0}
 *   left x {u64 start, u64 end, u32 p_flags of the segment it was cut from, u32 in_file}
 * A read of a left-out range is JITMAP_STOPPED_MEM_NONE (stopped.h), its `why` saying the
 * small core left it out, and file_unusable (a mapped file's bytes there need not be the
 * process's); but
 * where in_file is 1 (the handler found the mapped file holding those bytes as the process
 * had them), and in a file's code (read-only, executable), the mapped file is read, as in a
 * kernel core. Left-out memory no file may stand for is also taken out of NT_FILE, so that
 * a debugger that reads mapped files for what a core lacks (GDB) does not read it there.
 * Whether code can be at a left-out address follows the flags of its segment. A reader asks
 * it of jitmap_stopped_small (stopped.h). */
#define JITMAP_CORE_KEPT_STACK 1u    /* a thread's stack, from below its SP up */
#define JITMAP_CORE_KEPT_THREAD 2u   /* a thread's control block (its thread pointer) */
#define JITMAP_CORE_KEPT_JIT 4u      /* a JIT descriptor, its entries, their images */
#define JITMAP_CORE_KEPT_JIT_CODE 8u /* the memory of those images' sections; JIT code that
				      * a thread's PC or stack words point into */
#define JITMAP_CORE_KEPT_MODULE 16u  /* a mapped file's first page (headers, build ID) */
#define JITMAP_CORE_KEPT_LOADER 32u  /* the dynamic section, r_debug, the link_map chain */
#define JITMAP_CORE_KEPT_VDSO 64u    /* the vDSO */
#define JITMAP_CORE_KEPT_DATA 128u   /* a small writable segment, whole (a file's .data) */

typedef struct jitmap_core_add_opts {
	size_t sz; /* sizeof(jitmap_core_add_opts) as the caller knows it */
	/* Files to add besides the process's own (a perf map or jitdump each, told apart by
	 * their bytes); `nfiles` of them. */
	const char *const *files;
	size_t nfiles;
	/* The files' bytes at most, all together (0: 1 GiB); a file past it is cut, and said. */
	uint64_t max_bytes;
	unsigned flags; /* JITMAP_CORE_ADD_* */
	/* JITMAP_CORE_ADD_SMALL: the bytes of each thread's stack kept above its stack pointer
	 * at most (0: 8 MiB). */
	uint64_t stack_bytes;
	/* JITMAP_CORE_ADD_SMALL: where the files the core maps are looked up for the JIT
	 * descriptor's symbol (jitmap_stopped_opts.sysroot; NULL: /proc/PID/root with a `pid`,
	 * else "/"). */
	const char *sysroot;
	/* JITMAP_CORE_ADD_SMALL: the program's executable, for a core that does not say where
	 * it is mapped (jitmap_stopped_opts.exe: qemu-user's cores have no NT_FILE), so that its
	 * JIT descriptor is found. NULL: none. */
	const char *exe;
	/* Out, when not NULL: what was done, as JITMAP_CORE_ADDED_* bits (below). Each is
	 * also a sentence of `note`; a caller acts on the bits (a warning or an information),
	 * never on the note's words, which may change. */
	unsigned *status;
	/* A field added here: name it in JITMAP__OPTS_VALID in writers/core_stream.c. */
} jitmap_core_add_opts;

/* Flags of jitmap_core_add_opts. */
#define JITMAP_CORE_ADD_SMALL 1u /* write a small core (see "Small cores" above): only the
				  * memory the stacks and JIT frames need, found in the process
				  * `pid` while the core streams past (or, when `in` is a regular
				  * file, in the core itself), with the note saying what was kept
				  * and left out. A core that cannot be made small (a pipe and no
				  * process to read, notes after its memory in a pipe) is written
				  * whole, and `note` says why. */

/* Status bits of jitmap_core_add_jit_files (jitmap_core_add_opts.status). */
#define JITMAP_CORE_ADDED_SMALL 1u         /* a small core was written */
#define JITMAP_CORE_ADDED_NOT_SMALL 2u     /* JITMAP_CORE_ADD_SMALL asked, but the small
					    * core could not be made: the core was written
					    * whole, `note` says why */
#define JITMAP_CORE_ADDED_FILE_LEFT 4u     /* a JIT file found was left out or cut, or ended
					    * while it was added (zeros after it) */
#define JITMAP_CORE_ADDED_NO_DESCRIPTOR 8u /* a small core: no JIT descriptor was found in
					    * the files the core maps, so no JIT code's memory
					    * was kept for it */
#define JITMAP_CORE_ADDED_NO_EXE 16u       /* ... and the core does not say which files it
					    * maps (no NT_FILE): the program (`exe`) is
					    * needed to find it */
#define JITMAP_CORE_ADDED_UNCHANGED 32u    /* a core this function cannot rewrite, passed on
					    * byte for byte: `note` says why */
#define JITMAP_CORE_ADDED_NO_JIT_FILES 64u /* no perf map or jitdump file was found: the core
					    * is passed on byte for byte */

/* Copy the core that `in` streams (a pipe: the kernel's core_pattern) to `out`, adding the
 * perf maps and jitdump files of live process `pid` (0: none; found as
 * jitmap_perfmap_add_process finds them, through /proc/PID/root) and those of `opts` (may be
 * NULL) as the notes above. Streams: only the core's headers and notes are held in memory
 * (bounded: 256 MiB), never its memory segments, which are copied as they come, every offset
 * moved by one multiple of 4096. A core with no JIT files to add, or that the function
 * cannot rewrite (not a 64-bit ELF core, a layout other than the kernel's and GDB's, notes
 * past the bound), is copied byte for byte, with `note` (`note_len` bytes; may be NULL)
 * saying why; `note` also says which files were left out or cut, and, for a small core
 * (JITMAP_CORE_ADD_SMALL), how much memory it kept. Returns how many files were added (0
 * without JITMAP_CORE_ADD_SMALL: the core was passed through unchanged), or a negative errno
 * when `in` could not be read or `out` written (what was written is all there is), with `err`
 * filled: its offset in the core. SIGPIPE is the caller's to ignore. */
JITMAP_API int jitmap_core_add_jit_files(int in, int out, int pid,
					 const jitmap_core_add_opts *opts, char *note,
					 size_t note_len, jitmap_error *err);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_CORE_H */

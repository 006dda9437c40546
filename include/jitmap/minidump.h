/* minidump.h: a minidump of a stopped process, in Breakpad's format, for crash pipelines.
 *
 * A fleet's crashes go through crash pipelines (Breakpad and Crashpad clients, Socorro,
 * Sentry), which take minidumps, not cores, and walk them with a symbol store. Their stack
 * walkers skip JIT frames: Breakpad's scanner accepts a return address only inside a module
 * of the dump's module list, and finds no CFI for code no module names. So the writer lists
 * JIT code as modules of its own (the caller's: a JIT object or code region each, with a
 * stable identifier), whose Breakpad symbol files carry the names and the unwinding rules
 * (breakpad.h); the stock walker then names and unwinds JIT frames unmodified.
 *
 * The dump is written from a stopped process (stopped.h: a core or a live process alike) and
 * holds what Breakpad's own Linux writer does, plus what its `minidump_dump` insists on:
 *   - ThreadList: each thread's ID, its registers as a Windows CONTEXT (x86-64's
 *     CONTEXT_AMD64, 1232 bytes, or AArch64's CONTEXT_ARM64, 912 bytes; integer and control
 *     registers, the floating-point state zero: jitmap reads none), and its stack from its
 *     stack pointer rounded down to its page, at most `stack_bytes`, within the readable
 *     bytes there. A thread without registers (a core's note without a PC, a live thread that
 *     exited while read) is listed with a context whose flags say nothing was read (all zero
 *     but the CPU bit) and no stack: its ID stays in the dump, and no register is invented.
 *   - ModuleList: the executable first (the walker's "main module"), then one module per
 *     mapped ELF file, spanning its mappings, each with its build ID as CodeView 'BpEL'
 *     (Breakpad's symbol-file ID is derived from it); the vDSO as "linux-gate.so" (Breakpad's
 *     name for it), with its build ID; then the caller's JIT modules. Breakpad rejects the
 *     whole list when two modules overlap, so a JIT module that overlaps a module before it
 *     is left out (counted in `dropped_modules`), as are those past Breakpad's cap of 2048
 *     modules. A file without a build ID is identified as Breakpad's own writer and
 *     dump_syms identify it (a hash of its .text's first page), when the file can be read.
 *   - MemoryList (type 5: Breakpad's processor does not read Memory64List): each thread's
 *     stack, the bytes its thread entry points at, and the caller's `memory` ranges (the JIT
 *     code's bytes) clipped to bytes that can be read; each region at most 64 MiB, at most
 *     4096 regions, 2 GiB in all (the stacks first). Bytes that cannot be read (a core
 *     missing them) are left out, never invented.
 *   - SystemInfo (platform Linux, the CPU; a live process's kernel as `uname` says it, none
 *     for a core, which does not say which kernel it ran on), Exception (a core's: the first
 *     thread in note order whose signal is nonzero, with si_code and si_addr where the core
 *     holds its NT_SIGINFO: jitmap_stopped_thread_siginfo), MiscInfo (the process ID),
 *     MemoryInfoList (each mapping's protection and type: JIT code shows as executable
 *     private memory), LinuxMaps (/proc/PID/maps' text, made from the mappings), LinuxAuxv,
 *     LinuxCmdLine (a live process's /proc/PID/cmdline; a core's NT_PRPSINFO arguments,
 *     jitmap_stopped_args), LinuxProcStatus (a live process's /proc/PID/status) and
 *     ThreadNameList (a live process's thread names).
 * Each stream appears once (a second stream of most types makes the dump unreadable).
 * Everything is little-endian, and the file stays under 4 GiB (a minidump's offsets are 32
 * bits): memory past that is left out. */
#ifndef JITMAP_MINIDUMP_H
#define JITMAP_MINIDUMP_H

#include "jitmap/jitmap.h"
#include "jitmap/stopped.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A JIT module: code no file maps, listed as a module of its own so that a walker finds its
 * symbol file (DIR/NAME/ID/NAME.sym, NAME the base name of `path`, ID the symbol-file ID
 * Breakpad derives from `id`: breakpad.h writes that file). */
typedef struct jitmap_minidump_module {
	uint64_t base, size;  /* [base, base + size) */
	const char *path;     /* its name in the minidump (code file); its base name names its
			       * symbol file */
	const uint8_t *id;    /* identifier: a build ID, or a hash of its code (1..64 bytes):
			       * stable across runs, so a symbol store keeps one file for it */
	size_t id_len;
} jitmap_minidump_module;

typedef struct jitmap_minidump_range {
	uint64_t lo, hi;      /* [lo, hi) */
} jitmap_minidump_range;

typedef struct jitmap_minidump_opts {
	size_t sz;            /* sizeof(jitmap_minidump_opts) as the caller knows it (libbpf's
			       * convention, as jitmap_stopped_opts) */
	/* JIT code as modules of its own, listed after the process's files (in this order);
	 * ones that overlap a module before them are left out. */
	const jitmap_minidump_module *jit_modules;
	size_t num_jit_modules;
	/* More memory to carry: the JIT code's bytes (Breakpad's walker reads none, other
	 * readers and disassemblers do). Clipped to readable bytes; overlaps with the stacks
	 * are carried once. */
	const jitmap_minidump_range *memory;
	size_t num_memory;
	/* Each thread's stack carried at most, from its stack pointer rounded down to its page
	 * (0: 1 MiB; at most 64 MiB, Breakpad's cap on a region). The walker reads a thread's
	 * stack only from this region: a deep JIT stack needs more than Breakpad's 32 KiB. */
	uint64_t stack_bytes;
	/* A field added here: name it in JITMAP__OPTS_VALID in writers/minidump.c. */
} jitmap_minidump_opts;

typedef struct jitmap_minidump_info {
	size_t sz;            /* set by the caller: sizeof(jitmap_minidump_info); fields past
			       * it are not written */
	size_t num_threads, num_modules, num_memory; /* written: threads, modules, memory regions */
	size_t dropped_modules; /* JIT modules left out: overlapping a file's module or another,
				 * past 2048 modules, or with an unusable id or size */
	uint64_t bytes;       /* the file's size */
} jitmap_minidump_info;

/* Write a minidump of `s` to `fd` (from its current offset, with write(2): a pipe will do),
 * read only through `s` (its memory, threads, mappings, auxiliary vector). A live process
 * should be stopped while this runs (or read BY_THREAD / SNAPSHOT, whose stacks were
 * captured): its stacks are read now. `opts` and `info` may be NULL. Returns 0, with `info`
 * filled; or a negative errno with `err` (may be NULL) filled, its reason one sentence:
 *   -ENOTSUP an architecture other than x86-64 and AArch64, or a big-endian process;
 *   -EINVAL  a NULL `s`, fd < 0, bad options (sz, a NULL array with a count), info->sz too
 *            small;
 *   -EFBIG   the dump would pass 4 GiB before its memory (its header streams alone);
 *   -ENOMEM; the errno of write(2) (then part of the dump may have been written).
 * A thread without registers, memory that cannot be read, a JIT module that cannot be
 * listed: not failures (they are left out, and counted where `info` says). */
JITMAP_API int jitmap_minidump_write(jitmap_stopped *s, int fd, const jitmap_minidump_opts *opts,
				     jitmap_minidump_info *info, jitmap_error *err);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_MINIDUMP_H */

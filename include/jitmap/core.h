/* core.h: Linux core files in libjitmap.
 *
 * A core holds the threads of a dumped process (one NT_PRSTATUS note each: the thread ID and
 * its general registers), its auxiliary vector (NT_AUXV), which file was mapped where (NT_FILE)
 * and the process's memory (PT_LOAD segments; read-only file mappings are usually dumped with
 * no contents, and are read from the mapped files instead). jitmap_core_open reads all of it
 * through libelf in the core's own byte order, whatever the host's, and offers the memory as a
 * jitmap_target. 64-bit cores only: LLVM stackmaps exist only for 64-bit targets.
 *
 * Nothing in a core is trusted: every count, size and offset is checked against the bytes it
 * points into; what lies past the end of a truncated core cannot be read (a warning says which
 * segments lack bytes, and a read there says what is missing), and is never taken from a
 * mapped file instead. Conventions as in jitmap.h. A jitmap_core is not safe to use from several threads
 * at once (mapped files are opened on first use).
 */
#ifndef JITMAP_CORE_H
#define JITMAP_CORE_H

#include <signal.h>

#include "jitmap/jitmap.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jitmap_core jitmap_core;

/* Flags of jitmap_core_opts. */
#define JITMAP_CORE_NO_FILES 1u /* never open the files the core maps (memory and symbols come
				 * from the core alone) */

typedef struct jitmap_core_opts {
	/* sizeof(jitmap_core_opts) as the caller knows it: fields past it are not read; bytes
	 * past the fields this library knows must be 0 (else EINVAL). */
	size_t sz;
	/* The program's executable, when it is no longer where the core says. It replaces the
	 * mapped file that has its build ID (NT_GNU_BUILD_ID, read from the core's copy of the
	 * mapping's first page or from the mapped file), else the one with its real path (links
	 * resolved), else the one with its base name (or its real path's base name). A warning
	 * says when none matches. In a core without NT_FILE (qemu-user writes those), the
	 * executable is placed by the auxiliary vector (AT_PHDR, else AT_ENTRY) and the shared
	 * libraries by the dynamic linker's list in the core's memory (DT_DEBUG, r_debug,
	 * link_map). This file is opened even with JITMAP_CORE_NO_FILES. NULL: none. */
	const char *exe;
	/* Mapped files are looked up under this directory (as GDB's `set sysroot`); NULL: "/". */
	const char *sysroot;
	unsigned flags;     /* JITMAP_CORE_* */
	/* Checked while a compressed core is decompressed: once it is nonzero (a signal handler
	 * sets it), the open fails with EINTR ("interrupted"). NULL: never. */
	const volatile sig_atomic_t *interrupt;
	/* Where the separate debug files of stripped mapped files are looked for, ':'-separated
	 * (GDB's debug-file-directory), each under `sysroot` first: by build ID
	 * (DIR/.build-id/xx/yyyy.debug) and by .gnu_debuglink (DIR followed by the file's
	 * folder); debuginfod too when DEBUGINFOD_URLS is set. A symbol a stripped file does not
	 * have (jitmap_core_find_symbol, the JIT descriptor of jitmap_process_scan_core) is looked
	 * up in its debug file, of the build ID the core holds for it. NULL: "/usr/lib/debug". */
	const char *debug_dirs;
	/* A field added here: name it in JITMAP__OPTS_VALID in targets/core.c. */
} jitmap_core_opts;

/* Open the core file at `path`, or a core of `len` bytes at `buf` (the bytes are copied).
 * `opts` may be NULL. Returns NULL with errno set (EINVAL: not a 64-bit ELF core, its
 * program headers are unreadable, or not a regular file; EISDIR: a directory; ENOMEM; the
 * open's errno) and `*err` filled. Damage that
 * leaves the rest readable (a truncated core, a bad note, overlapping segments) is not a
 * failure: see jitmap_core_warning. */
JITMAP_API jitmap_core *jitmap_core_open(const char *path, const jitmap_core_opts *opts,
					 jitmap_error *err);
JITMAP_API jitmap_core *jitmap_core_open_memory(const void *buf, size_t len,
						const jitmap_core_opts *opts, jitmap_error *err);
JITMAP_API void jitmap_core_free(jitmap_core *core);

/* -- Compressed cores --
 *
 * A core file stored compressed (systemd-coredump's core.*.zst; lz4 frames and xz too), known
 * by its first bytes and not by its name, is opened by jitmap_core_open as the core it holds:
 * decompressed as a stream into an unlinked temporary file ($TMPDIR, else /var/tmp, else /tmp)
 * whose blocks of zeros are holes. Memory is bounded by the compression's window (zstd's up to
 * 128 MiB, lz4's blocks, xz's dictionary, refused past 1 GiB), not by the core's size; the
 * disk holds the core's pages that are not zero. A stream cut short gives the core as far as
 * it came out, with a warning (jitmap_core_warning) saying so. */

/* The compression the first `len` bytes of a file say it has: "zstd", "lz4", "xz", or NULL. */
JITMAP_API const char *jitmap_compression_of(const void *head, size_t len);
/* What `core` was decompressed from ("zstd", ...), or NULL for a core stored as it is. */
JITMAP_API const char *jitmap_core_compression(const jitmap_core *core);
/* Decompress the compressed core file at `path` as jitmap_core_open does, for a debugger
 * that reads cores itself (GDB's core-file of /proc/self/fd/N): the descriptor of the
 * unlinked temporary file, read-write (the caller closes it), with `note` (`note_len` bytes;
 * may be NULL) a sentence when the stream was cut short, else ""; or a negative errno with
 * `err` filled: -EINVAL when the file is not compressed, or not as jitmap reads it; -EINTR
 * once *interrupt (may be NULL) is nonzero. */
JITMAP_API int jitmap_core_decompress(const char *path, const volatile sig_atomic_t *interrupt,
				      char *note, size_t note_len, jitmap_error *err);

/* The core's architecture (JITMAP_ARCH_UNKNOWN for one libjitmap does not know), its ELF
 * e_machine, and its byte order (JITMAP_ORDER_LITTLE or JITMAP_ORDER_BIG, from e_ident). */
JITMAP_API jitmap_arch jitmap_core_arch(const jitmap_core *core);
JITMAP_API unsigned jitmap_core_elf_machine(const jitmap_core *core);
JITMAP_API jitmap_byte_order jitmap_core_byte_order(const jitmap_core *core);

/* -- Threads -- */

typedef struct jitmap_core_reg {
	uint16_t regno; /* DWARF number for the core's architecture */
	uint64_t value;
} jitmap_core_reg;

typedef struct jitmap_core_thread_info {
	uint32_t tid;          /* pr_pid */
	int signal;            /* pr_cursig: the signal that stopped it (0: none) */
	size_t num_regs;
	const jitmap_core_reg *regs; /* sorted by regno */
} jitmap_core_thread_info;

/* Threads in note order (Linux writes the thread that caused the dump first). Registers are
 * known for x86-64 (user_regs_struct: rax..r15 0-15, rip 16, rflags 49, segment registers
 * 50-55, fs.base 58, gs.base 59), AArch64 (x0-x30 0-30, sp 31, pc 32) and s390x (r0-r15 0-15,
 * a0-a15 48-63, PSW mask 64 and address 65); other architectures give a thread with no
 * registers. */
JITMAP_API size_t jitmap_core_num_threads(const jitmap_core *core);
/* Thread `i`, or NULL when out of range. */
JITMAP_API const jitmap_core_thread_info *jitmap_core_thread(const jitmap_core *core, size_t i);
/* The value of DWARF register `regno` of `thread`: 0, or -ENOENT when the core has none. */
JITMAP_API int jitmap_core_thread_reg(const jitmap_core_thread_info *thread, unsigned regno,
				     uint64_t *value);

/* -- Memory -- */

/* A target whose read_mem reads the process's memory: the core's segments, and for file
 * mappings the core did not dump, the mapped files. A read may span segments and mappings;
 * it fails (-EFAULT, with the first address that is not readable and why) unless every byte
 * is found. Bytes are never taken from a file where they may not be the process's (see
 * jitmap_core_memory). read_reg is NULL. The target stays valid until the core is freed. */
JITMAP_API jitmap_target jitmap_core_target(jitmap_core *core);

/* Where the bytes at an address come from. */
typedef enum jitmap_core_source {
	JITMAP_CORE_MEM_CORE = 1, /* the core's own bytes (a PT_LOAD segment's contents) */
	JITMAP_CORE_MEM_FILE = 2, /* the file mapped there: a read-only segment the core holds no
				   * bytes of (Linux dumps only the first page of those), or a
				   * mapping no segment covers (gcore leaves unmodified read-only
				   * mappings out) */
	JITMAP_CORE_MEM_NONE = 3, /* not known, for the reason in `why`: bytes a segment should
				   * hold that lie past the end of the core (truncated: the file's
				   * bytes are not read instead, the kernel dumped them because they
				   * were written), a writable segment the core holds no bytes of
				   * (its file's bytes need not be the process's), no segment and no
				   * file there, or a mapped file that cannot be read */
} jitmap_core_source;

typedef struct jitmap_core_memory_info {
	size_t sz;       /* set by the caller: sizeof(jitmap_core_memory_info) (process.h's
			  * jitmap_source_info says why) */
	jitmap_core_source source;
	uint64_t size;   /* bytes from the address on that come from the same place (>= 1;
			  * UINT64_MAX when they reach the top of the address space) */
	uint64_t offset; /* CORE: the address's offset in the core; FILE: in the file */
	const char *path; /* the file mapped at the address (NT_FILE, or placed), or NULL */
	uint64_t segment_start, segment_end; /* the PT_LOAD segment holding it (0, 0: none) */
	unsigned segment_flags; /* its p_flags (PF_X 1, PF_W 2, PF_R 4) */
	/* NONE: no file stands for these bytes: the core lost them (truncated) or does not hold
	 * a writable segment's. A debugger that reads mapped files itself must not use them
	 * either (GDB 13 reads a truncated segment's bytes from the file). */
	bool file_unusable;
	char why[192];   /* NONE: one sentence naming the address and what is missing */
} jitmap_core_memory_info;

/* What jitmap_core_target reads at `addr`, and from where: 0 (NONE is an answer, not an
 * error), or -EINVAL (a NULL argument, or out->sz too small). For a tool that says which bytes came from the core
 * and which from files, or a debugger front end that checks its own memory reads against the
 * core (GDB reads a truncated segment's bytes from the file). */
JITMAP_API int jitmap_core_memory(jitmap_core *core, uint64_t addr, jitmap_core_memory_info *out);
/* The same memory, with read_reg reading thread `i`'s registers (frame 0): values of up to 8
 * bytes in the core's byte order; -ENOENT for a register the core does not hold. A target with
 * no callbacks when `i` is out of range. */
JITMAP_API jitmap_target jitmap_core_thread_target(jitmap_core *core, size_t i);

/* Whether code can be at `pc` in the dumped process: 1 when it lies in an executable
 * segment, or in a file mapping no segment covers (gcore leaves code mappings out); 0 when it
 * lies in a segment that is not executable or in no mapping at all, with `why` (`why_len`
 * bytes; may be NULL) saying where; -EINVAL for a NULL core. For jitmap_stacker_opts.code_at:
 * a return address read from stack words below a thread's last frame is rarely code. */
JITMAP_API int jitmap_core_code_at(jitmap_core *core, uint64_t pc, char *why, size_t why_len);

/* The build ID of the file the process mapped at `addr`, as the core's copy of that file's
 * first page says (NT_GNU_BUILD_ID, the note a debugger matches files by): its length, with
 * the ID in `out` (`len` bytes; 20 for GNU ld's, at most 64), or 0 when no file is mapped
 * there, the core holds no first page of it, or it has no build ID. For a debugger that
 * checks the file it reads for a module against the process (GDB's objfile.build_id). */
JITMAP_API size_t jitmap_core_build_id_at(jitmap_core *core, uint64_t addr, uint8_t *out,
					  size_t len);

/* -- Mapped files (NT_FILE) -- */

typedef struct jitmap_core_mapping_info {
	uint64_t start, end;   /* [start, end) in the process */
	uint64_t offset;       /* in bytes, into the file */
	const char *path;      /* the file read for it (after --exe replacement and sysroot) */
	const char *core_path; /* the path as the core names it */
} jitmap_core_mapping_info;

/* Mappings sorted by start address. Where two overlap, the one that starts lower (at the same
 * start, the first in the note) keeps the overlap; the other is cut or left out, with a
 * warning. PT_LOAD segments are treated alike. */
JITMAP_API size_t jitmap_core_num_mappings(const jitmap_core *core);
JITMAP_API const jitmap_core_mapping_info *jitmap_core_mapping(const jitmap_core *core, size_t i);

/* -- Auxiliary vector -- */

/* The value of the first auxv entry of `type` (AT_PHDR, AT_ENTRY, ...): 0, or -ENOENT. */
JITMAP_API int jitmap_core_auxv(const jitmap_core *core, uint64_t type, uint64_t *value);

/* The files the library placed itself, in a core with no NT_FILE note (qemu-user's guest
 * cores): the executable given as `exe` (jitmap_core_opts), where the auxiliary vector's
 * AT_PHDR (else AT_ENTRY) puts it, and the libraries the dynamic linker's list names. The
 * i-th: 0, with its path and load bias (a file address + bias is the process's; 0 for an
 * executable at its linked addresses); -ENOENT past the last. Placed files' segments are
 * among the mappings too. For a tool that reports them to another reader (jitmap-stack to
 * libdwfl, which finds no module in such a core). */
JITMAP_API int jitmap_core_placed_file(const jitmap_core *core, size_t i, const char **path,
				       uint64_t *bias);

/* -- Symbols -- */

/* Every definition of data symbol `name` (STT_OBJECT) in the mapped files (for a stripped
 * one, in its separate debug file: jitmap_core_opts.debug_dirs), moved by where each file is
 * loaded. Stores at most `max` addresses in `out` (and the file each is in, when
 * `files` is not NULL) and returns how many there are. A mapped file that cannot be opened
 * adds a warning. */
JITMAP_API size_t jitmap_core_find_symbol(jitmap_core *core, const char *name, uint64_t *out,
					  const char **files, size_t max);

/* -- The core file -- */

struct Elf;
/* The core as libelf reads it (elf_begin with ELF_C_READ_MMAP, or elf_memory for
 * jitmap_core_open_memory), for a reader that takes one, so that the core is opened once:
 * libdwfl's dwfl_core_file_report and dwfl_attach_state. Owned by the core (not to be ended),
 * valid until the core is freed; NULL for a NULL core. */
JITMAP_API struct Elf *jitmap_core_elf(jitmap_core *core);

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
 * handler found and could not add, and why; it is read as a warning of the core. */
#define JITMAP_CORE_NOTE_NAME "JITMAP"
#define JITMAP_CORE_NOTE_FILE 1u
#define JITMAP_CORE_NOTE_PROBLEM 2u
#define JITMAP_CORE_NOTE_SMALL 3u
#define JITMAP_CORE_FILE_CUT 1u

typedef struct jitmap_core_jit_file {
	const char *path;  /* as the crashed process named it */
	unsigned kind;     /* a jitmap_perfmap_kind (perfmap.h): 1 a perf map, 2 a jitdump */
	unsigned flags;    /* JITMAP_CORE_FILE_CUT */
	const void *data;  /* its bytes, valid until the core is freed */
	size_t size;
	uint64_t offset;   /* of those bytes in the (decompressed) core file */
} jitmap_core_jit_file;

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
 * A read of a left-out range is JITMAP_CORE_MEM_NONE, its `why` saying the small core left
 * it out, and file_unusable (a mapped file's bytes there need not be the process's); but
 * where in_file is 1 (the handler found the mapped file holding those bytes as the process
 * had them), and in a file's code (read-only, executable), the mapped file is read, as in a
 * kernel core. Left-out memory no file may stand for is also taken out of NT_FILE, so that
 * a debugger that reads mapped files for what a core lacks (GDB) does not read it there.
 * Whether code can be at a left-out address follows the flags of its segment. */
#define JITMAP_CORE_KEPT_STACK 1u    /* a thread's stack, from below its SP up */
#define JITMAP_CORE_KEPT_THREAD 2u   /* a thread's control block (its thread pointer) */
#define JITMAP_CORE_KEPT_JIT 4u      /* a JIT descriptor, its entries, their images */
#define JITMAP_CORE_KEPT_JIT_CODE 8u /* the memory of those images' sections; JIT code that
				      * a thread's PC or stack words point into */
#define JITMAP_CORE_KEPT_MODULE 16u  /* a mapped file's first page (headers, build ID) */
#define JITMAP_CORE_KEPT_LOADER 32u  /* the dynamic section, r_debug, the link_map chain */
#define JITMAP_CORE_KEPT_VDSO 64u    /* the vDSO */
#define JITMAP_CORE_KEPT_DATA 128u   /* a small writable segment, whole (a file's .data) */

/* Whether `core` is a small core: 1 with its stack bound and how many bytes of memory it
 * keeps and left out (those its mapped files hold not counted; any pointer may be NULL), 0
 * when it is not one, -EINVAL for a NULL core. */
JITMAP_API int jitmap_core_small(const jitmap_core *core, uint64_t *stack_bytes,
				 uint64_t *kept_bytes, uint64_t *left_bytes);

/* The JIT files the core carries, in note order (a malformed note is a warning and is left
 * out): how many, and the i-th (NULL past the end). */
JITMAP_API size_t jitmap_core_num_jit_files(const jitmap_core *core);
JITMAP_API const jitmap_core_jit_file *jitmap_core_jit_file_at(const jitmap_core *core,
								size_t i);

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
	 * descriptor's symbol (jitmap_core_opts.sysroot; NULL: /proc/PID/root with a `pid`,
	 * else "/"). */
	const char *sysroot;
	/* JITMAP_CORE_ADD_SMALL: the program's executable, for a core that does not say where
	 * it is mapped (jitmap_core_opts.exe: qemu-user's cores have no NT_FILE), so that its
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

/* -- Problems -- */

/* Problems met while reading the core (truncation, bad notes, mapped files missing or
 * unreadable): one sentence each, in order; NULL past the end. */
JITMAP_API const char *jitmap_core_warning(const jitmap_core *core, size_t i);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_CORE_H */

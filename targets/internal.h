/* internal.h (targets): what the targets layer gives the model above it, and what its files
 * share: many reads at once (live.c), a stopped process's threads (threads.c), a core's
 * insides and files (core.c, core_memory.c, core_symbols.c), JIT files carried in a core
 * (core_jitfiles.c), the dynamic linker's list, compressed cores (compressed.c), Linux's
 * register sets (linux_regs.c) and the page cache (pagecache.c). What is read from files
 * (ELF images, debug files, perf maps) is the files layer's (../files/internal.h). */
#ifndef JITMAP_TARGETS_INTERNAL_H
#define JITMAP_TARGETS_INTERNAL_H

#include <sys/stat.h>

#include "../files/internal.h"
#include "jitmap/core.h"
#include "jitmap/live.h"
#include "jitmap/stopped.h"

/* -- The kinds' objects and their options (core.c, live.c) --
 *
 * A core (jitmap__core) and a live process (jitmap__live), each behind stopped.c's table; their
 * options are stopped.h's jitmap_stopped_opts as each kind reads them (stopped.c hands each
 * its own fields), and a writer opens a core with them too (writers/). */

typedef struct jitmap__core jitmap__core;
typedef struct jitmap__live jitmap__live;

#define JITMAP_CORE_NO_FILES 1u /* JITMAP_STOPPED_NO_FILES */

typedef struct jitmap__core_opts {
	size_t sz; /* checked as jitmap_stopped_opts.sz is */
	const char *exe;     /* jitmap_stopped_opts's, as stopped.h says */
	const char *sysroot;
	unsigned flags;      /* JITMAP_CORE_* */
	const volatile sig_atomic_t *interrupt;
	const char *debug_dirs;
	/* A field added here: name it in JITMAP__OPTS_VALID in targets/core.c. */
} jitmap__core_opts;

#define JITMAP_LIVE_NO_STOP 1u   /* JITMAP_STOPPED_NO_STOP */
#define JITMAP_LIVE_BY_THREAD 2u /* JITMAP_STOPPED_BY_THREAD */
#define JITMAP_LIVE_SNAPSHOT 4u  /* JITMAP_STOPPED_SNAPSHOT */

typedef struct jitmap__live_opts {
	size_t sz; /* checked as jitmap_stopped_opts.sz is */
	size_t max_threads;  /* jitmap_stopped_opts's, as stopped.h says */
	unsigned max_rounds;
	unsigned flags;      /* JITMAP_LIVE_* */
	const volatile sig_atomic_t *interrupt;
	size_t stack_bytes;
	/* A field added here: name it in JITMAP__OPTS_VALID in targets/live.c. */
} jitmap__live_opts;

/* -- Many reads at once (live_memory.c) -- */

struct jitmap__read {
	uint64_t addr;
	void *buf;
	size_t len;
	bool done; /* set by jitmap__read_many: all `len` bytes are in `buf` */
};
/* Read r[0..n) in as few system calls as the target allows: a live process's targets
 * (jitmap__live_target, jitmap__live_thread_target) through process_vm_readv, up to 1024 reads
 * a call. Each read done says so; one not done (unmapped, or the system refused the call) is
 * the caller's to read through read_mem, which says why it cannot be read. -ENOTSUP for any
 * other target (none done), else 0. */
int jitmap__read_many(const jitmap_target *t, struct jitmap__read *r, size_t n);

/* One file a core maps (NT_FILE's, or one the library placed without it), opened as `elf`
 * with its load bias (`bias_known` false when no mapping of its first page says where it is
 * loaded) and where its separate debug file is looked for (`debug`: the core's sysroot, debug
 * directories and the build ID the core holds for it); or, for one that cannot be opened,
 * `elf` NULL and `why` (strerror's words). A nonzero return stops the walk. */
typedef int (*jitmap__core_file_fn)(void *ctx, const char *path, struct Elf *elf,
				    bool bias_known, uint64_t bias, const char *why,
				    const struct jitmap__debug_lookup *debug);

/* -- A stopped process's kinds (stopped.c) --
 *
 * jitmap_stopped is a kind's object behind one table of operations (as libdwfl keeps a
 * process behind its Dwfl_Thread_Callbacks), set by the opener: the core's (core.c and the
 * files beside it) and the live process's (live.c, live_maps.c). Each operation takes the
 * kind's object; a slot left NULL is what the kind does not have, and stopped.h's "none"
 * answer is given for it. */

struct jitmap__stopped_ops {
	jitmap_stopped_kind kind;
	void (*free)(void *k);
	int (*detach)(void *k);                         /* NULL: nothing to let go */
	jitmap_arch (*arch)(const void *k);
	unsigned (*elf_machine)(const void *k);
	const char *(*name)(const void *k);
	const char *(*args)(const void *k);             /* NULL: "" */
	pid_t (*pid)(const void *k);
	bool (*is_stopped)(const void *k);              /* NULL: always */
	const char *(*compression)(const void *k);      /* NULL: none */
	struct jitmap__threads *(*threads)(void *k);
	/* the i-th problem's sentence and status (JITMAP__WARN, JITMAP__INFO): NULL past the end */
	const char *(*problem)(const void *k, size_t i, uint8_t *status);
	jitmap_target (*target)(void *k);
	jitmap_target (*thread_target)(void *k, size_t i);
	jitmap_target (*thread_stack_target)(void *k, size_t i);
	/* `out` zeroed past its sz, sz kept */
	int (*memory)(void *k, uint64_t addr, jitmap_stopped_memory_info *out);
	int (*code_at)(void *k, uint64_t pc, char *why, size_t why_len);
	int (*module_at)(void *k, uint64_t addr, jitmap_stopped_module_info *out);
	size_t (*build_id_at)(void *k, uint64_t addr, uint8_t *out, size_t len);
	size_t (*num_mappings)(void *k);
	const jitmap_stopped_mapping_info *(*mapping)(void *k, size_t i);
	int (*mapped_file)(void *k, uint64_t addr, char *path, size_t path_len, char *why,
			   size_t why_len);
	int (*auxv)(void *k, uint64_t type, uint64_t *value);
	int (*placed_file)(const void *k, size_t i, const char **path, uint64_t *bias);
	size_t (*find_symbol)(void *k, const char *name, uint64_t *out, const char **files,
			      size_t max);
	struct Elf *(*elf)(void *k);
	int (*small)(const void *k, uint64_t *stack_bytes, uint64_t *kept, uint64_t *left);
	size_t (*num_jit_files)(const void *k);
	const jitmap_stopped_jit_file_info *(*jit_file)(const void *k, size_t i);
	/* jitmap__stopped_each_file's; NULL: -ENOTSUP */
	int (*each_file)(void *k, jitmap__core_file_fn fn, void *ctx);
};

extern const struct jitmap__stopped_ops jitmap__core_ops, jitmap__live_ops;

/* Call `fn` for each file of a core that is ELF or cannot be opened (files the core was
 * opened not to read, JITMAP_STOPPED_NO_FILES, are left out): 0, or what `fn` returned;
 * -ENOTSUP for a live process (the process model's jitmap_process_scan_stopped). */
int jitmap__stopped_each_file(jitmap_stopped *s, jitmap__core_file_fn fn, void *ctx);

/* The status of a problem, kept beside its sentence (one byte: stopped.h's kind and code). */
#define JITMAP__WARN(code) ((uint8_t)(JITMAP_PROBLEM_WARNING << 4 | (code)))
#define JITMAP__INFO(code) ((uint8_t)(JITMAP_PROBLEM_INFO << 4 | (code)))
/* A sentence added to `l` (at most `max`, as jitmap__vproblem) with its status in status[] at
 * the same index. */
void jitmap__status_vproblem(struct jitmap__problems *l, uint8_t *status, size_t max,
			     uint8_t st, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));
void jitmap__status_problem(struct jitmap__problems *l, uint8_t *status, size_t max,
			    uint8_t st, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* -- A stopped process's threads (threads.c) --
 *
 * What a core (core.c) and a live process (live.c) both hold, kept once: the threads, each
 * with its ID, name, signal, registers (the unwinder's jitmap_frame_regs, and every register
 * of Linux's layout sorted by DWARF number) or why it has none, and the one read_reg of a
 * thread target. (The warnings met reading either are a jitmap__problems list each.) The
 * public thread struct, jitmap_stopped_thread_info (stopped.h), is the first field of one
 * jitmap__thread, kept in step by the calls below. */

#define JITMAP__MAX_GREGS 64    /* registers of Linux's layout kept (x86-64 has 26, AArch64 33,
				 * s390x 34) */

struct jitmap__threads;

struct jitmap__thread {
	jitmap_stopped_thread_info pub;    /* jitmap_stopped_thread's view */
	const struct jitmap__threads *list;
	void *owner;        /* the jitmap__core or jitmap__live: a thread target's memory */
	bool attached;      /* live: seized, PTRACE_DETACH is owed */
	bool stopped;       /* live: its stop was waited for */
	char name[64];
	char why[160];
	/* live, JITMAP_LIVE_BY_THREAD: the stack captured while the thread was stopped, [lo,
	 * hi); the mapping it lies in (its bytes outside the capture are unknown); how long the
	 * thread was stopped */
	uint8_t *stack;
	uint64_t stack_lo, stack_hi, map_lo, map_hi, stopped_ns;
	bool stack_cut;
	jitmap_frame_regs regs;
	size_t nregs;
	jitmap_stopped_reg *byno; /* nregs, sorted by regno */
	/* a core: the NT_SIGINFO that followed the thread's NT_PRSTATUS (jitmap_stopped_siginfo) */
	bool has_siginfo;
	int sig_no, sig_code;
	uint64_t sig_addr;
};

struct jitmap__threads {
	struct jitmap__thread **v;
	size_t n, cap;
	jitmap_byte_order order;
	bool core;          /* a core's threads: what a missing register's words say */
};

/* The public view of `t` (jitmap_stopped_thread_info)
 * made again from its fields. */
void jitmap__thread_publish(struct jitmap__thread *t);
/* An empty list of a core's threads (`core`) or a live process's, in byte order `order`. */
void jitmap__threads_init(struct jitmap__threads *l, bool core, jitmap_byte_order order);
void jitmap__threads_fini(struct jitmap__threads *l);
/* A new thread `tid` of `owner` at the end of the list, with no registers (error 0: set them,
 * or say why there are none), or NULL when out of memory. */
struct jitmap__thread *jitmap__threads_add(struct jitmap__threads *l, pid_t tid, void *owner);
/* Thread `i`, or NULL. */
struct jitmap__thread *jitmap__threads_at(const struct jitmap__threads *l, size_t i);

/* The thread's registers from Linux's general registers of architecture `arch` (`len` bytes
 * at `gregs`, in the list's byte order). Every register the layout holds goes into the sorted
 * list; the frame registers are jitmap_frame_regs_from_linux's: 0 (error 0, regs set), or its
 * negative errno, leaving the thread without frame registers for the caller to say why; or
 * -ENOMEM, nothing changed. */
int jitmap__thread_set_regs(struct jitmap__thread *t, jitmap_arch arch, const uint8_t *gregs,
			    size_t len);
/* The thread has no registers: `error` (a negative errno) and why, in words. */
void jitmap__thread_failed(struct jitmap__thread *t, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void jitmap__thread_set_signal(struct jitmap__thread *t, int signal);
/* DWARF register `regno` of the sorted list at `regs` (`n` of them): 0, or -ENOENT. */
int jitmap__regs_find(const jitmap_stopped_reg *regs, size_t n, unsigned regno, uint64_t *value);
/* Thread `t`'s DWARF register `regno`: 0, or -ENOENT. A live thread whose registers could not
 * be read has none (live.h); a core's has what its note holds, PC or not (core.h). */
int jitmap__thread_reg(const struct jitmap__thread *t, unsigned regno, uint64_t *value);
/* A thread target's read_reg, its context the jitmap__thread: values of up to 8 bytes in the
 * list's byte order; -ENOENT for a register the thread does not have, -EINVAL for a size. */
int jitmap__thread_read_reg(void *ctx, unsigned regno, void *buf, size_t size, char *why,
			    size_t why_len);

/* The thread list of a core or of a live process (stopped.c's threads). */
struct jitmap__threads *jitmap__core_threads(jitmap__core *c);
struct jitmap__threads *jitmap__live_threads(jitmap__live *l);

/* -- A core's insides (core.c reads it, core_memory.c its bytes, core_symbols.c its files'
 * symbols) -- */

#define JITMAP__CORE_MAX_WARNINGS 32
#define JITMAP__CORE_MAX_MAPS 1000000 /* NT_FILE entries */

struct jitmap__core_seg {
	uint64_t vaddr, memsz;
	uint64_t filesz; /* bytes at `offset` in the core */
	uint64_t want;   /* bytes the program header says the core holds (filesz < want: the core
			  * ends before them) */
	uint64_t offset;
	unsigned flags;  /* p_flags: PF_R, PF_W, PF_X */
	size_t index;    /* in the program headers: breaks ties when sorting */
};

struct jitmap__core_left {
	uint64_t start, end;
	unsigned flags; /* p_flags of the segment it was cut from */
	bool in_file;   /* the mapped file holds these bytes as the process had them */
};

struct jitmap__core_file {
	char *path;      /* the file read */
	char *core_path; /* as the core names it */
	int fd;          /* -1 until opened; -2 when it cannot be */
	int warned;
	uint64_t size;
	int has_bias;    /* placed by the dynamic linker's list, not by NT_FILE */
	uint64_t bias;
	int given;       /* the caller's --exe: opened even with JITMAP_CORE_NO_FILES */
	int open_errno;  /* why it cannot be opened (0: not a regular file) */
	char *refused;   /* why the file at its path is not the one the process mapped */
};

struct jitmap__core {
	int fd;            /* the core file, or -1 for a core in memory */
	uint8_t *mem;      /* the core in memory (owned copy) */
	uint64_t size;
	struct Elf *elf;
	unsigned machine;
	jitmap_arch arch;
	jitmap_byte_order order;
	unsigned flags;
	char *sysroot;
	char *debug_dirs;  /* jitmap__core_opts.debug_dirs, or NULL */
	struct jitmap__core_seg *segs; /* sorted by vaddr, not overlapping */
	size_t nsegs;
	jitmap_stopped_mapping_info *maps; /* sorted by start, not overlapping */
	size_t *map_file;  /* per map: index into files */
	size_t nmaps;
	struct jitmap__core_file *files;
	size_t nfiles;
	struct jitmap__threads threads;
	struct jitmap__problems warnings; /* up to JITMAP__CORE_MAX_WARNINGS */
	uint8_t warn_status[JITMAP__CORE_MAX_WARNINGS]; /* each one's: JITMAP__WARN, _INFO */
	uint64_t *auxv;    /* pairs */
	size_t nauxv;
	int have_file_note, have_auxv;
	char name[17];     /* the process's, NT_PRPSINFO's pr_fname; "" when none was read */
	char args[81];     /* NT_PRPSINFO's pr_psargs; "" when none was read */
	const char *compression; /* what the file was decompressed from, or NULL */
	jitmap_stopped_jit_file_info *jit_files; /* jitmap-core-handler's notes (core_jitfiles.c) */
	size_t njit_files;
	/* A small core's note (core_jitfiles.c): the ranges it left out, sorted by start. */
	bool small;
	uint64_t small_stack_bytes, small_kept_bytes, small_left_bytes;
	struct jitmap__core_left *left;
	size_t nleft;
};

/* -- A core's calls: stopped.h's of the same names, for a core (core.c opens and frees,
 * core_stopped.c says what the core is, core_memory.c reads it, core_symbols.c its files'
 * symbols, core_jitfiles.c what jitmap-core-handler wrote in it) -- */

jitmap__core *jitmap__core_open(const char *path, const jitmap__core_opts *opts,
			       jitmap_error *err);
jitmap__core *jitmap__core_open_memory(const void *buf, size_t len, const jitmap__core_opts *opts,
				      jitmap_error *err);
void jitmap__core_free(jitmap__core *c);
const char *jitmap__core_compression(const jitmap__core *c);
jitmap_arch jitmap__core_arch(const jitmap__core *c);
jitmap_byte_order jitmap__core_byte_order(const jitmap__core *c);
size_t jitmap__core_num_threads(const jitmap__core *c);
const jitmap_stopped_thread_info *jitmap__core_thread(const jitmap__core *c, size_t i);
size_t jitmap__core_num_mappings(const jitmap__core *c);
const jitmap_stopped_mapping_info *jitmap__core_mapping(const jitmap__core *c, size_t i);
int jitmap__core_auxv(const jitmap__core *c, uint64_t type, uint64_t *value);
int jitmap__core_placed_file(const jitmap__core *c, size_t i, const char **path, uint64_t *bias);
const char *jitmap__core_warning(const jitmap__core *c, size_t i);
int jitmap__core_mapped_file(jitmap__core *c, uint64_t addr, char *path, size_t path_len,
			     char *why, size_t why_len);
jitmap_target jitmap__core_target(jitmap__core *c);
jitmap_target jitmap__core_thread_target(jitmap__core *c, size_t i);
int jitmap__core_memory(jitmap__core *c, uint64_t addr, jitmap_stopped_memory_info *out);
int jitmap__core_code_at(jitmap__core *c, uint64_t pc, char *why, size_t why_len);
size_t jitmap__core_build_id_at(jitmap__core *c, uint64_t addr, uint8_t *out, size_t len);
size_t jitmap__core_find_symbol(jitmap__core *c, const char *name, uint64_t *out,
				const char **files, size_t max);
int jitmap__core_small(const jitmap__core *c, uint64_t *stack_bytes, uint64_t *kept_bytes,
		       uint64_t *left_bytes);
size_t jitmap__core_num_jit_files(const jitmap__core *c);
const jitmap_stopped_jit_file_info *jitmap__core_jit_file_at(const jitmap__core *c, size_t i);

/* -- JIT files carried in a core (core_jitfiles.c) -- */

/* The perf map and jitdump files of live process `pid`, found where
 * jitmap_perfmap_add_process finds them, each handed to `each` by the path this process reads
 * it at: how many were found, or the first negative answer of `each` (perfmap_disk.c). */
int jitmap__perfmap_process_paths(int pid, int (*each)(void *ctx, const char *path), void *ctx);

/* A "JITMAP" note of `type` whose descriptor (`len` bytes at `desc`, at offset `at` of the
 * core) is read: a file kept (its bytes are not copied: they stay the note's), or a problem
 * the handler wrote as a warning. Returns 0 (a malformed note is a warning), or -ENOMEM. */
int jitmap__core_jit_note(jitmap__core *c, uint32_t type, const uint8_t *desc, size_t len,
			  uint64_t at);
/* The range a small core left out that holds `addr`, or NULL; the order of such ranges
 * (by start), for qsort. */
const struct jitmap__core_left *jitmap__core_left_at(const jitmap__core *c, uint64_t addr);
int jitmap__core_left_cmp(const void *a, const void *b);


/* -- A core's files beside its notes (core_files.c) -- */

/* The index of the file the core names `path` (added, read under the sysroot, when new), or
 * SIZE_MAX when out of memory. */
size_t jitmap__core_file_index(jitmap__core *c, const char *path);
/* The program given as `exe` in the place of the file the core maps for it (a warning when
 * none): 0, or -ENOMEM. */
int jitmap__core_match_exe(jitmap__core *c, const char *exe);
/* A core without NT_FILE: `exe` placed by the auxiliary vector, the libraries by the dynamic
 * linker's list (a warning or an information says how): 0, or -ENOMEM. */
int jitmap__core_files_from_exe(jitmap__core *c, const char *exe);

/* -- The dynamic linker's list (core_files.c) -- */

/* One struct link_map of a 64-bit process: where it is, and its l_addr, l_name, l_ld. */
struct jitmap__link_map {
	uint64_t at, l_addr, l_name, l_ld;
};

/* Walk the dynamic linker's list of a 64-bit process whose memory `mem` reads (in byte order
 * `order`), from its executable's dynamic section [dyn, dyn + size) (its first 64 KiB):
 * DT_DEBUG gives r_debug (*r_debug; 0 when there is none), r_debug.r_map the first link_map.
 * `each` is called for each entry in list order, at most 4096 (a read that fails ends the
 * walk); a nonzero return ends it and is returned. Else 0. For the cores without NT_FILE
 * (core.c) and the small cores, which keep the list (core_small.c). */
int jitmap__link_maps(const jitmap_target *mem, jitmap_byte_order order, uint64_t dyn,
		      uint64_t size, uint64_t *r_debug,
		      int (*each)(void *ctx, const struct jitmap__link_map *lm), void *ctx);

/* -- Small cores, as readers meet them (core_memory.c; writers/ makes them) -- */

/* Whether no mapped file may stand for left-out memory of a segment with these p_flags:
 * all but plain code (read-only, executable: PF_X 1, PF_W 2), which readers take from the
 * file, as from a kernel core that did not dump it. */
static inline bool jitmap__small_file_refused(unsigned flags)
{
	return (flags & 3u) != 1u;
}

/* -- Compressed cores (compressed.c) -- */

/* Decompress all of `fd` (`codec`: jitmap_compression_of's name) into a new unlinked
 * temporary file, its zero blocks as holes: its descriptor, with *size its bytes and
 * `cut_note` a sentence when the stream ended inside a frame (what came out is kept; else
 * ""); or a negative errno with `err` filled, its offset in the compressed file (-EINTR once
 * *interrupt, which may be NULL, is nonzero). */
int jitmap__decompress(int fd, const char *codec, const volatile sig_atomic_t *interrupt,
		       uint64_t *size, char *cut_note, size_t cut_len, jitmap_error *err);


/* `len` bytes at `addr` of the dumped process, from the core and (unless `core_only`) the
 * files it maps: 0, or -EFAULT with why (`why` may be NULL). */
int jitmap__core_read(jitmap__core *c, uint64_t addr, void *out, size_t len, int core_only,
		      char *why, size_t why_len);
/* The mapping (NT_FILE's, or a placed file's) holding `addr`: its index, or SIZE_MAX. */
size_t jitmap__core_find_map(const jitmap__core *c, uint64_t addr);
/* File `i`, opened at the first call: its descriptor, or < 0 when it cannot be or may not be
 * read (JITMAP_CORE_NO_FILES, another build than the process mapped: see its fields). */
int jitmap__core_file_fd(jitmap__core *c, size_t i);
/* The build ID of file `i`: from the core's copy of its first page, else from the file; its
 * length, or 0. */
size_t jitmap__core_file_build_id(jitmap__core *c, size_t i, uint8_t *out);
/* Whether file `i`, which cannot be opened, is memory rather than a file that could define a
 * JIT descriptor or stackmaps (core_memory.c says by what). */
int jitmap__core_memory_not_file(jitmap__core *c, size_t i);
/* jitmap_stopped_module_at for a core (core_memory.c) and a live process (live_maps.c; `mem`
 * its memory, jitmap__live_target: the maps know no reader of it). */
int jitmap__core_module_at(jitmap__core *c, uint64_t addr, jitmap_stopped_module_info *out);
int jitmap__live_module_at(jitmap__live *l, const jitmap_target *mem, uint64_t addr,
			   jitmap_stopped_module_info *out);

static inline const char *jitmap__base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* -- A core's files, for the process model (core_symbols.c) -- */

/* Call `fn` for each file of the core that is ELF or cannot be opened (files the caller said
 * not to open, JITMAP_CORE_NO_FILES, are left out): 0, or what `fn` returned. */
int jitmap__core_each_file(jitmap__core *c, jitmap__core_file_fn fn, void *ctx);

/* -- Linux register sets (linux_regs.c) --
 *
 * Linux's general registers of a thread as DWARF-numbered values, for the readers of cores
 * (core.c) and live processes (live.c). */

/* Linux's general registers (`len` bytes at `p`, byte order `order`) as DWARF-numbered
 * values, in pr_reg's order: stores up to `max` (regno[i], value[i]) pairs and returns how
 * many the layout holds within `len` (0 where no layout is known). */
size_t jitmap__linux_gregs(jitmap_arch arch, jitmap_byte_order order, const uint8_t *p,
			   size_t len, uint16_t *regno, uint64_t *value, size_t max);

/* -- The page cache (pagecache.c) --
 *
 * A process's memory read through a pread(2)-like call, by the page, the pages kept while
 * the process is stopped (live.c over /proc/PID/mem; the fuzz
 * target tests/fuzz/fuzz_live.c over a fake one).
 *
 * The read call behaves as pread on /proc/PID/mem does: it returns the bytes read (fewer than
 * asked where a mapping ends), 0 when the process's memory is gone (it exited), or -1 with
 * errno set (EIO: the first byte is not mapped). Offsets are addresses; the kernel takes them
 * as off_t, so an address above INT64_MAX is never asked for.
 */

#define JITMAP__PAGE 4096u
#define JITMAP__PAGE_SLOTS 256u /* 1 MiB, direct-mapped by page number */
/* Reads longer than this go to the read call whole: a stack or an image is read once. */
#define JITMAP__PAGE_MAX_KEPT_READ (4 * JITMAP__PAGE)

typedef long (*jitmap__pread_fn)(void *ctx, void *buf, size_t len, uint64_t addr);

struct jitmap__page {
	uint64_t number; /* address / JITMAP__PAGE */
	bool valid;
	uint8_t bytes[JITMAP__PAGE];
};

struct jitmap__pagecache {
	jitmap__pread_fn pread;
	void *ctx;
	bool keep;
	/* Allocated at first use: a walk of a few stacks touches tens of pages, not 256. */
	struct jitmap__page *slots[JITMAP__PAGE_SLOTS];
	uint64_t calls; /* of pread: for tests */
};

/* Read through `fn` (with `ctx`), keeping pages when `keep`. 0 (a page that cannot be
 * allocated later is read without being kept). */
int jitmap__pagecache_init(struct jitmap__pagecache *c, jitmap__pread_fn fn, void *ctx,
			   bool keep);
/* Forget every page and keep none from now on (the process runs again). */
void jitmap__pagecache_stop_keeping(struct jitmap__pagecache *c);
void jitmap__pagecache_fini(struct jitmap__pagecache *c);
/* `len` bytes at `addr` into `buf`: 0, or -EFAULT with the reason in `why` (the first address
 * that cannot be read and why, "the process exited while being read", or "not a user
 * address" for what off_t cannot name). `buf` may be partly written on failure. */
int jitmap__pagecache_read(struct jitmap__pagecache *c, uint64_t addr, void *buf, size_t len,
			   char *why, size_t why_len);

#endif /* JITMAP_TARGETS_INTERNAL_H */

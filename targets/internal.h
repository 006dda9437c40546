/* internal.h (targets): what the targets layer gives the model above it: ELF helpers and
 * build IDs (elf.c), many reads at once (live.c), a glance at an image (elf.c), a core's insides
 * and files (core.c, core_memory.c, core_symbols.c), a stopped process's threads (threads.c), Linux's register sets (linux_regs.c) and
 * the page cache (pagecache.c). */
#ifndef JITMAP_TARGETS_INTERNAL_H
#define JITMAP_TARGETS_INTERNAL_H

#include "../unwinder/internal.h"
#include "jitmap/core.h"
#include "jitmap/live.h"
#include "jitmap/stopped.h"

/* -- ELF files for other modules (elf.c) -- */

struct Elf;
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

/* -- A stopped process's threads and warnings (threads.c) --
 *
 * What a core (core.c) and a live process (live.c) both hold, kept once: the threads, each
 * with its ID, name, signal, registers (the unwinder's jitmap_frame_regs, and every register
 * of Linux's layout sorted by DWARF number) or why it has none; the one read_reg of a thread
 * target; and the warnings met reading it. Each public thread struct is a view of one
 * jitmap__thread: jitmap_stopped_thread_info (stopped.h), jitmap_core_thread_info (its
 * sorted registers) and jitmap_live_thread_info, kept in step by the calls below. */

#define JITMAP__MAX_GREGS 64    /* registers of Linux's layout kept (x86-64 has 26, AArch64 33,
				 * s390x 34) */
#define JITMAP__MAX_WARNINGS 32

struct jitmap__threads;

struct jitmap__thread {
	jitmap_stopped_thread_info pub;    /* jitmap_stopped_thread's view */
	jitmap_core_thread_info core_view; /* jitmap_core_thread's */
	jitmap_live_thread_info live_view; /* jitmap_live_thread's */
	const struct jitmap__threads *list;
	void *owner;        /* the jitmap_core or jitmap_live: a thread target's memory */
	bool attached;      /* live: seized, PTRACE_DETACH is owed */
	bool stopped;       /* live: its stop was waited for */
	char name[64];
	char why[160];
	jitmap_frame_regs regs;
	size_t nregs;
	jitmap_core_reg *byno; /* nregs, sorted by regno */
};

struct jitmap__threads {
	struct jitmap__thread **v;
	size_t n, cap;
	jitmap_byte_order order;
	bool core;          /* a core's threads: what a missing register's words say */
	char *warnings[JITMAP__MAX_WARNINGS];
	size_t nwarnings;
};

/* An empty list of a core's threads (`core`) or a live process's, in byte order `order`. */
void jitmap__threads_init(struct jitmap__threads *l, bool core, jitmap_byte_order order);
void jitmap__threads_fini(struct jitmap__threads *l);
/* A new thread `tid` of `owner` at the end of the list, with no registers (error 0: set them,
 * or say why there are none), or NULL when out of memory. */
struct jitmap__thread *jitmap__threads_add(struct jitmap__threads *l, pid_t tid, void *owner);
/* Thread `i`, or NULL. */
struct jitmap__thread *jitmap__threads_at(const struct jitmap__threads *l, size_t i);
/* A warning (one sentence, no period); those past JITMAP__MAX_WARNINGS are dropped. */
void jitmap__warn(struct jitmap__threads *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void jitmap__vwarn(struct jitmap__threads *l, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
const char *jitmap__warning(const struct jitmap__threads *l, size_t i);

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
int jitmap__regs_find(const jitmap_core_reg *regs, size_t n, unsigned regno, uint64_t *value);
/* Thread `t`'s DWARF register `regno`: 0, or -ENOENT. A live thread whose registers could not
 * be read has none (live.h); a core's has what its note holds, PC or not (core.h). */
int jitmap__thread_reg(const struct jitmap__thread *t, unsigned regno, uint64_t *value);
/* A thread target's read_reg, its context the jitmap__thread: values of up to 8 bytes in the
 * list's byte order; -ENOENT for a register the thread does not have, -EINVAL for a size. */
int jitmap__thread_read_reg(void *ctx, unsigned regno, void *buf, size_t size, char *why,
			    size_t why_len);

/* The thread list of a core or of a live process (stopped.c's threads). */
struct jitmap__threads *jitmap__core_threads(jitmap_core *c);
struct jitmap__threads *jitmap__live_threads(jitmap_live *l);

/* -- A core's insides (core.c reads it, core_memory.c its bytes, core_symbols.c its files'
 * symbols) -- */

struct Elf;

struct jitmap__core_seg {
	uint64_t vaddr, memsz;
	uint64_t filesz; /* bytes at `offset` in the core */
	uint64_t want;   /* bytes the program header says the core holds (filesz < want: the core
			  * ends before them) */
	uint64_t offset;
	unsigned flags;  /* p_flags: PF_R, PF_W, PF_X */
	size_t index;    /* in the program headers: breaks ties when sorting */
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

struct jitmap_core {
	int fd;            /* the core file, or -1 for a core in memory */
	uint8_t *mem;      /* the core in memory (owned copy) */
	uint64_t size;
	struct Elf *elf;
	unsigned machine;
	jitmap_arch arch;
	jitmap_byte_order order;
	unsigned flags;
	char *sysroot;
	struct jitmap__core_seg *segs; /* sorted by vaddr, not overlapping */
	size_t nsegs;
	jitmap_core_mapping_info *maps; /* sorted by start, not overlapping */
	size_t *map_file;  /* per map: index into files */
	size_t nmaps;
	struct jitmap__core_file *files;
	size_t nfiles;
	struct jitmap__threads threads; /* and the warnings */
	uint64_t *auxv;    /* pairs */
	size_t nauxv;
	int have_file_note, have_auxv;
};


/* `len` bytes at `addr` of the dumped process, from the core and (unless `core_only`) the
 * files it maps: 0, or -EFAULT with why (`why` may be NULL). */
int jitmap__core_read(jitmap_core *c, uint64_t addr, void *out, size_t len, int core_only,
		      char *why, size_t why_len);
/* File `i`, opened at the first call: its descriptor, or < 0 when it cannot be or may not be
 * read (JITMAP_CORE_NO_FILES, another build than the process mapped: see its fields). */
int jitmap__core_file_fd(jitmap_core *c, size_t i);
/* The build ID of file `i`: from the core's copy of its first page, else from the file; its
 * length, or 0. */
size_t jitmap__core_file_build_id(jitmap_core *c, size_t i, uint8_t *out);
/* Whether file `i`, which cannot be opened, is memory rather than a file that could define a
 * JIT descriptor or stackmaps (core_memory.c says by what). */
int jitmap__core_memory_not_file(jitmap_core *c, size_t i);

static inline const char *jitmap__base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* -- A core's files, for the process model (core_symbols.c) -- */

/* One file a core maps (NT_FILE's, or one the library placed without it), opened as `elf`
 * with its load bias (`bias_known` false when no mapping of its first page says where it is
 * loaded); or, for one that cannot be opened, `elf` NULL and `why` (strerror's words). A
 * nonzero return stops the walk. */
typedef int (*jitmap__core_file_fn)(void *ctx, const char *path, struct Elf *elf,
				    bool bias_known, uint64_t bias, const char *why);
/* Call `fn` for each file of the core that is ELF or cannot be opened (files the caller said
 * not to open, JITMAP_CORE_NO_FILES, are left out): 0, or what `fn` returned. */
int jitmap__core_each_file(jitmap_core *c, jitmap__core_file_fn fn, void *ctx);

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

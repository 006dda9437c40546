/* internal.h (targets): what the targets layer gives the model above it, and what its files
 * share: ELF images (elf.c and the files beside it), ELF helpers (elf_files.c) and build IDs
 * (build_id.c), perf maps and jitdump files (perfmap*.c), many reads at once (live.c), a
 * glance at an image (elf.c), a stopped process's threads (threads.c), a core's insides and
 * files (core.c, core_memory.c, core_symbols.c), Linux's register sets (linux_regs.c) and the
 * page cache (pagecache.c). */
#ifndef JITMAP_TARGETS_INTERNAL_H
#define JITMAP_TARGETS_INTERNAL_H

#include <sys/stat.h>

#include "jitmap/perfmap.h"
#include "../unwinder/internal.h"
#include "jitmap/core.h"
#include "jitmap/live.h"
#include "jitmap/stopped.h"

/* -- ELF images (elf.c, elf_symbols.c, elf_reloc.c, elf_with_code.c) --
 *
 * elf.c opens an image and reads its sections; elf_symbols.c its function symbols, and
 * elf_reloc.c the relocations of an object's stackmap section. Only `struct Elf` and
 * `struct Elf_Scn` of libelf are named here: the files that take them include <gelf.h>. */

struct Elf;
struct Elf_Scn;

struct jitmap__symbol {
	uint64_t address, size;
	char *name;
	unsigned flags; /* JITMAP_SYMBOL_* */
};

struct jitmap_image {
	unsigned type, machine, elf_class;
	jitmap_arch arch;
	jitmap_byte_order order;
	jitmap_stackmap *sm;
	uint64_t sm_addr, sm_size;
	int has_sm;
	void *sm_copy; /* SKIP_STACKMAP: the image's bytes of a section not placed in memory */
	size_t sm_copy_len;
	uint64_t bias;
	struct jitmap__symbol *syms; /* function symbols sorted by address */
	size_t num_syms;
	/* What a debugger's JIT reader needs besides the stackmap (jitmap_image_code_range ...). */
	jitmap_image_range *code; /* executable sections placed in memory, in section order */
	size_t num_code;
	char *file_name;          /* the first STT_FILE symbol's name */
	bool debug_info;
	uint64_t eh_addr, eh_size;
	void *debug_frame;        /* a copy of .debug_frame, when no relocation targets it */
	size_t debug_frame_len;
	jitmap_layouts *layouts;  /* .jitmap_deopt, parsed */
	char *layouts_problem;    /* why a .jitmap_deopt was not read */
	struct jitmap__problems warnings; /* what was read around (a relocation jitmap does not
					   * know) */
};

/* libelf is ready (elf_version): 0, or -ENOTSUP ("libelf is too old", in `err`). */
int jitmap__elf_ready(jitmap_error *err);
/* The function symbols (and the first STT_FILE name) of symbol table `symtab` added to img's:
 * 0, or -ENOMEM. jitmap__elf_sort_symbols puts them in address order when all are in. */
int jitmap__elf_load_symbols(jitmap_image *img, struct Elf *elf, struct Elf_Scn *symtab);
void jitmap__elf_sort_symbols(jitmap_image *img);
/* The functions the image's DWARF names (DW_TAG_subprogram with a name and a range) where no
 * function symbol read so far (sorted) is, added to its symbols as JITMAP_SYMBOL_FROM_DWARF,
 * and their ranges outside its placed code to its code ranges; then sort again. A .debug_info
 * with relocations, or DWARF libdwarf cannot read, adds nothing. 0, or -ENOMEM. */
int jitmap__elf_load_dwarf_functions(jitmap_image *img, struct Elf *elf, size_t shstrndx);
/* The address of a symbol (its st_value, st_shndx) in an image of ELF type `type`: in
 * relocatable files values are section-relative. 0, or -ENOENT (no such section). */
int jitmap__elf_symbol_address(struct Elf *elf, unsigned type, uint64_t value, unsigned shndx,
			       uint64_t *addr);
/* Whether the function symbols of symbol table `symtab` hold addresses, not offsets in their
 * sections (elf_symbols.c says when that reading is sure). */
bool jitmap__elf_values_are_addresses(struct Elf *elf, struct Elf_Scn *symtab);
/* The relocations of an object's stackmap section (section `sm_index`) applied to img->sm:
 * 0, or a negative errno with `err` filled; what it reads around goes to img->warnings. */
int jitmap__elf_apply_relocations(jitmap_image *img, struct Elf *elf, size_t sm_index,
				  jitmap_error *err);

/* -- ELF files for other modules (elf_files.c, build_id.c) -- */

/* The value of the first defined data symbol (STT_OBJECT) `name` in the symbol tables of
 * `elf`, in section order: 0, or -ENOENT. */
int jitmap__elf_data_symbol(struct Elf *elf, const char *name, uint64_t *value);
/* The address of the first section `name` placed in memory (sh_addr != 0): 0, or -ENOENT. */
int jitmap__elf_section_address(struct Elf *elf, const char *name, uint64_t *addr);

/* -- Separate debug files (debugfile.c) --
 *
 * Where a stripped file's symbols are (GDB's search: by build ID under each debug directory,
 * by .gnu_debuglink with its CRC, from debuginfod when DEBUGINFOD_URLS is set). */

struct jitmap__debug_lookup {
	/* Debug directories, ':'-separated (GDB's debug-file-directory); NULL: /usr/lib/debug. */
	const char *dirs;
	/* The root the file was read under (a core's sysroot, /proc/PID/root), the directories
	 * tried under it first; NULL or "/": none. */
	const char *root;
	/* The build ID the process mapped (a core's copy of the first page); 0 bytes: the
	 * file's own. A debug file with another is never used. */
	const uint8_t *build_id;
	size_t build_id_len;
};
/* The separate debug file of the ELF `elf` read from `path` (`how` may be NULL): an open
 * descriptor (the caller closes it), its path in `found` (may be NULL); or -ENOENT. */
int jitmap__debug_file_open(struct Elf *elf, const char *path,
			    const struct jitmap__debug_lookup *how, char *found, size_t found_len);
/* The file of build ID `id` (`len` bytes) from debuginfod, when DEBUGINFOD_URLS is set (as
 * GDB and libdwfl fetch an executable or library a core maps and this machine lacks): an open
 * descriptor of a file that holds that build ID (the caller closes it), its path in `found`
 * (may be NULL); or -ENOENT. */
int jitmap__debuginfod_executable(const uint8_t *id, size_t len, char *found, size_t found_len);
/* Data symbol `name` (STT_OBJECT) of the loaded file `elf` (read from `path`), else, when
 * `elf` is stripped (no .symtab), of its separate debug file: 0 and *value, a link-time
 * address as the file's own symbols are (the caller adds the load bias), and the debug
 * file's path in `from` when it was found there ("" when in `elf`; `from` may be NULL); or
 * -ENOENT. */
int jitmap__file_data_symbol(struct Elf *elf, const char *path,
			     const struct jitmap__debug_lookup *how, const char *name,
			     uint64_t *value, char *from, size_t from_len);

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
/* The virtual address of file offset `off` in the ELF file (ET_EXEC, ET_DYN) whose headers
 * are in `buf` (`len` bytes from its start) or at `head` in target `t`: 1 with *vaddr when a
 * PT_LOAD segment's file bytes hold it, else 0 (build_id.c). */
int jitmap__elf_file_vaddr(void *buf, size_t len, uint64_t off, uint64_t *vaddr);
int jitmap__target_file_vaddr(const jitmap_target *t, uint64_t head, uint64_t off,
			      uint64_t *vaddr);

/* -- Perf maps and jitdump files (perfmap.c, perfmap_text.c, perfmap_jitdump.c,
 * perfmap_unwind.c, perfmap_disk.c) --
 *
 * A jitmap_perfmap holds files (`pm`: a perf map or a jitdump), each what it said in order
 * and the index painted from it (perfmap.c); the readers that fill a file share what follows.
 */

#define JITMAP__PM_NONE UINT32_MAX

struct jitmap__pm_entry {
	uint64_t lo, hi;
	uint32_t name;      /* offset in names, or (nlen != 0) in the perf map's text;
			       JITMAP__PM_NONE: the code moved away (names nothing) */
	uint32_t nlen;      /* a perf map's name not NUL-terminated yet: its length in the text */
	uint32_t line;      /* perf map line, jitdump record, from 1 */
	uint32_t dbg, ndbg; /* its source lines: dbg[dbg .. dbg + ndbg), sorted by address */
	uint32_t unw;       /* jitdump: its unwinding information, unw[unw], or JITMAP__PM_NONE */
	uint64_t index;     /* jitdump: code_index */
};

/* The unwinding information of one code load or move: its .eh_frame bytes (in the file's
 * eh, shared by a load and its moves) and where they are read, and the CFI made from them. */
struct jitmap__pm_unwind {
	uint64_t eh_addr;  /* the address the .eh_frame's pc-relative encodings are read at */
	size_t off, len;   /* the bytes: eh[off .. off + len) */
	uint32_t rec;      /* the unwinding-information record, from 1 */
	int rc;            /* 0: not built yet, or built (cfi); else why it cannot be */
	jitmap_cfi *cfi;
};

struct jitmap__pm_dbg_line {
	uint64_t addr;
	uint32_t line;
	uint32_t file; /* offset in names */
};

struct jitmap__pm_seg {
	uint64_t lo, hi;
	uint32_t entry;
};

struct jitmap__pm_file {
	char *path, *source;
	jitmap_perfmap_kind kind;
	char *text;         /* a perf map's text: its names, NUL-terminated in place when looked
			       up (one byte more than text_len is allocated) */
	size_t text_len;
	size_t text_mapped; /* text is an anonymous mapping of this size (else malloc'd) */
	struct stat st;
	bool have_st;
	bool in_core;       /* read from a core's note (jitmap_perfmap_add_core) */
	struct jitmap__pm_entry *e;
	size_t ne, cap_e, e_mapped; /* e_mapped: a perf map's entries, sized once
				       (jitmap__big_alloc) */
	struct jitmap__pm_dbg_line *dbg;
	size_t ndbg, cap_dbg;
	char *names;
	size_t nnames, cap_names;
	struct jitmap__pm_unwind *unw;
	size_t nunw, cap_unw;
	uint8_t *eh;        /* the .eh_frame bytes of its unwinding records */
	size_t neh, cap_eh;
	jitmap_arch arch;   /* a jitdump's (its header's elf_mach) */
	struct jitmap__pm_seg *seg;
	size_t nseg, seg_mapped;
	size_t nranges; /* the code objects it names: lines, or code loads (a move is no new one) */
	bool dirty;
	struct jitmap__problems problems; /* a few (perfmap.c's MAX_LISTED), then one that
					   * counts the rest */
};

struct jitmap_perfmap {
	struct jitmap__pm_file **files; /* in the order first added */
	size_t n, cap;
};


/* The file named `path`, or NULL. */
struct jitmap__pm_file *jitmap__pm_file_named(const jitmap_perfmap *m, const char *path);
/* The file named `origin`, emptied, or a new one added last, of `kind` (its source "perf
 * map ORIGIN" or "jitdump ORIGIN"); NULL when out of memory. */
struct jitmap__pm_file *jitmap__pm_file_for(jitmap_perfmap *m, const char *origin,
					     jitmap_perfmap_kind kind);
/* A problem of file `f` (listed among its first few, else counted). */
void jitmap__pm_problem(struct jitmap__pm_file *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* After a file was read: the problems not listed, counted in one. */
void jitmap__pm_problems_done(struct jitmap__pm_file *f);
/* `s` (n bytes) NUL-terminated in the names: its offset, or JITMAP__PM_NONE when out of room. */
uint32_t jitmap__pm_add_name(struct jitmap__pm_file *f, const char *s, size_t n);
/* An entry [lo, lo + size) named by `name` (or JITMAP__PM_NONE: code moved away), from
 * `line` (line or record, from 1): 0, or -ENOMEM. */
int jitmap__pm_add_entry(struct jitmap__pm_file *f, uint64_t lo, uint64_t size, uint32_t name,
			 unsigned line);
/* Whether [lo, lo + size) can be code: 0; 1 when it names nothing (size 0); -1 when it is
 * larger than any code object or wraps, a problem named by `fmt` (the line or record). */
int jitmap__pm_range_check(struct jitmap__pm_file *f, uint64_t lo, uint64_t size,
			   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The entry that holds `addr` now (the newest file's that names it), and its file: 0,
 * -ENOENT, -ENOMEM. */
int jitmap__pm_entry_at(jitmap_perfmap *m, uint64_t addr, struct jitmap__pm_file **file,
			struct jitmap__pm_entry **entry);

/* Parse a perf map's text, which the file takes (`mapped`: an anonymous mapping of that size,
 * else malloc'd). Returns how many code objects it names, or -ENOMEM (perfmap_text.c). */
int jitmap__pm_perf_map_take(struct jitmap__pm_file *f, char *text, size_t len, size_t mapped);

/* A jitdump's bytes, and the byte order it was written in (perfmap_jitdump.c). */
struct jitmap__pm_reader {
	const uint8_t *p;
	jitmap_byte_order order;
};
static inline uint64_t jitmap__pm_u32(const struct jitmap__pm_reader *r, size_t off)
{
	return jitmap__load(r->p + off, 4, r->order);
}
static inline uint64_t jitmap__pm_u64(const struct jitmap__pm_reader *r, size_t off)
{
	return jitmap__load(r->p + off, 8, r->order);
}
/* Whether `len` bytes start with jitdump's magic, and (`order` may be NULL) in which byte order
 * it was written. */
bool jitmap__pm_jitdump_order(const uint8_t *p, size_t len, jitmap_byte_order *order);

/* An unwinding-information record waiting for the code load it belongs to (perfmap_unwind.c
 * says where its bytes are read): checked, and remembered by its place in the input. */
struct jitmap__pm_pending_unwind {
	size_t off, len; /* the .eh_frame bytes in the input; len 0: none */
	uint32_t rec;    /* the record, from 1; 0: nothing pending */
	size_t at;       /* its offset, for problems */
};
/* Record `rec` at `off` (its body at `body`, its end at `end`), an unwinding-information
 * record: checked and made *pending (one pending already is a problem, and dropped). */
void jitmap__pm_unwinding_info(struct jitmap__pm_file *f, const struct jitmap__pm_reader *r,
			       size_t off, size_t body, size_t end, unsigned rec,
			       struct jitmap__pm_pending_unwind *pending);
/* The pending unwinding information given to entry `e`, a load: its .eh_frame copied, read
 * at perf's place for it. False only when out of memory. */
bool jitmap__pm_take_unwind(struct jitmap__pm_file *f, const struct jitmap__pm_reader *r,
			    struct jitmap__pm_entry *e,
			    const struct jitmap__pm_pending_unwind *pending);
/* A move's entry `to` takes the unwinding information of entry `from` (a load or an earlier
 * move). False only when out of memory. */
bool jitmap__pm_move_unwind(struct jitmap__pm_file *f, uint32_t from, struct jitmap__pm_entry *to);

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
 * model's lazy scans (model/images.c), which open an image only when a PC falls in its code. */
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

/* -- A stopped process's threads (threads.c) --
 *
 * What a core (core.c) and a live process (live.c) both hold, kept once: the threads, each
 * with its ID, name, signal, registers (the unwinder's jitmap_frame_regs, and every register
 * of Linux's layout sorted by DWARF number) or why it has none, and the one read_reg of a
 * thread target. (The warnings met reading either are a jitmap__problems list each.) Each
 * public thread struct is a view of one jitmap__thread: jitmap_stopped_thread_info
 * (stopped.h), jitmap_core_thread_info (its sorted registers) and jitmap_live_thread_info,
 * kept in step by the calls below. */

#define JITMAP__MAX_GREGS 64    /* registers of Linux's layout kept (x86-64 has 26, AArch64 33,
				 * s390x 34) */

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
	/* live, JITMAP_LIVE_BY_THREAD: the stack captured while the thread was stopped, [lo,
	 * hi); the mapping it lies in (its bytes outside the capture are unknown); how long the
	 * thread was stopped */
	uint8_t *stack;
	uint64_t stack_lo, stack_hi, map_lo, map_hi, stopped_ns;
	bool stack_cut;
	jitmap_frame_regs regs;
	size_t nregs;
	jitmap_core_reg *byno; /* nregs, sorted by regno */
};

struct jitmap__threads {
	struct jitmap__thread **v;
	size_t n, cap;
	jitmap_byte_order order;
	bool core;          /* a core's threads: what a missing register's words say */
};

/* The public views of `t` (jitmap_stopped_thread_info, the core's and the live process's)
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

#define JITMAP__CORE_MAX_WARNINGS 32

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
	char *debug_dirs;  /* jitmap_core_opts.debug_dirs, or NULL */
	struct jitmap__core_seg *segs; /* sorted by vaddr, not overlapping */
	size_t nsegs;
	jitmap_core_mapping_info *maps; /* sorted by start, not overlapping */
	size_t *map_file;  /* per map: index into files */
	size_t nmaps;
	struct jitmap__core_file *files;
	size_t nfiles;
	struct jitmap__threads threads;
	struct jitmap__problems warnings; /* up to JITMAP__CORE_MAX_WARNINGS */
	uint64_t *auxv;    /* pairs */
	size_t nauxv;
	int have_file_note, have_auxv;
	char name[17];     /* the process's, NT_PRPSINFO's pr_fname; "" when none was read */
	const char *compression; /* what the file was decompressed from, or NULL */
	jitmap_core_jit_file *jit_files; /* jitmap-core-handler's notes (core_jitfiles.c) */
	size_t njit_files;
	/* A small core's note (core_jitfiles.c): the ranges it left out, sorted by start. */
	bool small;
	uint64_t small_stack_bytes, small_kept_bytes, small_left_bytes;
	struct jitmap__core_left *left;
	size_t nleft;
};

/* -- JIT files carried in a core (core_jitfiles.c) -- */

/* The perf map and jitdump files of live process `pid`, found where
 * jitmap_perfmap_add_process finds them, each handed to `each` by the path this process reads
 * it at: how many were found, or the first negative answer of `each` (perfmap_disk.c). */
int jitmap__perfmap_process_paths(int pid, int (*each)(void *ctx, const char *path), void *ctx);

/* A "JITMAP" note of `type` whose descriptor (`len` bytes at `desc`, at offset `at` of the
 * core) is read: a file kept (its bytes are not copied: they stay the note's), or a problem
 * the handler wrote as a warning. Returns 0 (a malformed note is a warning), or -ENOMEM. */
int jitmap__core_jit_note(jitmap_core *c, uint32_t type, const uint8_t *desc, size_t len,
			  uint64_t at);
/* The range a small core left out that holds `addr`, or NULL; the order of such ranges
 * (by start), for qsort. */
const struct jitmap__core_left *jitmap__core_left_at(const jitmap_core *c, uint64_t addr);
int jitmap__core_left_cmp(const void *a, const void *b);


/* -- The dynamic linker's list (core.c) -- */

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

/* -- Small cores (core_small.c) -- */

/* A PT_LOAD segment of the full core, as its program header says. */
struct jitmap__small_seg {
	uint64_t vaddr, memsz, filesz, offset;
	unsigned flags;
};

/* Memory a small core keeps: [lo, lo + ...) in whole pages, why (JITMAP_CORE_KEPT_* bits). */
struct jitmap__small_range {
	uint64_t lo, hi;
	unsigned why;
};

/* The ranges a small core keeps of the process `core` describes (its threads, mappings and
 * auxiliary vector; `core` may hold its notes only), its memory read through `mem`, its
 * segments `segs` (sorted by vaddr): sorted, merged, into *out (the caller frees it), and how
 * many JIT descriptors its files define. 0, or -ENOMEM, -ENOTSUP (no libelf). A range whose
 * bytes cannot be read is left out, not failed. */
int jitmap__small_plan(jitmap_core *core, const jitmap_target *mem,
		       const struct jitmap__small_seg *segs, size_t nsegs, uint64_t stack_bytes,
		       struct jitmap__small_range **out, size_t *nout, size_t *descriptors);
/* Whether the file `core` maps at `page` (a page's address) holds the bytes `mem` reads
 * there: 1, 0 (no file, another file's bytes, or one of the two cannot be read), -ENOMEM.
 * Memory a small core leaves out that its file holds is read from the file, as a kernel
 * core's undumped code; the rest is the core's to say it lacks. */
int jitmap__small_file_holds(jitmap_core *core, const jitmap_target *mem, uint64_t page);

/* Memory left out of a small core, as its note lists it: a growing array. */
struct jitmap__small_left {
	struct jitmap__core_left *v;
	size_t n, cap;
};
/* [lo, hi) of a segment with p_flags `flags` added (nothing when empty; joined to the last
 * range when it goes on from it alike), `in_file` when its mapped file holds those bytes as
 * the process had them: 0, or -ENOMEM. */
int jitmap__small_left_add(struct jitmap__small_left *l, uint64_t lo, uint64_t hi,
			   unsigned flags, bool in_file);
/* Whether no mapped file may stand for left-out memory of a segment with these p_flags:
 * all but plain code (read-only, executable: PF_X 1, PF_W 2), which readers take from the
 * file, as from a kernel core that did not dump it. */
static inline bool jitmap__small_file_refused(unsigned flags)
{
	return (flags & 3u) != 1u;
}
/* `l` with the pages its mapped files hold as `mem` reads them (jitmap__small_file_holds)
 * marked in_file, at most 2^18 pages compared; those bytes added to *from_files. 0, or
 * -ENOMEM. */
int jitmap__small_refine_left(jitmap_core *core, const jitmap_target *mem,
			      struct jitmap__small_left *l, uint64_t *from_files);
/* A note segment's bytes (`len` at `b`, byte order `order`) with NT_FILE less the memory of
 * `l` no file may stand for: a new copy (malloc'd, *out_len), or NULL to keep them. */
uint8_t *jitmap__small_notes_less(jitmap_byte_order order, const struct jitmap__small_left *l,
				  const uint8_t *b, size_t len, size_t *out_len);


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
int jitmap__core_read(jitmap_core *c, uint64_t addr, void *out, size_t len, int core_only,
		      char *why, size_t why_len);
/* The mapping (NT_FILE's, or a placed file's) holding `addr`: its index, or SIZE_MAX. */
size_t jitmap__core_find_map(const jitmap_core *c, uint64_t addr);
/* File `i`, opened at the first call: its descriptor, or < 0 when it cannot be or may not be
 * read (JITMAP_CORE_NO_FILES, another build than the process mapped: see its fields). */
int jitmap__core_file_fd(jitmap_core *c, size_t i);
/* The build ID of file `i`: from the core's copy of its first page, else from the file; its
 * length, or 0. */
size_t jitmap__core_file_build_id(jitmap_core *c, size_t i, uint8_t *out);
/* Whether file `i`, which cannot be opened, is memory rather than a file that could define a
 * JIT descriptor or stackmaps (core_memory.c says by what). */
int jitmap__core_memory_not_file(jitmap_core *c, size_t i);
/* jitmap_stopped_module_at for a core (core_memory.c) and a live process (live_maps.c; `mem`
 * its memory, jitmap_live_target: the maps know no reader of it). */
int jitmap__core_module_at(jitmap_core *c, uint64_t addr, jitmap_stopped_module_info *out);
int jitmap__live_module_at(jitmap_live *l, const jitmap_target *mem, uint64_t addr,
			   jitmap_stopped_module_info *out);

static inline const char *jitmap__base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* -- A core's files, for the process model (core_symbols.c) -- */

/* One file a core maps (NT_FILE's, or one the library placed without it), opened as `elf`
 * with its load bias (`bias_known` false when no mapping of its first page says where it is
 * loaded) and where its separate debug file is looked for (`debug`: the core's sysroot, debug
 * directories and the build ID the core holds for it); or, for one that cannot be opened,
 * `elf` NULL and `why` (strerror's words). A nonzero return stops the walk. */
typedef int (*jitmap__core_file_fn)(void *ctx, const char *path, struct Elf *elf,
				    bool bias_known, uint64_t bias, const char *why,
				    const struct jitmap__debug_lookup *debug);
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

/* internal.h (targets): what the targets layer gives the model above it, and what its files
 * share: ELF images (elf.c and the files beside it), ELF helpers (elf_files.c) and build IDs
 * (build_id.c), many reads at once (live.c), a glance at an image (elf.c), a core's files
 * (core.c), Linux's register sets (linux_regs.c) and the page cache (pagecache.c). */
#ifndef JITMAP_TARGETS_INTERNAL_H
#define JITMAP_TARGETS_INTERNAL_H

#include "../unwinder/internal.h"

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

/* -- A core's files, for the process model (core.c) -- */

struct jitmap_core;
/* One file a core maps (NT_FILE's, or one the library placed without it), opened as `elf`
 * with its load bias (`bias_known` false when no mapping of its first page says where it is
 * loaded); or, for one that cannot be opened, `elf` NULL and `why` (strerror's words). A
 * nonzero return stops the walk. */
typedef int (*jitmap__core_file_fn)(void *ctx, const char *path, struct Elf *elf,
				    bool bias_known, uint64_t bias, const char *why);
/* Call `fn` for each file of the core that is ELF or cannot be opened (files the caller said
 * not to open, JITMAP_CORE_NO_FILES, are left out): 0, or what `fn` returned. */
int jitmap__core_each_file(struct jitmap_core *c, jitmap__core_file_fn fn, void *ctx);

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

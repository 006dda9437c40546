/* internal.h (files): what the files layer gives the layers above it, and what its files
 * share: ELF images (elf.c and the files beside it), ELF helpers (elf_files.c) and build IDs
 * (build_id.c), separate debug files (debugfile.c) and a process's root (proc_root.c), perf
 * maps and jitdump files (perfmap*.c), and a glance at an image (elf.c). What is read from a
 * file or its bytes, wherever they come from; nothing here knows a stopped process. */
#ifndef JITMAP_FILES_INTERNAL_H
#define JITMAP_FILES_INTERNAL_H

#include <sys/stat.h>

#include "jitmap/perfmap.h"
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

#endif /* JITMAP_FILES_INTERNAL_H */

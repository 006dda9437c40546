/* internal.h (writers): what the writers share: the plan of a small core (core_small.c),
 * which the core handler's stream (core_stream.c) writes. Writers read a stopped process
 * through the targets layer and write files; nothing below them writes. */
#ifndef JITMAP_WRITERS_INTERNAL_H
#define JITMAP_WRITERS_INTERNAL_H

#include "../targets/internal.h"

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
int jitmap__small_plan(jitmap__core *core, const jitmap_target *mem,
		       const struct jitmap__small_seg *segs, size_t nsegs, uint64_t stack_bytes,
		       struct jitmap__small_range **out, size_t *nout, size_t *descriptors);
/* Whether the file `core` maps at `page` (a page's address) holds the bytes `mem` reads
 * there: 1, 0 (no file, another file's bytes, or one of the two cannot be read), -ENOMEM.
 * Memory a small core leaves out that its file holds is read from the file, as a kernel
 * core's undumped code; the rest is the core's to say it lacks. */
int jitmap__small_file_holds(jitmap__core *core, const jitmap_target *mem, uint64_t page);

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
/* `l` with the pages its mapped files hold as `mem` reads them (jitmap__small_file_holds)
 * marked in_file, at most 2^18 pages compared; those bytes added to *from_files. 0, or
 * -ENOMEM. */
int jitmap__small_refine_left(jitmap__core *core, const jitmap_target *mem,
			      struct jitmap__small_left *l, uint64_t *from_files);
/* A note segment's bytes (`len` at `b`, byte order `order`) with NT_FILE less the memory of
 * `l` no file may stand for: a new copy (malloc'd, *out_len), or NULL to keep them. */
uint8_t *jitmap__small_notes_less(jitmap_byte_order order, const struct jitmap__small_left *l,
				  const uint8_t *b, size_t len, size_t *out_len);

/* -- The core handler's stream (stream.c, core_stream.c, core_stream_small.c) --
 *
 * A core read from one descriptor and written to another with jitmap's notes added;
 * stream.c holds its bytes and jitmap's notes, core_stream.c reads its head and writes the full
 * core, core_stream_small.c a small one. */

#define JITMAP__STREAM_MAX_HEAD (UINT64_C(256) << 20)   /* headers and notes held in memory */
#define JITMAP__STREAM_MAX_BYTES (UINT64_C(1) << 30)    /* JIT files' bytes, by default */
#define JITMAP__STREAM_MAX_FILES 256
#define JITMAP__STREAM_EHDR 64
#define JITMAP__STREAM_PHDR 56
#define JITMAP__STREAM_PAGE 4096
#define JITMAP__STREAM_FILE_HEADER 24
#define JITMAP__STREAM_NAME_SZ 8 /* "JITMAP\0" padded to 4 */

struct jitmap__jit_src {
	char *path;      /* as this process reads it */
	const char *as;  /* as the crashed process named it (path less /proc/PID/root) */
	int fd;
	unsigned kind;
	uint64_t size;   /* the bytes added */
	bool cut;
};

struct jitmap__stream {
	int in, out;
	uint64_t in_off, out_off; /* bytes read and written */
	jitmap_byte_order order;
	char *note;
	size_t note_len;
	jitmap_error *err;
	struct jitmap__jit_src *src;
	size_t nsrc;
	char problems[4][256]; /* files found and left out, as notes */
	size_t nproblems;
	const char *root;      /* "/proc/PID/root" when the paths go through it, else "" */
	uint64_t budget;
	unsigned status;       /* JITMAP_CORE_ADDED_* (core.h): what the note says, as bits */
};


struct jitmap__head {
	uint8_t *bytes; /* [0, len) of the input */
	size_t len;
	uint64_t phnum, data; /* the program headers, and where the segments' bytes begin */
	uint64_t shoff, shnum; /* section headers (GDB's gcore writes them), after the data */
};

/* A sentence added to the caller's note ("; " between). */
void jitmap__stream_say(struct jitmap__stream *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A file left out: said to the caller and, as a JITMAP_CORE_NOTE_PROBLEM note, in the core. */
void jitmap__stream_problem(struct jitmap__stream *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* jitmap__perfmap_process_paths's `each`: the file at `path` (a perf map or a jitdump of the
 * crashed process) taken into the stream's sources, or said why not. */
int jitmap__stream_take_file(void *ctx, const char *path);
/* Up to `len` bytes from the input: how many (fewer at its end), or a negative errno. */
ssize_t jitmap__stream_read_in(struct jitmap__stream *s, void *buf, size_t len);
/* `len` bytes, or `n` zeros, to the output: 0 or a negative errno. */
int jitmap__stream_write_out(struct jitmap__stream *s, const void *buf, size_t len);
int jitmap__stream_write_zeros(struct jitmap__stream *s, uint64_t n);
/* The input's next `limit` bytes (UINT64_MAX: the rest), as they come. */
int jitmap__stream_copy_on(struct jitmap__stream *s, uint64_t limit);
uint64_t jitmap__stream_align(uint64_t n, uint64_t to);
/* jitmap's notes: their size, one note's header, all of them written. */
uint64_t jitmap__stream_notes_size(const struct jitmap__stream *s);
int jitmap__stream_note_header(struct jitmap__stream *s, uint64_t descsz, uint32_t type);
int jitmap__stream_write_notes(struct jitmap__stream *s);
/* The small core, written whole (0), or a negative errno; with `cant` set, nothing was
 * written and the caller passes the core on as it would. */
int jitmap__stream_write_small(struct jitmap__stream *s, struct jitmap__head *h, int pid,
			       const jitmap_core_add_opts *opts, char *cant, size_t cant_len);

/* -- Minidumps (minidump.c writes the file, minidump_memory.c plans its memory and the
 * process's areas) -- */

#define JITMAP__MD_MAX_REGION (UINT64_C(64) << 20) /* Breakpad's cap on a memory region */
#define JITMAP__MD_MAX_REGIONS 4096                /* and on the MemoryList's count */

/* A memory region carried: [lo, lo + len), its bytes. */
struct jitmap__md_region {
	uint64_t lo;
	uint8_t *bytes;
	uint32_t len;
};

/* The regions carried, sorted by lo and not overlapping (Breakpad rejects a MemoryList whose
 * regions overlap), and the bytes they hold against `budget`. */
struct jitmap__md_mem {
	jitmap_stopped *s;
	struct jitmap__md_region *v;
	size_t n, cap;
	uint64_t carried, budget;
	int rc; /* -ENOMEM once out of memory */
};

/* Thread `i`'s stack from `sp` rounded down to its page (or up to where its capture begins),
 * at most `bytes`, within what can be read, clipped by regions carried already: the region
 * holding sp afterwards (its lo in *lo), or false when none could be read. */
bool jitmap__md_stack(struct jitmap__md_mem *m, size_t i, uint64_t sp, uint64_t bytes,
		      uint64_t *lo);
/* [lo, hi) carried where it can be read and no region holds it already. */
void jitmap__md_range(struct jitmap__md_mem *m, uint64_t lo, uint64_t hi);
/* The region starting at `lo`, or NULL. */
const struct jitmap__md_region *jitmap__md_region_at(const struct jitmap__md_mem *m,
						      uint64_t lo);
void jitmap__md_mem_free(struct jitmap__md_mem *m);

/* An area of the process's address space, as /proc/PID/maps lists it. */
struct jitmap__md_area {
	uint64_t lo, hi;
	unsigned flags;     /* PF_R 4, PF_W 2, PF_X 1 */
	uint64_t offset;    /* into the file */
	const char *name;   /* the file's path, "[heap]" ...; NULL: anonymous */
	bool file, image;   /* a file is mapped there; an ELF image (a module) */
};
/* The areas of `s`, sorted, at most `max` (*out malloc'd, the caller frees it): 0, -ENOMEM. */
int jitmap__md_areas(jitmap_stopped *s, size_t max, struct jitmap__md_area **out, size_t *n);
/* Windows' protection (PAGE_*) of p_flags-style bits, for MemoryInfoList. */
uint32_t jitmap__md_protection(unsigned flags);
/* The areas as /proc/PID/maps' text (device and inode unknown: 00:00 0), malloc'd, its
 * length in *len; NULL when out of memory. */
char *jitmap__md_maps_text(const struct jitmap__md_area *a, size_t n, size_t *len);

/* A module a minidump lists: [base, base + size), its name, its identifier (a build ID). */
struct jitmap__md_module {
	uint64_t base, size;
	const char *path;   /* as the process named it */
	size_t cut;         /* bytes of it that are the name: a core's " (deleted)" left off */
	uint8_t id[64];
	size_t id_len;      /* 0: none (no CodeView record) */
};

struct jitmap__md_modules {
	struct jitmap__md_module *v;
	size_t n, cap;
};

/* The modules of `s` (minidump_modules.c): its ELF files, the executable first, then the
 * caller's JIT modules (`o`'s) that overlap none before them, at most 2048 in all; those left
 * out counted in *dropped. 0, or -ENOMEM. */
struct jitmap_minidump_opts;
int jitmap__md_modules(jitmap_stopped *s, const struct jitmap_minidump_opts *o,
		       struct jitmap__md_modules *l, size_t *dropped);

#endif /* JITMAP_WRITERS_INTERNAL_H */

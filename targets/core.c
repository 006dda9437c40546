/* core.c: Linux core files (see include/jitmap/core.h).
 *
 * Layouts read here, all in the core's byte order (e_ident[EI_DATA]):
 *   - ET_CORE program headers: PT_LOAD (vaddr, memsz, and filesz bytes at p_offset in the
 *     core) and PT_NOTE (notes named "CORE");
 *   - NT_PRSTATUS (struct elf_prstatus of 64-bit Linux, the same on every architecture up to
 *     the registers: pr_cursig, a short, at 12; pr_pid, an int, at 32; pr_reg at 112);
 *   - NT_AUXV: (type, value) pairs of 8 bytes each;
 *   - NT_FILE (fs/binfmt_elf.c, fill_files_note): count, page_size, then count x {start, end,
 *     file_ofs in pages}, then count NUL-terminated paths;
 *   - NT_GNU_BUILD_ID notes ("GNU", 3) in the PT_NOTE of a mapped file's first page, which
 *     Linux dumps for ELF files (coredump_filter bit 4), and in the files themselves.
 * Every ELF structure goes through libelf (headers, program headers, notes); the note
 * descriptors are read field by field with every count checked against the descriptor size.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/search.h"
#include "internal.h"
#include "jitmap/core.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

#define MAX_MAPS 1000000    /* NT_FILE entries */
#define MAX_AUXV 4096       /* auxv pairs kept */
#define MAX_WARNINGS 32
#define MAX_BUILD_ID JITMAP__MAX_BUILD_ID
#define PRSTATUS_REG 112    /* offset of pr_reg in the 64-bit elf_prstatus */
#define FIRST_PAGE 4096     /* bytes of a mapping's first page searched for a build ID */

struct seg {
	uint64_t vaddr, memsz;
	uint64_t filesz; /* bytes at `offset` in the core */
	uint64_t want;   /* bytes the program header says the core holds (filesz < want: the core
			  * ends before them) */
	uint64_t offset;
	unsigned flags;  /* p_flags: PF_R, PF_W, PF_X */
	size_t index;    /* in the program headers: breaks ties when sorting */
};

struct file {
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

struct thread {
	jitmap_core_thread_info pub; /* first: jitmap_core_thread returns &pub */
	jitmap_core *core;      /* for jitmap_core_thread_target */
	jitmap_core_reg *regs;
};

struct jitmap_core {
	int fd;            /* the core file, or -1 for a core in memory */
	uint8_t *mem;      /* the core in memory (owned copy) */
	uint64_t size;
	Elf *elf;
	unsigned machine;
	jitmap_arch arch;
	jitmap_byte_order order;
	unsigned flags;
	char *sysroot;
	struct seg *segs;  /* sorted by vaddr, not overlapping */
	size_t nsegs;
	jitmap_core_mapping_info *maps; /* sorted by start, not overlapping */
	size_t *map_file;  /* per map: index into files */
	size_t nmaps;
	struct file *files;
	size_t nfiles;
	struct thread *threads;
	size_t nthreads;
	uint64_t *auxv;    /* pairs */
	size_t nauxv;
	int have_file_note, have_auxv;
	struct jitmap__problems warnings; /* up to MAX_WARNINGS */
};

static void warn(jitmap_core *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warn(jitmap_core *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	jitmap__vproblem(&c->warnings, MAX_WARNINGS, fmt, ap);
	va_end(ap);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Bytes [off, off + n) of the core file; 0 or -EIO. */
static int core_bytes(const jitmap_core *c, uint64_t off, void *buf, size_t n)
{
	if (off > c->size || n > c->size - off)
		return -EIO;
	if (c->mem) {
		memcpy(buf, c->mem + off, n);
		return 0;
	}
	uint8_t *b = buf;
	while (n) {
		ssize_t got = pread(c->fd, b, n, (off_t)off);
		if (got <= 0)
			return -EIO;
		b += got;
		off += (uint64_t)got;
		n -= (size_t)got;
	}
	return 0;
}

/* -- Registers: NT_PRSTATUS's pr_reg, laid out as Linux does (linux_regs.c) -- */

static int cmp_reg(const void *a, const void *b)
{
	const jitmap_core_reg *x = a, *y = b;
	return (x->regno > y->regno) - (x->regno < y->regno);
}

/* Fill `t`'s registers from pr_reg (`len` bytes at `p`); 0 or -ENOMEM. Registers that do not
 * fit in `len` are left out. */
static int read_regs(jitmap_core *c, struct thread *t, const uint8_t *p, size_t len)
{
	enum { MAX = 64 };
	jitmap_core_reg tmp[MAX];
	uint16_t regno[MAX];
	uint64_t value[MAX];
	size_t n = jitmap__linux_gregs(jitmap_arch_from_elf_machine(c->machine), c->order, p, len,
				       regno, value, MAX);
	if (n > MAX)
		n = MAX;
	for (size_t i = 0; i < n; i++)
		tmp[i] = (jitmap_core_reg){regno[i], value[i]};
	if (!n)
		return 0;
	qsort(tmp, n, sizeof(tmp[0]), cmp_reg);
	t->regs = malloc(n * sizeof(*t->regs));
	if (!t->regs)
		return -ENOMEM;
	memcpy(t->regs, tmp, n * sizeof(*t->regs));
	t->pub.regs = t->regs;
	t->pub.num_regs = n;
	return 0;
}

static int add_thread(jitmap_core *c, const uint8_t *d, size_t len, uint64_t at)
{
	if (len < PRSTATUS_REG) {
		warn(c, "NT_PRSTATUS note at offset 0x%" PRIx64 " of %zu bytes is too short: thread "
		     "left out", at, len);
		return 0;
	}
	struct thread *t = realloc(c->threads, (c->nthreads + 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	c->threads = t;
	t = &c->threads[c->nthreads++];
	memset(t, 0, sizeof(*t));
	t->core = c;
	t->pub.tid = (uint32_t)jitmap__load(d + 32, 4, c->order);
	t->pub.signal = (int16_t)jitmap__load(d + 12, 2, c->order);
	return read_regs(c, t, d + PRSTATUS_REG, len - PRSTATUS_REG);
}

/* -- NT_AUXV -- */

static int read_auxv(jitmap_core *c, const uint8_t *d, size_t len)
{
	size_t n = len / 16;
	if (n > MAX_AUXV) {
		warn(c, "NT_AUXV holds %zu entries: only the first %d are read", n, MAX_AUXV);
		n = MAX_AUXV;
	}
	c->auxv = calloc(n ? 2 * n : 1, sizeof(*c->auxv));
	if (!c->auxv)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		c->auxv[2 * i] = jitmap__load(d + 16 * i, 8, c->order);
		c->auxv[2 * i + 1] = jitmap__load(d + 16 * i + 8, 8, c->order);
		if (c->auxv[2 * i] == 0) { /* AT_NULL ends it */
			n = i;
			break;
		}
	}
	c->nauxv = n;
	c->have_auxv = 1;
	return 0;
}

/* -- NT_FILE -- */

static size_t file_index(jitmap_core *c, const char *path)
{
	for (size_t i = 0; i < c->nfiles; i++)
		if (!strcmp(c->files[i].core_path, path))
			return i;
	struct file *f = realloc(c->files, (c->nfiles + 1) * sizeof(*f));
	if (!f)
		return SIZE_MAX;
	c->files = f;
	char *copy = strdup(path), *read_path = NULL;
	if (copy && c->sysroot && path[0] == '/') {
		if (asprintf(&read_path, "%s%s", c->sysroot, path) < 0)
			read_path = NULL;
	} else if (copy) {
		read_path = strdup(path);
	}
	if (!copy || !read_path) {
		free(copy);
		free(read_path);
		return SIZE_MAX;
	}
	c->files[c->nfiles] = (struct file){.path = read_path, .core_path = copy, .fd = -1};
	return c->nfiles++;
}

/* Returns 0 (a malformed note is a warning), or -ENOMEM. */
static int read_nt_file(jitmap_core *c, const uint8_t *d, size_t len, uint64_t at)
{
	if (len < 16) {
		warn(c, "NT_FILE note at offset 0x%" PRIx64 " of %zu bytes is too short: no mapped "
		     "files", at, len);
		return 0;
	}
	const uint64_t count = jitmap__load(d, 8, c->order), page = jitmap__load(d + 8, 8, c->order);
	if (count > MAX_MAPS || count * 24 > len - 16) {
		warn(c, "NT_FILE note at offset 0x%" PRIx64 " claims %" PRIu64 " mappings in %zu "
		     "bytes: no mapped files", at, count, len);
		return 0;
	}
	const char *names = (const char *)d + 16 + count * 24, *end = (const char *)d + len;
	c->maps = calloc(count ? count : 1, sizeof(*c->maps));
	c->map_file = calloc(count ? count : 1, sizeof(*c->map_file));
	if (!c->maps || !c->map_file)
		return -ENOMEM;
	c->have_file_note = 1;
	size_t bad = 0;
	for (uint64_t i = 0; i < count; i++) {
		const uint8_t *e = d + 16 + i * 24;
		const char *nul = memchr(names, 0, (size_t)(end - names));
		if (!nul) {
			warn(c, "NT_FILE note at offset 0x%" PRIx64 ": path %" PRIu64 " of %" PRIu64
			     " is not terminated: the rest are left out", at, i, count);
			break;
		}
		const uint64_t start = jitmap__load(e, 8, c->order), stop = jitmap__load(e + 8, 8, c->order);
		const uint64_t pages = jitmap__load(e + 16, 8, c->order);
		if (stop > start && (!page || pages <= UINT64_MAX / page)) {
			size_t fi = file_index(c, names);
			if (fi == SIZE_MAX)
				return -ENOMEM;
			c->maps[c->nmaps] = (jitmap_core_mapping_info){start, stop, pages * page, NULL, NULL};
			c->map_file[c->nmaps++] = fi;
		} else {
			bad++;
		}
		names = nul + 1;
	}
	if (bad)
		warn(c, "NT_FILE note at offset 0x%" PRIx64 ": %zu mapping%s with an empty range or "
		     "an offset past 2^64 left out", at, bad, bad == 1 ? "" : "s");
	return 0;
}

/* -- Notes -- */

static int read_notes(jitmap_core *c, uint64_t offset, uint64_t filesz)
{
	if (offset > c->size) {
		warn(c, "the core is truncated: its notes at offset 0x%" PRIx64 " are missing", offset);
		return 0;
	}
	if (filesz > c->size - offset) {
		warn(c, "the core is truncated: %" PRIu64 " of the %" PRIu64 " bytes of notes at "
		     "offset 0x%" PRIx64 " are there", c->size - offset, filesz, offset);
		filesz = c->size - offset;
	}
	if (!filesz)
		return 0;
	Elf_Data *d = elf_getdata_rawchunk(c->elf, (int64_t)offset, filesz, ELF_T_NHDR);
	if (!d || !d->d_buf) {
		warn(c, "the notes at offset 0x%" PRIx64 " cannot be read: %s", offset, elf_errmsg(-1));
		return 0;
	}
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;
	while (off < d->d_size && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		/* libelf checks these; we do not rely on it. */
		if (name_off > d->d_size || nh.n_namesz > d->d_size - name_off ||
		    desc_off > d->d_size || nh.n_descsz > d->d_size - desc_off || next <= off) {
			warn(c, "a note at offset 0x%" PRIx64 " runs past its segment", offset + off);
			break;
		}
		const uint64_t at = offset + desc_off;
		off = next;
		if (nh.n_namesz != 5 || memcmp((const char *)d->d_buf + name_off, "CORE", 5))
			continue;
		const uint8_t *desc = (const uint8_t *)d->d_buf + desc_off;
		int rc = 0;
		switch (nh.n_type) {
		case NT_PRSTATUS:
			rc = add_thread(c, desc, nh.n_descsz, at);
			break;
		case NT_AUXV:
			if (!c->have_auxv)
				rc = read_auxv(c, desc, nh.n_descsz);
			break;
		case NT_FILE:
			if (!c->have_file_note)
				rc = read_nt_file(c, desc, nh.n_descsz, at);
			break;
		default:
			break;
		}
		if (rc)
			return rc;
	}
	return 0;
}

/* -- Sorting and clipping -- */

static int cmp_seg(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;
	if (x->vaddr != y->vaddr)
		return (x->vaddr > y->vaddr) - (x->vaddr < y->vaddr);
	return (x->index > y->index) - (x->index < y->index);
}

static void sort_segs(jitmap_core *c)
{
	qsort(c->segs, c->nsegs, sizeof(*c->segs), cmp_seg);
	size_t n = 0, overlaps = 0;
	uint64_t end = 0;
	for (size_t i = 0; i < c->nsegs; i++) {
		struct seg s = c->segs[i];
		if (n && s.vaddr < end) {
			const uint64_t cut = end - s.vaddr;
			overlaps++;
			if (cut >= s.memsz)
				continue;
			s.vaddr += cut;
			s.memsz -= cut;
			s.offset += cut < s.filesz ? cut : s.filesz;
			s.filesz = cut < s.filesz ? s.filesz - cut : 0;
			s.want = cut < s.want ? s.want - cut : 0;
		}
		c->segs[n++] = s;
		end = s.vaddr + s.memsz;
	}
	c->nsegs = n;
	if (overlaps)
		warn(c, "%zu PT_LOAD segment%s overlap%s an earlier one: the lower address's bytes "
		     "are used", overlaps, overlaps == 1 ? "" : "s", overlaps == 1 ? "s" : "");
}

struct map_sort {
	jitmap_core_mapping_info m;
	size_t file, index;
};

static int cmp_map(const void *a, const void *b)
{
	const struct map_sort *x = a, *y = b;
	if (x->m.start != y->m.start)
		return (x->m.start > y->m.start) - (x->m.start < y->m.start);
	return (x->index > y->index) - (x->index < y->index);
}

static int sort_maps(jitmap_core *c)
{
	if (!c->nmaps)
		return 0;
	struct map_sort *tmp = malloc(c->nmaps * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (size_t i = 0; i < c->nmaps; i++)
		tmp[i] = (struct map_sort){c->maps[i], c->map_file[i], i};
	qsort(tmp, c->nmaps, sizeof(*tmp), cmp_map);
	size_t n = 0, overlaps = 0;
	uint64_t end = 0;
	for (size_t i = 0; i < c->nmaps; i++) {
		struct map_sort s = tmp[i];
		if (n && s.m.start < end) {
			overlaps++;
			if (s.m.end <= end || s.m.offset > UINT64_MAX - (end - s.m.start))
				continue;
			s.m.offset += end - s.m.start;
			s.m.start = end;
		}
		c->maps[n] = s.m;
		c->map_file[n++] = s.file;
		end = s.m.end;
	}
	c->nmaps = n;
	free(tmp);
	if (overlaps)
		warn(c, "%zu NT_FILE mapping%s overlap%s an earlier one", overlaps,
		     overlaps == 1 ? "" : "s", overlaps == 1 ? "s" : "");
	return 0;
}

/* Point every mapping at its file's strings (after the files array stopped moving). */
static void link_maps(jitmap_core *c)
{
	for (size_t i = 0; i < c->nmaps; i++) {
		c->maps[i].path = c->files[c->map_file[i]].path;
		c->maps[i].core_path = c->files[c->map_file[i]].core_path;
	}
}

/* -- Memory -- */

/* The segment holding `addr`, or NULL; `*next` is the first segment above it (or NULL). */
static const struct seg *find_seg(const jitmap_core *c, uint64_t addr, const struct seg **next)
{
	const size_t lo = JITMAP_UPPER_BOUND(c->segs, c->nsegs, vaddr, addr);
	*next = lo < c->nsegs ? &c->segs[lo] : NULL;
	if (!lo)
		return NULL;
	const struct seg *s = &c->segs[lo - 1];
	return addr - s->vaddr < s->memsz ? s : NULL;
}

static size_t find_map(const jitmap_core *c, uint64_t addr)
{
	const size_t lo = JITMAP_UPPER_BOUND(c->maps, c->nmaps, start, addr);
	if (!lo || addr >= c->maps[lo - 1].end)
		return SIZE_MAX;
	return lo - 1;
}

static size_t mapped_build_id(jitmap_core *c, uint64_t start, uint64_t len, uint8_t *out);

/* Whether the file open at `fd` for file `i` is another build than the one the process
 * mapped: the build ID in the core's copy of its first page (the kernel dumps the first page
 * of every ELF mapping, gcore every mapping but unmodified code) differs from the file's, or
 * the file has none. A package upgraded since the crash, a core read on another machine, a
 * path that now names another file: its code, CFI and symbols are not the process's, and
 * nothing is read from it (GDB warns and reads it all the same). A core that holds no build
 * ID for the file cannot tell: the file is used. */
/* The build ID of file `i` in the core's copy of its first page, or 0. */
static size_t first_page_build_id(jitmap_core *c, size_t i, uint8_t *out)
{
	size_t n = 0;
	for (size_t m = 0; m < c->nmaps && !n; m++)
		if (c->map_file[m] == i && c->maps[m].offset == 0)
			n = mapped_build_id(c, c->maps[m].start, c->maps[m].end - c->maps[m].start,
					    out);
	return n;
}

static bool other_build(jitmap_core *c, size_t i, int fd)
{
	struct file *f = &c->files[i];
	uint8_t want[MAX_BUILD_ID], got[MAX_BUILD_ID];
	const size_t want_len = first_page_build_id(c, i, want);
	if (!want_len)
		return false;
	const size_t got_len = jitmap__fd_build_id(fd, got);
	if (got_len == want_len && !memcmp(got, want, want_len))
		return false;
	char w[2 * MAX_BUILD_ID + 1], g[2 * MAX_BUILD_ID + 1];
	jitmap__build_id_hex(want, want_len, w, sizeof(w));
	jitmap__build_id_hex(got, got_len, g, sizeof(g));
	free(f->refused);
	if (asprintf(&f->refused, "is another build than the file the process mapped (%s%s; the "
		     "core's %s)", got_len ? "build ID " : "no build ID", g, w) < 0)
		f->refused = NULL;
	if (f->refused && !f->given)
		warn(c, "%s %s: not used", f->path, f->refused);
	return true;
}

static int file_fd(jitmap_core *c, size_t i)
{
	struct file *f = &c->files[i];
	if (f->fd != -1)
		return f->fd;
	f->fd = -2;
	if ((c->flags & JITMAP_CORE_NO_FILES) && !f->given)
		return f->fd;
	/* Regular files only: a path in a core may name a FIFO or a device. */
	struct stat st;
	if (stat(f->path, &st)) {
		f->open_errno = errno;
		return f->fd;
	}
	if (!S_ISREG(st.st_mode))
		return f->fd;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		f->open_errno = errno;
		return f->fd;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < 0) {
		close(fd);
		return f->fd;
	}
	if (other_build(c, i, fd)) {
		close(fd);
		return f->fd;
	}
	f->size = (uint64_t)st.st_size;
	f->fd = fd;
	return fd;
}

/* Where the bytes at an address come from, and how far that holds: the core's bytes; for a
 * file mapping the core did not dump, the file; or nothing, for a reason.
 *
 * Which file mappings are read from their files: Linux dumps a private file mapping whole
 * once it has been written (it has anonymous pages), and only the first page of an ELF file's
 * read-only mapping otherwise (coredump_filter's default); gcore writes every writable mapping
 * and leaves out unmodified read-only ones altogether (no PT_LOAD). So a read-only segment the
 * core holds no bytes of, or a mapping no segment covers, is the file's bytes; a writable
 * segment the core holds no bytes of is not read from the file (its file's bytes need not be
 * the process's: a coredump_filter without bit 0 leaves written pages out too); and bytes a
 * program header says are in the core but lie past its end (a truncated core) are never read
 * from the file: the kernel dumped them because they differ from it (a .data written since,
 * RELRO after relocation). */
enum miss {
	MISS_NONE,       /* readable */
	MISS_CUT,        /* the segment's bytes lie past the end of the core */
	MISS_WRITABLE,   /* a writable segment the core holds no bytes of */
	MISS_NOWHERE,    /* neither the core nor a mapped file */
	MISS_FILE,       /* the file mapped there cannot be opened */
	MISS_SHORT,      /* the file mapped there ends before the address */
};

struct span {
	jitmap_core_source source;
	enum miss miss;
	uint64_t left;          /* bytes from the address on that come from the same place (>0) */
	uint64_t offset;        /* in the core (CORE) or in the file (FILE) */
	size_t map;             /* the NT_FILE mapping holding the address, or SIZE_MAX */
	const struct seg *seg;  /* the PT_LOAD segment holding it, or NULL */
};

static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Bytes up to the top of the address space from `addr` (2^64 - addr, capped). */
static uint64_t to_top(uint64_t addr) { return addr ? (UINT64_MAX - addr) + 1 : UINT64_MAX; }

/* The file of the mapping at `addr`, if it can be read there: FILE, or MISS_FILE. */
static void file_span(jitmap_core *c, uint64_t addr, struct span *sp)
{
	const jitmap_core_mapping_info *m = &c->maps[sp->map];
	const size_t fi = c->map_file[sp->map];
	const uint64_t in = addr - m->start;
	sp->left = min64(sp->left, m->end - addr);
	sp->miss = MISS_FILE;
	if (file_fd(c, fi) < 0)
		return;
	sp->miss = MISS_SHORT;
	if (in > UINT64_MAX - m->offset || m->offset + in >= c->files[fi].size)
		return;
	sp->offset = m->offset + in;
	sp->left = min64(sp->left, c->files[fi].size - sp->offset);
	sp->source = JITMAP_CORE_MEM_FILE;
	sp->miss = MISS_NONE;
}

/* What is at `addr`. With `core_only`, mapped files are not read. */
static void span_at(jitmap_core *c, uint64_t addr, int core_only, struct span *sp)
{
	const struct seg *next, *s = find_seg(c, addr, &next);
	*sp = (struct span){.source = JITMAP_CORE_MEM_NONE, .miss = MISS_NOWHERE,
			    .map = find_map(c, addr), .seg = s};
	if (s) {
		const uint64_t in = addr - s->vaddr;
		if (in < s->filesz) {
			sp->source = JITMAP_CORE_MEM_CORE;
			sp->miss = MISS_NONE;
			sp->left = s->filesz - in;
			sp->offset = s->offset + in;
			return;
		}
		if (in < s->want) {
			sp->miss = MISS_CUT;
			sp->left = s->want - in;
			return;
		}
		sp->left = s->memsz - in;
		if (s->flags & PF_W)
			sp->miss = MISS_WRITABLE;
		else if (!core_only && sp->map != SIZE_MAX)
			file_span(c, addr, sp);
		return;
	}
	sp->left = next ? next->vaddr - addr : to_top(addr);
	if (!core_only && sp->map != SIZE_MAX) {
		file_span(c, addr, sp);
	} else if (sp->map == SIZE_MAX) { /* nothing up to the next mapping either */
		const size_t lo = JITMAP_UPPER_BOUND(c->maps, c->nmaps, start, addr);
		if (lo < c->nmaps)
			sp->left = min64(sp->left, c->maps[lo].start - addr);
	}
}

static void perms(unsigned flags, char out[4])
{
	out[0] = flags & PF_R ? 'r' : '-';
	out[1] = flags & PF_W ? 'w' : '-';
	out[2] = flags & PF_X ? 'x' : '-';
	out[3] = 0;
}

/* One sentence: why the bytes at `addr` cannot be read. Short enough to follow "the JIT
 * descriptor at 0x... is not readable: " in a jitmap_error's reason. */
static void miss_text(const jitmap_core *c, uint64_t addr, const struct span *sp, int core_only,
		      char *why, size_t why_len)
{
	char p[4] = "";
	const struct seg *s = sp->seg;
	if (s)
		perms(s->flags, p);
	switch (sp->miss) {
	case MISS_CUT:
		snprintf(why, why_len, "address 0x%" PRIx64 " is not in the core: the core is "
			 "truncated in segment [0x%" PRIx64 ", 0x%" PRIx64 ") %s", addr, s->vaddr,
			 s->vaddr + s->memsz, p);
		break;
	case MISS_WRITABLE:
		snprintf(why, why_len, "address 0x%" PRIx64 " is not in the core: writable segment "
			 "[0x%" PRIx64 ", 0x%" PRIx64 ") was not dumped (a file's bytes are not "
			 "its)", addr, s->vaddr, s->vaddr + s->memsz);
		break;
	case MISS_FILE:
	case MISS_SHORT:
		snprintf(why, why_len, "address 0x%" PRIx64 " is not in the core, and %s (mapped "
			 "there) %s", addr, base_name(c->files[c->map_file[sp->map]].path),
			 sp->miss == MISS_SHORT ? "ends before it"
			 : c->files[c->map_file[sp->map]].refused ? "is another build"
			 : "cannot be opened");
		break;
	default:
		snprintf(why, why_len, "address 0x%" PRIx64 " is not in the core%s", addr,
			 core_only ? "" : " or its files");
		break;
	}
}

static int core_read(jitmap_core *c, uint64_t addr, void *out, size_t len, int core_only,
		     char *why, size_t why_len)
{
	uint8_t *buf = out;
	if (len && addr + (len - 1) < addr) {
		if (why && why_len)
			snprintf(why, why_len, "%zu bytes at 0x%" PRIx64 " wrap around the address space",
				 len, addr);
		return -EFAULT;
	}
	while (len) {
		struct span sp;
		span_at(c, addr, core_only, &sp);
		const size_t n = (size_t)min64(sp.left, len);
		int rc = sp.source == JITMAP_CORE_MEM_NONE ? -EFAULT : 0;
		if (!rc && sp.source == JITMAP_CORE_MEM_CORE)
			rc = core_bytes(c, sp.offset, buf, n);
		else if (!rc) {
			const int fd = c->files[c->map_file[sp.map]].fd;
			const ssize_t got = pread(fd, buf, n, (off_t)sp.offset);
			rc = got == (ssize_t)n ? 0 : -EIO;
			if (rc) /* changed since it was opened */
				sp.miss = MISS_SHORT;
		}
		if (rc) {
			if (sp.miss == MISS_NONE) /* the core's own bytes: pread failed */
				sp.miss = MISS_NOWHERE;
			if (why && why_len)
				miss_text(c, addr, &sp, core_only, why, why_len);
			return -EFAULT;
		}
		addr += n;
		buf += n;
		len -= n;
	}
	return 0;
}

int jitmap_core_memory(jitmap_core *c, uint64_t addr, jitmap_core_memory_info *out)
{
	if (!c || !out)
		return -EINVAL;
	struct span sp;
	span_at(c, addr, 0, &sp);
	jitmap_core_memory_info full = {
		.sz = sizeof(full),
		.source = sp.source,
		.size = sp.left,
		.offset = sp.offset,
		.path = sp.map != SIZE_MAX ? c->files[c->map_file[sp.map]].path : NULL,
	};
	if (sp.seg) {
		full.segment_start = sp.seg->vaddr;
		full.segment_end = sp.seg->vaddr + sp.seg->memsz;
		full.segment_flags = sp.seg->flags;
	}
	if (sp.source == JITMAP_CORE_MEM_NONE) {
		full.file_unusable = sp.miss == MISS_CUT || sp.miss == MISS_WRITABLE;
		miss_text(c, addr, &sp, 0, full.why, sizeof(full.why));
	}
	return jitmap__give(out, &full, sizeof(full));
}

/* Whether code can be at `pc`: a segment's flags say so where one holds it; a file mapping
 * no segment covers is the code of its file (gcore leaves unmodified read-only mappings out,
 * the code among them, and writes a segment for every other: the kernel writes one for
 * every mapping). */
int jitmap_core_code_at(jitmap_core *c, uint64_t pc, char *why, size_t why_len)
{
	if (!c)
		return -EINVAL;
	const struct seg *next, *s = find_seg(c, pc, &next);
	char p[4];
	if (s) {
		if (s->flags & PF_X)
			return 1;
		perms(s->flags, p);
		const size_t m = find_map(c, pc);
		if (why && why_len)
			snprintf(why, why_len, "0x%" PRIx64 " is in %s segment [0x%" PRIx64 ", 0x%" PRIx64
				 ")%s%s, not code", pc, p, s->vaddr, s->vaddr + s->memsz,
				 m != SIZE_MAX ? " of " : "",
				 m != SIZE_MAX ? base_name(c->maps[m].core_path) : "");
		return 0;
	}
	if (find_map(c, pc) != SIZE_MAX)
		return 1;
	if (why && why_len)
		snprintf(why, why_len, "0x%" PRIx64 " is in no mapping of the process", pc);
	return 0;
}

size_t jitmap_core_build_id_at(jitmap_core *c, uint64_t addr, uint8_t *out, size_t len)
{
	if (!c || !out)
		return 0;
	const size_t m = find_map(c, addr);
	uint8_t id[MAX_BUILD_ID];
	const size_t n = m == SIZE_MAX ? 0 : first_page_build_id(c, c->map_file[m], id);
	if (!n || n > len)
		return 0;
	memcpy(out, id, n);
	return n;
}

static int core_read_mem(void *ctx, uint64_t addr, void *out, size_t len, char *why,
			 size_t why_len)
{
	return core_read(ctx, addr, out, len, 0, why, why_len);
}

static int thread_read_mem(void *ctx, uint64_t addr, void *out, size_t len, char *why,
			   size_t why_len)
{
	return core_read(((struct thread *)ctx)->core, addr, out, len, 0, why, why_len);
}

static int thread_read_reg(void *ctx, unsigned regno, void *buf, size_t size, char *why,
			   size_t why_len)
{
	const struct thread *t = ctx;
	uint64_t v;
	if (jitmap_core_thread_reg(&t->pub, regno, &v)) {
		snprintf(why, why_len, "the core holds no register %u for thread %" PRIu32, regno,
			 t->pub.tid);
		return -ENOENT;
	}
	if (size == 0 || size > 8) {
		snprintf(why, why_len, "register %u has 8 bytes, not %zu", regno, size);
		return -EINVAL;
	}
	uint8_t *b = buf;
	for (size_t i = 0; i < size; i++) {
		const size_t shift = 8 * (t->core->order == JITMAP_ORDER_BIG ? size - 1 - i : i);
		b[i] = (uint8_t)(v >> shift);
	}
	return 0;
}

/* -- Build IDs -- */

/* The build ID of the file whose first page is mapped at `start` (`len` bytes mapped), from
 * the core's copy of that page; its length, or 0. */
static size_t mapped_build_id(jitmap_core *c, uint64_t start, uint64_t len, uint8_t *out)
{
	uint8_t *page = malloc(FIRST_PAGE);
	if (!page)
		return 0;
	size_t n = len < FIRST_PAGE ? (size_t)len : FIRST_PAGE, id = 0;
	if (!core_read(c, start, page, n, 1, NULL, 0))
		id = jitmap__buffer_build_id(page, n, out);
	free(page);
	return id;
}

/* The build ID of file `fi`: from the core's copy of its first page, else from the file. */
static size_t core_file_build_id(jitmap_core *c, size_t fi, uint8_t *out)
{
	for (size_t i = 0; i < c->nmaps; i++)
		if (c->map_file[i] == fi && c->maps[i].offset == 0) {
			size_t n = mapped_build_id(c, c->maps[i].start, c->maps[i].end - c->maps[i].start,
						   out);
			if (n)
				return n;
			break;
		}
	if (c->flags & JITMAP_CORE_NO_FILES)
		return 0;
	return jitmap__file_build_id(c->files[fi].path, out);
}

/* -- --exe -- */

static int replace_file(jitmap_core *c, size_t fi, const char *exe)
{
	char *copy = strdup(exe);
	if (!copy)
		return -ENOMEM;
	free(c->files[fi].path);
	c->files[fi].path = copy;
	c->files[fi].given = 1;
	return 0;
}

/* Which mapped file `exe` stands for: by build ID, by real path, by base name. */
static int match_exe(jitmap_core *c, const char *exe)
{
	uint8_t want[MAX_BUILD_ID], got[MAX_BUILD_ID];
	const size_t want_len = jitmap__file_build_id(exe, want);
	char *real = realpath(exe, NULL);
	size_t match = SIZE_MAX;
	const char *how = "";
	int rc = 0;

	if (want_len)
		for (size_t i = 0; i < c->nfiles && match == SIZE_MAX; i++)
			if (core_file_build_id(c, i, got) == want_len && !memcmp(got, want, want_len))
				match = i, how = "build ID";
	for (size_t i = 0; i < c->nfiles && match == SIZE_MAX && real; i++)
		if (!strcmp(c->files[i].core_path, real))
			match = i, how = "path";
	for (size_t i = 0; i < c->nfiles && match == SIZE_MAX; i++)
		if (!strcmp(base_name(c->files[i].core_path), base_name(exe)) ||
		    (real && !strcmp(base_name(c->files[i].core_path), base_name(real))))
			match = i, how = "name";
	if (match == SIZE_MAX) {
		warn(c, "--exe %s: the core maps no file named %s%s%s", exe, base_name(exe),
		     real && strcmp(base_name(real), base_name(exe)) ? " or " : "",
		     real && strcmp(base_name(real), base_name(exe)) ? base_name(real) : "");
		if (want_len && c->nfiles)
			warn(c, "--exe %s: no file the core maps has its build ID", exe);
	} else {
		if (strcmp(how, "build ID") && want_len) {
			size_t n = core_file_build_id(c, match, got);
			if (n && (n != want_len || memcmp(got, want, n)))
				warn(c, "--exe %s: its build ID differs from that of %s, which the core maps: "
				     "it is not the program that was dumped, and is not used", exe,
				     c->files[match].core_path);
		}
		rc = replace_file(c, match, exe);
	}
	free(real);
	return rc;
}

/* -- Cores without NT_FILE: the files from --exe and the dynamic linker's list -- */

#define MAX_LINK_MAP 4096 /* entries of the dynamic linker's list walked */
#define MAX_NAME 4096     /* bytes of a library's name */

/* Add a mapping of `len` bytes at `start`, file offset `offset`, for file `fi`. */
static int add_map(jitmap_core *c, uint64_t start, uint64_t len, uint64_t offset, size_t fi)
{
	if (!len || start > UINT64_MAX - len || c->nmaps >= MAX_MAPS)
		return 0;
	jitmap_core_mapping_info *m = realloc(c->maps, (c->nmaps + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	c->maps = m;
	size_t *f = realloc(c->map_file, (c->nmaps + 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	c->map_file = f;
	c->maps[c->nmaps] = (jitmap_core_mapping_info){start, start + len, offset, NULL, NULL};
	c->map_file[c->nmaps++] = fi;
	return 0;
}

/* Map file `fi` (open as `elf`) at `bias`: one mapping per PT_LOAD, for its file bytes. */
static int place_file(jitmap_core *c, size_t fi, Elf *elf, uint64_t bias)
{
	size_t nph;
	c->files[fi].has_bias = 1;
	c->files[fi].bias = bias;
	if (elf_getphdrnum(elf, &nph))
		return 0;
	for (size_t i = 0; i < nph && i < 4096; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		int rc = add_map(c, bias + ph.p_vaddr, ph.p_filesz, ph.p_offset, fi);
		if (rc)
			return rc;
	}
	return 0;
}

static int place_named(jitmap_core *c, const char *name, uint64_t bias)
{
	size_t fi = file_index(c, name);
	if (fi == SIZE_MAX)
		return -ENOMEM;
	if (c->files[fi].has_bias)
		return 0; /* listed twice */
	int fd = file_fd(c, fi);
	if (fd < 0) {
		c->files[fi].has_bias = 1; /* find_symbol warns that it cannot be opened */
		c->files[fi].bias = bias;
		return 0;
	}
	int rc = 0;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		rc = place_file(c, fi, elf, bias);
	elf_end(elf);
	return rc;
}

/* The value of tag DT_DEBUG in the dynamic section of `len` bytes at `addr` in the core's
 * memory (converted by libelf); 0 if none. */
static uint64_t dt_debug(jitmap_core *c, uint64_t addr, uint64_t len)
{
	if (len > 64 * 1024)
		len = 64 * 1024;
	len -= len % sizeof(Elf64_Dyn);
	uint8_t *raw = malloc(len ? len : 1);
	Elf64_Dyn *dyn = malloc(len ? len : 1);
	uint64_t v = 0;
	if (raw && dyn && len && !core_read(c, addr, raw, (size_t)len, 1, NULL, 0)) {
		Elf_Data src = {.d_buf = raw, .d_type = ELF_T_DYN, .d_size = len,
				.d_version = EV_CURRENT};
		Elf_Data dst = {.d_buf = dyn, .d_type = ELF_T_DYN, .d_size = len,
				.d_version = EV_CURRENT};
		const unsigned enc = c->order == JITMAP_ORDER_BIG ? ELFDATA2MSB : ELFDATA2LSB;
		if (gelf_xlatetom(c->elf, &dst, &src, enc))
			for (size_t i = 0; i < dst.d_size / sizeof(*dyn) && dyn[i].d_tag != DT_NULL; i++)
				if (dyn[i].d_tag == DT_DEBUG) {
					v = dyn[i].d_un.d_val;
					break;
				}
	}
	free(raw);
	free(dyn);
	return v;
}

/* A NUL-terminated string at `addr` in the core's memory, or NULL. */
static char *read_string(jitmap_core *c, uint64_t addr)
{
	char *s = malloc(MAX_NAME);
	if (!s)
		return NULL;
	for (size_t n = 0; n < MAX_NAME; n += 64) {
		size_t chunk = 64;
		/* Byte by byte near the end of what is readable. */
		if (core_read(c, addr + n, s + n, chunk, 1, NULL, 0)) {
			for (chunk = 0; chunk < 64; chunk++)
				if (core_read(c, addr + n + chunk, s + n + chunk, 1, 1, NULL, 0))
					break;
		}
		char *nul = memchr(s + n, 0, chunk);
		if (nul)
			return s;
		if (chunk < 64)
			break;
	}
	free(s);
	return NULL;
}

/* glibc's struct r_debug {int r_version; struct link_map *r_map; ...} and struct link_map
 * {l_addr, l_name, l_ld, l_next, l_prev} of 64-bit targets (<link.h>). */
#define R_MAP 8
#define L_ADDR 0
#define L_NAME 8
#define L_NEXT 24

/* The executable `exe`, placed by the auxiliary vector (AT_PHDR, else AT_ENTRY), then every
 * library of the dynamic linker's list (DT_DEBUG -> r_debug -> link_map) placed at its
 * l_addr. For cores that carry no NT_FILE note (those qemu-user writes). */
static int files_from_exe(jitmap_core *c, const char *exe)
{
	size_t fi = file_index(c, exe);
	if (fi == SIZE_MAX)
		return -ENOMEM;
	free(c->files[fi].path);
	if (!(c->files[fi].path = strdup(exe))) /* no sysroot: --exe is a path on this host */
		return -ENOMEM;
	c->files[fi].given = 1;
	int fd = file_fd(c, fi);
	if (fd < 0) {
		warn(c, "--exe %s cannot be opened", exe);
		return 0;
	}
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	size_t nph = 0;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    elf_getphdrnum(elf, &nph)) {
		warn(c, "--exe %s is not an ELF file", exe);
		elf_end(elf);
		return 0;
	}
	uint64_t phdr = UINT64_MAX, dyn = 0, dyn_size = 0, at, bias = 0;
	for (size_t i = 0; i < nph && i < 4096; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_PHDR)
			phdr = ph.p_vaddr;
		else if (ph.p_type == PT_DYNAMIC)
			dyn = ph.p_vaddr, dyn_size = ph.p_memsz;
	}
	const char *how = NULL;
	if (phdr != UINT64_MAX && !jitmap_core_auxv(c, AT_PHDR, &at))
		bias = at - phdr, how = "AT_PHDR";
	else if (!jitmap_core_auxv(c, AT_ENTRY, &at))
		bias = at - eh.e_entry, how = "AT_ENTRY";
	else if (eh.e_type == ET_EXEC)
		how = "its fixed addresses";
	if (!how) {
		warn(c, "--exe %s: the core says neither where it is mapped (NT_FILE) nor where it "
		     "starts (AT_PHDR, AT_ENTRY)", exe);
		elf_end(elf);
		return 0;
	}
	int rc = place_file(c, fi, elf, bias);
	elf_end(elf);
	if (rc)
		return rc;
	size_t libs = 0;
	uint64_t debug = dyn ? dt_debug(c, bias + dyn, dyn_size) : 0, map = 0;
	uint8_t w[32];
	if (debug && !core_read(c, debug + R_MAP, w, 8, 1, NULL, 0))
		map = jitmap__load(w, 8, c->order);
	for (size_t n = 0; map && n < MAX_LINK_MAP; n++) {
		if (core_read(c, map, w, 32, 1, NULL, 0))
			break;
		const uint64_t l_addr = jitmap__load(w + L_ADDR, 8, c->order);
		const uint64_t l_name = jitmap__load(w + L_NAME, 8, c->order);
		map = jitmap__load(w + L_NEXT, 8, c->order);
		char *name = l_name ? read_string(c, l_name) : NULL;
		if (name && name[0] == '/') { /* not the executable (""), nor the vDSO */
			rc = place_named(c, name, l_addr);
			libs++;
		}
		free(name);
		if (rc)
			return rc;
	}
	warn(c, "the core has no NT_FILE note: %s placed by %s, and %zu librar%s from the "
	     "dynamic linker's list", exe, how, libs, libs == 1 ? "y" : "ies");
	return 0;
}

/* -- Opening -- */

static jitmap_core *open_fail(jitmap_core *c, jitmap_error *err, int code, uint64_t off,
			      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static jitmap_core *open_fail(jitmap_core *c, jitmap_error *err, int code, uint64_t off,
			      const char *fmt, ...)
{
	if (err) {
		va_list ap;
		err->code = code;
		err->offset = off;
		va_start(ap, fmt);
		vsnprintf(err->reason, sizeof(err->reason), fmt, ap);
		va_end(ap);
	}
	jitmap_core_free(c);
	errno = -code;
	return NULL;
}

static jitmap_core *finish_open(jitmap_core *c, const jitmap_core_opts *opts, jitmap_error *err)
{
	const char *exe = NULL;
	/* As libbpf's OPTS_VALID: a newer caller's fields this library does not know must be 0. */
	if (opts && opts->sz < sizeof(opts->sz))
		return open_fail(c, err, -EINVAL, 0, "jitmap_core_opts.sz is %zu", opts->sz);
	if (opts && !jitmap__opts_valid(opts, opts->sz, sizeof(*opts)))
		return open_fail(c, err, -EINVAL, 0, "jitmap_core_opts has fields this library "
				 "does not know (set past byte %zu)", sizeof(*opts));
	if (opts && JITMAP_OPTS_HAS(opts, exe))
		exe = opts->exe;
	if (opts && JITMAP_OPTS_HAS(opts, sysroot) && opts->sysroot && opts->sysroot[0] &&
	    strcmp(opts->sysroot, "/")) {
		c->sysroot = strdup(opts->sysroot);
		if (!c->sysroot)
			return open_fail(c, err, -ENOMEM, 0, "out of memory");
	}
	if (opts && JITMAP_OPTS_HAS(opts, flags))
		c->flags = opts->flags;

	GElf_Ehdr eh;
	if (!c->elf || elf_kind(c->elf) != ELF_K_ELF || !gelf_getehdr(c->elf, &eh)) {
		const int e = elf_errno(); /* libelf says "no error" of a file too short for one */
		return open_fail(c, err, -EINVAL, 0, "not an ELF file (%" PRIu64 " bytes)%s%s",
				 c->size, e ? ": " : "", e ? elf_errmsg(e) : "");
	}
	if (eh.e_type != ET_CORE || eh.e_ident[EI_CLASS] != ELFCLASS64)
		return open_fail(c, err, -EINVAL, 0, "not a 64-bit core file");
	if (eh.e_ident[EI_DATA] != ELFDATA2LSB && eh.e_ident[EI_DATA] != ELFDATA2MSB)
		return open_fail(c, err, -EINVAL, EI_DATA, "unknown byte order %u",
				 eh.e_ident[EI_DATA]);
	c->machine = eh.e_machine;
	c->arch = jitmap_arch_from_elf_machine(eh.e_machine);
	c->order = eh.e_ident[EI_DATA] == ELFDATA2MSB ? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE;
	size_t nph;
	if (elf_getphdrnum(c->elf, &nph))
		return open_fail(c, err, -EINVAL, eh.e_phoff, "bad program headers: %s",
				 elf_errmsg(-1));
	if (eh.e_phoff > c->size || nph > (c->size - eh.e_phoff) / sizeof(Elf64_Phdr))
		return open_fail(c, err, -EINVAL, eh.e_phoff,
				 "%zu program headers at offset 0x%" PRIx64 " do not fit in the file",
				 nph, (uint64_t)eh.e_phoff);
	/* libelf counts only the headers that fit in the file. */
	if (eh.e_phnum != PN_XNUM && nph < eh.e_phnum)
		warn(c, "the core is truncated: %zu of its %u program headers are there", nph,
		     (unsigned)eh.e_phnum);
	/* libelf reads 56-byte headers whatever e_phentsize says. */
	if (nph && eh.e_phentsize != sizeof(Elf64_Phdr))
		warn(c, "e_phentsize is %u, not %zu: the program headers are read as %zu-byte "
		     "headers", (unsigned)eh.e_phentsize, sizeof(Elf64_Phdr), sizeof(Elf64_Phdr));
	c->segs = calloc(nph ? nph : 1, sizeof(*c->segs));
	struct seg *notes = calloc(nph ? nph : 1, sizeof(*notes));
	size_t nnotes = 0, bad = 0, truncated = 0, oversized = 0;
	if (!c->segs || !notes) {
		free(notes);
		return open_fail(c, err, -ENOMEM, 0, "out of memory");
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(c->elf, (int)i, &ph)) {
			bad++;
			continue;
		}
		if (ph.p_type == PT_LOAD) {
			uint64_t memsz = ph.p_memsz, filesz = ph.p_filesz;
			if (memsz > UINT64_MAX - ph.p_vaddr) {
				memsz = UINT64_MAX - ph.p_vaddr;
				warn(c, "segment at 0x%" PRIx64 " of %" PRIu64 " bytes wraps around the "
				     "address space: its bytes from 2^64 - 1 on are left out",
				     (uint64_t)ph.p_vaddr, (uint64_t)ph.p_memsz);
			}
			if (ph.p_filesz > ph.p_memsz && oversized++ < 3)
				warn(c, "segment at 0x%" PRIx64 " says the core holds %" PRIu64 " bytes "
				     "of it, more than its %" PRIu64 " in memory: %" PRIu64 " are read",
				     (uint64_t)ph.p_vaddr, (uint64_t)ph.p_filesz,
				     (uint64_t)ph.p_memsz, (uint64_t)ph.p_memsz);
			if (filesz > memsz)
				filesz = memsz;
			/* Contents past the end of a truncated core are treated as not dumped. */
			if (ph.p_offset > c->size)
				filesz = 0;
			else if (filesz > c->size - ph.p_offset)
				filesz = c->size - ph.p_offset;
			if (filesz < ph.p_filesz && filesz < memsz && truncated++ < 3)
				warn(c, "the core is truncated: segment at 0x%" PRIx64 " has %" PRIu64
				     " of its %" PRIu64 " bytes", (uint64_t)ph.p_vaddr, filesz,
				     (uint64_t)ph.p_filesz);
			if (memsz)
				c->segs[c->nsegs++] = (struct seg){
					.vaddr = ph.p_vaddr, .memsz = memsz, .filesz = filesz,
					.want = ph.p_filesz < memsz ? ph.p_filesz : memsz,
					.offset = ph.p_offset, .flags = ph.p_flags, .index = i};
		} else if (ph.p_type == PT_NOTE) {
			notes[nnotes++] = (struct seg){.filesz = ph.p_filesz, .offset = ph.p_offset,
						       .index = i};
		}
	}
	if (bad)
		warn(c, "%zu program header%s cannot be read", bad, bad == 1 ? "" : "s");
	if (truncated > 3)
		warn(c, "the core is truncated (it ends at offset 0x%" PRIx64 "): %zu segments in "
		     "all lack bytes", c->size, truncated);
	sort_segs(c);
	for (size_t i = 0; i < nnotes; i++) {
		int rc = read_notes(c, notes[i].offset, notes[i].filesz);
		if (rc) {
			free(notes);
			return open_fail(c, err, rc, 0, "out of memory");
		}
	}
	free(notes);
	if (!c->have_file_note && exe && files_from_exe(c, exe))
		return open_fail(c, err, -ENOMEM, 0, "out of memory");
	if (sort_maps(c))
		return open_fail(c, err, -ENOMEM, 0, "out of memory");
	if (!c->have_file_note && !exe)
		warn(c, "the core has no NT_FILE note: symbols cannot be found in the mapped files "
		     "(give the executable with --exe)");
	if (c->have_file_note && exe && match_exe(c, exe))
		return open_fail(c, err, -ENOMEM, 0, "out of memory");
	link_maps(c);
	return c;
}

static jitmap_core *core_new(jitmap_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	jitmap_core *c = calloc(1, sizeof(*c));
	if (!c)
		return open_fail(NULL, err, -ENOMEM, 0, "out of memory");
	c->fd = -1;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return open_fail(c, err, -ENOTSUP, 0, "libelf is too old");
	return c;
}

jitmap_core *jitmap_core_open(const char *path, const jitmap_core_opts *opts, jitmap_error *err)
{
	jitmap_core *c = core_new(err);
	if (!c)
		return NULL;
	if (!path)
		return open_fail(c, err, -EINVAL, 0, "no path");
	c->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (c->fd < 0)
		return open_fail(c, err, -errno, 0, "cannot open: %s", strerror(errno));
	struct stat st;
	if (fstat(c->fd, &st))
		return open_fail(c, err, -errno, 0, "cannot read its size: %s", strerror(errno));
	if (S_ISDIR(st.st_mode))
		return open_fail(c, err, -EISDIR, 0, "a directory, not a core file");
	if (!S_ISREG(st.st_mode))
		return open_fail(c, err, -EINVAL, 0,
				 "not a regular file (a device, pipe or socket), not a core file");
	c->size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
	c->elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL);
	return finish_open(c, opts, err);
}

jitmap_core *jitmap_core_open_memory(const void *buf, size_t len, const jitmap_core_opts *opts,
				     jitmap_error *err)
{
	jitmap_core *c = core_new(err);
	if (!c)
		return NULL;
	if (!buf && len)
		return open_fail(c, err, -EINVAL, 0, "no bytes");
	/* elf_memory wants a writable buffer that lives as long as the Elf. */
	c->mem = malloc(len ? len : 1);
	if (!c->mem)
		return open_fail(c, err, -ENOMEM, 0, "out of memory");
	if (len)
		memcpy(c->mem, buf, len);
	c->size = len;
	c->elf = elf_memory((char *)c->mem, len);
	return finish_open(c, opts, err);
}

void jitmap_core_free(jitmap_core *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nfiles; i++) {
		if (c->files[i].fd >= 0)
			close(c->files[i].fd);
		free(c->files[i].path);
		free(c->files[i].core_path);
		free(c->files[i].refused);
	}
	for (size_t i = 0; i < c->nthreads; i++)
		free(c->threads[i].regs);
	jitmap__problems_free(&c->warnings);
	free(c->threads);
	free(c->auxv);
	free(c->files);
	free(c->maps);
	free(c->map_file);
	free(c->segs);
	free(c->sysroot);
	if (c->elf)
		elf_end(c->elf);
	if (c->fd >= 0)
		close(c->fd);
	free(c->mem);
	free(c);
}

/* -- Accessors -- */

jitmap_arch jitmap_core_arch(const jitmap_core *c) { return c->arch; }
unsigned jitmap_core_elf_machine(const jitmap_core *c) { return c->machine; }
jitmap_byte_order jitmap_core_byte_order(const jitmap_core *c) { return c->order; }
size_t jitmap_core_num_threads(const jitmap_core *c) { return c->nthreads; }
size_t jitmap_core_num_mappings(const jitmap_core *c) { return c->nmaps; }

const jitmap_core_thread_info *jitmap_core_thread(const jitmap_core *c, size_t i)
{
	return i < c->nthreads ? &c->threads[i].pub : NULL;
}

int jitmap_core_thread_reg(const jitmap_core_thread_info *t, unsigned regno, uint64_t *value)
{
	size_t lo = 0, hi = t ? t->num_regs : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->regs[mid].regno == regno) {
			if (value)
				*value = t->regs[mid].value;
			return 0;
		}
		if (t->regs[mid].regno < regno)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -ENOENT;
}

const jitmap_core_mapping_info *jitmap_core_mapping(const jitmap_core *c, size_t i)
{
	return i < c->nmaps ? &c->maps[i] : NULL;
}

int jitmap_core_auxv(const jitmap_core *c, uint64_t type, uint64_t *value)
{
	for (size_t i = 0; i < c->nauxv; i++)
		if (c->auxv[2 * i] == type) {
			if (value)
				*value = c->auxv[2 * i + 1];
			return 0;
		}
	return -ENOENT;
}

int jitmap_core_placed_file(const jitmap_core *c, size_t i, const char **path, uint64_t *bias)
{
	for (size_t k = 0; k < c->nfiles; k++) {
		if (!c->files[k].has_bias || i--)
			continue;
		if (path)
			*path = c->files[k].path;
		if (bias)
			*bias = c->files[k].bias;
		return 0;
	}
	return -ENOENT;
}

const char *jitmap_core_warning(const jitmap_core *c, size_t i)
{
	return jitmap__problem_at(&c->warnings, i);
}

jitmap_target jitmap_core_target(jitmap_core *c)
{
	return (jitmap_target){.ctx = c, .read_reg = NULL, .read_mem = core_read_mem};
}

jitmap_target jitmap_core_thread_target(jitmap_core *c, size_t i)
{
	if (i >= c->nthreads)
		return (jitmap_target){0};
	c->threads[i].core = c;
	return (jitmap_target){.ctx = &c->threads[i], .read_reg = thread_read_reg,
			       .read_mem = thread_read_mem};
}

/* -- Symbols -- */

/* The load bias of file `fi`: where its first page is mapped, minus where its first PT_LOAD
 * wants to be (0 for a fixed-address executable). */
static int file_bias(jitmap_core *c, size_t fi, Elf *elf, uint64_t *bias)
{
	if (c->files[fi].has_bias) {
		*bias = c->files[fi].bias;
		return 0;
	}
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh))
		return -1;
	if (eh.e_type == ET_EXEC) {
		*bias = 0;
		return 0;
	}
	uint64_t first = UINT64_MAX;
	size_t nph;
	if (elf_getphdrnum(elf, &nph))
		return -1;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0)
			first = ph.p_vaddr < first ? ph.p_vaddr : first;
	}
	if (first == UINT64_MAX)
		return -1;
	for (size_t i = 0; i < c->nmaps; i++)
		if (c->map_file[i] == fi && c->maps[i].offset == 0) {
			*bias = c->maps[i].start - (first & ~(uint64_t)0xfff);
			return 0;
		}
	return -1;
}

/* -- Mappings that are memory, not files -- */

/* Whether `name` is "/SYSV" and the eight hex digits of a System V shared memory key, then
 * " (deleted)": the kernel's name for a shmat mapping ("SYSV%08x" in ipc/shm.c). */
static int sysv_name(const char *name)
{
	static const char tail[] = " (deleted)";
	if (strncmp(name, "/SYSV", 5))
		return 0;
	for (int i = 5; i < 13; i++)
		if (!name[i] || !strchr("0123456789abcdef", name[i]))
			return 0;
	return !strcmp(name + 13, tail);
}

/* Whether file `fi`, which cannot be opened, is memory rather than a file that could define a
 * JIT descriptor or stackmaps (then it is not reported, nor counted as a file that could not
 * be read). The rule, for the mapping of the file's first page (file offset 0):
 *   - "/dev/zero (deleted)" (shared anonymous memory) and "/SYSVxxxxxxxx (deleted)" (System V
 *     shared memory), by name: no loader maps an object from them;
 *   - a path that exists and is not a regular file: a device (GPU memory, a private
 *     /dev/zero);
 *   - the core holds the mapping's first bytes, and they are not an ELF header
 *     ("/memfd:NAME (deleted)", POSIX shared memory, whatever their names);
 *   - the core holds none of it, and it is writable: a shared mapping Linux leaves out
 *     (coredump_filter's default dumps no shared memory of a file that has a name, such as
 *     PostgreSQL's /dev/shm/PostgreSQL.N, gone once the server restarted). No loader maps an
 *     object writable at its ELF header, and a private mapping of one would have been dumped
 *     (its first page, the ELF header, at least).
 * Anything else is a file: a library deleted since (a package upgrade) or dlopen'ed from a
 * memfd has its ELF header in the core; a read-only mapping whose first page the core lacks
 * (gcore leaves unmodified ones out) may be one too. */
static int memory_not_file(jitmap_core *c, size_t fi)
{
	const struct file *f = &c->files[fi];
	if (!strcmp(f->core_path, "/dev/zero (deleted)") || sysv_name(f->core_path))
		return 1;
	if (f->fd == -2 && !f->open_errno && !f->refused)
		return 1; /* stat found it: not a regular file */
	for (size_t i = 0; i < c->nmaps; i++) {
		if (c->map_file[i] != fi || c->maps[i].offset != 0)
			continue;
		struct span sp;
		uint8_t magic[SELFMAG];
		span_at(c, c->maps[i].start, 1, &sp);
		if (sp.source == JITMAP_CORE_MEM_CORE)
			return core_read(c, c->maps[i].start, magic, sizeof(magic), 1, NULL, 0) == 0 &&
			       memcmp(magic, ELFMAG, SELFMAG) != 0;
		return sp.seg && (sp.seg->flags & PF_W);
	}
	return 0;
}

int jitmap__core_each_file(jitmap_core *c, jitmap__core_file_fn fn, void *ctx)
{
	for (size_t fi = 0; fi < c->nfiles; fi++) {
		const struct file *f = &c->files[fi];
		int rc = 0;
		if (file_fd(c, fi) < 0) {
			/* Not asked to open it, not a file ("[vdso]"-like names), or memory: nothing
			 * to say. */
			if (f->core_path[0] == '/' && (!(c->flags & JITMAP_CORE_NO_FILES) || f->given) &&
			    !memory_not_file(c, fi)) {
				char why[256];
				if (f->refused)
					snprintf(why, sizeof(why), "%s", f->refused);
				else
					snprintf(why, sizeof(why), "cannot be opened (%s)",
						 f->open_errno ? strerror(f->open_errno)
							       : "not a regular file");
				rc = fn(ctx, f->path, NULL, false, 0, why);
			}
		} else {
			Elf *elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
			uint64_t bias = 0;
			if (elf && elf_kind(elf) == ELF_K_ELF) {
				const bool known = file_bias(c, fi, elf, &bias) == 0;
				rc = fn(ctx, f->path, elf, known, bias, NULL);
			}
			elf_end(elf);
		}
		if (rc)
			return rc;
	}
	return 0;
}

size_t jitmap_core_find_symbol(jitmap_core *c, const char *name, uint64_t *out,
			       const char **files, size_t max)
{
	size_t n = 0;
	for (size_t fi = 0; fi < c->nfiles; fi++) {
		int fd = file_fd(c, fi);
		if (fd < 0) {
			struct file *f = &c->files[fi];
			if (!f->warned && !f->refused && f->core_path[0] == '/' &&
			    !(c->flags & JITMAP_CORE_NO_FILES) && !memory_not_file(c, fi)) {
				warn(c, "%s (mapped by the core) cannot be opened: symbols in it are not "
				     "found", f->path);
				f->warned = 1;
			}
			continue;
		}
		Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		uint64_t bias;
		if (!elf || elf_kind(elf) != ELF_K_ELF || file_bias(c, fi, elf, &bias)) {
			if (elf)
				elf_end(elf);
			continue;
		}
		uint64_t value;
		if (jitmap__elf_data_symbol(elf, name, &value) == 0) {
			if (n < max) {
				out[n] = value + bias;
				if (files)
					files[n] = c->files[fi].path;
			}
			n++;
		}
		elf_end(elf);
	}
	return n;
}

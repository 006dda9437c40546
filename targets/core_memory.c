/* core_memory.c: where a core's bytes come from (jitmap_stopped_memory, stopped.h): its PT_LOAD
 * segments, the files it maps (opened at first use, refused when another build than the one the
 * process mapped), or nowhere, and why; the reads, jitmap__core_memory, jitmap__core_code_at,
 * build IDs and the core's targets. core.c reads the core; targets/internal.h holds what both
 * see of it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define MAX_BUILD_ID JITMAP__MAX_BUILD_ID
#define FIRST_PAGE 4096 /* bytes of a mapping's first page searched for a build ID */

/* -- Memory -- */

/* Bytes [off, off + n) of the core file; 0 or -EIO. */
static int core_bytes(const jitmap__core *c, uint64_t off, void *buf, size_t n)
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

/* The segment holding `addr`, or NULL; `*next` is the first segment above it (or NULL). */
static const struct jitmap__core_seg *find_seg(const jitmap__core *c, uint64_t addr,
						const struct jitmap__core_seg **next)
{
	const size_t lo = JITMAP_UPPER_BOUND(c->segs, c->nsegs, vaddr, addr);
	*next = lo < c->nsegs ? &c->segs[lo] : NULL;
	if (!lo)
		return NULL;
	const struct jitmap__core_seg *s = &c->segs[lo - 1];
	return addr - s->vaddr < s->memsz ? s : NULL;
}

size_t jitmap__core_find_map(const jitmap__core *c, uint64_t addr)
{
	const size_t lo = JITMAP_UPPER_BOUND(c->maps, c->nmaps, start, addr);
	if (!lo || addr >= c->maps[lo - 1].end)
		return SIZE_MAX;
	return lo - 1;
}

static size_t mapped_build_id(jitmap__core *c, uint64_t start, uint64_t len, uint8_t *out);

/* Whether the file open at `fd` for file `i` is another build than the one the process
 * mapped: the build ID in the core's copy of its first page (the kernel dumps the first page
 * of every ELF mapping, gcore every mapping but unmodified code) differs from the file's, or
 * the file has none. A package upgraded since the crash, a core read on another machine, a
 * path that now names another file: its code, CFI and symbols are not the process's, and
 * nothing is read from it (GDB warns and reads it all the same). A core that holds no build
 * ID for the file cannot tell: the file is used. */
/* The build ID of file `i` in the core's copy of its first page, or 0. */
static size_t first_page_build_id(jitmap__core *c, size_t i, uint8_t *out)
{
	size_t n = 0;
	for (size_t m = 0; m < c->nmaps && !n; m++)
		if (c->map_file[m] == i && c->maps[m].offset == 0)
			n = mapped_build_id(c, c->maps[m].start, c->maps[m].end - c->maps[m].start,
					    out);
	return n;
}

static bool other_build(jitmap__core *c, size_t i, int fd)
{
	struct jitmap__core_file *f = &c->files[i];
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
		jitmap__status_problem(&c->warnings, c->warn_status, JITMAP__CORE_MAX_WARNINGS,
				       JITMAP__WARN(JITMAP_PROBLEM_FILE), "%s %s: not used",
				       f->path, f->refused);
	return true;
}

/* The build the process mapped, fetched from debuginfod (when DEBUGINFOD_URLS is set) where
 * the file at its path is gone or another build: GDB and libdwfl read such a core's code the
 * same way, and a step's proof needs the bytes before a return address. -2 when none. */
static int fetched_build(jitmap__core *c, size_t i)
{
	uint8_t want[MAX_BUILD_ID];
	const size_t want_len = first_page_build_id(c, i, want);
	if (!want_len)
		return -2;
	char found[512];
	const int fd = jitmap__debuginfod_executable(want, want_len, found, sizeof(found));
	struct stat st;
	if (fd < 0)
		return -2;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < 0) {
		close(fd);
		return -2;
	}
	c->files[i].size = (uint64_t)st.st_size;
	return c->files[i].fd = fd;
}

int jitmap__core_file_fd(jitmap__core *c, size_t i)
{
	struct jitmap__core_file *f = &c->files[i];
	if (f->fd != -1)
		return f->fd;
	f->fd = -2;
	if ((c->flags & JITMAP_CORE_NO_FILES) && !f->given)
		return f->fd;
	/* Regular files only: a path in a core may name a FIFO or a device. */
	struct stat st;
	if (stat(f->path, &st)) {
		f->open_errno = errno;
		return fetched_build(c, i);
	}
	if (!S_ISREG(st.st_mode))
		return f->fd;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		f->open_errno = errno;
		return fetched_build(c, i);
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < 0) {
		close(fd);
		return f->fd;
	}
	if (other_build(c, i, fd)) {
		close(fd);
		return fetched_build(c, i);
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
	MISS_LEFT_OUT,   /* a small core left it out (its note says) */
};

struct span {
	jitmap_stopped_source source;
	enum miss miss;
	uint64_t left;          /* bytes from the address on that come from the same place (>0) */
	uint64_t offset;        /* in the core (CORE) or in the file (FILE) */
	size_t map;             /* the NT_FILE mapping holding the address, or SIZE_MAX */
	const struct jitmap__core_seg *seg;  /* the PT_LOAD segment holding it, or NULL */
	const struct jitmap__core_left *cut; /* MISS_LEFT_OUT: the range left out */
};

static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Bytes up to the top of the address space from `addr` (2^64 - addr, capped). */
static uint64_t to_top(uint64_t addr) { return addr ? (UINT64_MAX - addr) + 1 : UINT64_MAX; }

/* The file of the mapping at `addr`, if it can be read there: FILE, or MISS_FILE. */
static void file_span(jitmap__core *c, uint64_t addr, struct span *sp)
{
	const jitmap_stopped_mapping_info *m = &c->maps[sp->map];
	const size_t fi = c->map_file[sp->map];
	const uint64_t in = addr - m->start;
	sp->left = min64(sp->left, m->end - addr);
	sp->miss = MISS_FILE;
	if (jitmap__core_file_fd(c, fi) < 0)
		return;
	sp->miss = MISS_SHORT;
	if (in > UINT64_MAX - m->offset || m->offset + in >= c->files[fi].size)
		return;
	sp->offset = m->offset + in;
	sp->left = min64(sp->left, c->files[fi].size - sp->offset);
	sp->source = JITMAP_STOPPED_MEM_FILE;
	sp->miss = MISS_NONE;
}

/* What is at `addr`. With `core_only`, mapped files are not read. */
static void span_at(jitmap__core *c, uint64_t addr, int core_only, struct span *sp)
{
	const struct jitmap__core_seg *next, *s = find_seg(c, addr, &next);
	*sp = (struct span){.source = JITMAP_STOPPED_MEM_NONE, .miss = MISS_NOWHERE,
			    .map = jitmap__core_find_map(c, addr), .seg = s};
	if (s) {
		const uint64_t in = addr - s->vaddr;
		if (in < s->filesz) {
			sp->source = JITMAP_STOPPED_MEM_CORE;
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
	/* Left out of a small core: not read, unless the file holds it as the process had it
	 * (the note says), or it is a file's code (read-only and executable), which the kernel
	 * does not dump either. */
	const struct jitmap__core_left *cut = c->nleft ? jitmap__core_left_at(c, addr) : NULL;
	if (cut && (cut->in_file || !jitmap__small_file_refused(cut->flags)) &&
	    sp->map != SIZE_MAX)
		cut = NULL;
	if (cut) {
		sp->miss = MISS_LEFT_OUT;
		sp->cut = cut;
		sp->left = min64(sp->left, cut->end - addr);
		return;
	}
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
static void miss_text(const jitmap__core *c, uint64_t addr, const struct span *sp, int core_only,
		      char *why, size_t why_len)
{
	char p[4] = "";
	const struct jitmap__core_seg *s = sp->seg;
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
	case MISS_LEFT_OUT:
		snprintf(why, why_len, "0x%" PRIx64 " is not in this small core (left out with [0x%"
			 PRIx64 ", 0x%" PRIx64 "))", addr, sp->cut->start, sp->cut->end);
		break;
	case MISS_FILE:
	case MISS_SHORT:
		snprintf(why, why_len, "address 0x%" PRIx64 " is not in the core, and %s (mapped "
			 "there) %s", addr, jitmap__base_name(c->files[c->map_file[sp->map]].path),
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

int jitmap__core_read(jitmap__core *c, uint64_t addr, void *out, size_t len, int core_only,
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
		int rc = sp.source == JITMAP_STOPPED_MEM_NONE ? -EFAULT : 0;
		if (!rc && sp.source == JITMAP_STOPPED_MEM_CORE)
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

int jitmap__core_memory(jitmap__core *c, uint64_t addr, jitmap_stopped_memory_info *out)
{
	if (!c || !out)
		return -EINVAL;
	struct span sp;
	span_at(c, addr, 0, &sp);
	jitmap_stopped_memory_info full = {
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
	if (sp.source == JITMAP_STOPPED_MEM_NONE) {
		full.file_unusable = sp.miss == MISS_CUT || sp.miss == MISS_WRITABLE ||
				     sp.miss == MISS_LEFT_OUT;
		miss_text(c, addr, &sp, 0, full.why, sizeof(full.why));
	}
	return jitmap__give(out, &full, sizeof(full));
}

/* Whether code can be at `pc`: a segment's flags say so where one holds it; a file mapping
 * no segment covers is the code of its file (gcore leaves unmodified read-only mappings out,
 * the code among them, and writes a segment for every other: the kernel writes one for
 * every mapping). */
int jitmap__core_code_at(jitmap__core *c, uint64_t pc, char *why, size_t why_len)
{
	if (!c)
		return -EINVAL;
	const struct jitmap__core_seg *next, *s = find_seg(c, pc, &next);
	char p[4];
	if (s) {
		if (s->flags & PF_X)
			return 1;
		perms(s->flags, p);
		const size_t m = jitmap__core_find_map(c, pc);
		if (why && why_len)
			snprintf(why, why_len, "0x%" PRIx64 " is in %s segment [0x%" PRIx64 ", 0x%" PRIx64
				 ")%s%s, not code", pc, p, s->vaddr, s->vaddr + s->memsz,
				 m != SIZE_MAX ? " of " : "",
				 m != SIZE_MAX ? jitmap__base_name(c->maps[m].core_path) : "");
		return 0;
	}
	const struct jitmap__core_left *cut = c->nleft ? jitmap__core_left_at(c, pc) : NULL;
	if (cut && (cut->flags & PF_X))
		return 1;
	if (cut) {
		perms(cut->flags, p);
		if (why && why_len)
			snprintf(why, why_len, "0x%" PRIx64 " is in %s memory [0x%" PRIx64 ", 0x%"
				 PRIx64 ") this small core left out, not code", pc, p, cut->start,
				 cut->end);
		return 0;
	}
	if (jitmap__core_find_map(c, pc) != SIZE_MAX)
		return 1;
	if (why && why_len)
		snprintf(why, why_len, "0x%" PRIx64 " is in no mapping of the process", pc);
	return 0;
}

size_t jitmap__core_build_id_at(jitmap__core *c, uint64_t addr, uint8_t *out, size_t len)
{
	if (!c || !out)
		return 0;
	const size_t m = jitmap__core_find_map(c, addr);
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
	return jitmap__core_read(ctx, addr, out, len, 0, why, why_len);
}

static int thread_read_mem(void *ctx, uint64_t addr, void *out, size_t len, char *why,
			   size_t why_len)
{
	return jitmap__core_read(((struct jitmap__thread *)ctx)->owner, addr, out, len, 0, why, why_len);
}

/* -- Build IDs -- */

/* The build ID of the file whose first page is mapped at `start` (`len` bytes mapped), from
 * the core's copy of that page; its length, or 0. */
static size_t mapped_build_id(jitmap__core *c, uint64_t start, uint64_t len, uint8_t *out)
{
	uint8_t *page = malloc(FIRST_PAGE);
	if (!page)
		return 0;
	size_t n = len < FIRST_PAGE ? (size_t)len : FIRST_PAGE, id = 0;
	if (!jitmap__core_read(c, start, page, n, 1, NULL, 0))
		id = jitmap__buffer_build_id(page, n, out);
	free(page);
	return id;
}

/* The build ID of file `fi`: from the core's copy of its first page, else from the file. */
size_t jitmap__core_file_build_id(jitmap__core *c, size_t fi, uint8_t *out)
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

/* -- Modules -- */

/* The virtual address of byte `off` of file `fi` read from the file itself: for a core
 * without the first page of one of its mappings (gcore leaves unmodified read-only mappings
 * out) whose file is the build the process mapped (jitmap__core_file_fd refuses another). */
static int file_vaddr(jitmap__core *c, size_t fi, uint64_t off, uint64_t *vaddr)
{
	const int fd = jitmap__core_file_fd(c, fi);
	uint8_t *head = fd >= 0 ? malloc(65536) : NULL;
	const ssize_t n = head ? pread(fd, head, 65536, 0) : -1;
	const int found = n > 0 ? jitmap__elf_file_vaddr(head, (size_t)n, off, vaddr) : 0;
	free(head);
	return found;
}

int jitmap__core_module_at(jitmap__core *c, uint64_t addr, jitmap_stopped_module_info *out)
{
	const size_t m = jitmap__core_find_map(c, addr);
	if (m == SIZE_MAX) {
		/* Not a file's: anonymous memory when a segment (or a small core's left-out range)
		 * says the process mapped it. A core names no anonymous mapping. */
		const struct jitmap__core_seg *next;
		const struct jitmap__core_seg *seg = find_seg(c, addr, &next);
		const struct jitmap__core_left *cut = c->nleft ? jitmap__core_left_at(c, addr) : NULL;
		if (!seg && !cut)
			return -ENOENT;
		out->start = seg ? seg->vaddr : cut->start;
		out->end = seg ? seg->vaddr + seg->memsz : cut->end;
		return 0;
	}
	const jitmap_stopped_mapping_info *map = &c->maps[m];
	const size_t fi = c->map_file[m];
	out->start = map->start;
	out->end = map->end;
	out->name = map->core_path ? map->core_path : map->path;
	out->file = true;
	/* The file's headers: in its first page, mapped at offset 0 (the nearest such mapping
	 * below, the image this one belongs to; any other of the same file holds the same). */
	size_t head = SIZE_MAX;
	for (size_t i = 0; i < c->nmaps; i++)
		if (c->map_file[i] == fi && c->maps[i].offset == 0 &&
		    (head == SIZE_MAX || c->maps[i].start <= addr))
			head = i;
	const uint64_t off = map->offset + (addr - map->start);
	const jitmap_target t = jitmap__core_target(c);
	uint64_t vaddr;
	if (!(head != SIZE_MAX && jitmap__target_file_vaddr(&t, c->maps[head].start, off, &vaddr)) &&
	    !file_vaddr(c, fi, off, &vaddr))
		return 0;
	out->bias = addr - vaddr;
	return 1;
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
 *     (its first page, the ELF header, at least);
 *   - no segment holds it, and it is in /dev/shm (POSIX shared memory): GDB's gcore writes no
 *     segment at all for shared mappings it does not dump (PostgreSQL's, again).
 * Anything else is a file: a library deleted since (a package upgrade) or dlopen'ed from a
 * memfd has its ELF header in the core; a read-only mapping whose first page the core lacks
 * (gcore leaves unmodified ones out) may be one too. */
int jitmap__core_memory_not_file(jitmap__core *c, size_t fi)
{
	const struct jitmap__core_file *f = &c->files[fi];
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
		if (sp.source == JITMAP_STOPPED_MEM_CORE)
			return jitmap__core_read(c, c->maps[i].start, magic, sizeof(magic), 1, NULL, 0) == 0 &&
			       memcmp(magic, ELFMAG, SELFMAG) != 0;
		return sp.seg ? (sp.seg->flags & PF_W) != 0
			      : !strncmp(f->core_path, "/dev/shm/", 9);
	}
	return 0;
}

/* -- Targets -- */

jitmap_target jitmap__core_target(jitmap__core *c)
{
	return (jitmap_target){.ctx = c, .read_reg = NULL, .read_mem = core_read_mem};
}

jitmap_target jitmap__core_thread_target(jitmap__core *c, size_t i)
{
	if (i >= c->threads.n)
		return (jitmap_target){0};
	return (jitmap_target){.ctx = c->threads.v[i], .read_reg = jitmap__thread_read_reg,
			       .read_mem = thread_read_mem};
}

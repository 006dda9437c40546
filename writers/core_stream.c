/* core_stream.c: a core streamed from one descriptor to another with the crashed process's
 * perf maps and jitdump files added as jitmap's notes (jitmap_core_add_jit_files, core.h;
 * jitmap-core-handler is its tool).
 *
 * The kernel writes a core as: the ELF header, the program headers, the notes, zeros to a
 * page, then the PT_LOAD segments' bytes in order (fs/binfmt_elf.c); GDB's gcore likewise puts
 * every segment's bytes after its notes. Everything before the first PT_LOAD's bytes (the
 * head) is read into memory; the new core is the ELF header with one more program header, the
 * program headers (each offset moved: by 56 bytes when it points into the head, by D after
 * it), the rest of the head as it was, a PT_NOTE segment holding the files, zeros to D past
 * the head's end, and then the rest of the input copied as it comes (splice where both ends
 * allow). D is a multiple of 4096, so pages stay where they were aligned. The head is
 * bounded: a core whose head is larger, or laid out otherwise, passes through unchanged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elf.h>

#include "internal.h"
#include "jitmap/core.h"


#define MAX_HEAD (UINT64_C(256) << 20)   /* headers and notes held in memory */
#define MAX_BYTES (UINT64_C(1) << 30)    /* JIT files' bytes, by default */
#define MAX_FILES 256
#define EHDR 64
#define PHDR 56
#define PAGE 4096
#define FILE_HEADER 24
#define NAME_SZ 8 /* "JITMAP\0" padded to 4 */

struct jit_src {
	char *path;      /* as this process reads it */
	const char *as;  /* as the crashed process named it (path less /proc/PID/root) */
	int fd;
	unsigned kind;
	uint64_t size;   /* the bytes added */
	bool cut;
};

struct stream {
	int in, out;
	uint64_t in_off, out_off; /* bytes read and written */
	jitmap_byte_order order;
	char *note;
	size_t note_len;
	jitmap_error *err;
	struct jit_src *src;
	size_t nsrc;
	char problems[4][256]; /* files found and left out, as notes */
	size_t nproblems;
	const char *root;      /* "/proc/PID/root" when the paths go through it, else "" */
	uint64_t budget;
};

static void say(struct stream *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A sentence added to the caller's note ("; " between). */
static void say(struct stream *s, const char *fmt, ...)
{
	if (!s->note || !s->note_len)
		return;
	size_t used = strlen(s->note);
	if (used && used + 2 < s->note_len) {
		memcpy(s->note + used, "; ", 3);
		used += 2;
	}
	if (used + 1 >= s->note_len)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->note + used, s->note_len - used, fmt, ap);
	va_end(ap);
}

static void problem(struct stream *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A file left out: said to the caller and, as a JITMAP_CORE_NOTE_PROBLEM note, in the core. */
static void problem(struct stream *s, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	say(s, "%s", line);
	if (s->nproblems < sizeof(s->problems) / sizeof(s->problems[0]))
		memcpy(s->problems[s->nproblems++], line, sizeof(line));
}

/* Up to `len` bytes from the input: how many (fewer at its end), or a negative errno. */
static ssize_t read_in(struct stream *s, void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		const ssize_t n = read(s->in, (uint8_t *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return jitmap__fail(s->err, -errno, s->in_off, "the core cannot be read: %s",
					    strerror(errno));
		if (n == 0)
			break;
		got += (size_t)n;
		s->in_off += (uint64_t)n;
	}
	return (ssize_t)got;
}

static int write_out(struct stream *s, const void *buf, size_t len)
{
	for (size_t done = 0; done < len;) {
		const ssize_t n = write(s->out, (const uint8_t *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return jitmap__fail(s->err, n < 0 ? -errno : -EIO, s->out_off,
					    "the core cannot be written: %s",
					    n < 0 ? strerror(errno) : "nothing was written");
		done += (size_t)n;
		s->out_off += (uint64_t)n;
	}
	return 0;
}

static int write_zeros(struct stream *s, uint64_t n)
{
	static const uint8_t zeros[PAGE];
	while (n) {
		const size_t k = n < sizeof(zeros) ? (size_t)n : sizeof(zeros);
		const int rc = write_out(s, zeros, k);
		if (rc)
			return rc;
		n -= k;
	}
	return 0;
}

/* The input's next `limit` bytes (UINT64_MAX: the rest), as they come: spliced when a pipe is
 * at either end, else copied. */
static int copy_on(struct stream *s, uint64_t limit)
{
	while (limit) {
		const size_t want = limit < (1 << 20) ? (size_t)limit : 1 << 20;
		const ssize_t n = splice(s->in, NULL, s->out, NULL, want, SPLICE_F_MOVE);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EINVAL || errno == ESPIPE || errno == EBADF))
			break; /* neither end a pipe (or a kernel that cannot): copy */
		if (n < 0)
			return jitmap__fail(s->err, -errno, s->in_off, "the core cannot be copied: %s",
					    strerror(errno));
		if (n == 0)
			return 0;
		s->in_off += (uint64_t)n;
		s->out_off += (uint64_t)n;
		limit -= limit == UINT64_MAX ? 0 : (uint64_t)n;
	}
	enum { BUF = 1 << 17 };
	uint8_t *buf = limit ? malloc(BUF) : NULL; /* the library's callers may be threads */
	if (limit && !buf)
		return jitmap__fail(s->err, -ENOMEM, s->in_off, "out of memory");
	int rc = 0;
	while (limit && !rc) {
		const size_t want = limit < BUF ? (size_t)limit : BUF;
		const ssize_t n = read_in(s, buf, want);
		if (n <= 0) {
			rc = (int)n;
			break;
		}
		rc = write_out(s, buf, (size_t)n);
		limit -= limit == UINT64_MAX ? 0 : (uint64_t)n;
	}
	free(buf);
	return rc;
}

/* -- The files -- */

static int take_file(void *ctx, const char *path)
{
	struct stream *s = ctx;
	const char *as = path;
	const size_t rl = strlen(s->root);
	if (rl && !strncmp(path, s->root, rl))
		as = path + rl;
	if (s->nsrc == MAX_FILES) {
		problem(s, "%s: more than %d JIT files: left out", as, MAX_FILES);
		return 0;
	}
	const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		const int e = fd < 0 ? errno : S_ISREG(st.st_mode) ? errno : EINVAL;
		if (fd >= 0)
			close(fd);
		problem(s, "%s cannot be read: %s", as, strerror(e));
		return 0;
	}
	uint8_t magic[4] = {0};
	const bool jitdump = pread(fd, magic, 4, 0) == 4 && jitmap__pm_jitdump_order(magic, 4, NULL);
	uint64_t size = (uint64_t)st.st_size;
	bool cut = false;
	const uint64_t each_max = UINT32_MAX - FILE_HEADER - 4096; /* a note's descriptor size */
	if (size > s->budget || size > each_max) {
		size = s->budget < each_max ? s->budget : each_max;
		cut = true;
		problem(s, "%s is %" PRIu64 " bytes: only its first %" PRIu64 " are added", as,
			(uint64_t)st.st_size, size);
	}
	s->budget -= size;
	char *copy = strdup(path);
	if (!copy) {
		close(fd);
		return -ENOMEM;
	}
	s->src[s->nsrc++] = (struct jit_src){.path = copy, .as = copy + (as - path), .fd = fd,
					     .kind = jitdump ? JITMAP_PERFMAP_JITDUMP
							     : JITMAP_PERFMAP_MAP,
					     .size = size, .cut = cut};
	return 0;
}

static uint64_t align(uint64_t n, uint64_t to)
{
	return (n + to - 1) / to * to;
}

static uint64_t file_note_size(const struct jit_src *f)
{
	return 12 + NAME_SZ + FILE_HEADER + align(strlen(f->as) + 1, 8) + align(f->size, 4);
}

static uint64_t notes_size(const struct stream *s)
{
	uint64_t n = 0;
	for (size_t i = 0; i < s->nsrc; i++)
		n += file_note_size(&s->src[i]);
	for (size_t i = 0; i < s->nproblems; i++)
		n += 12 + NAME_SZ + align(strlen(s->problems[i]) + 1, 4);
	return n;
}

static int note_header(struct stream *s, uint64_t descsz, uint32_t type)
{
	uint8_t h[12 + NAME_SZ] = {0};
	jitmap__store(h, sizeof(JITMAP_CORE_NOTE_NAME), 4, s->order);
	jitmap__store(h + 4, descsz, 4, s->order);
	jitmap__store(h + 8, type, 4, s->order);
	memcpy(h + 12, JITMAP_CORE_NOTE_NAME, sizeof(JITMAP_CORE_NOTE_NAME));
	return write_out(s, h, sizeof(h));
}

/* The file's bytes as it holds them now: a file that shrank since it was measured ends in
 * zeros, said. */
static int write_file_bytes(struct stream *s, struct jit_src *f)
{
	static uint8_t buf[1 << 16];
	uint64_t off = 0;
	while (off < f->size) {
		const size_t want = f->size - off < sizeof(buf) ? (size_t)(f->size - off) : sizeof(buf);
		const ssize_t n = pread(f->fd, buf, want, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			say(s, "%s ended at byte %" PRIu64 " while it was added: zeros after it",
			    f->as, off);
			return write_zeros(s, f->size - off);
		}
		const int rc = write_out(s, buf, (size_t)n);
		if (rc)
			return rc;
		off += (uint64_t)n;
	}
	return 0;
}

static int write_notes(struct stream *s)
{
	int rc = 0;
	for (size_t i = 0; i < s->nsrc && !rc; i++) {
		struct jit_src *f = &s->src[i];
		const size_t plen = strlen(f->as) + 1;
		const uint64_t desc = file_note_size(f) - 12 - NAME_SZ;
		uint8_t h[FILE_HEADER] = {0};
		jitmap__store(h, 1, 4, s->order);
		jitmap__store(h + 4, f->kind, 4, s->order);
		jitmap__store(h + 8, f->size, 8, s->order);
		jitmap__store(h + 16, plen, 4, s->order);
		jitmap__store(h + 20, f->cut ? JITMAP_CORE_FILE_CUT : 0, 4, s->order);
		if ((rc = note_header(s, desc, JITMAP_CORE_NOTE_FILE)) ||
		    (rc = write_out(s, h, sizeof(h))) || (rc = write_out(s, f->as, plen)) ||
		    (rc = write_zeros(s, align(plen, 8) - plen)) || (rc = write_file_bytes(s, f)))
			break;
		rc = write_zeros(s, align(f->size, 4) - f->size);
	}
	for (size_t i = 0; i < s->nproblems && !rc; i++) {
		const size_t len = strlen(s->problems[i]) + 1;
		if (!(rc = note_header(s, align(len, 4), JITMAP_CORE_NOTE_PROBLEM)) &&
		    !(rc = write_out(s, s->problems[i], len)))
			rc = write_zeros(s, align(len, 4) - len);
	}
	return rc;
}

/* -- The core's head -- */

struct head {
	uint8_t *bytes; /* [0, len) of the input */
	size_t len;
	uint64_t phnum, data; /* the program headers, and where the segments' bytes begin */
	uint64_t shoff, shnum; /* section headers (GDB's gcore writes them), after the data */
};

/* Whether the head is one this file can rewrite; why not in `why`. Reads the rest of the
 * head into h->bytes (which holds the ELF header already). */
static const char *read_head(struct stream *s, struct head *h)
{
	const uint8_t *e = h->bytes;
	if (h->len < EHDR || memcmp(e, ELFMAG, SELFMAG))
		return "not an ELF file";
	if (e[EI_CLASS] != ELFCLASS64 || (e[EI_DATA] != ELFDATA2LSB && e[EI_DATA] != ELFDATA2MSB))
		return "not a 64-bit ELF file";
	s->order = e[EI_DATA] == ELFDATA2MSB ? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE;
	if (jitmap__load(e + 16, 2, s->order) != ET_CORE)
		return "not a core file";
	const uint64_t phoff = jitmap__load(e + 32, 8, s->order);
	const uint64_t shoff = jitmap__load(e + 40, 8, s->order);
	const uint64_t phentsize = jitmap__load(e + 54, 2, s->order);
	h->phnum = jitmap__load(e + 56, 2, s->order);
	if (phoff != EHDR || phentsize != PHDR || !h->phnum)
		return "its program headers are not right after its ELF header";
	if (h->phnum >= PN_XNUM - 1)
		return "it has 65,534 segments or more (counted in a section header)";
	h->shoff = shoff;
	h->shnum = jitmap__load(e + 60, 2, s->order);
	if (shoff && (jitmap__load(e + 58, 2, s->order) != 64 || !h->shnum))
		return "its section headers are not of 64 bytes, or not counted in its ELF header";
	const uint64_t phend = EHDR + h->phnum * PHDR;
	uint8_t *grown = realloc(h->bytes, phend);
	if (!grown)
		return "out of memory";
	h->bytes = grown;
	ssize_t got = read_in(s, h->bytes + h->len, phend - h->len);
	if (got < 0)
		return NULL; /* the caller reads err */
	h->len += (size_t)got;
	if (h->len < phend)
		return "it ends inside its program headers";
	/* The head ends where the first PT_LOAD's bytes begin (the kernel's notes are before
	 * it; GDB's gcore puts them after its segments, in the part that is copied). */
	uint64_t data = UINT64_MAX, notes_end = phend;
	for (uint64_t i = 0; i < h->phnum; i++) {
		const uint8_t *p = h->bytes + EHDR + i * PHDR;
		const uint32_t type = (uint32_t)jitmap__load(p, 4, s->order);
		const uint64_t off = jitmap__load(p + 8, 8, s->order);
		const uint64_t filesz = jitmap__load(p + 32, 8, s->order);
		if (type == PT_LOAD && off < data)
			data = off;
		if (type == PT_NOTE && filesz) {
			if (off < phend || off > UINT64_MAX - filesz)
				return "a note segment lies inside its headers";
			if (off + filesz > notes_end)
				notes_end = off + filesz;
		}
	}
	if (data == UINT64_MAX)
		data = notes_end;
	if (data < phend)
		return "a segment's bytes lie inside its headers";
	for (uint64_t i = 0; i < h->phnum; i++) {
		const uint8_t *p = h->bytes + EHDR + i * PHDR;
		const uint64_t off = jitmap__load(p + 8, 8, s->order);
		const uint64_t filesz = jitmap__load(p + 32, 8, s->order);
		if (filesz && off < data && off + filesz > data)
			return "a note segment runs into its segments' bytes";
	}
	if (data > MAX_HEAD)
		return "its notes are larger than 256 MiB";
	if (h->shoff && h->shoff < data)
		return "its section headers are not after its segments' bytes";
	grown = realloc(h->bytes, data ? data : 1);
	if (!grown)
		return "out of memory";
	h->bytes = grown;
	got = read_in(s, h->bytes + h->len, data - h->len);
	if (got < 0)
		return NULL;
	h->len += (size_t)got;
	if (h->len < data)
		return "it ends before its segments' bytes";
	h->data = data;
	return "";
}

/* The head with one more program header (the new notes), each offset moved. */
static int write_head(struct stream *s, struct head *h, uint64_t notesz, uint64_t shift)
{
	const uint64_t phend = EHDR + h->phnum * PHDR;
	uint8_t *hdrs = malloc(phend + PHDR);
	if (!hdrs)
		return jitmap__fail(s->err, -ENOMEM, 0, "out of memory");
	memcpy(hdrs, h->bytes, phend);
	jitmap__store(hdrs + 56, h->phnum + 1, 2, s->order);
	if (h->shoff)
		jitmap__store(hdrs + 40, h->shoff + shift, 8, s->order);
	for (uint64_t i = 0; i < h->phnum; i++) {
		uint8_t *p = hdrs + EHDR + i * PHDR;
		const uint64_t off = jitmap__load(p + 8, 8, s->order);
		if (off >= h->data)
			jitmap__store(p + 8, off + shift, 8, s->order);
		else if (off >= phend)
			jitmap__store(p + 8, off + PHDR, 8, s->order);
	}
	uint8_t *n = hdrs + phend;
	memset(n, 0, PHDR);
	jitmap__store(n, PT_NOTE, 4, s->order);
	jitmap__store(n + 8, h->data + PHDR, 8, s->order); /* p_offset */
	jitmap__store(n + 32, notesz, 8, s->order);        /* p_filesz */
	jitmap__store(n + 48, 4, 8, s->order);             /* p_align */
	int rc = write_out(s, hdrs, phend + PHDR);
	free(hdrs);
	if (!rc)
		rc = write_out(s, h->bytes + phend, h->len - phend);
	return rc;
}

/* The rest of the input; the section headers, when it has some, with their offsets moved as
 * the program headers' were. */
static int write_tail(struct stream *s, const struct head *h, uint64_t shift)
{
	if (!h->shoff || !shift)
		return copy_on(s, UINT64_MAX);
	int rc = copy_on(s, h->shoff - h->data);
	const size_t len = (size_t)h->shnum * 64;
	uint8_t *sh = rc ? NULL : malloc(len);
	if (rc || !sh)
		return rc ? rc : jitmap__fail(s->err, -ENOMEM, 0, "out of memory");
	const ssize_t got = read_in(s, sh, len);
	if (got < 0) {
		free(sh);
		return (int)got;
	}
	const uint64_t phend = EHDR + h->phnum * PHDR;
	for (size_t i = 0; i + 64 <= (size_t)got; i += 64) {
		const uint64_t off = jitmap__load(sh + i + 24, 8, s->order);
		if (off >= h->data)
			jitmap__store(sh + i + 24, off + shift, 8, s->order);
		else if (off >= phend)
			jitmap__store(sh + i + 24, off + PHDR, 8, s->order);
	}
	rc = write_out(s, sh, (size_t)got);
	free(sh);
	return rc ? rc : copy_on(s, UINT64_MAX);
}

/* -- A small core --
 *
 * The head's program headers: the segments that are not PT_LOAD (the notes) keep their bytes,
 * copied one after the other; then jitmap's notes (the files, the problems, the small core's
 * note); then, from the next page, the kept parts of each PT_LOAD segment in the input's
 * order (each a PT_LOAD of its own, page-aligned in the file), read as they come (a pipe) or
 * where they are (a file). A segment's bytes the input never held (p_filesz < p_memsz: a file
 * the kernel did not dump) keep a header without bytes, as in the full core. Section headers
 * (gcore's) are dropped. */

#define SMALL_STACK (UINT64_C(8) << 20)
#define SMALL_RANGE 24

struct piece {
	uint64_t in_off, vaddr, len, memsz; /* len 0: a segment's undumped part (memsz bytes) */
	unsigned flags, why;
};

struct small {
	struct jitmap__small_seg *loads; /* in input order, then sorted by vaddr */
	size_t nloads;
	struct piece *pieces;
	size_t npieces;
	size_t pieces_cap;
	struct jitmap__small_left left;
	uint64_t stack_bytes, kept, full;
	uint64_t from_files; /* left-out bytes the mapped files hold */
	size_t descriptors;  /* JIT descriptors found */
};

static int seg_vaddr_cmp(const void *a, const void *b)
{
	const struct jitmap__small_seg *x = a, *y = b;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static int seg_offset_cmp(const void *a, const void *b)
{
	const struct jitmap__small_seg *x = a, *y = b;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static bool add_piece(struct small *m, struct piece p)
{
	if (jitmap__grow(&m->pieces, &m->pieces_cap, m->npieces + 1, sizeof(*m->pieces)))
		return false;
	m->pieces[m->npieces++] = p;
	return true;
}

/* The kept parts of each segment (`r`: sorted, merged), and what was left out of the bytes
 * it held (`have`: the input's size, UINT64_MAX when unknown). */
static int cut_segments(struct small *m, const struct jitmap__small_range *r, size_t nr,
			uint64_t have)
{
	for (size_t i = 0; i < m->nloads; i++) {
		const struct jitmap__small_seg *g = &m->loads[i];
		uint64_t filesz = g->filesz;
		if (g->offset >= have)
			filesz = 0;
		else if (filesz > have - g->offset)
			filesz = have - g->offset;
		const uint64_t end = g->vaddr + filesz;
		m->full += g->filesz;
		uint64_t at = g->vaddr; /* left out up to here */
		size_t k = JITMAP_UPPER_BOUND(r, nr, lo, g->vaddr);
		k = k ? k - 1 : 0;
		for (; k < nr && r[k].lo < end; k++) {
			const uint64_t lo = r[k].lo > g->vaddr ? r[k].lo : g->vaddr;
			const uint64_t hi = r[k].hi < end ? r[k].hi : end;
			if (hi <= lo)
				continue;
			if (jitmap__small_left_add(&m->left, at, lo, g->flags, false) ||
			    !add_piece(m, (struct piece){g->offset + (lo - g->vaddr), lo, hi - lo,
							 hi - lo, g->flags, r[k].why}))
				return -ENOMEM;
			m->kept += hi - lo;
			at = hi;
		}
		if (jitmap__small_left_add(&m->left, at, g->vaddr + g->filesz, g->flags, false))
			return -ENOMEM;
		if (g->memsz > g->filesz &&
		    !add_piece(m, (struct piece){0, g->vaddr + g->filesz, 0, g->memsz - g->filesz,
						 g->flags, 0}))
			return -ENOMEM;
	}
	return 0;
}

/* The input from the stream's position on: `len` bytes at `off` (>= the position) of a pipe,
 * those before it read and dropped; of a file, read where they are. */
static int copy_at(struct stream *s, bool seekable, uint64_t off, uint64_t len)
{
	if (seekable) {
		enum { BUF = 1 << 17 };
		uint8_t *buf = len ? malloc(BUF) : NULL;
		int rc = len && !buf ? jitmap__fail(s->err, -ENOMEM, off, "out of memory") : 0;
		while (len && !rc) {
			const size_t want = len < BUF ? (size_t)len : BUF;
			const ssize_t n = pread(s->in, buf, want, (off_t)off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				rc = jitmap__fail(s->err, n < 0 ? -errno : -EIO, off,
						  "the core cannot be read: %s",
						  n < 0 ? strerror(errno) : "it ends early");
				break;
			}
			rc = write_out(s, buf, (size_t)n);
			off += (uint64_t)n;
			len -= (uint64_t)n;
		}
		free(buf);
		return rc;
	}
	uint8_t drop[1 << 12];
	while (s->in_off < off) {
		const uint64_t d = off - s->in_off;
		const ssize_t n = read_in(s, drop, d < sizeof(drop) ? (size_t)d : sizeof(drop));
		if (n <= 0)
			return n < 0 ? (int)n : jitmap__fail(s->err, -EIO, s->in_off,
							     "the core ends early");
	}
	const uint64_t before = s->out_off;
	const int rc = copy_on(s, len);
	if (!rc && s->out_off - before < len)
		return jitmap__fail(s->err, -EIO, s->in_off, "the core ends early");
	return rc;
}

static int write_small_note(struct stream *s, const struct small *m)
{
	const uint64_t desc = 24 + (m->npieces + m->left.n) * SMALL_RANGE;
	uint8_t h[24] = {0};
	size_t kept = 0;
	for (size_t i = 0; i < m->npieces; i++)
		kept += m->pieces[i].len != 0;
	jitmap__store(h, 1, 4, s->order);
	jitmap__store(h + 4, kept, 4, s->order);
	jitmap__store(h + 8, m->left.n, 4, s->order);
	jitmap__store(h + 16, m->stack_bytes, 8, s->order);
	int rc = note_header(s, desc, JITMAP_CORE_NOTE_SMALL);
	if (!rc)
		rc = write_out(s, h, sizeof(h));
	for (size_t i = 0; i < m->npieces && !rc; i++) {
		const struct piece *p = &m->pieces[i];
		if (!p->len)
			continue;
		uint8_t r[SMALL_RANGE] = {0};
		jitmap__store(r, p->vaddr, 8, s->order);
		jitmap__store(r + 8, p->vaddr + p->len, 8, s->order);
		jitmap__store(r + 16, p->why, 4, s->order);
		rc = write_out(s, r, sizeof(r));
	}
	for (size_t i = 0; i < m->left.n && !rc; i++) {
		uint8_t r[SMALL_RANGE] = {0};
		jitmap__store(r, m->left.v[i].start, 8, s->order);
		jitmap__store(r + 8, m->left.v[i].end, 8, s->order);
		jitmap__store(r + 16, m->left.v[i].flags, 4, s->order);
		jitmap__store(r + 20, m->left.v[i].in_file, 4, s->order);
		rc = write_out(s, r, sizeof(r));
	}
	return rc;
}

/* A segment that is not PT_LOAD (the notes): its program header, its bytes. */
struct blob {
	const uint8_t *phdr;
	uint64_t off, len;
	uint8_t *bytes;
};

/* Whether and how the core can be made small: the process's memory to plan from (the core
 * file itself, or process `pid` for a pipe), or why not (`cant`; nothing written). */
static int plan_small(struct stream *s, struct head *h, struct small *m, bool seekable,
		      int pid, const jitmap_core_add_opts *opts, char *cant, size_t cant_len)
{
	jitmap_error err;
	char root[64] = "", path[64];
	if (pid)
		snprintf(root, sizeof(root), "/proc/%d/root", pid);
	const char *sysroot = opts && JITMAP_OPTS_HAS(opts, sysroot) ? opts->sysroot : NULL;
	JITMAP_OPTS(jitmap_core_opts, copts, .sysroot = sysroot ? sysroot : pid ? root : NULL,
		    .exe = opts && JITMAP_OPTS_HAS(opts, exe) ? opts->exe : NULL);
	jitmap_core *core;
	jitmap_live *live = NULL;
	jitmap_target mem;
	if (seekable) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", s->in);
		core = jitmap_core_open(path, &copts, &err);
		if (core)
			mem = jitmap_core_target(core);
	} else {
		if (!pid) {
			snprintf(cant, cant_len, "a core read from a pipe is made small with its "
				 "process at hand (PID), and none was given");
			return 0;
		}
		JITMAP_OPTS(jitmap_live_opts, lopts, .flags = JITMAP_LIVE_NO_STOP);
		live = jitmap_live_open(pid, &lopts, &err);
		core = live ? jitmap_core_open_memory(h->bytes, h->len, &copts, &err) : NULL;
		if (core)
			mem = jitmap_live_target(live);
	}
	if (!core || jitmap_core_small(core, NULL, NULL, NULL) == 1) {
		snprintf(cant, cant_len, "%s", core ? "it is a small core already" : err.reason);
		jitmap_core_free(core);
		jitmap_live_free(live);
		return 0;
	}
	struct jitmap__small_seg *sorted = malloc((m->nloads ? m->nloads : 1) * sizeof(*sorted));
	struct jitmap__small_range *r = NULL;
	size_t nr = 0;
	int rc = sorted ? 0 : -ENOMEM;
	if (sorted) {
		memcpy(sorted, m->loads, m->nloads * sizeof(*sorted));
		qsort(sorted, m->nloads, sizeof(*sorted), seg_vaddr_cmp);
		rc = jitmap__small_plan(core, &mem, sorted, m->nloads, m->stack_bytes, &r, &nr,
					&m->descriptors);
	}
	if (!rc && !m->descriptors)
		say(s, "no JIT descriptor was found in the files the core maps%s", core->have_file_note
		    ? "" : " (the core does not say which: give the program with --exe)");
	struct stat st;
	const uint64_t have = seekable && !fstat(s->in, &st) ? (uint64_t)st.st_size : UINT64_MAX;
	if (!rc)
		rc = cut_segments(m, r, nr, have);
	if (!rc)
		rc = jitmap__small_refine_left(core, &mem, &m->left, &m->from_files);
	jitmap_core_free(core);
	jitmap_live_free(live);
	free(sorted);
	free(r);
	return rc ? jitmap__fail(s->err, rc, 0, "out of memory") : 0;
}

/* The small core, written whole (0), or a negative errno; with `cant` set, nothing was
 * written and the caller passes the core on as it would. */
static int write_small(struct stream *s, struct head *h, int pid,
		       const jitmap_core_add_opts *opts, char *cant, size_t cant_len)
{
	const uint64_t stack_bytes = JITMAP_OPTS_HAS(opts, stack_bytes) ? opts->stack_bytes : 0;
	struct stat st;
	const bool seekable = !fstat(s->in, &st) && S_ISREG(st.st_mode);
	const uint64_t phend = EHDR + h->phnum * PHDR;
	struct small m = {.stack_bytes = stack_bytes ? stack_bytes : SMALL_STACK};
	m.loads = calloc(h->phnum, sizeof(*m.loads));
	struct blob *others = calloc(h->phnum, sizeof(*others));
	if (!m.loads || !others) {
		free(m.loads);
		free(others);
		return jitmap__fail(s->err, -ENOMEM, 0, "out of memory");
	}
	size_t nothers = 0;
	for (uint64_t i = 0; i < h->phnum; i++) {
		const uint8_t *p = h->bytes + EHDR + i * PHDR;
		const uint64_t off = jitmap__load(p + 8, 8, s->order);
		const uint64_t filesz = jitmap__load(p + 32, 8, s->order);
		if (jitmap__load(p, 4, s->order) == PT_LOAD) {
			m.loads[m.nloads++] = (struct jitmap__small_seg){
				.vaddr = jitmap__load(p + 16, 8, s->order),
				.memsz = jitmap__load(p + 40, 8, s->order), .filesz = filesz,
				.offset = off, .flags = (unsigned)jitmap__load(p + 4, 4, s->order)};
			continue;
		}
		others[nothers++] = (struct blob){.phdr = p, .off = off, .len = filesz};
		if (filesz && !seekable && (off < phend || off > h->len || filesz > h->len - off))
			snprintf(cant, cant_len, "its notes come after its memory, which a pipe "
				 "cannot go back to");
	}
	qsort(m.loads, m.nloads, sizeof(*m.loads), seg_offset_cmp);
	int rc = 0;
	if (!cant[0])
		rc = plan_small(s, h, &m, seekable, pid, opts, cant, cant_len);
	/* The notes' bytes, NT_FILE less what no file may stand for. */
	uint64_t others_bytes = 0;
	for (size_t i = 0; i < nothers && !rc && !cant[0]; i++) {
		struct blob *b = &others[i];
		if (b->len > MAX_HEAD) {
			snprintf(cant, cant_len, "a note segment is larger than 256 MiB");
			break;
		}
		if (!(b->bytes = malloc(b->len ? (size_t)b->len : 1))) {
			rc = jitmap__fail(s->err, -ENOMEM, 0, "out of memory");
			break;
		}
		if (b->off >= phend && b->off <= h->len && b->len <= h->len - b->off) {
			memcpy(b->bytes, h->bytes + b->off, (size_t)b->len);
		} else if (pread(s->in, b->bytes, (size_t)b->len, (off_t)b->off) != (ssize_t)b->len) {
			rc = jitmap__fail(s->err, -EIO, b->off, "the core's notes cannot be read");
			break;
		}
		size_t len;
		uint8_t *less = jitmap__load(b->phdr, 4, s->order) == PT_NOTE
					? jitmap__small_notes_less(s->order, &m.left, b->bytes,
								   (size_t)b->len, &len)
					: NULL;
		if (less) {
			free(b->bytes);
			b->bytes = less;
			b->len = len;
		}
		others_bytes += align(b->len, 8);
	}
	const uint64_t nph = nothers + 1 + m.npieces;
	if (!rc && !cant[0] && nph >= PN_XNUM)
		snprintf(cant, cant_len, "it would have %" PRIu64 " segments, more than a program "
			 "header count holds", nph);
	const uint64_t small_note = 12 + NAME_SZ + 24 + (m.npieces + m.left.n) * SMALL_RANGE;
	const uint64_t jit_notes = notes_size(s) + small_note;
	const uint64_t notes_at = EHDR + nph * PHDR;
	const uint64_t data_at = align(notes_at + others_bytes + jit_notes, PAGE);
	uint8_t *hdrs = rc || cant[0] ? NULL : calloc(1, notes_at);
	if (!rc && !cant[0] && !hdrs)
		rc = jitmap__fail(s->err, -ENOMEM, 0, "out of memory");
	if (hdrs) {
		memcpy(hdrs, h->bytes, EHDR);
		jitmap__store(hdrs + 40, 0, 8, s->order); /* e_shoff */
		jitmap__store(hdrs + 56, nph, 2, s->order);
		jitmap__store(hdrs + 60, 0, 2, s->order); /* e_shnum */
		jitmap__store(hdrs + 62, 0, 2, s->order); /* e_shstrndx */
		uint8_t *o = hdrs + EHDR;
		uint64_t at = notes_at;
		for (size_t i = 0; i < nothers; i++, o += PHDR) {
			memcpy(o, others[i].phdr, PHDR);
			jitmap__store(o + 8, at, 8, s->order);
			jitmap__store(o + 32, others[i].len, 8, s->order);
			at += align(others[i].len, 8);
		}
		jitmap__store(o, PT_NOTE, 4, s->order);
		jitmap__store(o + 8, at, 8, s->order);
		jitmap__store(o + 32, jit_notes, 8, s->order);
		jitmap__store(o + 48, 4, 8, s->order);
		o += PHDR;
		uint64_t data = data_at;
		for (size_t i = 0; i < m.npieces; i++, o += PHDR) {
			const struct piece *p = &m.pieces[i];
			jitmap__store(o, PT_LOAD, 4, s->order);
			jitmap__store(o + 4, p->flags, 4, s->order);
			jitmap__store(o + 8, data, 8, s->order); /* no bytes: where they would be */
			jitmap__store(o + 16, p->vaddr, 8, s->order);
			jitmap__store(o + 32, p->len, 8, s->order);
			jitmap__store(o + 40, p->memsz, 8, s->order);
			jitmap__store(o + 48, PAGE, 8, s->order);
			data += align(p->len, PAGE);
		}
		rc = write_out(s, hdrs, notes_at);
		for (size_t i = 0; i < nothers && !rc; i++)
			if (!(rc = write_out(s, others[i].bytes, (size_t)others[i].len)))
				rc = write_zeros(s, align(others[i].len, 8) - others[i].len);
		if (!rc && !(rc = write_notes(s)) && !(rc = write_small_note(s, &m)))
			rc = write_zeros(s, data_at - s->out_off);
		for (size_t i = 0; i < m.npieces && !rc; i++) {
			const struct piece *p = &m.pieces[i];
			if (p->len && !(rc = copy_at(s, seekable, p->in_off, p->len)))
				rc = write_zeros(s, align(p->len, PAGE) - p->len);
		}
		size_t ranges = 0;
		for (size_t i = 0; i < m.npieces; i++)
			ranges += m.pieces[i].len != 0;
		if (!rc && m.from_files)
			say(s, "a small core: %" PRIu64 " of the %" PRIu64 " bytes of memory the core "
			    "held kept, in %zu ranges (%" PRIu64 " more its mapped files hold)",
			    m.kept, m.full, ranges, m.from_files);
		else if (!rc)
			say(s, "a small core: %" PRIu64 " of the %" PRIu64 " bytes of memory the core "
			    "held kept, in %zu ranges", m.kept, m.full, ranges);
	}
	for (size_t i = 0; i < nothers; i++)
		free(others[i].bytes);
	free(others);
	free(hdrs);
	free(m.loads);
	free(m.pieces);
	free(m.left.v);
	return rc;
}

static void close_files(struct stream *s)
{
	for (size_t i = 0; i < s->nsrc; i++) {
		close(s->src[i].fd);
		free(s->src[i].path);
	}
	free(s->src);
}

int jitmap_core_add_jit_files(int in, int out, int pid, const jitmap_core_add_opts *opts,
			      char *note, size_t note_len, jitmap_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	if (note && note_len)
		note[0] = 0;
	if (in < 0 || out < 0 || pid < 0)
		return jitmap__fail(err, -EINVAL, 0, "no input, output or process");
	if (opts && (opts->sz < sizeof(opts->sz) || !JITMAP__OPTS_VALID(opts, exe)))
		return jitmap__fail(err, -EINVAL, 0, "jitmap_core_add_opts has fields this library "
				    "does not know");
	char root[64] = "";
	struct stream s = {.in = in, .out = out, .note = note, .note_len = note_len, .err = err,
			   .root = root, .budget = MAX_BYTES};
	if (opts && JITMAP_OPTS_HAS(opts, max_bytes) && opts->max_bytes)
		s.budget = opts->max_bytes;
	struct head h = {.bytes = malloc(EHDR)};
	if (!h.bytes)
		return jitmap__fail(err, -ENOMEM, 0, "out of memory");
	ssize_t got = read_in(&s, h.bytes, EHDR);
	int rc = got < 0 ? (int)got : 0;
	const char *why = "";
	if (!rc) {
		h.len = (size_t)got;
		why = read_head(&s, &h);
		if (!why)
			rc = err ? err->code : -EIO;
	}
	s.src = rc ? NULL : calloc(MAX_FILES, sizeof(*s.src));
	if (!rc && !s.src)
		rc = jitmap__fail(err, -ENOMEM, 0, "out of memory");
	if (!rc && !why[0]) {
		if (pid) {
			snprintf(root, sizeof(root), "/proc/%d/root", pid);
			rc = jitmap__perfmap_process_paths(pid, take_file, &s);
			rc = rc == -EINVAL ? 0 : rc < 0 ? rc : 0;
			root[0] = 0;
		}
		for (size_t i = 0; !rc && opts && JITMAP_OPTS_HAS(opts, nfiles) && i < opts->nfiles;
		     i++)
			rc = take_file(&s, opts->files[i]);
		if (rc)
			jitmap__fail(err, rc, 0, "out of memory");
	}
	int added = 0;
	uint64_t shift = 0;
	const bool small = opts && JITMAP_OPTS_HAS(opts, flags) &&
			   (opts->flags & JITMAP_CORE_ADD_SMALL);
	char cant[256] = "";
	if (!rc && !why[0] && small) {
		rc = write_small(&s, &h, pid, opts, cant, sizeof(cant));
		if (!rc && !cant[0]) {
			free(h.bytes);
			close_files(&s);
			return (int)s.nsrc;
		}
		if (rc && !s.out_off) { /* nothing written yet: the core goes on whole */
			snprintf(cant, sizeof(cant), "%s", err ? err->reason : "an error");
			rc = 0;
			if (err)
				memset(err, 0, sizeof(*err));
		}
		if (cant[0])
			say(&s, "the core is not made small: %s", cant);
	}
	if (!rc && !why[0] && s.nsrc) {
		const uint64_t notesz = notes_size(&s);
		shift = align(PHDR + notesz, PAGE);
		if (!(rc = write_head(&s, &h, notesz, shift)) && !(rc = write_notes(&s)) &&
		    !(rc = write_zeros(&s, shift - PHDR - notesz)))
			added = (int)s.nsrc;
	} else if (!rc) {
		/* Passed through as it came. */
		if (why[0])
			say(&s, "the core is passed on unchanged: %s", why);
		else
			say(&s, "no perf map or jitdump file was found: the core is passed on "
				"unchanged");
		rc = write_out(&s, h.bytes, h.len);
	}
	free(h.bytes);
	close_files(&s);
	if (!rc)
		rc = write_tail(&s, &h, added ? shift : 0);
	return rc < 0 ? rc : added;
}

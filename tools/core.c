/* core.c: process memory and symbols from a Linux core file (see core.h).
 *
 * Layouts: the ELF program headers of ET_CORE (PT_LOAD: vaddr, memsz, and filesz bytes at
 * offset in the core; PT_NOTE: notes), and the Linux NT_FILE note ("CORE", 0x46494c45):
 * count, page_size, then count x {start, end, file_ofs in pages}, then count NUL-terminated
 * paths (fs/binfmt_elf.c, fill_files_note). 64-bit cores only: LLVM stackmaps exist only for
 * 64-bit targets.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

#define MAX_MAPS 100000
#define MAX_WARNINGS 32

struct seg {
	uint64_t vaddr, memsz, filesz, offset;
};

struct map {
	uint64_t start, end, offset; /* offset in bytes into the file */
	size_t file;                 /* index into files */
};

struct file {
	char *path;
	int fd;       /* -1 until opened; -2 when it cannot be */
	uint64_t size;
};

struct core {
	int fd;
	uint64_t size;
	Elf *elf;
	unsigned machine;
	jitmap_byte_order order;
	struct seg *segs;
	size_t nsegs;
	struct map *maps;
	size_t nmaps;
	struct file *files;
	size_t nfiles;
	char *warnings[MAX_WARNINGS];
	size_t nwarnings;
};

static int fail(jitmap_error *err, int code, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(jitmap_error *err, int code, uint64_t off, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		err->code = code;
		err->offset = off;
		va_start(ap, fmt);
		vsnprintf(err->reason, sizeof(err->reason), fmt, ap);
		va_end(ap);
	}
	return code;
}

static void warn(struct core *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warn(struct core *c, const char *fmt, ...)
{
	if (c->nwarnings == MAX_WARNINGS)
		return;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&c->warnings[c->nwarnings], fmt, ap) >= 0)
		c->nwarnings++;
	va_end(ap);
}

static uint64_t load(const uint8_t *p, jitmap_byte_order order)
{
	uint64_t v = 0;
	if (order == JITMAP_ORDER_BIG)
		for (int i = 0; i < 8; i++)
			v = v << 8 | p[i];
	else
		for (int i = 7; i >= 0; i--)
			v = v << 8 | p[i];
	return v;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* -- The NT_FILE note -- */

static size_t file_index(struct core *c, const char *path, const char *exe)
{
	if (exe && !strcmp(base_name(path), base_name(exe)))
		path = exe;
	for (size_t i = 0; i < c->nfiles; i++)
		if (!strcmp(c->files[i].path, path))
			return i;
	struct file *f = realloc(c->files, (c->nfiles + 1) * sizeof(*f));
	if (!f)
		return SIZE_MAX;
	c->files = f;
	char *copy = strdup(path);
	if (!copy)
		return SIZE_MAX;
	c->files[c->nfiles] = (struct file){copy, -1, 0};
	return c->nfiles++;
}

static int read_nt_file(struct core *c, const uint8_t *d, size_t len, uint64_t at, const char *exe,
			jitmap_error *err)
{
	if (len < 16)
		return fail(err, -EINVAL, at, "NT_FILE note of %zu bytes is too short", len);
	const uint64_t count = load(d, c->order), page = load(d + 8, c->order);
	if (count > MAX_MAPS || count * 24 > len - 16)
		return fail(err, -EINVAL, at, "NT_FILE note claims %" PRIu64 " mappings in %zu bytes",
			    count, len);
	const char *names = (const char *)d + 16 + count * 24, *end = (const char *)d + len;
	c->maps = calloc(count ? count : 1, sizeof(*c->maps));
	if (!c->maps)
		return fail(err, -ENOMEM, 0, "out of memory");
	for (uint64_t i = 0; i < count; i++) {
		const uint8_t *e = d + 16 + i * 24;
		const char *nul = memchr(names, 0, (size_t)(end - names));
		if (!nul)
			return fail(err, -EINVAL, at, "NT_FILE note: path %" PRIu64 " is not terminated", i);
		size_t fi = file_index(c, names, exe);
		if (fi == SIZE_MAX)
			return fail(err, -ENOMEM, 0, "out of memory");
		const uint64_t start = load(e, c->order), stop = load(e + 8, c->order);
		const uint64_t pages = load(e + 16, c->order);
		if (stop >= start && (!page || pages <= UINT64_MAX / page))
			c->maps[c->nmaps++] = (struct map){start, stop, pages * page, fi};
		names = nul + 1;
	}
	return 0;
}

/* -- Opening -- */

struct core *core_open(const char *path, const char *exe, jitmap_error *err)
{
	struct core *c = calloc(1, sizeof(*c));
	int rc;
	if (err)
		memset(err, 0, sizeof(*err));
	if (!c) {
		fail(err, -ENOMEM, 0, "out of memory");
		return NULL;
	}
	c->fd = -1;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		fail(err, -ENOTSUP, 0, "libelf is too old");
		goto bad;
	}
	c->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0) {
		fail(err, -errno, 0, "cannot open: %s", strerror(errno));
		goto bad;
	}
	off_t end = lseek(c->fd, 0, SEEK_END);
	c->size = end > 0 ? (uint64_t)end : 0;
	c->elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	if (!c->elf || !gelf_getehdr(c->elf, &eh)) {
		fail(err, -EINVAL, 0, "not an ELF file: %s", elf_errmsg(-1));
		goto bad;
	}
	if (eh.e_type != ET_CORE || eh.e_ident[EI_CLASS] != ELFCLASS64) {
		fail(err, -EINVAL, 0, "not a 64-bit core file");
		goto bad;
	}
	c->machine = eh.e_machine;
	c->order = eh.e_ident[EI_DATA] == ELFDATA2MSB ? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE;
	size_t nph;
	if (elf_getphdrnum(c->elf, &nph)) {
		fail(err, -EINVAL, eh.e_phoff, "bad program headers: %s", elf_errmsg(-1));
		goto bad;
	}
	c->segs = calloc(nph ? nph : 1, sizeof(*c->segs));
	if (!c->segs) {
		fail(err, -ENOMEM, 0, "out of memory");
		goto bad;
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(c->elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_LOAD) {
			/* Contents past the end of a truncated core are treated as not dumped. */
			uint64_t filesz = ph.p_filesz;
			if (ph.p_offset > c->size)
				filesz = 0;
			else if (filesz > c->size - ph.p_offset)
				filesz = c->size - ph.p_offset;
			if (filesz < ph.p_filesz)
				warn(c, "the core is truncated: segment at 0x%" PRIx64 " has %" PRIu64
				     " of its %" PRIu64 " bytes", ph.p_vaddr, filesz, (uint64_t)ph.p_filesz);
			c->segs[c->nsegs++] = (struct seg){ph.p_vaddr, ph.p_memsz, filesz, ph.p_offset};
		} else if (ph.p_type == PT_NOTE && !c->maps) {
			if (ph.p_offset > c->size || ph.p_filesz > c->size - ph.p_offset)
				continue;
			Elf_Data *d = elf_getdata_rawchunk(c->elf, (int64_t)ph.p_offset, ph.p_filesz,
							   ELF_T_NHDR);
			if (!d)
				continue;
			size_t off = 0, name_off, desc_off;
			GElf_Nhdr nh;
			while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
				if (nh.n_type != NT_FILE || nh.n_namesz != 5 ||
				    memcmp((const char *)d->d_buf + name_off, "CORE", 5))
					continue;
				rc = read_nt_file(c, (const uint8_t *)d->d_buf + desc_off, nh.n_descsz,
						  ph.p_offset + desc_off, exe, err);
				if (rc)
					goto bad;
				break;
			}
		}
	}
	if (!c->maps)
		warn(c, "the core has no NT_FILE note: symbols cannot be found in the mapped files");
	if (exe) {
		size_t i;
		for (i = 0; i < c->nfiles && strcmp(c->files[i].path, exe); i++)
			;
		if (i == c->nfiles)
			warn(c, "--exe %s: the core maps no file named %s", exe, base_name(exe));
	}
	return c;
bad:
	core_free(c);
	return NULL;
}

void core_free(struct core *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nfiles; i++) {
		if (c->files[i].fd >= 0)
			close(c->files[i].fd);
		free(c->files[i].path);
	}
	for (size_t i = 0; i < c->nwarnings; i++)
		free(c->warnings[i]);
	free(c->files);
	free(c->maps);
	free(c->segs);
	if (c->elf)
		elf_end(c->elf);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

unsigned core_machine(const struct core *c) { return c->machine; }
jitmap_byte_order core_byte_order(const struct core *c) { return c->order; }

const char *core_warning(const struct core *c, size_t i)
{
	return i < c->nwarnings ? c->warnings[i] : NULL;
}

/* -- Memory -- */

static int file_fd(struct core *c, size_t i)
{
	struct file *f = &c->files[i];
	if (f->fd == -1) {
		f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
		if (f->fd < 0) {
			f->fd = -2;
		} else {
			off_t end = lseek(f->fd, 0, SEEK_END);
			f->size = end > 0 ? (uint64_t)end : 0;
		}
	}
	return f->fd;
}

/* Read what is at `addr` from the file mapped there; returns bytes read (0: none). */
static size_t read_mapped(struct core *c, uint64_t addr, uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < c->nmaps; i++) {
		const struct map *m = &c->maps[i];
		if (addr < m->start || addr >= m->end)
			continue;
		int fd = file_fd(c, m->file);
		if (fd < 0)
			return 0;
		uint64_t n = m->end - addr < len ? m->end - addr : len;
		const uint64_t at = m->offset + (addr - m->start);
		if (at < m->offset || at >= c->files[m->file].size)
			return 0;
		if (n > c->files[m->file].size - at)
			n = c->files[m->file].size - at;
		ssize_t got = pread(fd, buf, (size_t)n, (off_t)at);
		return got > 0 ? (size_t)got : 0;
	}
	return 0;
}

static int core_read_mem(void *ctx, uint64_t addr, void *out, size_t len, char *why,
			 size_t why_len)
{
	struct core *c = ctx;
	uint8_t *buf = out;
	while (len) {
		size_t got = 0;
		for (size_t i = 0; i < c->nsegs && !got; i++) {
			const struct seg *s = &c->segs[i];
			if (addr < s->vaddr || addr - s->vaddr >= s->memsz)
				continue;
			const uint64_t in = addr - s->vaddr;
			if (in < s->filesz) {
				uint64_t n = s->filesz - in < len ? s->filesz - in : len;
				ssize_t r = pread(c->fd, buf, (size_t)n, (off_t)(s->offset + in));
				got = r > 0 ? (size_t)r : 0;
			} else {
				/* Not dumped (a read-only file mapping): from the file, if any. */
				uint64_t n = s->memsz - in < len ? s->memsz - in : len;
				got = read_mapped(c, addr, buf, (size_t)n);
			}
		}
		if (!got)
			got = read_mapped(c, addr, buf, len);
		if (!got) {
			snprintf(why, why_len, "address 0x%" PRIx64 " is not in the core or its files", addr);
			return -EFAULT;
		}
		addr += got;
		buf += got;
		len -= got;
	}
	return 0;
}

jitmap_target core_target(struct core *c)
{
	return (jitmap_target){.ctx = c, .read_reg = NULL, .read_mem = core_read_mem};
}

/* -- Symbols -- */

/* The load bias of file `fi`: where its first page is mapped, minus where its first PT_LOAD
 * wants to be (0 for a fixed-address executable). */
static int file_bias(struct core *c, size_t fi, Elf *elf, uint64_t *bias)
{
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
		if (c->maps[i].file == fi && c->maps[i].offset == 0) {
			*bias = c->maps[i].start - (first & ~(uint64_t)0xfff);
			return 0;
		}
	return -1;
}

size_t core_find_symbol(struct core *c, const char *name, uint64_t *out, const char **files,
			size_t max)
{
	size_t n = 0;
	for (size_t fi = 0; fi < c->nfiles; fi++) {
		int fd = file_fd(c, fi);
		if (fd < 0) {
			if (fd == -2 && c->files[fi].path[0] == '/') {
				warn(c, "%s (mapped by the core) cannot be opened: symbols in it are not "
				     "found", c->files[fi].path);
				c->files[fi].fd = -3; /* warned once */
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
		int found = 0;
		Elf_Scn *scn = NULL;
		while (!found && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
				continue;
			Elf_Data *d = elf_getdata(scn, NULL);
			if (!d || !sh.sh_entsize)
				continue;
			const size_t count = d->d_size / sh.sh_entsize;
			for (size_t i = 0; i < count; i++) {
				GElf_Sym s;
				if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
				    GELF_ST_TYPE(s.st_info) != STT_OBJECT)
					continue;
				const char *sn = elf_strptr(elf, sh.sh_link, s.st_name);
				if (!sn || strcmp(sn, name))
					continue;
				if (n < max) {
					out[n] = s.st_value + bias;
					if (files)
						files[n] = c->files[fi].path;
				}
				n++;
				found = 1;
				break;
			}
		}
		elf_end(elf);
	}
	return n;
}

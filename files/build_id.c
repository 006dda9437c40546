/* build_id.c: build IDs (NT_GNU_BUILD_ID), the note that tells one build of a file from
 * another: of an open ELF, a file, headers in memory, an image mapped in a target. */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

size_t jitmap__elf_build_id(Elf *elf, uint8_t *out)
{
	size_t nph;
	if (elf_getphdrnum(elf, &nph))
		return 0;
	for (size_t i = 0; i < nph && i < 4096; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE || !ph.p_filesz)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						   ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (!d || !d->d_buf)
			continue;
		size_t off = 0, next, name_off, desc_off;
		GElf_Nhdr nh;
		while (off < d->d_size && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (next <= off || name_off > d->d_size || nh.n_namesz > d->d_size - name_off ||
			    desc_off > d->d_size || nh.n_descsz > d->d_size - desc_off)
				break;
			off = next;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((const char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz &&
			    nh.n_descsz <= JITMAP__MAX_BUILD_ID) {
				memcpy(out, (const char *)d->d_buf + desc_off, nh.n_descsz);
				return nh.n_descsz;
			}
		}
	}
	return 0;
}

size_t jitmap__buffer_build_id(void *buf, size_t len, uint8_t *out)
{
	Elf *elf = elf_memory(buf, len);
	const size_t n = elf && elf_kind(elf) == ELF_K_ELF ? jitmap__elf_build_id(elf, out) : 0;
	elf_end(elf);
	return n;
}

size_t jitmap__fd_build_id(int fd, uint8_t *out)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const size_t n = elf && elf_kind(elf) == ELF_K_ELF ? jitmap__elf_build_id(elf, out) : 0;
	elf_end(elf);
	return n;
}

size_t jitmap__file_build_id(const char *path, uint8_t *out)
{
	struct stat st;
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	const size_t n = jitmap__fd_build_id(fd, out);
	close(fd);
	return n;
}

/* The first page of a mapped ELF image: what the kernel dumps of every ELF mapping and what
 * ld puts the program headers and notes in. */
#define BUILD_ID_PAGE 4096

/* The head of the mapping at `addr` into `buf` (BUILD_ID_PAGE bytes): a page, or for a mapping
 * shorter than a page what there is, halving down to an ELF header's 64 bytes. How many bytes
 * were read, 0 when not even those. */
static size_t read_head(const jitmap_target *t, uint64_t addr, uint8_t *buf)
{
	char why[8];
	size_t n = BUILD_ID_PAGE;
	while (n >= 64 && t->read_mem(t->ctx, addr, buf, n, why, sizeof(why)))
		n /= 2;
	return n >= 64 ? n : 0;
}

size_t jitmap__target_build_id(const jitmap_target *t, uint64_t addr, uint8_t *out)
{
	if (!t || !t->read_mem)
		return 0;
	uint8_t *page = malloc(BUILD_ID_PAGE);
	if (!page)
		return 0;
	const size_t n = read_head(t, addr, page);
	const size_t id = n ? jitmap__buffer_build_id(page, n, out) : 0;
	free(page);
	return id;
}

void jitmap__build_id_hex(const uint8_t *id, size_t n, char *buf, size_t len)
{
	size_t k = 0;
	if (len)
		buf[0] = 0;
	for (size_t i = 0; i < n && k + 3 <= len; i++, k += 2)
		snprintf(buf + k, len - k, "%02x", id[i]);
}

size_t jitmap_image_build_id_at(const jitmap_target *target, uint64_t addr, uint8_t *out,
				size_t len)
{
	uint8_t id[JITMAP__MAX_BUILD_ID];
	const size_t n = out ? jitmap__target_build_id(target, addr, id) : 0;
	if (!n || n > len)
		return 0;
	memcpy(out, id, n);
	return n;
}

/* -- Where a mapped file's bytes are placed --
 *
 * A module's offset, as crash pipelines key symbols by it (Breakpad, Sentry, debuginfod
 * clients), is a virtual address of the file: the one its symbols and CFI use. The program
 * headers say which file bytes each PT_LOAD segment places at which of those addresses; the
 * mapping holding a PC says which file byte is there. */

/* Program headers read at most, and the bytes read for them: a linker puts them in the first
 * page; a file with more, past it, is read up to this much. */
#define MAX_PHDR_BYTES 65536

int jitmap__elf_file_vaddr(void *buf, size_t len, uint64_t off, uint64_t *vaddr)
{
	Elf *elf = elf_memory(buf, len);
	GElf_Ehdr eh;
	size_t nph;
	int found = 0;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) || elf_getphdrnum(elf, &nph))
		goto out;
	for (size_t i = 0; i < nph && i < 4096; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* The segment's file bytes only: past p_filesz the loader maps zeros (.bss), and a
		 * page's bytes before p_offset belong to no segment. */
		if (off >= ph.p_offset && off - ph.p_offset < ph.p_filesz) {
			*vaddr = ph.p_vaddr + (off - ph.p_offset);
			found = 1;
			break;
		}
	}
out:
	elf_end(elf);
	return found;
}

/* How many bytes the ELF header in `buf` (`len` bytes) says its program headers reach: the
 * bytes to read for them, or 0 when it is no ELF header. */
static size_t phdr_reach(const uint8_t *buf, size_t len)
{
	if (len < EI_NIDENT || memcmp(buf, ELFMAG, SELFMAG))
		return 0;
	const bool wide = buf[EI_CLASS] == ELFCLASS64, big = buf[EI_DATA] == ELFDATA2MSB;
	const size_t at_off = wide ? 32 : 28, at_ent = wide ? 54 : 42;
	if (len < at_ent + 4)
		return 0;
	uint64_t phoff = 0;
	for (size_t i = 0, n = wide ? 8 : 4; i < n; i++)
		phoff |= (uint64_t)buf[at_off + (big ? i : n - 1 - i)] << (8 * (n - 1 - i));
	const unsigned ent = big ? (unsigned)buf[at_ent] << 8 | buf[at_ent + 1]
				  : (unsigned)buf[at_ent + 1] << 8 | buf[at_ent];
	const unsigned num = big ? (unsigned)buf[at_ent + 2] << 8 | buf[at_ent + 3]
				  : (unsigned)buf[at_ent + 3] << 8 | buf[at_ent + 2];
	const uint64_t reach = phoff + (uint64_t)ent * num; /* 16 bits each: no overflow */
	return phoff > MAX_PHDR_BYTES || reach > MAX_PHDR_BYTES ? 0 : (size_t)reach;
}

int jitmap__target_file_vaddr(const jitmap_target *t, uint64_t head, uint64_t off,
			      uint64_t *vaddr)
{
	if (!t || !t->read_mem)
		return 0;
	uint8_t *buf = malloc(BUILD_ID_PAGE);
	if (!buf)
		return 0;
	char why[8];
	size_t n = read_head(t, head, buf);
	const size_t reach = n ? phdr_reach(buf, n) : 0;
	if (reach > n) { /* program headers past the first page: read as far as they go */
		uint8_t *more = realloc(buf, reach);
		if (more)
			buf = more;
		n = more && !t->read_mem(t->ctx, head, buf, reach, why, sizeof(why)) ? reach : 0;
	}
	const int found = reach ? jitmap__elf_file_vaddr(buf, n, off, vaddr) : 0;
	free(buf);
	return found;
}

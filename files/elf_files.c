/* elf_files.c: ELF files that are not images of stackmaps: the data symbols and sections of a
 * file a process loaded, for the core and process modules, and files whose sections are
 * compressed (jitmap_elf_compressed, jitmap_elf_decompress). */
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <unistd.h>

#include "internal.h"

/* -- Symbols and sections of a loaded file, for the core and process modules -- */

/* A defined data object named `name`. */
static bool is_object_named(Elf *elf, size_t strndx, const GElf_Sym *s, const char *name)
{
	const char *sn;
	return s->st_shndx != SHN_UNDEF && GELF_ST_TYPE(s->st_info) == STT_OBJECT &&
	       (sn = elf_strptr(elf, strndx, s->st_name)) && !strcmp(sn, name);
}

/*
 * `name` in the .dynsym `syms` (section `ndx`, names in section `strndx`) by the GNU hash table
 * linked to it, as the dynamic linker finds it: a few words of the table and the names in one
 * chain, where reading every symbol of libLLVM touched 1 MB of symbols and 3 MB of names. 1 and
 * the symbol when found; 0 when the table's Bloom filter says it is not there; -1 when there is
 * no table, it does not hold together, or its filter says the name may be there and its chain
 * does not have it (the caller then reads every symbol: a damaged table hides nothing that its
 * filter still shows).
 */
static int gnu_hash_find(Elf *elf, size_t ndx, Elf_Data *syms, size_t strndx, const char *name,
			 GElf_Sym *out)
{
	Elf_Scn *scn = NULL;
	Elf_Data *h = NULL;
	while (!h && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_HASH && sh.sh_link == ndx)
			h = elf_getdata(scn, NULL);
	}
	/* libelf gives the words in the host's order: a header of 4, the Bloom filter (words of
	 * the class's size), a bucket per hash value, a chain word per hashed symbol. */
	const size_t nw = h && h->d_buf ? h->d_size / 4 : 0;
#define WORD(i) ({ uint32_t w_; memcpy(&w_, (const char *)h->d_buf + 4 * (i), 4); w_; })
	if (nw < 4)
		return -1;
	const size_t nbuckets = WORD(0), symoffset = WORD(1), nbloom = WORD(2);
	const unsigned shift = WORD(3), bits = gelf_getclass(elf) == ELFCLASS64 ? 64 : 32;
	const size_t bloom = nbloom * (bits / 32);
	if (!nbuckets || !nbloom || bloom > nw - 4 || nbuckets > nw - 4 - bloom)
		return -1;
	const size_t buckets = 4 + bloom, chain = buckets + nbuckets;
	uint32_t hash = 5381;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		hash = hash * 33 + *c;
	/* The filter: two bits of one word, both set for every name the table holds. */
	uint64_t word = 0;
	memcpy(&word, (const char *)h->d_buf + 16 + (hash / bits % nbloom) * (bits / 8), bits / 8);
	if (bits == 32)
		word = (uint32_t)word;
	if (!(word >> (hash % bits) & 1) || !(word >> ((hash >> (shift % 32)) % bits) & 1))
		return 0;
	for (size_t i = WORD(buckets + hash % nbuckets); i >= symoffset; i++) {
		if (i - symoffset >= nw - chain || i > INT_MAX)
			return -1;
		const uint32_t c = WORD(chain + i - symoffset);
		GElf_Sym sym;
		if ((c | 1) == (hash | 1) && gelf_getsym(syms, (int)i, &sym) &&
		    is_object_named(elf, strndx, &sym, name)) {
			*out = sym;
			return 1;
		}
		if (c & 1)
			break; /* the chain's last */
	}
	return -1; /* an empty bucket, or a chain without it, where the filter has it */
#undef WORD
}

int jitmap__elf_data_symbol(Elf *elf, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		GElf_Sym s;
		const int hashed =
			sh.sh_type == SHT_DYNSYM
				? gnu_hash_find(elf, elf_ndxscn(scn), d, sh.sh_link, name, &s)
				: -1;
		if (hashed == 1) {
			*value = s.st_value;
			return 0;
		}
		const size_t count = hashed ? d->d_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < count && i <= INT_MAX; i++) {
			if (gelf_getsym(d, (int)i, &s) &&
			    is_object_named(elf, sh.sh_link, &s, name)) {
				*value = s.st_value;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int jitmap__elf_section_address(Elf *elf, const char *name, uint64_t *addr)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOENT;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sn;
		if (gelf_getshdr(scn, &sh) && sh.sh_addr &&
		    (sn = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(sn, name)) {
			*addr = sh.sh_addr;
			return 0;
		}
	}
	return -ENOENT;
}

/* -- Compressed sections -- */

int jitmap_elf_compressed(int fd, uint64_t *uncompressed_size)
{
	uint64_t total = 0;
	int any = 0;
	if (uncompressed_size)
		*uncompressed_size = 0;
	if (fd < 0 || jitmap__elf_ready(NULL))
		return 0;
	/* libelf reads with pread: the caller's file offset stays where it was. */
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		return 0;
	if (elf_kind(e) == ELF_K_ELF) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh))
				break;
			if (sh.sh_flags & SHF_COMPRESSED) {
				GElf_Chdr ch;
				any = 1;
				total += gelf_getchdr(scn, &ch) ? ch.ch_size : sh.sh_size;
			} else if (sh.sh_type != SHT_NOBITS) {
				total += sh.sh_size;
			}
		}
	}
	elf_end(e);
	if (uncompressed_size)
		*uncompressed_size = total;
	return any;
}

/* `from`'s bytes onto `to` from offset 0 (both by pread/pwrite). 0 or -errno. */
static int copy_bytes(int from, int to)
{
	char buf[1 << 16];
	off_t off = 0;
	for (;;) {
		const ssize_t n = pread(from, buf, sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		for (ssize_t done = 0; done < n;) {
			const ssize_t w = pwrite(to, buf + done, (size_t)(n - done), off + done);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
			done += w;
		}
		off += n;
	}
}

int jitmap_elf_decompress(int in, int out)
{
	if (in < 0 || out < 0 || jitmap__elf_ready(NULL))
		return -EINVAL;
	/* The copy first, then libelf rewrites it in place with every section inflated. */
	int rc = copy_bytes(in, out);
	if (rc)
		return rc;
	Elf *e = elf_begin(out, ELF_C_RDWR, NULL);
	if (!e)
		return -EINVAL;
	rc = elf_kind(e) == ELF_K_ELF ? 0 : -EINVAL;
	Elf_Scn *scn = NULL;
	while (!rc && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			rc = -EINVAL;
		else if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			rc = -EINVAL;
	}
	if (!rc && elf_update(e, ELF_C_WRITE) < 0)
		rc = -EIO;
	elf_end(e);
	return rc;
}

/* elf_with_code.c: an image as a file for a debugger's module list (jitmap_image_with_code).
 *
 * A JIT that registers an image whose code sections are SHT_NOBITS at the code's address
 * (libjitmap-producer, LuaJIT) leaves the code in the process: GDB and LLDB's own JIT loader
 * read it there. A debugger given the image as a file reads a read-only section from the file
 * instead (LLDB's Target::ReadMemory prefers the file for read-only sections), and since LLDB
 * 19 an allocated SHT_NOBITS section is zero-fill, so it reads zeros: its assembly profiling
 * then sees no prologue, and frames above one without CFI lose their caller. The copy made
 * here carries the code. */
#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>

#include "internal.h"

/* Most bytes of code copied into one image (the front ends cap the image they read too). */
#define MAX_FILLED_CODE (UINT64_C(256) << 20)

/* Lay out (and with `out`, fill) the copy: each empty code section placed in memory gets
 * its bytes appended, aligned to its sh_addralign (a usual one: 1 to 4096, else 16).
 * Returns the number of sections filled with *need the copy's length, or a negative errno. */
static int with_code(Elf *elf, const GElf_Ehdr *eh, size_t nscn, size_t len,
		     const jitmap_target *t, uint8_t *out, uint64_t *need, jitmap_error *err)
{
	uint64_t at = len, code = 0;
	int filled = 0;
	for (size_t i = 1; i < nscn; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_getscn(elf, i);
		if (!scn || !gelf_getshdr(scn, &sh))
			return jitmap__fail(err, -EINVAL, eh->e_shoff + i * sizeof(Elf64_Shdr),
					    "section %zu: %s", i, elf_errmsg(-1));
		if (sh.sh_type != SHT_NOBITS || !sh.sh_addr || !sh.sh_size ||
		    (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR))
			continue;
		const uint64_t hdr = eh->e_shoff + i * sizeof(Elf64_Shdr);
		if (sh.sh_size > MAX_FILLED_CODE - code)
			return jitmap__fail(err, -EFBIG, hdr,
					    "the code sections hold more than %" PRIu64 " bytes",
					    MAX_FILLED_CODE);
		const uint64_t align = sh.sh_addralign && !(sh.sh_addralign & (sh.sh_addralign - 1)) &&
				       sh.sh_addralign <= 4096 ? sh.sh_addralign : 16;
		at = (at + align - 1) & ~(align - 1);
		if (out) {
			char why[128] = "";
			int rc = t->read_mem(t->ctx, sh.sh_addr, out + at, (size_t)sh.sh_size, why,
					     sizeof(why));
			if (rc)
				return jitmap__fail(err, rc < 0 ? rc : -EFAULT, hdr,
						    "section %zu's code at 0x%" PRIx64 " (%" PRIu64
						    " bytes) is not readable: %s", i, (uint64_t)sh.sh_addr,
						    (uint64_t)sh.sh_size,
						    why[0] ? why : jitmap_strerror(rc < 0 ? rc : -EFAULT));
			const jitmap_byte_order order = eh->e_ident[EI_DATA] == ELFDATA2MSB
				? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE;
			jitmap__store(out + hdr + offsetof(Elf64_Shdr, sh_type), SHT_PROGBITS, 4, order);
			jitmap__store(out + hdr + offsetof(Elf64_Shdr, sh_offset), at, 8, order);
		}
		at += sh.sh_size;
		code += sh.sh_size;
		filled++;
	}
	*need = at;
	return filled;
}

int jitmap_image_with_code(const void *buf, size_t len, const jitmap_target *target, void *out,
			   size_t *out_len, jitmap_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	if (!buf || !out_len || !target || !target->read_mem)
		return jitmap__fail(err, -EINVAL, 0, "bad arguments");
	int rc = jitmap__elf_ready(err);
	if (rc)
		return rc;
	char *copy = malloc(len ? len : 1);
	if (!copy)
		return jitmap__fail(err, -ENOMEM, 0, "out of memory");
	memcpy(copy, buf, len);
	Elf *elf = elf_memory(copy, len);
	GElf_Ehdr eh;
	size_t nscn = 0;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		rc = jitmap__fail(err, -EINVAL, 0, "not an ELF image");
		goto out;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64) {
		rc = jitmap__fail(err, -EINVAL, EI_CLASS, "not a 64-bit ELF image");
		goto out;
	}
	/* The section headers are patched in place: they must be ELF64's, inside the image.
	 * (libelf sees no sections at all when the table lies past the end: the header's count
	 * is checked first, as elf.c's open_elf does; with e_shnum 0 the count is in section 0.) */
	uint64_t count = eh.e_shnum ? eh.e_shnum : eh.e_shoff ? 1 : 0;
	size_t extended = 0;
	if (!eh.e_shnum && eh.e_shoff && !elf_getshdrnum(elf, &extended) && extended > 1)
		count = extended;
	nscn = count > SIZE_MAX ? SIZE_MAX : (size_t)count;
	if (nscn && (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > len ||
		     nscn > (len - eh.e_shoff) / sizeof(Elf64_Shdr))) {
		rc = jitmap__fail(err, -EINVAL, offsetof(Elf64_Ehdr, e_shoff),
				  "the section header table is not ELF64's inside the image");
		goto out;
	}
	uint64_t need = 0;
	rc = with_code(elf, &eh, nscn, len, target, NULL, &need, err);
	if (rc < 0)
		goto out;
	if (!out || *out_len < need) {
		*out_len = (size_t)need;
		rc = -ENOSPC;
		goto out;
	}
	memcpy(out, buf, len);
	memset((uint8_t *)out + len, 0, (size_t)(need - len));
	rc = with_code(elf, &eh, nscn, len, target, out, &need, err);
	if (rc >= 0)
		*out_len = (size_t)need;
out:
	if (elf)
		elf_end(elf);
	free(copy);
	return rc;
}

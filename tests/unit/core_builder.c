/* core_builder.c: synthetic Linux core files (see core_builder.h). */
#define _GNU_SOURCE
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core_builder.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

void cb_init(core_builder *b, unsigned machine, jitmap_byte_order order)
{
	memset(b, 0, sizeof(*b));
	b->order = order;
	b->machine = machine;
	b->type = ET_CORE;
	b->elf_class = ELFCLASS64;
}

void cb_put(const core_builder *b, uint8_t *p, uint64_t v, size_t size)
{
	for (size_t i = 0; i < size; i++) {
		const size_t shift = 8 * (b->order == JITMAP_ORDER_BIG ? size - 1 - i : i);
		p[i] = (uint8_t)(v >> shift);
	}
}

static void append(core_builder *b, const void *p, size_t n)
{
	if (n > sizeof(b->notes) - b->notes_len)
		abort();
	if (p)
		memcpy(b->notes + b->notes_len, p, n);
	else
		memset(b->notes + b->notes_len, 0, n);
	b->notes_len += n;
	while (b->notes_len % 4) /* pad */
		b->notes[b->notes_len++] = 0;
}

void cb_note_raw(core_builder *b, uint32_t namesz, uint32_t descsz, uint32_t type,
		 const char *name, size_t name_bytes, const void *desc, size_t desc_bytes)
{
	uint8_t h[12];
	cb_put(b, h, namesz, 4);
	cb_put(b, h + 4, descsz, 4);
	cb_put(b, h + 8, type, 4);
	append(b, h, sizeof(h));
	append(b, name, name_bytes);
	append(b, desc, desc_bytes);
}

void cb_note(core_builder *b, uint32_t type, const char *name, const void *desc, size_t len)
{
	const size_t n = strlen(name) + 1;
	cb_note_raw(b, (uint32_t)n, (uint32_t)len, type, name, n, desc, len);
}

void cb_prstatus(core_builder *b, uint32_t tid, int sig, const uint8_t *regs, size_t len)
{
	uint8_t d[CB_PRSTATUS_REG + 512 + 8] = {0};
	if (len > 512)
		abort();
	cb_put(b, d, (uint64_t)sig, 4);       /* si_signo */
	cb_put(b, d + 12, (uint64_t)sig, 2);  /* pr_cursig */
	cb_put(b, d + 32, tid, 4);            /* pr_pid */
	cb_put(b, d + 36, 1, 4);              /* pr_ppid */
	memcpy(d + CB_PRSTATUS_REG, regs, len);
	cb_note(b, NT_PRSTATUS, "CORE", d, CB_PRSTATUS_REG + len + 8);
}

void cb_auxv(core_builder *b, const uint64_t *pairs, size_t n)
{
	uint8_t *d = calloc(n + 1, 16);
	if (!d)
		abort();
	for (size_t i = 0; i < 2 * n; i++)
		cb_put(b, d + 8 * i, pairs[i], 8);
	cb_note(b, NT_AUXV, "CORE", d, 16 * (n + 1));
	free(d);
}

void cb_file(core_builder *b, uint64_t page, size_t n, const uint64_t (*maps)[3],
	     const char *const *paths)
{
	size_t len = 16 + 24 * n;
	for (size_t i = 0; i < n; i++)
		len += strlen(paths[i]) + 1;
	uint8_t *d = calloc(1, len), *p = d;
	if (!d)
		abort();
	cb_put(b, p, n, 8);
	cb_put(b, p + 8, page, 8);
	p += 16;
	for (size_t i = 0; i < n; i++, p += 24)
		for (int k = 0; k < 3; k++)
			cb_put(b, p + 8 * k, maps[i][k], 8);
	for (size_t i = 0; i < n; i++) {
		memcpy(p, paths[i], strlen(paths[i]) + 1);
		p += strlen(paths[i]) + 1;
	}
	cb_note(b, NT_FILE, "CORE", d, len);
	free(d);
}

void cb_load(core_builder *b, uint64_t vaddr, uint64_t memsz, const uint8_t *data,
	     uint64_t filesz)
{
	if (b->nloads == CB_MAX_LOADS)
		abort();
	b->loads[b->nloads++] = (cb_segment){vaddr, memsz, filesz, data, PF_R | PF_W};
}

uint8_t *cb_emit(core_builder *b, size_t *len)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	int fd = memfd_create("jitmap-core-builder", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	uint8_t *out = NULL;
	Elf *e = elf_begin(fd, ELF_C_WRITE, NULL);
	GElf_Ehdr eh;
	const size_t nph = 1 + b->nloads;
	const size_t ehsize = b->elf_class == ELFCLASS64 ? 64 : 52;
	const size_t phsize = b->elf_class == ELFCLASS64 ? 56 : 32;
	if (!e || !gelf_newehdr(e, (int)b->elf_class) || !gelf_getehdr(e, &eh))
		goto done;
	eh.e_ident[EI_DATA] = b->order == JITMAP_ORDER_BIG ? ELFDATA2MSB : ELFDATA2LSB;
	eh.e_type = (GElf_Half)b->type;
	eh.e_machine = (GElf_Half)b->machine;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = b->phoff = ehsize;
	if (!gelf_update_ehdr(e, &eh) || !gelf_newphdr(e, nph))
		goto done;
	uint64_t off = ehsize + phsize * nph;
	b->notes_off = off = (off + 3) & ~(uint64_t)3;
	off += b->notes_len;
	GElf_Phdr ph = {.p_type = PT_NOTE, .p_offset = b->notes_off, .p_filesz = b->notes_len,
			.p_align = 4};
	if (!gelf_update_phdr(e, 0, &ph))
		goto done;
	for (size_t i = 0; i < b->nloads; i++) {
		off = (off + 15) & ~(uint64_t)15;
		b->load_off[i] = off;
		ph = (GElf_Phdr){.p_type = PT_LOAD, .p_flags = b->loads[i].flags, .p_offset = off,
				 .p_vaddr = b->loads[i].vaddr, .p_filesz = b->loads[i].filesz,
				 .p_memsz = b->loads[i].memsz, .p_align = 16};
		off += b->loads[i].filesz;
		if (!gelf_update_phdr(e, (int)(i + 1), &ph))
			goto done;
	}
	elf_flagelf(e, ELF_C_SET, ELF_F_LAYOUT);
	if (elf_update(e, ELF_C_WRITE) < 0)
		goto done;
	elf_end(e);
	e = NULL;
	if (pwrite(fd, b->notes, b->notes_len, (off_t)b->notes_off) != (ssize_t)b->notes_len)
		goto done;
	for (size_t i = 0; i < b->nloads; i++)
		if (b->loads[i].filesz &&
		    pwrite(fd, b->loads[i].data, b->loads[i].filesz, (off_t)b->load_off[i]) !=
			    (ssize_t)b->loads[i].filesz)
			goto done;
	if (ftruncate(fd, (off_t)off))
		goto done;
	out = malloc(off ? off : 1);
	if (out && pread(fd, out, off, 0) != (ssize_t)off) {
		free(out);
		out = NULL;
	}
	*len = off;
done:
	if (e)
		elf_end(e);
	close(fd);
	return out;
}

/* -- Cores the kernel writes -- */

char *cb_kernel_core(const char *dir, void (*crash)(void *), void *arg, pid_t *pid_out)
{
	char pattern[256] = "";
	FILE *f = fopen("/proc/sys/kernel/core_pattern", "r");
	if (f) {
		if (!fgets(pattern, sizeof(pattern), f))
			pattern[0] = 0;
		fclose(f);
	}
	if (pattern[0] == '|' || strchr(pattern, '/'))
		return NULL;
	fflush(NULL);
	const pid_t pid = fork();
	if (pid < 0)
		return NULL;
	if (pid == 0) {
		struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
		if (chdir(dir) || setrlimit(RLIMIT_CORE, &rl))
			_exit(3);
		crash(arg);
		_exit(4);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status) || !WCOREDUMP(status))
		return NULL;
	if (pid_out)
		*pid_out = pid;
	char *path = NULL;
	struct stat st;
	if (asprintf(&path, "%s/core.%d", dir, (int)pid) > 0 && !stat(path, &st))
		return path;
	free(path);
	if (asprintf(&path, "%s/core", dir) > 0 && !stat(path, &st))
		return path;
	free(path);
	return NULL;
}

/* core.c: Linux core files (the face they have: include/jitmap/stopped.h).
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
 *
 * This file reads the core: its notes, segments and mapped files, --exe, the files of a core
 * without NT_FILE. Its memory is core_memory.c's, its files' symbols core_symbols.c's; what
 * the three see of a core is in targets/internal.h.
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
#include "jitmap/core.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif
#ifndef NT_SIGINFO
#define NT_SIGINFO 0x53494749
#endif

#define MAX_AUXV 4096       /* auxv pairs kept */
#define MAX_BUILD_ID JITMAP__MAX_BUILD_ID
#define PRSTATUS_REG 112    /* offset of pr_reg in the 64-bit elf_prstatus */

/* The statuses of its warnings (stopped.h's kinds and codes). */
#define TRUNCATED JITMAP__WARN(JITMAP_PROBLEM_TRUNCATED)
#define MALFORMED JITMAP__WARN(JITMAP_PROBLEM_MALFORMED)
#define PLACED JITMAP__WARN(JITMAP_PROBLEM_FILES_PLACED)
#define LIMIT JITMAP__WARN(JITMAP_PROBLEM_LIMIT)

/* A warning with its status (JITMAP__WARN(JITMAP_PROBLEM_...), stopped.h's codes). */
static void warn(jitmap__core *c, uint8_t status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void warn(jitmap__core *c, uint8_t status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	jitmap__status_vproblem(&c->warnings, c->warn_status, JITMAP__CORE_MAX_WARNINGS, status,
				fmt, ap);
	va_end(ap);
}

/* -- Threads: NT_PRSTATUS, its pr_reg laid out as Linux does (threads.c, linux_regs.c) -- */

static int add_thread(jitmap__core *c, const uint8_t *d, size_t len, uint64_t at)
{
	if (len < PRSTATUS_REG) {
		warn(c, MALFORMED,
		     "NT_PRSTATUS note at offset 0x%" PRIx64 " of %zu bytes is too short: thread "
		     "left out", at, len);
		return 0;
	}
	const uint32_t tid = (uint32_t)jitmap__load(d + 32, 4, c->order);
	struct jitmap__thread *t = jitmap__threads_add(&c->threads, (pid_t)tid, c);
	if (!t)
		return -ENOMEM;
	jitmap__thread_set_signal(t, (int16_t)jitmap__load(d + 12, 2, c->order));
	/* Registers that do not fit in the note are left out. */
	const int rc = jitmap__thread_set_regs(t, c->arch, d + PRSTATUS_REG, len - PRSTATUS_REG);
	if (rc == -ENOMEM)
		return rc;
	if (rc)
		jitmap__thread_failed(t, rc == -ENOTSUP ? rc : -ENODATA,
				      "the core holds no registers for it");
	return 0;
}

/* -- NT_PRPSINFO: the process's name --
 *
 * struct elf_prpsinfo of 64-bit Linux (include/uapi/linux/elfcore.h; GDB's gcore writes the
 * same): four chars, pr_flag (a long, at 8), pr_uid and pr_gid (4 bytes each on every 64-bit
 * architecture), four pids, then pr_fname[16] at 40 (the comm, as /proc/PID/comm says it)
 * and pr_psargs[80] at 56 (the command line's first 80 bytes, arguments joined by spaces). */

#define PRPSINFO_FNAME 40
#define PRPSINFO_PSARGS 56

static void read_prpsinfo(jitmap__core *c, const uint8_t *d, size_t len, uint64_t at)
{
	if (len < PRPSINFO_FNAME + 16) {
		warn(c, MALFORMED,
		     "NT_PRPSINFO note at offset 0x%" PRIx64 " of %zu bytes is too short: the "
		     "process's name is not known", at, len);
		return;
	}
	memcpy(c->name, d + PRPSINFO_FNAME, 16); /* not NUL-terminated when 16 long */
	c->name[16] = 0;
	if (len >= PRPSINFO_PSARGS + 80) {
		memcpy(c->args, d + PRPSINFO_PSARGS, 80);
		c->args[80] = 0;
		/* Linux turns each argument's NUL into a space, the last one's too */
		for (size_t n = strlen(c->args); n && c->args[n - 1] == ' '; n--)
			c->args[n - 1] = 0;
	}
}

/* -- NT_SIGINFO: why the thread before it stopped --
 *
 * A siginfo_t of 64-bit Linux (128 bytes): si_signo, si_errno, si_code, then at 16 the
 * union, whose first field is si_addr for the signals a fault raises (SIGILL, SIGTRAP,
 * SIGBUS, SIGFPE, SIGSEGV) when the kernel sent them (si_code > 0); a signal another process
 * sent holds its sender's pid there instead. The kernel writes one, after the NT_PRSTATUS of
 * the thread that caused the dump; GDB's gcore one after each thread's. */

static void read_siginfo(jitmap__core *c, const uint8_t *d, size_t len)
{
	struct jitmap__thread *t = c->threads.n ? jitmap__threads_at(&c->threads,
								     c->threads.n - 1) : NULL;
	if (!t || t->has_siginfo || len < 24)
		return;
	t->has_siginfo = true;
	t->sig_no = (int)(uint32_t)jitmap__load(d, 4, c->order);
	t->sig_code = (int)(uint32_t)jitmap__load(d + 8, 4, c->order);
	const int s = t->sig_no;
	if (t->sig_code > 0 && (s == 4 || s == 5 || s == 7 || s == 8 || s == 11))
		t->sig_addr = jitmap__load(d + 16, 8, c->order);
}

/* -- NT_AUXV -- */

static int read_auxv(jitmap__core *c, const uint8_t *d, size_t len)
{
	size_t n = len / 16;
	if (n > MAX_AUXV) {
		warn(c, LIMIT,
		     "NT_AUXV holds %zu entries: only the first %d are read", n, MAX_AUXV);
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

/* Returns 0 (a malformed note is a warning), or -ENOMEM. */
static int read_nt_file(jitmap__core *c, const uint8_t *d, size_t len, uint64_t at)
{
	if (len < 16) {
		warn(c, MALFORMED,
		     "NT_FILE note at offset 0x%" PRIx64 " of %zu bytes is too short: no mapped "
		     "files", at, len);
		return 0;
	}
	const uint64_t count = jitmap__load(d, 8, c->order), page = jitmap__load(d + 8, 8, c->order);
	if (count > JITMAP__CORE_MAX_MAPS || count * 24 > len - 16) {
		warn(c, MALFORMED,
		     "NT_FILE note at offset 0x%" PRIx64 " claims %" PRIu64 " mappings in %zu "
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
			warn(c, MALFORMED,
			     "NT_FILE note at offset 0x%" PRIx64 ": path %" PRIu64 " of %" PRIu64
			     " is not terminated: the rest are left out", at, i, count);
			break;
		}
		const uint64_t start = jitmap__load(e, 8, c->order), stop = jitmap__load(e + 8, 8, c->order);
		const uint64_t pages = jitmap__load(e + 16, 8, c->order);
		if (stop > start && (!page || pages <= UINT64_MAX / page)) {
			size_t fi = jitmap__core_file_index(c, names);
			if (fi == SIZE_MAX)
				return -ENOMEM;
			c->maps[c->nmaps] = (jitmap_stopped_mapping_info){start, stop, pages * page, NULL, NULL};
			c->map_file[c->nmaps++] = fi;
		} else {
			bad++;
		}
		names = nul + 1;
	}
	if (bad)
		warn(c, MALFORMED,
		     "NT_FILE note at offset 0x%" PRIx64 ": %zu mapping%s with an empty range or "
		     "an offset past 2^64 left out", at, bad, bad == 1 ? "" : "s");
	return 0;
}

/* -- Notes -- */

static int read_notes(jitmap__core *c, uint64_t offset, uint64_t filesz)
{
	if (offset > c->size) {
		warn(c, TRUNCATED,
		     "the core is truncated: its notes at offset 0x%" PRIx64 " are missing", offset);
		return 0;
	}
	if (filesz > c->size - offset) {
		warn(c, TRUNCATED,
		     "the core is truncated: %" PRIu64 " of the %" PRIu64 " bytes of notes at "
		     "offset 0x%" PRIx64 " are there", c->size - offset, filesz, offset);
		filesz = c->size - offset;
	}
	if (!filesz)
		return 0;
	Elf_Data *d = elf_getdata_rawchunk(c->elf, (int64_t)offset, filesz, ELF_T_NHDR);
	if (!d || !d->d_buf) {
		warn(c, MALFORMED,
		     "the notes at offset 0x%" PRIx64 " cannot be read: %s", offset, elf_errmsg(-1));
		return 0;
	}
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;
	while (off < d->d_size && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		/* libelf checks these; we do not rely on it. */
		if (name_off > d->d_size || nh.n_namesz > d->d_size - name_off ||
		    desc_off > d->d_size || nh.n_descsz > d->d_size - desc_off || next <= off) {
			warn(c, MALFORMED,
			     "a note at offset 0x%" PRIx64 " runs past its segment", offset + off);
			break;
		}
		const uint64_t at = offset + desc_off;
		off = next;
		const uint8_t *desc = (const uint8_t *)d->d_buf + desc_off;
		if (nh.n_namesz == sizeof(JITMAP_CORE_NOTE_NAME) &&
		    !memcmp((const char *)d->d_buf + name_off, JITMAP_CORE_NOTE_NAME,
			    sizeof(JITMAP_CORE_NOTE_NAME))) {
			const int rc = jitmap__core_jit_note(c, nh.n_type, desc, nh.n_descsz, at);
			if (rc)
				return rc;
			continue;
		}
		if (nh.n_namesz != 5 || memcmp((const char *)d->d_buf + name_off, "CORE", 5))
			continue;
		int rc = 0;
		switch (nh.n_type) {
		case NT_PRSTATUS:
			rc = add_thread(c, desc, nh.n_descsz, at);
			break;
		case NT_PRPSINFO:
			if (!c->name[0])
				read_prpsinfo(c, desc, nh.n_descsz, at);
			break;
		case NT_SIGINFO:
			read_siginfo(c, desc, nh.n_descsz);
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
	const struct jitmap__core_seg *x = a, *y = b;
	if (x->vaddr != y->vaddr)
		return (x->vaddr > y->vaddr) - (x->vaddr < y->vaddr);
	return (x->index > y->index) - (x->index < y->index);
}

static void sort_segs(jitmap__core *c)
{
	qsort(c->segs, c->nsegs, sizeof(*c->segs), cmp_seg);
	size_t n = 0, overlaps = 0;
	uint64_t end = 0;
	for (size_t i = 0; i < c->nsegs; i++) {
		struct jitmap__core_seg s = c->segs[i];
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
		warn(c, MALFORMED,
		     "%zu PT_LOAD segment%s overlap%s an earlier one: the lower address's bytes "
		     "are used", overlaps, overlaps == 1 ? "" : "s", overlaps == 1 ? "s" : "");
}

struct map_sort {
	jitmap_stopped_mapping_info m;
	size_t file, index;
};

static int cmp_map(const void *a, const void *b)
{
	const struct map_sort *x = a, *y = b;
	if (x->m.start != y->m.start)
		return (x->m.start > y->m.start) - (x->m.start < y->m.start);
	return (x->index > y->index) - (x->index < y->index);
}

static int sort_maps(jitmap__core *c)
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
		warn(c, MALFORMED, "%zu NT_FILE mapping%s overlap%s an earlier one", overlaps,
		     overlaps == 1 ? "" : "s", overlaps == 1 ? "s" : "");
	return 0;
}

/* Point every mapping at its file's strings (after the files array stopped moving). */
static void link_maps(jitmap__core *c)
{
	for (size_t i = 0; i < c->nmaps; i++) {
		c->maps[i].path = c->files[c->map_file[i]].path;
		c->maps[i].core_path = c->files[c->map_file[i]].core_path;
	}
}

/* -- Opening -- */

static jitmap__core *open_fail(jitmap__core *c, jitmap_error *err, int code, uint64_t off,
			      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static jitmap__core *open_fail(jitmap__core *c, jitmap_error *err, int code, uint64_t off,
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
	jitmap__core_free(c);
	errno = -code;
	return NULL;
}

static jitmap__core *finish_open(jitmap__core *c, const jitmap__core_opts *opts, jitmap_error *err)
{
	const char *exe = NULL;
	/* As libbpf's OPTS_VALID: a newer caller's fields this library does not know must be 0. */
	if (opts && opts->sz < sizeof(opts->sz))
		return open_fail(c, err, -EINVAL, 0, "jitmap__core_opts.sz is %zu", opts->sz);
	if (opts && !JITMAP__OPTS_VALID(opts, debug_dirs))
		return open_fail(c, err, -EINVAL, 0, "jitmap__core_opts has fields this library "
				 "does not know (set past byte %zu)",
				 JITMAP__OFFSETOFEND(jitmap__core_opts, debug_dirs));
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
	if (opts && JITMAP_OPTS_HAS(opts, debug_dirs) && opts->debug_dirs &&
	    !(c->debug_dirs = strdup(opts->debug_dirs)))
		return open_fail(c, err, -ENOMEM, 0, "out of memory");

	GElf_Ehdr eh;
	if (!c->elf || elf_kind(c->elf) != ELF_K_ELF || !gelf_getehdr(c->elf, &eh)) {
		const int e = elf_errno(); /* libelf says "no error" of a file too short for one */
		return open_fail(c, err, -EINVAL, 0, "not an ELF file (%" PRIu64 " byte%s)%s%s",
				 c->size, c->size == 1 ? "" : "s", e ? ": " : "",
				 e ? elf_errmsg(e) : "");
	}
	if (eh.e_type != ET_CORE || eh.e_ident[EI_CLASS] != ELFCLASS64)
		return open_fail(c, err, -EINVAL, 0, "not a 64-bit core file");
	if (eh.e_ident[EI_DATA] != ELFDATA2LSB && eh.e_ident[EI_DATA] != ELFDATA2MSB)
		return open_fail(c, err, -EINVAL, EI_DATA, "unknown byte order %u",
				 eh.e_ident[EI_DATA]);
	c->machine = eh.e_machine;
	c->arch = jitmap_arch_from_elf_machine(eh.e_machine);
	c->order = eh.e_ident[EI_DATA] == ELFDATA2MSB ? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE;
	c->threads.order = c->order;
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
		warn(c, TRUNCATED,
		     "the core is truncated: %zu of its %u program headers are there", nph,
		     (unsigned)eh.e_phnum);
	/* libelf reads 56-byte headers whatever e_phentsize says. */
	if (nph && eh.e_phentsize != sizeof(Elf64_Phdr))
		warn(c, MALFORMED,
		     "e_phentsize is %u, not %zu: the program headers are read as %zu-byte "
		     "headers", (unsigned)eh.e_phentsize, sizeof(Elf64_Phdr), sizeof(Elf64_Phdr));
	c->segs = calloc(nph ? nph : 1, sizeof(*c->segs));
	struct jitmap__core_seg *notes = calloc(nph ? nph : 1, sizeof(*notes));
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
				warn(c, MALFORMED,
				     "segment at 0x%" PRIx64 " of %" PRIu64 " bytes wraps around the "
				     "address space: its bytes from 2^64 - 1 on are left out",
				     (uint64_t)ph.p_vaddr, (uint64_t)ph.p_memsz);
			}
			if (ph.p_filesz > ph.p_memsz && oversized++ < 3)
				warn(c, MALFORMED,
				     "segment at 0x%" PRIx64 " says the core holds %" PRIu64 " bytes "
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
				warn(c, TRUNCATED,
				     "the core is truncated: segment at 0x%" PRIx64 " has %" PRIu64
				     " of its %" PRIu64 " bytes", (uint64_t)ph.p_vaddr, filesz,
				     (uint64_t)ph.p_filesz);
			if (memsz)
				c->segs[c->nsegs++] = (struct jitmap__core_seg){
					.vaddr = ph.p_vaddr, .memsz = memsz, .filesz = filesz,
					.want = ph.p_filesz < memsz ? ph.p_filesz : memsz,
					.offset = ph.p_offset, .flags = ph.p_flags, .index = i};
		} else if (ph.p_type == PT_NOTE) {
			notes[nnotes++] = (struct jitmap__core_seg){.filesz = ph.p_filesz, .offset = ph.p_offset,
						       .index = i};
		}
	}
	if (bad)
		warn(c, MALFORMED, "%zu program header%s cannot be read", bad, bad == 1 ? "" : "s");
	if (truncated > 3)
		warn(c, TRUNCATED,
		     "the core is truncated (it ends at offset 0x%" PRIx64 "): %zu segments in "
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
	if (!c->have_file_note && exe && jitmap__core_files_from_exe(c, exe))
		return open_fail(c, err, -ENOMEM, 0, "out of memory");
	if (sort_maps(c))
		return open_fail(c, err, -ENOMEM, 0, "out of memory");
	if (!c->have_file_note && !exe)
		warn(c, PLACED,
		     "the core has no NT_FILE note: symbols cannot be found in the mapped files "
		     "(give the executable with --exe)");
	if (c->have_file_note && exe && jitmap__core_match_exe(c, exe))
		return open_fail(c, err, -ENOMEM, 0, "out of memory");
	link_maps(c);
	return c;
}

static jitmap__core *core_new(jitmap_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	jitmap__core *c = calloc(1, sizeof(*c));
	if (!c)
		return open_fail(NULL, err, -ENOMEM, 0, "out of memory");
	c->fd = -1;
	jitmap__threads_init(&c->threads, true, JITMAP_ORDER_LITTLE); /* its order: e_ident's */
	if (elf_version(EV_CURRENT) == EV_NONE)
		return open_fail(c, err, -ENOTSUP, 0, "libelf is too old");
	return c;
}

jitmap__core *jitmap__core_open(const char *path, const jitmap__core_opts *opts, jitmap_error *err)
{
	jitmap__core *c = core_new(err);
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
	/* A compressed core (systemd-coredump's): the core it holds, in a temporary file. */
	uint8_t head[8];
	const ssize_t got = pread(c->fd, head, sizeof(head), 0);
	const char *codec = got > 0 ? jitmap_compression_of(head, (size_t)got) : NULL;
	char cut[192] = "";
	if (codec) {
		const volatile sig_atomic_t *stop =
			opts && JITMAP_OPTS_HAS(opts, interrupt) ? opts->interrupt : NULL;
		const int fd = jitmap__decompress(c->fd, codec, stop, &c->size, cut, sizeof(cut),
						  err);
		if (fd < 0) {
			jitmap__core_free(c);
			errno = -fd;
			return NULL;
		}
		close(c->fd);
		c->fd = fd;
		c->compression = codec;
	}
	if (cut[0])
		warn(c, TRUNCATED, "%s", cut);
	c->elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL);
	return finish_open(c, opts, err);
}

const char *jitmap__core_compression(const jitmap__core *c)
{
	return c ? c->compression : NULL;
}

int jitmap_core_decompress(const char *path, const volatile sig_atomic_t *interrupt, char *note,
			   size_t note_len, jitmap_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	if (note && note_len)
		note[0] = 0;
	if (!path)
		return jitmap__fail(err, -EINVAL, 0, "no path");
	const int in = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (in < 0)
		return jitmap__fail(err, -errno, 0, "cannot open: %s", strerror(errno));
	struct stat st;
	uint8_t head[8];
	ssize_t got = -1;
	if (!fstat(in, &st) && S_ISREG(st.st_mode))
		got = pread(in, head, sizeof(head), 0);
	const char *codec = got > 0 ? jitmap_compression_of(head, (size_t)got) : NULL;
	char cut[192];
	const int fd = codec ? jitmap__decompress(in, codec, interrupt, &(uint64_t){0}, cut,
						  sizeof(cut), err)
		       : jitmap__fail(err, -EINVAL, 0, "not compressed as jitmap reads cores "
				      "(zstd, lz4 frames, xz)");
	close(in);
	if (fd >= 0 && note && note_len)
		snprintf(note, note_len, "%s", cut);
	return fd;
}

jitmap__core *jitmap__core_open_memory(const void *buf, size_t len, const jitmap__core_opts *opts,
				     jitmap_error *err)
{
	jitmap__core *c = core_new(err);
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

void jitmap__core_free(jitmap__core *c)
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
	for (size_t i = 0; i < c->njit_files; i++)
		free((char *)c->jit_files[i].path);
	free(c->jit_files);
	free(c->left);
	jitmap__threads_fini(&c->threads);
	jitmap__problems_free(&c->warnings);
	free(c->auxv);
	free(c->files);
	free(c->maps);
	free(c->map_file);
	free(c->segs);
	free(c->sysroot);
	free(c->debug_dirs);
	if (c->elf)
		elf_end(c->elf);
	if (c->fd >= 0)
		close(c->fd);
	free(c->mem);
	free(c);
}

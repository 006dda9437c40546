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

/* -- The core's head -- */
/* Whether the head is one this file can rewrite; why not in `why`. Reads the rest of the
 * head into h->bytes (which holds the ELF header already). */
static const char *read_head(struct jitmap__stream *s, struct jitmap__head *h)
{
	const uint8_t *e = h->bytes;
	if (h->len < JITMAP__STREAM_EHDR || memcmp(e, ELFMAG, SELFMAG))
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
	if (phoff != JITMAP__STREAM_EHDR || phentsize != JITMAP__STREAM_PHDR || !h->phnum)
		return "its program headers are not right after its ELF header";
	if (h->phnum >= PN_XNUM - 1)
		return "it has 65,534 segments or more (counted in a section header)";
	h->shoff = shoff;
	h->shnum = jitmap__load(e + 60, 2, s->order);
	if (shoff && (jitmap__load(e + 58, 2, s->order) != 64 || !h->shnum))
		return "its section headers are not of 64 bytes, or not counted in its ELF header";
	const uint64_t phend = JITMAP__STREAM_EHDR + h->phnum * JITMAP__STREAM_PHDR;
	uint8_t *grown = realloc(h->bytes, phend);
	if (!grown)
		return "out of memory";
	h->bytes = grown;
	ssize_t got = jitmap__stream_read_in(s, h->bytes + h->len, phend - h->len);
	if (got < 0)
		return NULL; /* the caller reads err */
	h->len += (size_t)got;
	if (h->len < phend)
		return "it ends inside its program headers";
	/* The head ends where the first PT_LOAD's bytes begin (the kernel's notes are before
	 * it; GDB's gcore puts them after its segments, in the part that is copied). */
	uint64_t data = UINT64_MAX, notes_end = phend;
	for (uint64_t i = 0; i < h->phnum; i++) {
		const uint8_t *p = h->bytes + JITMAP__STREAM_EHDR + i * JITMAP__STREAM_PHDR;
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
		const uint8_t *p = h->bytes + JITMAP__STREAM_EHDR + i * JITMAP__STREAM_PHDR;
		const uint64_t off = jitmap__load(p + 8, 8, s->order);
		const uint64_t filesz = jitmap__load(p + 32, 8, s->order);
		if (filesz && off < data && off + filesz > data)
			return "a note segment runs into its segments' bytes";
	}
	if (data > JITMAP__STREAM_MAX_HEAD)
		return "its notes are larger than 256 MiB";
	if (h->shoff && h->shoff < data)
		return "its section headers are not after its segments' bytes";
	grown = realloc(h->bytes, data ? data : 1);
	if (!grown)
		return "out of memory";
	h->bytes = grown;
	got = jitmap__stream_read_in(s, h->bytes + h->len, data - h->len);
	if (got < 0)
		return NULL;
	h->len += (size_t)got;
	if (h->len < data)
		return "it ends before its segments' bytes";
	h->data = data;
	return "";
}

/* The head with one more program header (the new notes), each offset moved. */
static int write_head(struct jitmap__stream *s, struct jitmap__head *h, uint64_t notesz, uint64_t shift)
{
	const uint64_t phend = JITMAP__STREAM_EHDR + h->phnum * JITMAP__STREAM_PHDR;
	uint8_t *hdrs = malloc(phend + JITMAP__STREAM_PHDR);
	if (!hdrs)
		return jitmap__fail(s->err, -ENOMEM, 0, "out of memory");
	memcpy(hdrs, h->bytes, phend);
	jitmap__store(hdrs + 56, h->phnum + 1, 2, s->order);
	if (h->shoff)
		jitmap__store(hdrs + 40, h->shoff + shift, 8, s->order);
	for (uint64_t i = 0; i < h->phnum; i++) {
		uint8_t *p = hdrs + JITMAP__STREAM_EHDR + i * JITMAP__STREAM_PHDR;
		const uint64_t off = jitmap__load(p + 8, 8, s->order);
		if (off >= h->data)
			jitmap__store(p + 8, off + shift, 8, s->order);
		else if (off >= phend)
			jitmap__store(p + 8, off + JITMAP__STREAM_PHDR, 8, s->order);
	}
	uint8_t *n = hdrs + phend;
	memset(n, 0, JITMAP__STREAM_PHDR);
	jitmap__store(n, PT_NOTE, 4, s->order);
	jitmap__store(n + 8, h->data + JITMAP__STREAM_PHDR, 8, s->order); /* p_offset */
	jitmap__store(n + 32, notesz, 8, s->order);        /* p_filesz */
	jitmap__store(n + 48, 4, 8, s->order);             /* p_align */
	int rc = jitmap__stream_write_out(s, hdrs, phend + JITMAP__STREAM_PHDR);
	free(hdrs);
	if (!rc)
		rc = jitmap__stream_write_out(s, h->bytes + phend, h->len - phend);
	return rc;
}

/* The rest of the input; the section headers, when it has some, with their offsets moved as
 * the program headers' were. */
static int write_tail(struct jitmap__stream *s, const struct jitmap__head *h, uint64_t shift)
{
	if (!h->shoff || !shift)
		return jitmap__stream_copy_on(s, UINT64_MAX);
	int rc = jitmap__stream_copy_on(s, h->shoff - h->data);
	const size_t len = (size_t)h->shnum * 64;
	uint8_t *sh = rc ? NULL : malloc(len);
	if (rc || !sh)
		return rc ? rc : jitmap__fail(s->err, -ENOMEM, 0, "out of memory");
	const ssize_t got = jitmap__stream_read_in(s, sh, len);
	if (got < 0) {
		free(sh);
		return (int)got;
	}
	const uint64_t phend = JITMAP__STREAM_EHDR + h->phnum * JITMAP__STREAM_PHDR;
	for (size_t i = 0; i + 64 <= (size_t)got; i += 64) {
		const uint64_t off = jitmap__load(sh + i + 24, 8, s->order);
		if (off >= h->data)
			jitmap__store(sh + i + 24, off + shift, 8, s->order);
		else if (off >= phend)
			jitmap__store(sh + i + 24, off + JITMAP__STREAM_PHDR, 8, s->order);
	}
	rc = jitmap__stream_write_out(s, sh, (size_t)got);
	free(sh);
	return rc ? rc : jitmap__stream_copy_on(s, UINT64_MAX);
}

static void close_files(struct jitmap__stream *s)
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
	if (opts && (opts->sz < sizeof(opts->sz) || !JITMAP__OPTS_VALID(opts, status)))
		return jitmap__fail(err, -EINVAL, 0, "jitmap_core_add_opts has fields this library "
				    "does not know");
	unsigned *status = opts && JITMAP_OPTS_HAS(opts, status) ? opts->status : NULL;
	if (status)
		*status = 0;
	char root[64] = "";
	struct jitmap__stream s = {.in = in, .out = out, .note = note, .note_len = note_len, .err = err,
			   .root = root, .budget = JITMAP__STREAM_MAX_BYTES};
	if (opts && JITMAP_OPTS_HAS(opts, max_bytes) && opts->max_bytes)
		s.budget = opts->max_bytes;
	struct jitmap__head h = {.bytes = malloc(JITMAP__STREAM_EHDR)};
	if (!h.bytes)
		return jitmap__fail(err, -ENOMEM, 0, "out of memory");
	ssize_t got = jitmap__stream_read_in(&s, h.bytes, JITMAP__STREAM_EHDR);
	int rc = got < 0 ? (int)got : 0;
	const char *why = "";
	if (!rc) {
		h.len = (size_t)got;
		why = read_head(&s, &h);
		if (!why)
			rc = err ? err->code : -EIO;
	}
	s.src = rc ? NULL : calloc(JITMAP__STREAM_MAX_FILES, sizeof(*s.src));
	if (!rc && !s.src)
		rc = jitmap__fail(err, -ENOMEM, 0, "out of memory");
	if (!rc && !why[0]) {
		if (pid) {
			snprintf(root, sizeof(root), "/proc/%d/root", pid);
			rc = jitmap__perfmap_process_paths(pid, jitmap__stream_take_file, &s);
			rc = rc == -EINVAL ? 0 : rc < 0 ? rc : 0;
			root[0] = 0;
		}
		for (size_t i = 0; !rc && opts && JITMAP_OPTS_HAS(opts, nfiles) && i < opts->nfiles;
		     i++)
			rc = jitmap__stream_take_file(&s, opts->files[i]);
		if (rc)
			jitmap__fail(err, rc, 0, "out of memory");
	}
	int added = 0;
	uint64_t shift = 0;
	const bool small = opts && JITMAP_OPTS_HAS(opts, flags) &&
			   (opts->flags & JITMAP_CORE_ADD_SMALL);
	char cant[256] = "";
	if (!rc && !why[0] && small) {
		rc = jitmap__stream_write_small(&s, &h, pid, opts, cant, sizeof(cant));
		if (!rc && !cant[0]) {
			free(h.bytes);
			close_files(&s);
			if (status)
				*status = s.status | JITMAP_CORE_ADDED_SMALL;
			return (int)s.nsrc;
		}
		if (rc && !s.out_off) { /* nothing written yet: the core goes on whole */
			snprintf(cant, sizeof(cant), "%s", err ? err->reason : "an error");
			rc = 0;
			if (err)
				memset(err, 0, sizeof(*err));
		}
		if (cant[0]) {
			s.status |= JITMAP_CORE_ADDED_NOT_SMALL;
			jitmap__stream_say(&s, "the core is not made small: %s", cant);
		}
	}
	if (!rc && !why[0] && s.nsrc) {
		const uint64_t notesz = jitmap__stream_notes_size(&s);
		shift = jitmap__stream_align(JITMAP__STREAM_PHDR + notesz, JITMAP__STREAM_PAGE);
		if (!(rc = write_head(&s, &h, notesz, shift)) && !(rc = jitmap__stream_write_notes(&s)) &&
		    !(rc = jitmap__stream_write_zeros(&s, shift - JITMAP__STREAM_PHDR - notesz)))
			added = (int)s.nsrc;
	} else if (!rc) {
		/* Passed through as it came. */
		s.status |= why[0] ? JITMAP_CORE_ADDED_UNCHANGED : JITMAP_CORE_ADDED_NO_JIT_FILES;
		if (why[0])
			jitmap__stream_say(&s, "the core is passed on unchanged: %s", why);
		else
			jitmap__stream_say(&s, "no perf map or jitdump file was found: the core is passed on "
				"unchanged");
		rc = jitmap__stream_write_out(&s, h.bytes, h.len);
	}
	free(h.bytes);
	close_files(&s);
	if (!rc)
		rc = write_tail(&s, &h, added ? shift : 0);
	if (status)
		*status = s.status;
	return rc < 0 ? rc : added;
}

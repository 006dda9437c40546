/* core_stream_small.c: a small core written from the stream of a full one (jitmap_core_add_jit_files
 * with JITMAP_CORE_ADD_SMALL, core.h; core_stream.c reads the head and calls it): which
 * memory is kept (core_small.c plans it), the segments cut to it, and the note that says
 * what was left out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elf.h>

#include "internal.h"
#include "jitmap/core.h"

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
static int copy_at(struct jitmap__stream *s, bool seekable, uint64_t off, uint64_t len)
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
			rc = jitmap__stream_write_out(s, buf, (size_t)n);
			off += (uint64_t)n;
			len -= (uint64_t)n;
		}
		free(buf);
		return rc;
	}
	uint8_t drop[1 << 12];
	while (s->in_off < off) {
		const uint64_t d = off - s->in_off;
		const ssize_t n = jitmap__stream_read_in(s, drop, d < sizeof(drop) ? (size_t)d : sizeof(drop));
		if (n <= 0)
			return n < 0 ? (int)n : jitmap__fail(s->err, -EIO, s->in_off,
							     "the core ends early");
	}
	const uint64_t before = s->out_off;
	const int rc = jitmap__stream_copy_on(s, len);
	if (!rc && s->out_off - before < len)
		return jitmap__fail(s->err, -EIO, s->in_off, "the core ends early");
	return rc;
}

static int write_small_note(struct jitmap__stream *s, const struct small *m)
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
	int rc = jitmap__stream_note_header(s, desc, JITMAP_CORE_NOTE_SMALL);
	if (!rc)
		rc = jitmap__stream_write_out(s, h, sizeof(h));
	for (size_t i = 0; i < m->npieces && !rc; i++) {
		const struct piece *p = &m->pieces[i];
		if (!p->len)
			continue;
		uint8_t r[SMALL_RANGE] = {0};
		jitmap__store(r, p->vaddr, 8, s->order);
		jitmap__store(r + 8, p->vaddr + p->len, 8, s->order);
		jitmap__store(r + 16, p->why, 4, s->order);
		rc = jitmap__stream_write_out(s, r, sizeof(r));
	}
	for (size_t i = 0; i < m->left.n && !rc; i++) {
		uint8_t r[SMALL_RANGE] = {0};
		jitmap__store(r, m->left.v[i].start, 8, s->order);
		jitmap__store(r + 8, m->left.v[i].end, 8, s->order);
		jitmap__store(r + 16, m->left.v[i].flags, 4, s->order);
		jitmap__store(r + 20, m->left.v[i].in_file, 4, s->order);
		rc = jitmap__stream_write_out(s, r, sizeof(r));
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
static int plan_small(struct jitmap__stream *s, struct jitmap__head *h, struct small *m, bool seekable,
		      int pid, const jitmap_core_add_opts *opts, char *cant, size_t cant_len)
{
	jitmap_error err;
	char root[64] = "", path[64];
	if (pid)
		snprintf(root, sizeof(root), "/proc/%d/root", pid);
	const char *sysroot = opts && JITMAP_OPTS_HAS(opts, sysroot) ? opts->sysroot : NULL;
	JITMAP_OPTS(jitmap__core_opts, copts, .sysroot = sysroot ? sysroot : pid ? root : NULL,
		    .exe = opts && JITMAP_OPTS_HAS(opts, exe) ? opts->exe : NULL);
	jitmap__core *core;
	jitmap_stopped *live = NULL; /* the process, read as it runs */
	jitmap_target mem;
	if (seekable) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", s->in);
		core = jitmap__core_open(path, &copts, &err);
		if (core)
			mem = jitmap__core_target(core);
	} else {
		if (!pid) {
			snprintf(cant, cant_len, "a core read from a pipe is made small with its "
				 "process at hand (PID), and none was given");
			return 0;
		}
		JITMAP_OPTS(const jitmap_stopped_opts, lopts, .flags = JITMAP_STOPPED_NO_STOP);
		live = jitmap_stopped_open_pid(pid, &lopts, &err);
		core = live ? jitmap__core_open_memory(h->bytes, h->len, &copts, &err) : NULL;
		if (core)
			mem = jitmap_stopped_target(live);
	}
	if (!core || jitmap__core_small(core, NULL, NULL, NULL) == 1) {
		snprintf(cant, cant_len, "%s", core ? "it is a small core already" : err.reason);
		jitmap__core_free(core);
		jitmap_stopped_free(live);
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
	if (!rc && !m->descriptors) {
		s->status |= JITMAP_CORE_ADDED_NO_DESCRIPTOR |
			     (core->have_file_note ? 0 : JITMAP_CORE_ADDED_NO_EXE);
		jitmap__stream_say(s, "no JIT descriptor was found in the files the core maps%s", core->have_file_note
		    ? "" : " (the core does not say which: give the program with --exe)");
	}
	struct stat st;
	const uint64_t have = seekable && !fstat(s->in, &st) ? (uint64_t)st.st_size : UINT64_MAX;
	if (!rc)
		rc = cut_segments(m, r, nr, have);
	if (!rc)
		rc = jitmap__small_refine_left(core, &mem, &m->left, &m->from_files);
	jitmap__core_free(core);
	jitmap_stopped_free(live);
	free(sorted);
	free(r);
	return rc ? jitmap__fail(s->err, rc, 0, "out of memory") : 0;
}

/* The small core, written whole (0), or a negative errno; with `cant` set, nothing was
 * written and the caller passes the core on as it would. */
int jitmap__stream_write_small(struct jitmap__stream *s, struct jitmap__head *h, int pid,
		       const jitmap_core_add_opts *opts, char *cant, size_t cant_len)
{
	const uint64_t stack_bytes = JITMAP_OPTS_HAS(opts, stack_bytes) ? opts->stack_bytes : 0;
	struct stat st;
	const bool seekable = !fstat(s->in, &st) && S_ISREG(st.st_mode);
	const uint64_t phend = JITMAP__STREAM_EHDR + h->phnum * JITMAP__STREAM_PHDR;
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
		const uint8_t *p = h->bytes + JITMAP__STREAM_EHDR + i * JITMAP__STREAM_PHDR;
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
		if (b->len > JITMAP__STREAM_MAX_HEAD) {
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
		others_bytes += jitmap__stream_align(b->len, 8);
	}
	const uint64_t nph = nothers + 1 + m.npieces;
	if (!rc && !cant[0] && nph >= PN_XNUM)
		snprintf(cant, cant_len, "it would have %" PRIu64 " segments, more than a program "
			 "header count holds", nph);
	const uint64_t small_note = 12 + JITMAP__STREAM_NAME_SZ + 24 + (m.npieces + m.left.n) * SMALL_RANGE;
	const uint64_t jit_notes = jitmap__stream_notes_size(s) + small_note;
	const uint64_t notes_at = JITMAP__STREAM_EHDR + nph * JITMAP__STREAM_PHDR;
	const uint64_t data_at = jitmap__stream_align(notes_at + others_bytes + jit_notes, JITMAP__STREAM_PAGE);
	uint8_t *hdrs = rc || cant[0] ? NULL : calloc(1, notes_at);
	if (!rc && !cant[0] && !hdrs)
		rc = jitmap__fail(s->err, -ENOMEM, 0, "out of memory");
	if (hdrs) {
		memcpy(hdrs, h->bytes, JITMAP__STREAM_EHDR);
		jitmap__store(hdrs + 40, 0, 8, s->order); /* e_shoff */
		jitmap__store(hdrs + 56, nph, 2, s->order);
		jitmap__store(hdrs + 60, 0, 2, s->order); /* e_shnum */
		jitmap__store(hdrs + 62, 0, 2, s->order); /* e_shstrndx */
		uint8_t *o = hdrs + JITMAP__STREAM_EHDR;
		uint64_t at = notes_at;
		for (size_t i = 0; i < nothers; i++, o += JITMAP__STREAM_PHDR) {
			memcpy(o, others[i].phdr, JITMAP__STREAM_PHDR);
			jitmap__store(o + 8, at, 8, s->order);
			jitmap__store(o + 32, others[i].len, 8, s->order);
			at += jitmap__stream_align(others[i].len, 8);
		}
		jitmap__store(o, PT_NOTE, 4, s->order);
		jitmap__store(o + 8, at, 8, s->order);
		jitmap__store(o + 32, jit_notes, 8, s->order);
		jitmap__store(o + 48, 4, 8, s->order);
		o += JITMAP__STREAM_PHDR;
		uint64_t data = data_at;
		for (size_t i = 0; i < m.npieces; i++, o += JITMAP__STREAM_PHDR) {
			const struct piece *p = &m.pieces[i];
			jitmap__store(o, PT_LOAD, 4, s->order);
			jitmap__store(o + 4, p->flags, 4, s->order);
			jitmap__store(o + 8, data, 8, s->order); /* no bytes: where they would be */
			jitmap__store(o + 16, p->vaddr, 8, s->order);
			jitmap__store(o + 32, p->len, 8, s->order);
			jitmap__store(o + 40, p->memsz, 8, s->order);
			jitmap__store(o + 48, JITMAP__STREAM_PAGE, 8, s->order);
			data += jitmap__stream_align(p->len, JITMAP__STREAM_PAGE);
		}
		rc = jitmap__stream_write_out(s, hdrs, notes_at);
		for (size_t i = 0; i < nothers && !rc; i++)
			if (!(rc = jitmap__stream_write_out(s, others[i].bytes, (size_t)others[i].len)))
				rc = jitmap__stream_write_zeros(s, jitmap__stream_align(others[i].len, 8) - others[i].len);
		if (!rc && !(rc = jitmap__stream_write_notes(s)) && !(rc = write_small_note(s, &m)))
			rc = jitmap__stream_write_zeros(s, data_at - s->out_off);
		for (size_t i = 0; i < m.npieces && !rc; i++) {
			const struct piece *p = &m.pieces[i];
			if (p->len && !(rc = copy_at(s, seekable, p->in_off, p->len)))
				rc = jitmap__stream_write_zeros(s, jitmap__stream_align(p->len, JITMAP__STREAM_PAGE) - p->len);
		}
		size_t ranges = 0;
		for (size_t i = 0; i < m.npieces; i++)
			ranges += m.pieces[i].len != 0;
		if (!rc && m.from_files)
			jitmap__stream_say(s, "a small core: %" PRIu64 " of the %" PRIu64 " bytes of memory the core "
			    "held kept, in %zu ranges (%" PRIu64 " more its mapped files hold)",
			    m.kept, m.full, ranges, m.from_files);
		else if (!rc)
			jitmap__stream_say(s, "a small core: %" PRIu64 " of the %" PRIu64 " bytes of memory the core "
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

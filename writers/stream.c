/* stream.c: the core handler's stream, its bytes and jitmap's notes: reading the input and
 * writing the output (spliced where both ends allow), the sentences said to the caller, and
 * the JIT files found for the crashed process (the perf maps and jitdumps it named) written
 * as jitmap's notes. core_stream.c writes a full core with them, core_stream_small.c a small
 * one.
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

/* A sentence added to the caller's note ("; " between). */
void jitmap__stream_say(struct jitmap__stream *s, const char *fmt, ...)
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


/* A file left out: said to the caller and, as a JITMAP_CORE_NOTE_PROBLEM note, in the core. */
void jitmap__stream_problem(struct jitmap__stream *s, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	jitmap__stream_say(s, "%s", line);
	s->status |= JITMAP_CORE_ADDED_FILE_LEFT;
	if (s->nproblems < sizeof(s->problems) / sizeof(s->problems[0]))
		memcpy(s->problems[s->nproblems++], line, sizeof(line));
}

/* Up to `len` bytes from the input: how many (fewer at its end), or a negative errno. */
ssize_t jitmap__stream_read_in(struct jitmap__stream *s, void *buf, size_t len)
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

int jitmap__stream_write_out(struct jitmap__stream *s, const void *buf, size_t len)
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

int jitmap__stream_write_zeros(struct jitmap__stream *s, uint64_t n)
{
	static const uint8_t zeros[JITMAP__STREAM_PAGE];
	while (n) {
		const size_t k = n < sizeof(zeros) ? (size_t)n : sizeof(zeros);
		const int rc = jitmap__stream_write_out(s, zeros, k);
		if (rc)
			return rc;
		n -= k;
	}
	return 0;
}

/* The input's next `limit` bytes (UINT64_MAX: the rest), as they come: spliced when a pipe is
 * at either end, else copied. */
int jitmap__stream_copy_on(struct jitmap__stream *s, uint64_t limit)
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
		const ssize_t n = jitmap__stream_read_in(s, buf, want);
		if (n <= 0) {
			rc = (int)n;
			break;
		}
		rc = jitmap__stream_write_out(s, buf, (size_t)n);
		limit -= limit == UINT64_MAX ? 0 : (uint64_t)n;
	}
	free(buf);
	return rc;
}

/* -- The files -- */

int jitmap__stream_take_file(void *ctx, const char *path)
{
	struct jitmap__stream *s = ctx;
	const char *as = path;
	const size_t rl = strlen(s->root);
	if (rl && !strncmp(path, s->root, rl))
		as = path + rl;
	if (s->nsrc == JITMAP__STREAM_MAX_FILES) {
		jitmap__stream_problem(s, "%s: more than %d JIT files: left out", as, JITMAP__STREAM_MAX_FILES);
		return 0;
	}
	const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		const int e = fd < 0 ? errno : S_ISREG(st.st_mode) ? errno : EINVAL;
		if (fd >= 0)
			close(fd);
		jitmap__stream_problem(s, "%s cannot be read: %s", as, strerror(e));
		return 0;
	}
	uint8_t magic[4] = {0};
	const bool jitdump = pread(fd, magic, 4, 0) == 4 && jitmap__pm_jitdump_order(magic, 4, NULL);
	uint64_t size = (uint64_t)st.st_size;
	bool cut = false;
	const uint64_t each_max = UINT32_MAX - JITMAP__STREAM_FILE_HEADER - 4096; /* a note's descriptor size */
	if (size > s->budget || size > each_max) {
		size = s->budget < each_max ? s->budget : each_max;
		cut = true;
		jitmap__stream_problem(s, "%s is %" PRIu64 " bytes: only its first %" PRIu64 " are added", as,
			(uint64_t)st.st_size, size);
	}
	s->budget -= size;
	char *copy = strdup(path);
	if (!copy) {
		close(fd);
		return -ENOMEM;
	}
	s->src[s->nsrc++] = (struct jitmap__jit_src){.path = copy, .as = copy + (as - path), .fd = fd,
					     .kind = jitdump ? JITMAP_PERFMAP_JITDUMP
							     : JITMAP_PERFMAP_MAP,
					     .size = size, .cut = cut};
	return 0;
}

uint64_t jitmap__stream_align(uint64_t n, uint64_t to)
{
	return (n + to - 1) / to * to;
}

static uint64_t file_note_size(const struct jitmap__jit_src *f)
{
	return 12 + JITMAP__STREAM_NAME_SZ + JITMAP__STREAM_FILE_HEADER + jitmap__stream_align(strlen(f->as) + 1, 8) + jitmap__stream_align(f->size, 4);
}

uint64_t jitmap__stream_notes_size(const struct jitmap__stream *s)
{
	uint64_t n = 0;
	for (size_t i = 0; i < s->nsrc; i++)
		n += file_note_size(&s->src[i]);
	for (size_t i = 0; i < s->nproblems; i++)
		n += 12 + JITMAP__STREAM_NAME_SZ + jitmap__stream_align(strlen(s->problems[i]) + 1, 4);
	return n;
}

int jitmap__stream_note_header(struct jitmap__stream *s, uint64_t descsz, uint32_t type)
{
	uint8_t h[12 + JITMAP__STREAM_NAME_SZ] = {0};
	jitmap__store(h, sizeof(JITMAP_CORE_NOTE_NAME), 4, s->order);
	jitmap__store(h + 4, descsz, 4, s->order);
	jitmap__store(h + 8, type, 4, s->order);
	memcpy(h + 12, JITMAP_CORE_NOTE_NAME, sizeof(JITMAP_CORE_NOTE_NAME));
	return jitmap__stream_write_out(s, h, sizeof(h));
}

/* The file's bytes as it holds them now: a file that shrank since it was measured ends in
 * zeros, said. */
static int write_file_bytes(struct jitmap__stream *s, struct jitmap__jit_src *f)
{
	static uint8_t buf[1 << 16];
	uint64_t off = 0;
	while (off < f->size) {
		const size_t want = f->size - off < sizeof(buf) ? (size_t)(f->size - off) : sizeof(buf);
		const ssize_t n = pread(f->fd, buf, want, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			s->status |= JITMAP_CORE_ADDED_FILE_LEFT;
			jitmap__stream_say(s, "%s ended at byte %" PRIu64 " while it was added: zeros after it",
			    f->as, off);
			return jitmap__stream_write_zeros(s, f->size - off);
		}
		const int rc = jitmap__stream_write_out(s, buf, (size_t)n);
		if (rc)
			return rc;
		off += (uint64_t)n;
	}
	return 0;
}

int jitmap__stream_write_notes(struct jitmap__stream *s)
{
	int rc = 0;
	for (size_t i = 0; i < s->nsrc && !rc; i++) {
		struct jitmap__jit_src *f = &s->src[i];
		const size_t plen = strlen(f->as) + 1;
		const uint64_t desc = file_note_size(f) - 12 - JITMAP__STREAM_NAME_SZ;
		uint8_t h[JITMAP__STREAM_FILE_HEADER] = {0};
		jitmap__store(h, 1, 4, s->order);
		jitmap__store(h + 4, f->kind, 4, s->order);
		jitmap__store(h + 8, f->size, 8, s->order);
		jitmap__store(h + 16, plen, 4, s->order);
		jitmap__store(h + 20, f->cut ? JITMAP_CORE_FILE_CUT : 0, 4, s->order);
		if ((rc = jitmap__stream_note_header(s, desc, JITMAP_CORE_NOTE_FILE)) ||
		    (rc = jitmap__stream_write_out(s, h, sizeof(h))) || (rc = jitmap__stream_write_out(s, f->as, plen)) ||
		    (rc = jitmap__stream_write_zeros(s, jitmap__stream_align(plen, 8) - plen)) || (rc = write_file_bytes(s, f)))
			break;
		rc = jitmap__stream_write_zeros(s, jitmap__stream_align(f->size, 4) - f->size);
	}
	for (size_t i = 0; i < s->nproblems && !rc; i++) {
		const size_t len = strlen(s->problems[i]) + 1;
		if (!(rc = jitmap__stream_note_header(s, jitmap__stream_align(len, 4), JITMAP_CORE_NOTE_PROBLEM)) &&
		    !(rc = jitmap__stream_write_out(s, s->problems[i], len)))
			rc = jitmap__stream_write_zeros(s, jitmap__stream_align(len, 4) - len);
	}
	return rc;
}

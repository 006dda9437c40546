/* core_jitfiles.c: the perf maps and jitdump files a core carries in jitmap-core-handler's
 * "JITMAP" notes (the layout: include/jitmap/core.h), read field by field in the core's byte
 * order with every length checked against the descriptor. A file's bytes are not copied: they
 * stay in the note, which libelf keeps until the core is freed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "jitmap/core.h"

#define FILE_HEADER 24 /* version, kind, size, path_len, flags */
/* A malformed note: read around, a warning. */
#define WARN(c, ...)                                                                      \
	jitmap__status_problem(&(c)->warnings, (c)->warn_status, JITMAP__CORE_MAX_WARNINGS,   \
			       JITMAP__WARN(JITMAP_PROBLEM_MALFORMED), __VA_ARGS__)
/* A JIT file the core carries cut short, or one the handler could not add. */
#define WARN_FILE(c, ...)                                                                 \
	jitmap__status_problem(&(c)->warnings, (c)->warn_status, JITMAP__CORE_MAX_WARNINGS,   \
			       JITMAP__WARN(JITMAP_PROBLEM_FILE), __VA_ARGS__)

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static int add_file(jitmap__core *c, const uint8_t *desc, size_t len, uint64_t at)
{
	if (len < FILE_HEADER) {
		WARN(c, "jitmap's note of a JIT file at offset 0x%" PRIx64 " holds %zu "
		     "bytes, fewer than its %d-byte header: left out", at, len,
		     FILE_HEADER);
		return 0;
	}
	const uint32_t version = (uint32_t)jitmap__load(desc, 4, c->order);
	const uint32_t kind = (uint32_t)jitmap__load(desc + 4, 4, c->order);
	const uint64_t size = jitmap__load(desc + 8, 8, c->order);
	const uint32_t path_len = (uint32_t)jitmap__load(desc + 16, 4, c->order);
	const uint32_t flags = (uint32_t)jitmap__load(desc + 20, 4, c->order);
	if (version != 1) {
		WARN(c, "jitmap's note of a JIT file at offset 0x%" PRIx64 " is of "
		     "version %" PRIu32 ", which this jitmap does not read: left out",
		     at, version);
		return 0;
	}
	if (kind != JITMAP_PERFMAP_MAP && kind != JITMAP_PERFMAP_JITDUMP) {
		WARN(c, "jitmap's note of a JIT file at offset 0x%" PRIx64 " says its "
		     "kind is %" PRIu32 ", neither a perf map (1) nor a jitdump (2): "
		     "left out", at, kind);
		return 0;
	}
	const size_t room = len - FILE_HEADER;
	if (!path_len || path_len > room || desc[FILE_HEADER + path_len - 1] ||
	    memchr(desc + FILE_HEADER, 0, path_len - 1)) {
		WARN(c, "jitmap's note of a JIT file at offset 0x%" PRIx64 ": its path "
		     "of %" PRIu32 " bytes is not one NUL-terminated string within the "
		     "note's %zu: left out", at, path_len, len);
		return 0;
	}
	const size_t data_off = FILE_HEADER + align8(path_len);
	const char *path = (const char *)desc + FILE_HEADER;
	if (data_off > len || size > len - data_off) {
		WARN(c, "jitmap's note of %s at offset 0x%" PRIx64 " says it holds %"
		     PRIu64 " bytes of the file, more than the note's %zu: left out",
		     path, at, size, len);
		return 0;
	}
	jitmap_stopped_jit_file_info *files = realloc(c->jit_files, (c->njit_files + 1) * sizeof(*files));
	if (!files)
		return -ENOMEM;
	c->jit_files = files;
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	c->jit_files[c->njit_files++] = (jitmap_stopped_jit_file_info){
		.path = copy, .kind = kind, .flags = flags & JITMAP_CORE_FILE_CUT,
		.data = desc + data_off, .size = (size_t)size, .offset = at + data_off};
	if (flags & JITMAP_CORE_FILE_CUT)
		WARN_FILE(c, "%s is in the core cut short: its first %" PRIu64 " bytes "
		     "(jitmap-core-handler's limit)", path, size);
	return 0;
}

int jitmap__core_left_cmp(const void *a, const void *b)
{
	const struct jitmap__core_left *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* A small core's note (core.h): what it kept and left out. A malformed one is a warning, and
 * the core is read as any other (a left-out range then reads as "not in the core"). */
static int small_note(jitmap__core *c, const uint8_t *desc, size_t len, uint64_t at)
{
	enum { HEAD = 24, RANGE = 24 };
	if (c->small) {
		WARN(c, "a second note of a small core at offset 0x%" PRIx64 ": left out", at);
		return 0;
	}
	if (len < HEAD || jitmap__load(desc, 4, c->order) != 1) {
		WARN(c, "jitmap's note of a small core at offset 0x%" PRIx64 " is too short or of "
		     "a version this jitmap does not read: left out", at);
		return 0;
	}
	const uint64_t kept = jitmap__load(desc + 4, 4, c->order);
	const uint64_t left = jitmap__load(desc + 8, 4, c->order);
	if ((kept + left) > (len - HEAD) / RANGE) {
		WARN(c, "jitmap's note of a small core at offset 0x%" PRIx64 " claims %" PRIu64
		     " ranges in %zu bytes: left out", at, kept + left, len);
		return 0;
	}
	struct jitmap__core_left *v = left ? calloc((size_t)left, sizeof(*v)) : NULL;
	if (left && !v)
		return -ENOMEM;
	uint64_t kept_bytes = 0;
	for (uint64_t i = 0; i < kept; i++) {
		const uint8_t *r = desc + HEAD + i * RANGE;
		const uint64_t lo = jitmap__load(r, 8, c->order), hi = jitmap__load(r + 8, 8, c->order);
		kept_bytes += hi > lo ? hi - lo : 0;
	}
	size_t n = 0;
	uint64_t left_bytes = 0;
	for (uint64_t i = 0; i < left; i++) {
		const uint8_t *r = desc + HEAD + (kept + i) * RANGE;
		const uint64_t lo = jitmap__load(r, 8, c->order), hi = jitmap__load(r + 8, 8, c->order);
		if (hi <= lo)
			continue;
		v[n++] = (struct jitmap__core_left){lo, hi, (unsigned)jitmap__load(r + 16, 4, c->order),
						    jitmap__load(r + 20, 4, c->order) == 1};
		left_bytes += v[n - 1].in_file ? 0 : hi - lo; /* what no file holds either */
	}
	if (n)
		qsort(v, n, sizeof(*v), jitmap__core_left_cmp);
	c->small = true;
	c->small_stack_bytes = jitmap__load(desc + 16, 8, c->order);
	c->small_kept_bytes = kept_bytes;
	c->small_left_bytes = left_bytes;
	c->left = v;
	c->nleft = n;
	return 0;
}

int jitmap__core_small(const jitmap__core *c, uint64_t *stack_bytes, uint64_t *kept_bytes,
		      uint64_t *left_bytes)
{
	if (!c)
		return -EINVAL;
	if (stack_bytes)
		*stack_bytes = c->small_stack_bytes;
	if (kept_bytes)
		*kept_bytes = c->small_kept_bytes;
	if (left_bytes)
		*left_bytes = c->small_left_bytes;
	return c->small;
}

const struct jitmap__core_left *jitmap__core_left_at(const jitmap__core *c, uint64_t addr)
{
	const size_t lo = JITMAP_UPPER_BOUND(c->left, c->nleft, start, addr);
	return lo && addr < c->left[lo - 1].end ? &c->left[lo - 1] : NULL;
}

int jitmap__core_jit_note(jitmap__core *c, uint32_t type, const uint8_t *desc, size_t len,
			  uint64_t at)
{
	if (type == JITMAP_CORE_NOTE_FILE)
		return add_file(c, desc, len, at);
	if (type == JITMAP_CORE_NOTE_SMALL)
		return small_note(c, desc, len, at);
	if (type == JITMAP_CORE_NOTE_PROBLEM) {
		const size_t n = strnlen((const char *)desc, len);
		WARN_FILE(c, "jitmap-core-handler: %.*s", (int)(n > 512 ? 512 : n),
		     (const char *)desc);
	}
	return 0; /* a type of a later version: not ours to read */
}

size_t jitmap__core_num_jit_files(const jitmap__core *c)
{
	return c ? c->njit_files : 0;
}

const jitmap_stopped_jit_file_info *jitmap__core_jit_file_at(const jitmap__core *c, size_t i)
{
	return c && i < c->njit_files ? &c->jit_files[i] : NULL;
}

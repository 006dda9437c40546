/* internal.h (common): what every layer of libjitmap shares: errors and lists of problems,
 * option structs, growing arrays, big arrays and their sort. The layers above include it
 * through their own internal header (docs/architecture.md: one internal header a layer, each
 * including the one below).
 */
#ifndef JITMAP_COMMON_INTERNAL_H
#define JITMAP_COMMON_INTERNAL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jitmap/jitmap.h"
#include "bytes.h"
#include "search.h"

/* Fill `err` (may be NULL) and return `code` (a negative errno). */
int jitmap__fail(jitmap_error *err, int code, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A list of problems a reader read around (a relocation it does not know, a core's damaged
 * note, a perf map's bad line), each a sentence: kept up to the `max` the caller gives
 * (SIZE_MAX: every one), the rest only counted. A sentence lost for want of memory is not
 * worth failing the read that found it: the callers ignore -ENOMEM. Zeroed is empty. */
struct jitmap__problems {
	char **items;
	size_t n, cap;
	size_t unlisted; /* said when `max` were kept already */
};
/* Append the sentence to `l` when it holds fewer than `max`, else count it in l->unlisted:
 * 0, or -ENOMEM (the list is as it was). */
int jitmap__problem(struct jitmap__problems *l, size_t max, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int jitmap__vproblem(struct jitmap__problems *l, size_t max, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* Sentence `i`, or NULL past the last. */
static inline const char *jitmap__problem_at(const struct jitmap__problems *l, size_t i)
{
	return i < l->n ? l->items[i] : NULL;
}
/* Free the sentences from the `n`-th on (the first `n` stay). */
void jitmap__problems_truncate(struct jitmap__problems *l, size_t n);
/* Free every sentence and leave `l` empty (zeroed). */
void jitmap__problems_free(struct jitmap__problems *l);

/* An array of `bytes`, zeroed, faulted in by as few faults as can be (index.c says how);
 * freed by jitmap__big_free with the *mapped it set. NULL when out of memory. */
void *jitmap__big_alloc(size_t bytes, size_t *mapped);
void jitmap__big_free(void *p, size_t mapped);
/* Sort keys[0..n) (and vals with them, when not NULL) by LSD radix, a byte at a time, the
 * bytes all keys share skipped (JIT addresses share their top bytes), nothing done when the
 * keys are in order already; stable, so equal keys keep their order. tk and tv are scratch
 * of n elements. */
void jitmap__radix_sort(uint64_t *keys, uint32_t *vals, size_t n, uint64_t *tk, uint32_t *tv);
/* A radix sort's plan for n keys, by their bytes from bit `from` up: the shifts of the bytes
 * that differ, and where each value of each begins (count[p][d], zeroed by the caller),
 * counted in one pass over the keys. Returns how many bytes need a pass: 0 when the keys are
 * in order already (the records of a linked section), and then nothing is counted. */
unsigned jitmap__radix_plan(const uint64_t *keys, size_t n, unsigned from, unsigned shifts[8],
			    size_t count[8][257]);



/* libbpf's OPTS_VALID: an options struct that carries its size `sz` first is valid when sz
 * covers at least that field and every byte from `known` (where the fields this library
 * knows end) up to sz is zero (fields of a newer caller this library cannot honour). Callers
 * use JITMAP__OPTS_VALID. */
static inline bool jitmap__opts_valid(const void *opts, size_t sz, size_t known)
{
	if (sz < sizeof(size_t))
		return false;
	for (size_t i = known; i < sz; i++)
		if (((const uint8_t *)opts)[i])
			return false;
	return true;
}

/* Where `field` of `type` ends (libbpf's offsetofend). */
#define JITMAP__OFFSETOFEND(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

/* Whether the options at `opts` are valid, `last_field` being the last field of their type
 * this library knows (the public header's struct says to update it when a field is added).
 * Checked from the end of that field, not from sizeof: a field a newer caller adds where
 * this struct has tail padding must be zero too, or it would be silently ignored. Callers
 * zero the whole struct first (JITMAP_OPTS). */
#define JITMAP__OPTS_VALID(opts, last_field) \
	jitmap__opts_valid((opts), (opts)->sz, JITMAP__OFFSETOFEND(__typeof__(*(opts)), last_field))

/* Give the caller a struct the library fills (its first field `size_t sz`, set by the caller
 * to the size it knows): the fields of `full` (`size` bytes) as far as the caller's sz goes,
 * none past it (a program built against an older, shorter struct gets its fields). 0, or
 * -EINVAL when out is NULL or its sz does not even cover the sz. */
static inline int jitmap__give(void *out, const void *full, size_t size)
{
	size_t sz;
	if (!out)
		return -EINVAL;
	memcpy(&sz, out, sizeof(sz));
	if (sz < sizeof(size_t))
		return -EINVAL;
	memcpy((char *)out + sizeof(size_t), (const char *)full + sizeof(size_t),
	       (sz < size ? sz : size) - sizeof(size_t));
	return 0;
}

/* Whether `field` of the options at `opts` lies inside the caller's sz. */
#define JITMAP_OPTS_HAS(opts, field) \
	((opts)->sz >= JITMAP__OFFSETOFEND(__typeof__(*(opts)), field))

/* Make room for `need` elements of `size` bytes in the array at *arrayp (capacity *cap),
 * doubling: 0, or -ENOMEM (the array is left as it was). */
static inline int jitmap__grow(void *arrayp, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap * 2 : 16;
	while (n < need)
		n *= 2;
	if (n > SIZE_MAX / size)
		return -ENOMEM;
	void *a = realloc(*(void **)arrayp, n * size);
	if (!a)
		return -ENOMEM;
	*(void **)arrayp = a;
	*cap = n;
	return 0;
}

static inline uint64_t jitmap__align8(uint64_t x)
{
	return (x + 7) & ~(uint64_t)7;
}

/* A cache line's multiple (the start of an array in a block shared with others). */
static inline size_t jitmap__align64(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

#endif /* JITMAP_COMMON_INTERNAL_H */

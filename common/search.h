/* search.h: binary search of an array sorted by a uint64_t key, once for the reader and the
 * unwinder (segments, mappings, symbols, functions, CFI ranges and CIEs, the PC index).
 *
 *   JITMAP_UPPER_BOUND(arr, n, field, key): how many elements have arr[i].field <= key, that
 *   is the index of the first one above `key` (n when none is): arr[i - 1] is then the last
 *   element at or before `key`, the one whose range may hold it.
 *   JITMAP_LOWER_BOUND(arr, n, field, key): the index of the first element whose field is
 *   >= key (n when none is): where `key` is, if it is there.
 *
 * `field` must be a uint64_t (checked at compile time); `arr` an array of structs, or of
 * uint64_t with `field` left empty: JITMAP_LOWER_BOUND_U64(pcs, n, pc). Both inline to the
 * loop each caller wrote by hand before.
 *
 *   JITMAP_PARTITION_POINT(n, i, before): for keys no single uint64_t field holds (several
 *   fields in order, arrays of pointers, a key computed from the element), the first index
 *   `i` in [0, n) at which the expression `before` (of `i`) is false, when it is true for a
 *   prefix of the array and false after it (n when it is true throughout). */
#ifndef JITMAP_COMMON_SEARCH_H
#define JITMAP_COMMON_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline size_t jitmap_bound_u64(const void *base, size_t n, size_t stride, size_t key_off,
				      uint64_t key, int upper)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;
		uint64_t k;
		memcpy(&k, (const char *)base + mid * stride + key_off, sizeof(k));
		if (upper ? k <= key : k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#define JITMAP__BOUND(arr, n, field, key, upper)                                               \
	jitmap_bound_u64((arr), (n), sizeof(*(arr)),                                             \
			 offsetof(__typeof__(*(arr)), field) +                                  \
				 0 * sizeof(char[sizeof((arr)->field) == sizeof(uint64_t) ? 1 : -1]), \
			 (key), (upper))
#define JITMAP_UPPER_BOUND(arr, n, field, key) JITMAP__BOUND(arr, n, field, key, 1)
#define JITMAP_LOWER_BOUND(arr, n, field, key) JITMAP__BOUND(arr, n, field, key, 0)
#define JITMAP_LOWER_BOUND_U64(arr, n, key)                                                     \
	jitmap_bound_u64((arr), (n), sizeof(uint64_t), 0 * sizeof(char[sizeof(*(arr)) == 8 ? 1 : -1]), \
			 (key), 0)

#define JITMAP_PARTITION_POINT(n, i, before)                                                   \
	({                                                                                       \
		size_t lo_ = 0, hi_ = (n);                                                       \
		while (lo_ < hi_) {                                                              \
			const size_t i = lo_ + (hi_ - lo_) / 2;                                  \
			if (before)                                                              \
				lo_ = i + 1;                                                     \
			else                                                                     \
				hi_ = i;                                                         \
		}                                                                                \
		lo_;                                                                             \
	})

#endif

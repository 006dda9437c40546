/* bytes.h: integers of 1 to 8 bytes in a byte order, read and written in one place for both of
 * jitmap's libraries (the reader's sections, cores and registers; the producer's sections).
 * A byte order other than JITMAP_ORDER_BIG is little-endian. */
#ifndef JITMAP_COMMON_BYTES_H
#define JITMAP_COMMON_BYTES_H

#include <stddef.h>
#include <stdint.h>

#include "jitmap/types.h"

static inline uint64_t jitmap__load(const uint8_t *p, size_t size, jitmap_byte_order order)
{
	uint64_t v = 0;
	if (order == JITMAP_ORDER_BIG) {
		for (size_t i = 0; i < size; i++)
			v = (v << 8) | p[i];
	} else {
		for (size_t i = size; i-- > 0;)
			v = (v << 8) | p[i];
	}
	return v;
}

static inline void jitmap__store(uint8_t *p, uint64_t v, size_t size, jitmap_byte_order order)
{
	for (size_t i = 0; i < size; i++)
		p[order == JITMAP_ORDER_BIG ? size - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

#endif /* JITMAP_COMMON_BYTES_H */

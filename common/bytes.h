/* bytes.h: integers of 1 to 8 bytes in a byte order, read and written in one place for both of
 * jitmap's libraries (the reader's sections, cores and registers; the producer's sections).
 * A byte order other than JITMAP_ORDER_BIG is little-endian. */
#ifndef JITMAP_COMMON_BYTES_H
#define JITMAP_COMMON_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "jitmap/types.h"

/* 1 on a big-endian host (a preprocessor value: enum constants are 0 to #if). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define JITMAP__HOST_BIG 1
#else
#define JITMAP__HOST_BIG 0
#endif

static inline uint64_t jitmap__load(const uint8_t *p, size_t size, jitmap_byte_order order)
{
	/* The sizes the formats use, as one load and at most a byte swap: the parser's walks
	 * run through here for every field. */
	const int swap = (order == JITMAP_ORDER_BIG) != JITMAP__HOST_BIG;
	switch (size) {
	case 2: {
		uint16_t v;
		memcpy(&v, p, 2);
		return swap ? __builtin_bswap16(v) : v;
	}
	case 4: {
		uint32_t v;
		memcpy(&v, p, 4);
		return swap ? __builtin_bswap32(v) : v;
	}
	case 8: {
		uint64_t v;
		memcpy(&v, p, 8);
		return swap ? __builtin_bswap64(v) : v;
	}
	}
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

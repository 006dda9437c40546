/* unit.h: what every unit test includes: cmocka (which wants these headers first), the
 * public API, the section builder, and a few assertions the tests share. */
#ifndef JITMAP_TEST_UNIT_H
#define JITMAP_TEST_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitmap/jitmap.h"
#include "sm_builder.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Short names for the location kinds, so tables stay one line per row. */
#define REG JITMAP_LOC_REGISTER
#define DIRECT JITMAP_LOC_DIRECT
#define INDIRECT JITMAP_LOC_INDIRECT
#define CONST JITMAP_LOC_CONSTANT
#define CIDX JITMAP_LOC_CONSTANT_INDEX

#define assert_contains(haystack, needle)                                                  \
	do {                                                                               \
		const char *h_ = (haystack), *n_ = (needle);                               \
		if (!h_ || !strstr(h_, n_))                                                \
			fail_msg("\"%s\" does not contain \"%s\"", h_ ? h_ : "(null)", n_); \
	} while (0)

/* Parse bytes that must be valid; on failure, say where and why before failing. */
static inline jitmap_stackmap *parse_ok(const void *buf, size_t len, jitmap_byte_order order,
					jitmap_arch arch)
{
	JITMAP_OPTS(const jitmap_parse_opts, opts, .order = order, .arch = arch);
	jitmap_error err;
	jitmap_stackmap *sm = jitmap_stackmap_parse(buf, len, &opts, &err);
	if (!sm)
		fail_msg("parse failed at offset %llu: %s", (unsigned long long)err.offset,
			 err.reason);
	return sm;
}

static inline jitmap_stackmap *parse_bytes_ok(const sm_bytes *s, jitmap_byte_order order,
					      jitmap_arch arch)
{
	return parse_ok(s->data, s->len, order, arch);
}

#endif /* JITMAP_TEST_UNIT_H */

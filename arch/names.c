/* names.c: register names made of a prefix and a number ("xmm3", "v12"), for the
 * architecture tables' reg_name hooks (arch/<arch>.c). */
#include <stdio.h>

#include "internal.h"

static char numbered[JITMAP__NUM_ARCHES][JITMAP_MAX_REGNO][8];

const char *jitmap__numbered(jitmap_arch arch, unsigned regno, const char *prefix, unsigned n)
{
	char *s = numbered[arch][regno];
	if (!s[0])
		snprintf(s, sizeof(numbered[0][0]), "%s%u", prefix, n);
	return s;
}

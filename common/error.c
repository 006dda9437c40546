/* error.c: the one error convention: negative errno values, plus a record of where and why;
 * and the lists of problems a reader read around. */
#define _GNU_SOURCE
#include <stdio.h>

#include "fail.h"
#include "internal.h"

int jitmap__fail(jitmap_error *err, int code, uint64_t offset, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	jitmap_common_vfail(err, code, offset, fmt, ap);
	va_end(ap);
	return code;
}

int jitmap__vproblem(struct jitmap__problems *l, size_t max, const char *fmt, va_list ap)
{
	if (l->n >= max) {
		l->unlisted++;
		return 0;
	}
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		return -ENOMEM;
	if (jitmap__grow(&l->items, &l->cap, l->n + 1, sizeof(*l->items))) {
		free(s);
		return -ENOMEM;
	}
	l->items[l->n++] = s;
	return 0;
}

int jitmap__problem(struct jitmap__problems *l, size_t max, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	const int rc = jitmap__vproblem(l, max, fmt, ap);
	va_end(ap);
	return rc;
}

void jitmap__problems_truncate(struct jitmap__problems *l, size_t n)
{
	while (l->n > n)
		free(l->items[--l->n]);
}

void jitmap__problems_free(struct jitmap__problems *l)
{
	jitmap__problems_truncate(l, 0);
	free(l->items);
	*l = (struct jitmap__problems){0};
}

const char *jitmap_strerror(int code)
{
	switch (code) {
	case 0:
		return "success";
	case -EINVAL:
		return "malformed input";
	case -ENOMEM:
		return "out of memory";
	case -ENOENT:
		return "not found";
	case -ERANGE:
		return "index out of range";
	case -EEXIST:
		return "already present";
	case -EFAULT:
		return "memory not readable";
	case -ENODATA:
		return "value not available";
	case -ENOTSUP:
		return "not supported";
	case -EIO:
		return "input/output error";
	case -ELOOP:
		return "the list loops";
	case -E2BIG:
		return "too many entries";
	case -EPROTO:
		return "unknown protocol version";
	case -ESRCH:
		return "no caller: the outermost frame";
	default:
		return "unknown error";
	}
}

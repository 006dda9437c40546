/* threads.c: the threads of a stopped process, a core's (core.c) or a live one's (live.c):
 * what the two kinds hold alike, kept once (targets/internal.h).
 *
 * A thread is one jitmap__thread; stopped.h's jitmap_stopped_thread_info is its first field,
 * kept in step by the setters here: its ID, name, signal, frame registers
 * (jitmap_frame_regs_from_linux), every register of Linux's layout by DWARF number
 * (jitmap__linux_gregs, sorted) and a live process's captured stack. Both kinds also keep
 * their problems' statuses alike (the end of this file).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>

#include "internal.h"

/* -- The list -- */

void jitmap__threads_init(struct jitmap__threads *l, bool core, jitmap_byte_order order)
{
	memset(l, 0, sizeof(*l));
	l->core = core;
	l->order = order;
}

void jitmap__threads_fini(struct jitmap__threads *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i]->byno);
		free(l->v[i]->stack);
		free(l->v[i]);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* The public view, from the thread's own fields. */
static void publish(struct jitmap__thread *t)
{
	t->pub.name = t->name;
	t->pub.why = t->why;
	/* a live thread whose registers could not be read has none (jitmap__thread_reg) */
	const bool gregs = t->nregs && (t->list->core || !t->pub.error);
	t->pub.num_gregs = gregs ? t->nregs : 0;
	t->pub.gregs = gregs ? t->byno : NULL;
	t->pub.stack_lo = t->stack_lo;
	t->pub.stack_hi = t->stack_hi;
	t->pub.stopped_ns = t->stopped_ns;
	t->pub.stack_cut = t->stack_cut;
}

void jitmap__thread_publish(struct jitmap__thread *t)
{
	publish(t);
}

struct jitmap__thread *jitmap__threads_add(struct jitmap__threads *l, pid_t tid, void *owner)
{
	if (jitmap__grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v)))
		return NULL;
	struct jitmap__thread *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->list = l;
	t->owner = owner;
	t->pub.tid = tid;
	publish(t);
	l->v[l->n++] = t;
	return t;
}

struct jitmap__thread *jitmap__threads_at(const struct jitmap__threads *l, size_t i)
{
	return i < l->n ? l->v[i] : NULL;
}

/* -- A thread's registers -- */

static int cmp_reg(const void *a, const void *b)
{
	const jitmap_stopped_reg *x = a, *y = b;
	return (x->regno > y->regno) - (x->regno < y->regno);
}

int jitmap__thread_set_regs(struct jitmap__thread *t, jitmap_arch arch, const uint8_t *gregs,
			    size_t len)
{
	uint16_t regno[JITMAP__MAX_GREGS];
	uint64_t value[JITMAP__MAX_GREGS];
	size_t n = jitmap__linux_gregs(arch, t->list->order, gregs, len, regno, value,
				       JITMAP__MAX_GREGS);
	if (n > JITMAP__MAX_GREGS)
		n = JITMAP__MAX_GREGS;
	jitmap_stopped_reg *byno = n ? malloc(n * sizeof(*byno)) : NULL;
	if (n && !byno)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		byno[i] = (jitmap_stopped_reg){regno[i], value[i]};
	if (n) /* qsort's array may not be NULL, even for 0 elements */
		qsort(byno, n, sizeof(*byno), cmp_reg);
	free(t->byno);
	t->byno = byno;
	t->nregs = n;
	const int rc = jitmap_frame_regs_from_linux(arch, t->list->order, gregs, len, &t->regs);
	t->pub.error = rc;
	t->pub.regs = rc ? NULL : &t->regs;
	t->why[0] = 0;
	publish(t);
	return rc;
}

void jitmap__thread_failed(struct jitmap__thread *t, int error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->why, sizeof(t->why), fmt, ap);
	va_end(ap);
	t->pub.error = error;
	t->pub.regs = NULL;
	publish(t);
}

void jitmap__thread_set_signal(struct jitmap__thread *t, int signal)
{
	t->pub.signal = signal;
	publish(t);
}

int jitmap__regs_find(const jitmap_stopped_reg *regs, size_t n, unsigned regno, uint64_t *value)
{
	if (!regs)
		return -ENOENT;
	const size_t i = JITMAP_PARTITION_POINT(n, k, regs[k].regno < regno);
	if (i == n || regs[i].regno != regno)
		return -ENOENT;
	if (value)
		*value = regs[i].value;
	return 0;
}

int jitmap__thread_reg(const struct jitmap__thread *t, unsigned regno, uint64_t *value)
{
	if (!t->list->core && t->pub.error)
		return -ENOENT;
	return jitmap__regs_find(t->byno, t->nregs, regno, value);
}

int jitmap__thread_read_reg(void *ctx, unsigned regno, void *buf, size_t size, char *why,
			    size_t why_len)
{
	const struct jitmap__thread *t = ctx;
	uint64_t v;
	if (jitmap__thread_reg(t, regno, &v)) {
		if (t->list->core)
			snprintf(why, why_len, "the core holds no register %u for thread %" PRIu32,
				 regno, (uint32_t)t->pub.tid);
		else
			snprintf(why, why_len, "thread %d has no register %u%s%s", (int)t->pub.tid,
				 regno, t->why[0] ? ": " : "", t->why);
		return -ENOENT;
	}
	if (size == 0 || size > 8) {
		snprintf(why, why_len, "register %u has 8 bytes, not %zu", regno, size);
		return -EINVAL;
	}
	uint8_t *b = buf;
	for (size_t i = 0; i < size; i++) {
		const size_t shift = 8 * (t->list->order == JITMAP_ORDER_BIG ? size - 1 - i : i);
		b[i] = (uint8_t)(v >> shift);
	}
	return 0;
}

/* -- Problems with a status --
 *
 * What both kinds keep beside their warnings: each one's status (stopped.h's kind and code),
 * in an array of their cap's size at the same index. */

void jitmap__status_vproblem(struct jitmap__problems *l, uint8_t *status, size_t max,
			     uint8_t st, const char *fmt, va_list ap)
{
	const size_t n = l->n;
	jitmap__vproblem(l, max, fmt, ap);
	if (l->n > n)
		status[l->n - 1] = st;
}

void jitmap__status_problem(struct jitmap__problems *l, uint8_t *status, size_t max,
			    uint8_t st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	jitmap__status_vproblem(l, status, max, st, fmt, ap);
	va_end(ap);
}

/* jitdesc.c: the GDB JIT interface's list of code entries, read from a target.
 *
 * A JIT publishes `struct jit_descriptor {u32 version; u32 action_flag; jit_code_entry
 * *relevant_entry, *first_entry;}` and a doubly linked list of `struct jit_code_entry {next,
 * prev, symfile_addr, u64 symfile_size}` (GDB manual, "JIT Interface"). Debuggers read it on
 * attach and from core files, where nothing guarantees it is well formed: a crashed JIT may
 * leave a cycle, a dangling pointer or a garbage size. So the walk reads every word through the
 * caller's read_mem, remembers every entry it has seen (a cycle stops it at once, with no
 * second pass), stops at a cap, and keeps what it read before the first problem.
 * Sizes are reported as the target states them: the caller decides how much it will read.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/gdb_jit.h"
#include "internal.h"

#define P 8 /* pointer size of the targets read so far */

struct jitmap_jit_list {
	jitmap_jit_descriptor desc;
	jitmap_jit_code *codes;
	size_t num, cap;
	jitmap_error status; /* code 0 when the whole list was read */
	jitmap_byte_order order; /* the target's, as read (never AUTO) */
};

/* -- A set of addresses (open addressing; 0 is never an entry address) -- */

struct addr_set {
	uint64_t *slots;
	size_t cap, len; /* cap: a power of two */
};

static size_t addr_hash(uint64_t a, size_t cap)
{
	a ^= a >> 33;
	a *= UINT64_C(0xff51afd7ed558ccd);
	a ^= a >> 33;
	return (size_t)a & (cap - 1);
}

/* Adds `a`; returns 1 if it was already there, 0 if added, -ENOMEM. */
static int addr_set_add(struct addr_set *s, uint64_t a)
{
	if (2 * (s->len + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		uint64_t *slots = calloc(cap, sizeof(*slots));
		if (!slots)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->slots[i])
				continue;
			size_t h = addr_hash(s->slots[i], cap);
			while (slots[h])
				h = (h + 1) & (cap - 1);
			slots[h] = s->slots[i];
		}
		free(s->slots);
		s->slots = slots;
		s->cap = cap;
	}
	size_t h = addr_hash(a, s->cap);
	while (s->slots[h]) {
		if (s->slots[h] == a)
			return 1;
		h = (h + 1) & (s->cap - 1);
	}
	s->slots[h] = a;
	s->len++;
	return 0;
}

/* -- Reading -- */

static int read_words(const jitmap_target *t, uint64_t addr, uint8_t *buf, size_t len,
		      jitmap_error *err, const char *what)
{
	char why[sizeof(err->reason)] = "";
	int rc = t->read_mem(t->ctx, addr, buf, len, why, sizeof(why));
	if (rc)
		return jitmap__fail(err, rc < 0 ? rc : -EFAULT, addr,
				    "%s at 0x%" PRIx64 " is not readable: %s", what, addr,
				    why[0] ? why : jitmap_strerror(rc < 0 ? rc : -EFAULT));
	return 0;
}

static int list_push(jitmap_jit_list *l, const jitmap_jit_code *c)
{
	if (l->num == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		jitmap_jit_code *codes = realloc(l->codes, cap * sizeof(*codes));
		if (!codes)
			return -ENOMEM;
		l->codes = codes;
		l->cap = cap;
	}
	l->codes[l->num++] = *c;
	return 0;
}

static jitmap_jit_list *read_once(const jitmap_target *t, uint64_t descriptor,
				   jitmap_byte_order order, size_t limit, jitmap_error *err);

/* Whether the descriptor at `l`'s address still holds what `l` was read from (its action,
 * relevant and first entry): a process that runs (jitmap-stack by thread, LLDB, a reader that
 * stops nothing) may register or free code while its list is read, and each change, as the
 * JIT interface has it, goes through those words. A descriptor that cannot be read again is
 * taken as unchanged (the walk's own status says what could not be read). */
static bool unchanged(const jitmap_target *t, const jitmap_jit_list *l, jitmap_byte_order order)
{
	uint8_t w[JITMAP__JIT_ENTRY_SIZE(P)];
	jitmap_error e;
	if (read_words(t, l->desc.address, w, JITMAP__JIT_DESC_SIZE(P), &e, "the JIT descriptor"))
		return true;
	return (uint32_t)jitmap__load(w + JITMAP__JIT_DESC_ACTION, 4, order) == l->desc.action_flag &&
	       jitmap__load(w + JITMAP__JIT_DESC_RELEVANT(P), P, order) == l->desc.relevant_entry &&
	       jitmap__load(w + JITMAP__JIT_DESC_FIRST(P), P, order) == l->desc.first_entry;
}

#define READ_TRIES 3

jitmap_jit_list *jitmap_jit_list_read(const jitmap_target *t, uint64_t descriptor,
				      jitmap_byte_order order, size_t limit, jitmap_error *err)
{
	for (int k = 1;; k++) {
		jitmap_jit_list *l = read_once(t, descriptor, order, limit, err);
		if (!l)
			return NULL;
		if (unchanged(t, l, l->order))
			return l;
		if (k == READ_TRIES) {
			if (!l->status.code)
				jitmap__fail(&l->status, -EAGAIN, descriptor,
					     "the JIT entry list changed while it was read (%d times): "
					     "what was read may mix its states", READ_TRIES);
			return l;
		}
		jitmap_jit_list_free(l);
	}
}

static jitmap_jit_list *read_once(const jitmap_target *t, uint64_t descriptor,
				  jitmap_byte_order order, size_t limit, jitmap_error *err)
{
	jitmap_error local;
	if (!err)
		err = &local;
	memset(err, 0, sizeof(*err));
	if (!t || !t->read_mem) {
		jitmap__fail(err, -EINVAL, 0, "no target memory to read");
		errno = EINVAL;
		return NULL;
	}
	if (!limit)
		limit = JITMAP_JIT_LIST_LIMIT;

	uint8_t w[JITMAP__JIT_ENTRY_SIZE(P)]; /* the larger of a descriptor and an entry */
	int rc = read_words(t, descriptor, w, JITMAP__JIT_DESC_SIZE(P), err, "the JIT descriptor");
	if (rc) {
		errno = -rc;
		return NULL;
	}
	/* AUTO: the target's order, as its version word (always 1) says; the host's if it says
	 * neither (and the version check below fails). */
	if (order == JITMAP_ORDER_AUTO) {
		if (jitmap__load(w, 4, JITMAP_ORDER_LITTLE) == 1)
			order = JITMAP_ORDER_LITTLE;
		else if (jitmap__load(w, 4, JITMAP_ORDER_BIG) == 1)
			order = JITMAP_ORDER_BIG;
		else
			order = JITMAP__HOST_BIG ? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE;
	}
	jitmap_jit_descriptor d = {
		.address = descriptor,
		.version = (uint32_t)jitmap__load(w, 4, order),
		.action_flag = (uint32_t)jitmap__load(w + JITMAP__JIT_DESC_ACTION, 4, order),
		.relevant_entry = jitmap__load(w + JITMAP__JIT_DESC_RELEVANT(P), P, order),
		.first_entry = jitmap__load(w + JITMAP__JIT_DESC_FIRST(P), P, order),
	};
	if (d.version != JITMAP__JIT_VERSION) {
		jitmap__fail(err, -EPROTO, descriptor,
			     "the JIT descriptor at 0x%" PRIx64 " has version %" PRIu32
			     " (only version 1 exists)",
			     descriptor, d.version);
		errno = EPROTO;
		return NULL;
	}
	jitmap_jit_list *l = calloc(1, sizeof(*l));
	if (!l) {
		jitmap__fail(err, -ENOMEM, 0, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	l->desc = d;
	l->order = order;

	/* Walk; any problem ends the walk and is kept as the list's status. */
	struct addr_set seen = {0};
	uint64_t at = d.first_entry;
	while (at) {
		if (l->num >= limit) {
			jitmap__fail(&l->status, -E2BIG, at,
				     "the JIT entry list holds more than %zu entries (the limit); the "
				     "rest is not read",
				     limit);
			break;
		}
		rc = addr_set_add(&seen, at);
		if (rc < 0) {
			jitmap__fail(&l->status, rc, at, "out of memory");
			break;
		}
		if (rc == 1) {
			jitmap__fail(&l->status, -ELOOP, at,
				     "the JIT entry list loops: entry 0x%" PRIx64
				     " comes again after %zu entries",
				     at, l->num);
			break;
		}
		rc = read_words(t, at, w, sizeof(w), &l->status, "JIT entry");
		if (rc)
			break;
		const jitmap_jit_code c = {
			.entry = at,
			.prev = jitmap__load(w + JITMAP__JIT_ENTRY_PREV(P), P, order),
			.symfile_addr = jitmap__load(w + JITMAP__JIT_ENTRY_SYMFILE(P), P, order),
			.symfile_size = jitmap__load(w + JITMAP__JIT_ENTRY_SIZE_AT(P), 8, order),
		};
		if (list_push(l, &c)) {
			jitmap__fail(&l->status, -ENOMEM, at, "out of memory");
			break;
		}
		at = jitmap__load(w + JITMAP__JIT_ENTRY_NEXT(P), P, order);
	}
	free(seen.slots);
	return l;
}

void jitmap_jit_list_free(jitmap_jit_list *l)
{
	if (!l)
		return;
	free(l->codes);
	free(l);
}

const jitmap_jit_descriptor *jitmap_jit_list_descriptor(const jitmap_jit_list *l)
{
	return &l->desc;
}

size_t jitmap_jit_list_count(const jitmap_jit_list *l)
{
	return l->num;
}

const jitmap_jit_code *jitmap_jit_list_code(const jitmap_jit_list *l, size_t i)
{
	return i < l->num ? &l->codes[i] : NULL;
}

const jitmap_error *jitmap_jit_list_status(const jitmap_jit_list *l)
{
	return &l->status;
}

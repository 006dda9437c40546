/* fuzz_common.h: what both fuzz targets do with a stackmap that parsed.
 *
 * Every public accessor is called on every element, and the answers are checked against
 * each other (a record's PC must find that record, a statepoint's parts must add up to its
 * locations, ...): a wrong answer aborts, so libFuzzer reports it like a crash. Locations
 * are evaluated through a fake target whose registers hold bytes derived from their numbers
 * and whose reads fail for some registers and addresses, so both paths of jitmap_value run.
 */
#ifndef JITMAP_FUZZ_COMMON_H
#define JITMAP_FUZZ_COMMON_H

#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitmap/jitmap.h"

#define CHECK(cond)                                                                         \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                            \
		}                                                                           \
	} while (0)

/* The first input byte of fuzz_parse: bits 0-1 the byte order (3 means AUTO too), bits 2-4
 * the architecture (modulo the number of jitmap_arch values). make-corpus.sh writes it. */
static inline jitmap_parse_opts fuzz_opts_from_byte(uint8_t b)
{
	JITMAP_OPTS(jitmap_parse_opts, o);
	o.order = (b & 3) == 3 ? JITMAP_ORDER_AUTO : (jitmap_byte_order)(b & 3);
	o.arch = (jitmap_arch)(((b >> 2) & 7) % (JITMAP_ARCH_RISCV64 + 1));
	return o;
}

/* -- The fake target -- */

static inline int fake_read_reg(void *ctx, unsigned regno, void *buf, size_t size, char *why,
			 size_t why_len)
{
	(void)ctx;
	CHECK(size > 0 && size <= 64);
	if (regno % 5 == 3) {
		snprintf(why, why_len, "caller-saved register %u not saved in an outer frame", regno);
		return -ENODATA;
	}
	uint8_t *b = buf;
	for (size_t i = 0; i < size; i++)
		b[i] = (uint8_t)(regno * 37u + i * 11u + 1u);
	return 0;
}

static inline int fake_read_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			 size_t why_len)
{
	(void)ctx;
	CHECK(len <= JITMAP_VALUE_MAX);
	if ((addr & 0xf00) == 0x300) {
		snprintf(why, why_len, "cannot access memory at 0x%" PRIx64, addr);
		return -EFAULT;
	}
	uint8_t *b = buf;
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(addr + i * 7u);
	return 0;
}

static inline int fail_read_reg(void *ctx, unsigned regno, void *buf, size_t size, char *why,
			 size_t why_len)
{
	(void)ctx, (void)regno, (void)buf, (void)size, (void)why, (void)why_len;
	return -EIO; /* and no reason given */
}

/* A string that a formatter filled must be terminated within its buffer. */
static inline void check_string(const char *s, size_t cap)
{
	CHECK(memchr(s, '\0', cap) != NULL);
}

/* -- Walking deopt layouts -- */

/* Every layout, frame, slot and string of parsed layouts is in bounds and terminated (ASan
 * sees any read past what the parser allocated), and each is found again by its key. */
static inline void fuzz_walk_layouts(const jitmap_layouts *l)
{
	const size_t n = jitmap_layouts_count(l);
	CHECK(jitmap_layouts_get(l, n) == NULL);
	for (size_t i = 0; i < n; i++) {
		const jitmap_deopt_layout *d = jitmap_layouts_get(l, i);
		CHECK(d && d->num_frames > 0);
		CHECK(!d->function || strlen(d->function) > 0);
		CHECK(jitmap_layouts_find(l, d->record_id, d->function) == d);
		for (uint32_t k = 0; k < d->num_frames; k++) {
			const jitmap_vframe_layout *f = &d->frames[k];
			CHECK(f->method.kind >= JITMAP_VREF_NUMBER && f->method.kind <= JITMAP_VREF_NAME);
			CHECK(f->bci.kind <= JITMAP_VREF_DEOPT);
			if (f->method.kind == JITMAP_VREF_NAME)
				(void)strlen(f->method.name);
			for (uint32_t j = 0; j < f->num_locals; j++)
				(void)(f->locals[j].name ? strlen(f->locals[j].name) : f->locals[j].index);
			for (uint32_t j = 0; j < f->num_stack; j++)
				(void)(f->stack[j].name ? strlen(f->stack[j].name) : f->stack[j].index);
		}
	}
}

/* -- Walking a stackmap -- */

static inline void fuzz_eval_location(const jitmap_stackmap *sm, const jitmap_record *r,
			       const jitmap_location *loc)
{
	static const jitmap_target full = {NULL, fake_read_reg, fake_read_mem};
	static const jitmap_target regs_only = {NULL, fake_read_reg, NULL};
	static const jitmap_target failing = {NULL, fail_read_reg, fake_read_mem};
	const jitmap_target *targets[] = {&full, &regs_only, &failing, NULL};
	jitmap_value v;

	for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++) {
		int rc = jitmap_location_eval(sm, r, loc, targets[t], &v);
		CHECK(rc <= 0);
		CHECK((rc == 0) == v.available);
		check_string(v.why, sizeof(v.why));
		if (rc)
			CHECK(v.why[0] != '\0');
		if (rc == 0 && loc->kind == JITMAP_LOC_DIRECT)
			CHECK(v.is_address && v.u == v.address);
	}
}

/* Whether a function at or before `pc` has a known size that `pc` lies beyond. */
static inline bool fuzz_past_a_sized_function(const jitmap_stackmap *sm, uint64_t pc)
{
	const size_t nf = jitmap_stackmap_num_functions(sm);
	for (size_t i = 0; i < nf; i++) {
		const jitmap_function *g = jitmap_stackmap_function(sm, i);
		const uint64_t size = jitmap_stackmap_function_size(sm, i);
		if (g->address <= pc && size && pc - g->address > size)
			return true;
	}
	return false;
}

static inline void fuzz_walk_record(const jitmap_stackmap *sm, size_t i)
{
	const jitmap_record *r = jitmap_stackmap_record(sm, i);
	CHECK(r != NULL);
	CHECK(r->blob < jitmap_stackmap_num_blobs(sm));
	const jitmap_blob *b = jitmap_stackmap_blob(sm, r->blob);
	CHECK(i >= b->first_record && i - b->first_record < b->num_records);

	const jitmap_function *f = jitmap_record_function(sm, r);
	const uint64_t pc = jitmap_record_pc(sm, r);
	if (f) {
		CHECK(f->record_count > 0);
		CHECK(i >= f->first_record && i - f->first_record < f->record_count);
		CHECK(pc == f->address + r->instruction_offset);
		/* The record is among those at its PC. */
		const jitmap_record *hits[4];
		size_t n = jitmap_stackmap_lookup(sm, pc, hits, 4);
		CHECK(n >= 1);
		int found = n > 4;
		for (size_t k = 0; k < n && k < 4; k++) {
			CHECK(jitmap_record_pc(sm, hits[k]) == pc);
			found |= hits[k] == r;
		}
		CHECK(found);
		CHECK(jitmap_stackmap_lookup(sm, pc, NULL, 0) == n);
		const jitmap_record *before, *after;
		int rc = jitmap_stackmap_nearest(sm, pc, &before, &after);
		/* Some function starts at or before the PC (unless the sum wrapped around), and
		 * past the end of the one nearest (when its symbol's size is known) is none. */
		CHECK(rc == 0 || (rc == -ENOENT && (pc < f->address || fuzz_past_a_sized_function(sm, pc))));
		if (before)
			CHECK(jitmap_record_pc(sm, before) <= pc);
		if (after)
			CHECK(jitmap_record_pc(sm, after) > pc);
		(void)jitmap_stackmap_nearest(sm, pc - 1, &before, &after);
		(void)jitmap_stackmap_nearest(sm, pc + 1, &before, &after);
	}

	for (unsigned l = 0; l < r->num_locations; l++) {
		const jitmap_location *loc = &r->locations[l];
		char buf[96], tiny[4];
		uint64_t v;
		int len = jitmap_location_format(sm, r, loc, buf, sizeof(buf));
		CHECK(len > 0);
		check_string(buf, sizeof(buf));
		CHECK(jitmap_location_format(sm, r, loc, tiny, sizeof(tiny)) == len);
		check_string(tiny, sizeof(tiny));
		CHECK(jitmap_loc_kind_name(loc->kind) != NULL);
		int rc = jitmap_location_constant(sm, r, loc, &v);
		if (loc->kind == JITMAP_LOC_CONSTANT || loc->kind == JITMAP_LOC_CONSTANT_INDEX)
			CHECK(rc == 0); /* the parser range-checked every index */
		else
			CHECK(rc == -EINVAL);
		(void)jitmap_reg_name(jitmap_stackmap_arch(sm), loc->dwarf_reg);
		(void)jitmap_reg_is_callee_saved(jitmap_stackmap_arch(sm), loc->dwarf_reg);
		fuzz_eval_location(sm, r, loc);
	}
	for (unsigned l = 0; l < r->num_live_outs; l++)
		(void)jitmap_reg_name(jitmap_stackmap_arch(sm), r->live_outs[l].dwarf_reg);

	jitmap_statepoint_info sp;
	char why[64];
	if (jitmap_statepoint_decode(sm, r, &sp, why, sizeof(why)) == 0) {
		CHECK(3 + sp.num_deopt + 2 * sp.num_gc_pairs + sp.num_gc_allocas == r->num_locations);
		CHECK(sp.deopt == r->locations + 3);
		CHECK(sp.gc_pairs == sp.deopt + sp.num_deopt);
		CHECK(sp.gc_allocas == sp.gc_pairs + 2 * sp.num_gc_pairs);
		CHECK(sp.flags <= 3);
		CHECK(jitmap_statepoint_wanted(sm, r, JITMAP_STATEPOINT_AUTO, NULL, 0));
	} else {
		check_string(why, sizeof(why));
		CHECK(!jitmap_statepoint_wanted(sm, r, JITMAP_STATEPOINT_AUTO, NULL, 0));
	}
	CHECK(!jitmap_statepoint_wanted(sm, r, JITMAP_STATEPOINT_ALL, &r->id, 1));
	CHECK(jitmap_statepoint_wanted(sm, r, JITMAP_STATEPOINT_NONE, &r->id, 1));
}

static inline void fuzz_walk_stackmap(const jitmap_stackmap *sm)
{
	const size_t nb = jitmap_stackmap_num_blobs(sm), nf = jitmap_stackmap_num_functions(sm),
		     nr = jitmap_stackmap_num_records(sm), nc = jitmap_stackmap_num_constants(sm);
	uint64_t v;

	CHECK(nb >= 1);
	CHECK(jitmap_stackmap_byte_order(sm) == JITMAP_ORDER_LITTLE ||
	      jitmap_stackmap_byte_order(sm) == JITMAP_ORDER_BIG);
	(void)jitmap_arch_name(jitmap_stackmap_arch(sm));
	CHECK(jitmap_stackmap_blob(sm, nb) == NULL);
	CHECK(jitmap_stackmap_function(sm, nf) == NULL);
	CHECK(jitmap_stackmap_record(sm, nr) == NULL);
	CHECK(jitmap_stackmap_constant(sm, nc, &v) == -ERANGE);

	size_t functions = 0, records = 0, constants = 0;
	uint64_t end = 0;
	for (size_t i = 0; i < nb; i++) {
		const jitmap_blob *b = jitmap_stackmap_blob(sm, i);
		CHECK(b && b->version >= 1 && b->version <= 3);
		CHECK(b->section_offset >= end && b->section_offset % 8 == 0);
		end = b->section_offset + b->size;
		CHECK(b->first_function == functions && b->first_record == records &&
		      b->first_constant == constants);
		functions += b->num_functions;
		records += b->num_records;
		constants += b->num_constants;
	}
	CHECK(functions == nf && records == nr && constants == nc);
	for (size_t i = 0; i < nc; i++)
		CHECK(jitmap_stackmap_constant(sm, i, &v) == 0);
	for (size_t i = 0; i < nf; i++) {
		const jitmap_function *f = jitmap_stackmap_function(sm, i);
		CHECK(f && f->blob < nb);
		CHECK(f->record_count <= nr && f->first_record <= nr - f->record_count);
		const jitmap_record *before, *after;
		CHECK(jitmap_stackmap_nearest(sm, f->address, &before, &after) == 0);
	}
	for (size_t i = 0; i < nr; i++)
		fuzz_walk_record(sm, i);

	/* ykllvm's groupings: each record's variables cover its locations exactly, in order;
	 * extra places and spills only where the dialect has them. */
	for (size_t i = 0; i < nb; i++)
		CHECK(jitmap_dialect_name(jitmap_blob_dialect(sm, i)) != NULL);
	for (size_t i = 0; i < nr; i++) {
		const jitmap_record *r = jitmap_stackmap_record(sm, i);
		const jitmap_dialect d = jitmap_blob_dialect(sm, r->blob);
		const size_t nv = jitmap_record_num_live_vars(sm, r);
		size_t next = 0;
		uint16_t first, n;
		for (size_t k = 0; k < nv; k++) {
			CHECK(jitmap_record_live_var(sm, r, k, &first, &n) == 0);
			CHECK(first == next && (d != JITMAP_DIALECT_LLVM || n == 1));
			next += n;
		}
		CHECK(next == r->num_locations);
		CHECK(jitmap_record_live_var(sm, r, nv, &first, &n) == -ERANGE);
		for (size_t l = 0; l < r->num_locations; l++) {
			const int16_t *x;
			const size_t nx = jitmap_location_extras(sm, r, l, &x);
			CHECK(!nx || (d == JITMAP_DIALECT_YK_EXTRAS && r->locations[l].kind ==
								  JITMAP_LOC_REGISTER));
			for (size_t k = 0; k < nx; k++)
				v += (uint64_t)x[k];
		}
	}
	for (size_t i = 0; i < nf; i++) {
		int fp;
		const jitmap_spill *sp;
		size_t ns;
		CHECK(jitmap_function_spills(sm, i, &fp, &sp, &ns) == 0);
		const jitmap_dialect d = jitmap_blob_dialect(sm, jitmap_stackmap_function(sm, i)->blob);
		CHECK((fp >= 0) == (d == JITMAP_DIALECT_YK_EXTRAS) && fp <= 1);
		for (size_t k = 0; k < ns; k++)
			v += sp[k].dwarf_reg + (uint64_t)sp[k].frame_index;
	}

	/* The index over several stackmaps finds what the stackmap finds. */
	jitmap_index *idx = jitmap_index_new();
	CHECK(idx);
	CHECK(jitmap_index_add(idx, sm) == 0);
	CHECK(jitmap_index_add(idx, sm) == -EEXIST);
	for (size_t i = 0; i < nr && i < 64; i++) {
		const jitmap_record *r = jitmap_stackmap_record(sm, i);
		if (!jitmap_record_function(sm, r))
			continue;
		const uint64_t pc = jitmap_record_pc(sm, r);
		jitmap_hit hit;
		CHECK(jitmap_index_lookup(idx, pc, &hit, 1) == jitmap_stackmap_lookup(sm, pc, NULL, 0));
	}
	CHECK(jitmap_index_remove(idx, sm) == 0);
	CHECK(jitmap_index_num_records(idx) == 0);
	jitmap_index_free(idx);
}

/* Move the functions and name them, then walk again (the index is rebuilt lazily). */
static inline void fuzz_mutate_stackmap(jitmap_stackmap *sm)
{
	const size_t nf = jitmap_stackmap_num_functions(sm);
	for (size_t i = 0; i < nf && i < 16; i++) {
		const jitmap_function *f = jitmap_stackmap_function(sm, i);
		CHECK(jitmap_stackmap_set_function_address(sm, f->section_offset,
							   0x10000 + 0x100 * (uint64_t)i) == 0);
		CHECK(jitmap_stackmap_set_function_name(sm, i, i % 2 ? "fuzz_fn" : NULL) == 0);
	}
	CHECK(jitmap_stackmap_set_function_name(sm, nf, "x") == -ERANGE);
	CHECK(jitmap_stackmap_set_function_address(sm, 1, 0) == -ENOENT); /* fields are 8-aligned */
	jitmap_stackmap_add_bias(sm, UINT64_C(0xffff800000000000));
	fuzz_walk_stackmap(sm);
}

#endif /* JITMAP_FUZZ_COMMON_H */

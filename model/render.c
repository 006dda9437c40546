/* render.c: the pieces every writer of a record is made of, in text and in the JSON contract
 * (docs/json.md), and records without a frame and deopt layouts (jitmap-dump's), written with
 * them; frame reports (report.c) are the other writer. The two are the one way every front
 * end writes a record (GDB and LLDB through the Python core, jitmap-stack and jitmap-dump
 * directly). What a value reads like is decided here: "10", "-1200 (0x...)",
 * "0x7ffd... (address)", "<unavailable: REASON>". */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

#define MASK(size) ((size) >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * (size))) - 1)

/* -- Values -- */

static int64_t signed_of(uint64_t u, unsigned size)
{
	if (size == 0 || size >= 8)
		return (int64_t)u;
	const uint64_t sign = UINT64_C(1) << (8 * size - 1);
	return (u & sign) ? (int64_t)(u | ~MASK(size)) : (int64_t)u;
}

bool jitmap__value_available(const jitmap_value *v)
{
	return v->available;
}

const char *jitmap__value_why(const jitmap_value *v)
{
	return v->why[0] ? v->why : "unknown reason";
}

/* A value as a person reads it. */
void jitmap__value_text(struct jitmap__buf *b, const jitmap_location *loc, const jitmap_value *v)
{
	if (!jitmap__value_available(v)) {
		jitmap__buf_puts(b, "<unavailable: ");
		jitmap__buf_text(b, jitmap__value_why(v), "");
		jitmap__buf_puts(b, ">");
		return;
	}
	if (jitmap__value_wide(loc, v)) {
		jitmap__buf_puts(b, "0x");
		for (unsigned k = 0; k < loc->size && k < JITMAP_VALUE_MAX; k++)
			jitmap__buf_printf(b, "%02x", v->bytes[k]);
		jitmap__buf_printf(b, " (%u bytes, in memory order)", loc->size);
		return;
	}
	if (loc->kind == JITMAP_LOC_DIRECT) {
		jitmap__buf_printf(b, "0x%" PRIx64 " (address)", v->u);
		return;
	}
	const int64_t s = loc->size <= 8 ? signed_of(v->u, loc->size) : (int64_t)v->u;
	if (loc->size <= 8 && s < 0)
		jitmap__buf_printf(b, "%" PRId64 " (0x%" PRIx64 ")", s, v->u);
	else if (v->u >= 0x10000)
		jitmap__buf_printf(b, "%" PRIu64 " (0x%" PRIx64 ")", v->u, v->u);
	else
		jitmap__buf_printf(b, "%" PRIu64, v->u);
}

/* The value as JSON: a number, the hex of a wide value's bytes, or null. */
void jitmap__value_json(struct jitmap__buf *b, const jitmap_location *loc, const jitmap_value *v)
{
	if (!jitmap__value_available(v)) {
		jitmap__buf_puts(b, "null");
	} else if (jitmap__value_wide(loc, v)) {
		jitmap__buf_puts(b, "\"");
		for (unsigned k = 0; k < loc->size && k < JITMAP_VALUE_MAX; k++)
			jitmap__buf_printf(b, "%02x", v->bytes[k]);
		jitmap__buf_puts(b, "\"");
	} else {
		jitmap__buf_printf(b, "%" PRIu64, v->u);
	}
}

void jitmap__where(const jitmap_stackmap *sm, const jitmap_record *rec, size_t i, char *w,
		     size_t len)
{
	jitmap_location_format(sm, rec, &rec->locations[i], w, len);
}

void jitmap__reg_text(const jitmap_stackmap *sm, unsigned regno, char *out, size_t len)
{
	const char *n = jitmap__reg_label(sm, regno, out, len);
	if (n != out)
		snprintf(out, len, "%s", n);
}

/* -- ykllvm's live variables and extra places (jitmap_dialect) -- */

bool jitmap__yk_record(const jitmap_stackmap *sm, const jitmap_record *rec)
{
	return jitmap_blob_dialect(sm, rec->blob) != JITMAP_DIALECT_LLVM;
}

/* An extra place as text: a register, or a byte offset from the frame pointer ("[rbp-16]"). */
static void extra_text(const jitmap_stackmap *sm, int16_t x, char *out, size_t len)
{
	if (x >= 0) {
		jitmap__reg_text(sm, (unsigned)x, out, len);
		return;
	}
	const struct jitmap__arch *a = jitmap__arch(jitmap_stackmap_arch(sm));
	const char *fp = a ? jitmap_reg_name(jitmap_stackmap_arch(sm), (unsigned)a->fp) : NULL;
	snprintf(out, len, "[%s%d]", fp ? fp : "fp", x);
}

/* "variable 1" and, with extra places, ", also [rbp-16], r14": a location's role in a ykllvm
 * record (empty in LLVM's). */
static void yk_role(const jitmap_stackmap *sm, const jitmap_record *rec, size_t i, char *out,
		    size_t len)
{
	out[0] = 0;
	if (!jitmap__yk_record(sm, rec))
		return;
	size_t used = (size_t)snprintf(out, len, "variable %zu", jitmap__location_live_var(sm, rec, i));
	const int16_t *x;
	const size_t nx = jitmap_location_extras(sm, rec, i, &x);
	for (size_t k = 0; k < nx && used < len; k++) {
		char place[48];
		extra_text(sm, x[k], place, sizeof(place));
		used += (size_t)snprintf(out + used, len - used, "%s%s", k ? ", " : ", also ", place);
	}
}

/* ", "live_var": N, "extras": [{"raw": -16, "where": "[rbp-16]"}, ...]" for a ykllvm record. */
void jitmap__yk_location_json(struct jitmap__buf *b, const jitmap_stackmap *sm,
			     const jitmap_record *rec, size_t i)
{
	if (!jitmap__yk_record(sm, rec))
		return;
	jitmap__buf_printf(b, ", \"live_var\": %zu", jitmap__location_live_var(sm, rec, i));
	if (jitmap_blob_dialect(sm, rec->blob) != JITMAP_DIALECT_YK_EXTRAS)
		return;
	const int16_t *x;
	const size_t nx = jitmap_location_extras(sm, rec, i, &x);
	jitmap__buf_puts(b, ", \"extras\": [");
	for (size_t k = 0; k < nx; k++) {
		char place[48];
		extra_text(sm, x[k], place, sizeof(place));
		jitmap__buf_printf(b, "%s{\"raw\": %d, \"where\": ", k ? ", " : "", x[k]);
		jitmap__buf_json(b, place);
		jitmap__buf_puts(b, "}");
	}
	jitmap__buf_puts(b, "]");
}

size_t jitmap__rrec_index(const struct jitmap__rrec *x, const jitmap_location *loc)
{
	return (size_t)(loc - x->rec->locations);
}

/* Whether both values of a GC root are numbers, and the derived pointer's offset from its
 * base. */
bool jitmap__root_offset(const struct jitmap__rrec *x, size_t base, size_t derived, int64_t *off)
{
	const jitmap_location *lb = &x->rec->locations[base], *ld = &x->rec->locations[derived];
	const jitmap_value *vb = &x->values[base], *vd = &x->values[derived];
	if (!jitmap__value_available(vb) || !jitmap__value_available(vd) || jitmap__value_wide(lb, vb) ||
	    jitmap__value_wide(ld, vd))
		return false;
	*off = (int64_t)(vd->u - vb->u);
	return true;
}

/* -- Text of a record -- */

/* The role of each location of a statepoint ("deopt", "gc base", ...) into `roles` (one per
 * location; "" for none). */
void jitmap__roles(const struct jitmap__rrec *x, char (*roles)[64])
{
	const jitmap_statepoint_info *sp = &x->sp;
	if (!x->statepoint) {
		for (size_t i = 0; i < x->rec->num_locations; i++)
			yk_role(x->sm, x->rec, i, roles[i], 64);
		return;
	}
	snprintf(roles[0], 64, "calling convention");
	snprintf(roles[1], 64, "flags");
	snprintf(roles[2], 64, "deopt count");
	for (size_t k = 0; k < sp->num_deopt; k++)
		snprintf(roles[jitmap__rrec_index(x, sp->deopt) + k], 64, "deopt");
	for (size_t k = 0; k < sp->num_gc_pairs; k++) {
		const size_t bi = jitmap__rrec_index(x, sp->gc_pairs) + 2 * k, di = bi + 1;
		const jitmap_location *lb = &x->rec->locations[bi], *ld = &x->rec->locations[di];
		if (lb->size > 8 && lb->size % 8 == 0)
			snprintf(roles[bi], 64, "gc base (vector of %u pointers)", lb->size / 8);
		else
			snprintf(roles[bi], 64, "gc base");
		int64_t off;
		if (lb->kind == ld->kind && lb->dwarf_reg == ld->dwarf_reg &&
		    lb->offset == ld->offset)
			snprintf(roles[di], 64, "gc derived = base (#%zu)", bi);
		else if (!x->values || !jitmap__root_offset(x, bi, di, &off))
			snprintf(roles[di], 64, "gc derived from #%zu", bi);
		else
			snprintf(roles[di], 64, "gc derived from #%zu, offset %" PRId64, bi, off);
	}
	for (size_t k = 0; k < sp->num_gc_allocas; k++)
		snprintf(roles[jitmap__rrec_index(x, sp->gc_allocas) + k], 64, "gc alloca");
}

static void plural(struct jitmap__buf *b, uint64_t n, const char *word)
{
	jitmap__buf_printf(b, "%" PRIu64 " %s%s", n, word, n == 1 ? "" : "s");
}

/* One location line: index, kind, where, size, [value,] [at ADDRESS,] [role,] [[name],] [raw]. */
void jitmap__location_line(struct jitmap__buf *b, const jitmap_stackmap *sm,
			  const jitmap_record *rec, size_t i, const jitmap_value *v,
			  const char *role, const char *name, bool raw, unsigned indent)
{
	const jitmap_location *loc = &rec->locations[i];
	char where[96];
	jitmap_location_format(sm, rec, loc, where, sizeof(where));
	jitmap__buf_indent(b, indent);
	/* "#%-3zu %-14s %-22s size ", without printf: jitmap-dump writes one per location */
	jitmap__buf_puts(b, "#");
	jitmap__buf_u64(b, i, 3);
	jitmap__buf_puts(b, " ");
	jitmap__buf_pad(b, jitmap_loc_kind_name(loc->kind), 14);
	jitmap__buf_puts(b, " ");
	jitmap__buf_pad(b, where, 22);
	jitmap__buf_puts(b, " size ");
	if (v) {
		jitmap__buf_u64(b, loc->size, 3);
		jitmap__buf_puts(b, " ");
		jitmap__value_text(b, loc, v);
		if (loc->kind == JITMAP_LOC_INDIRECT && jitmap__value_available(v))
			jitmap__buf_printf(b, "  at 0x%" PRIx64, v->address);
	} else {
		jitmap__buf_u64(b, loc->size, 0);
	}
	if (role && role[0])
		jitmap__buf_printf(b, "  %s", role);
	if (name) {
		jitmap__buf_puts(b, "  [");
		jitmap__buf_text(b, name, "");
		jitmap__buf_puts(b, "]");
	}
	if (raw) {
		jitmap__buf_printf(b, "  {kind %d, size %u, dwarf_reg %u", (int)loc->kind, loc->size,
				   loc->dwarf_reg);
		if (loc->kind == JITMAP_LOC_REGISTER || loc->kind == JITMAP_LOC_DIRECT ||
		    loc->kind == JITMAP_LOC_INDIRECT) {
			char r[32];
			jitmap__reg_text(sm, loc->dwarf_reg, r, sizeof(r));
			jitmap__buf_printf(b, " (%s)", r);
		}
		jitmap__buf_printf(b, ", offset %" PRId32 "}", loc->offset);
	}
	jitmap__buf_puts(b, "\n");
}

void jitmap__live_outs_text(struct jitmap__buf *b, const jitmap_stackmap *sm,
			   const jitmap_record *rec, unsigned indent)
{
	if (!rec->num_live_outs)
		return;
	jitmap__buf_indent(b, indent);
	jitmap__buf_puts(b, "live-outs:");
	for (size_t i = 0; i < rec->num_live_outs; i++) {
		char reg[32];
		jitmap__reg_text(sm, rec->live_outs[i].dwarf_reg, reg, sizeof(reg));
		jitmap__buf_printf(b, " %s(%u)", reg, rec->live_outs[i].size);
	}
	jitmap__buf_puts(b, "\n");
}

/* "calling convention 0, flags 0, 2 deopt values, 1 gc root (a statepoint by its shape)". */
void jitmap__statepoint_line(struct jitmap__buf *b, const jitmap_statepoint_info *sp, bool forced,
			    unsigned indent)
{
	jitmap__buf_indent(b, indent);
	jitmap__buf_printf(b, "calling convention %" PRIu64 ", flags %" PRIu64 "%s%s, ",
			   sp->calling_convention, sp->flags, sp->flags & 1 ? " GCTransition" : "",
			   sp->flags & 2 ? " DeoptLiveIn" : "");
	plural(b, sp->num_deopt, "deopt value");
	jitmap__buf_puts(b, ", ");
	plural(b, sp->num_gc_pairs, "gc root");
	jitmap__buf_puts(b, forced ? "\n" : " (a statepoint by its shape)\n");
}

/* "record 100 at 0x... (f+86), 6 locations, 0 live-outs[, statepoint]". */
void jitmap__record_head(struct jitmap__buf *b, const jitmap_stackmap *sm, const jitmap_record *rec,
			const char *function, bool statepoint, unsigned indent)
{
	const jitmap_function *fn = jitmap_record_function(sm, rec);
	jitmap__buf_indent(b, indent);
	jitmap__buf_printf(b, "record %" PRIu64 " at ", rec->id);
	if (fn) {
		jitmap__buf_printf(b, "0x%" PRIx64 " (", jitmap_record_pc(sm, rec));
		if (function) {
			jitmap__buf_text(b, function, "?");
			jitmap__buf_printf(b, "+%" PRIu32 ")", rec->instruction_offset);
		} else {
			jitmap__buf_printf(b, "offset %" PRIu32 ")", rec->instruction_offset);
		}
	} else {
		jitmap__buf_printf(b, "offset %" PRIu32 " of an unknown function (version 1 section)",
				   rec->instruction_offset);
	}
	jitmap__buf_puts(b, ", ");
	if (jitmap__yk_record(sm, rec)) {
		plural(b, jitmap_record_num_live_vars(sm, rec), "live variable");
		jitmap__buf_puts(b, " in ");
		plural(b, rec->num_locations, "location");
		jitmap__buf_printf(b, " (%s)", jitmap_dialect_name(jitmap_blob_dialect(sm, rec->blob)));
	} else {
		plural(b, rec->num_locations, "location");
	}
	jitmap__buf_puts(b, ", ");
	plural(b, rec->num_live_outs, "live-out");
	jitmap__buf_puts(b, statepoint ? ", statepoint\n" : "\n");
}

/* -- Records without a frame, deopt layouts (jitmap-dump): in this file, beside the pieces
 * they are made of, so that the compiler inlines them (a section of 10^5 records writes
 * millions of location lines; across files they cost jitmap-dump 3-5%) -- */

/* -- Records without a frame (jitmap-dump) -- */

static bool static_statepoint(const jitmap_stackmap *sm, const jitmap_record *rec,
			      jitmap_statepoint_mode mode, const uint64_t *ids, size_t num_ids,
			      jitmap_statepoint_info *sp, bool *forced, char *why, size_t why_len)
{
	bool listed = false;
	for (size_t i = 0; ids && i < num_ids; i++)
		listed |= ids[i] == rec->id;
	*forced = mode != JITMAP_STATEPOINT_AUTO || listed;
	why[0] = 0;
	if (!jitmap_statepoint_wanted(sm, rec, mode, ids, ids ? num_ids : 0))
		return false;
	if (jitmap_statepoint_decode(sm, rec, sp, why, why_len) == 0)
		return true;
	if (!*forced)
		why[0] = 0;
	return false;
}

char *jitmap_record_text(const jitmap_stackmap *sm, const jitmap_record *rec,
			 jitmap_statepoint_mode mode, const uint64_t *ids, size_t num_ids,
			 unsigned indent)
{
	if (!sm || !rec) {
		errno = EINVAL;
		return NULL;
	}
	struct jitmap__rrec x = {.sm = sm, .rec = rec};
	const jitmap_function *fn = jitmap_record_function(sm, rec);
	x.function = fn ? fn->name : NULL;
	x.statepoint = static_statepoint(sm, rec, mode, ids, num_ids, &x.sp, &x.forced,
					 x.misfit_why, sizeof(x.misfit_why));
	struct jitmap__buf b = {0};
	jitmap__buf_put(&b, "", 0);
	jitmap__record_head(&b, sm, rec, fn ? (fn->name ? fn->name : "?") : NULL, x.statepoint, indent);
	if (x.misfit_why[0]) {
		jitmap__buf_indent(&b, indent + 2);
		jitmap__buf_printf(&b, "(record %" PRIu64 " does not have a statepoint's shape: %s)\n",
				   rec->id, x.misfit_why);
	}
	if (x.statepoint)
		jitmap__statepoint_line(&b, &x.sp, x.forced, indent + 2);
	char(*roles)[64] = calloc(rec->num_locations ? rec->num_locations : 1, sizeof(*roles));
	if (!roles) {
		jitmap__buf_free(&b);
		errno = ENOMEM;
		return NULL;
	}
	jitmap__roles(&x, roles);
	for (size_t i = 0; i < rec->num_locations; i++)
		jitmap__location_line(&b, sm, rec, i, NULL, roles[i], NULL, false, indent + 2);
	free(roles);
	jitmap__live_outs_text(&b, sm, rec, indent + 2);
	return jitmap__buf_finish(&b);
}

static void static_location_json(struct jitmap__buf *b, const jitmap_stackmap *sm,
				 const jitmap_record *rec, size_t i)
{
	const jitmap_location *loc = &rec->locations[i];
	char where[96];
	jitmap_location_format(sm, rec, loc, where, sizeof(where));
	/* without printf: jitmap-dump writes one per location of a whole section */
	jitmap__buf_puts(b, "{\"index\": ");
	jitmap__buf_u64(b, i, 0);
	jitmap__buf_puts(b, ", \"kind\": \"");
	jitmap__buf_puts(b, jitmap_loc_kind_name(loc->kind));
	jitmap__buf_puts(b, "\", \"where\": ");
	jitmap__buf_json(b, where);
	jitmap__buf_puts(b, ", \"size\": ");
	jitmap__buf_u64(b, loc->size, 0);
	if (loc->kind == JITMAP_LOC_CONSTANT || loc->kind == JITMAP_LOC_CONSTANT_INDEX) {
		uint64_t v = 0;
		jitmap_location_constant(sm, rec, loc, &v);
		jitmap__buf_puts(b, ", \"value\": ");
		jitmap__buf_u64(b, v, 0);
	} else {
		jitmap__buf_puts(b, ", \"dwarf_reg\": ");
		jitmap__buf_u64(b, loc->dwarf_reg, 0);
		jitmap__buf_puts(b, ", \"offset\": ");
		if (loc->offset < 0)
			jitmap__buf_puts(b, "-");
		jitmap__buf_u64(b, loc->offset < 0 ? 0u - (uint32_t)loc->offset : (uint32_t)loc->offset,
				0);
	}
	jitmap__yk_location_json(b, sm, rec, i);
	jitmap__buf_puts(b, "}");
}

static void static_locations_json(struct jitmap__buf *b, const jitmap_stackmap *sm,
				  const jitmap_record *rec, size_t first, size_t n)
{
	jitmap__buf_puts(b, "[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			jitmap__buf_puts(b, ", ");
		static_location_json(b, sm, rec, first + i);
	}
	jitmap__buf_puts(b, "]");
}

char *jitmap_record_json(const jitmap_stackmap *sm, const jitmap_record *rec,
			 jitmap_statepoint_mode mode, const uint64_t *ids, size_t num_ids)
{
	if (!sm || !rec) {
		errno = EINVAL;
		return NULL;
	}
	struct jitmap__buf b = {0};
	const jitmap_function *f = jitmap_record_function(sm, rec);
	jitmap__buf_printf(&b, "{\"id\": %" PRIu64 ", \"offset\": %" PRIu32
			   ", \"section_offset\": %" PRIu64, rec->id, rec->instruction_offset,
			   rec->section_offset);
	if (f) {
		jitmap__buf_printf(&b, ", \"pc\": \"0x%" PRIx64 "\", \"function\": ",
				   jitmap_record_pc(sm, rec));
		jitmap__buf_json(&b, f->name);
		jitmap__buf_printf(&b, ", \"function_address\": \"0x%" PRIx64 "\", \"stack_size\": ",
				   f->address);
		if (f->stack_size == UINT64_MAX)
			jitmap__buf_puts(&b, "null");
		else
			jitmap__buf_printf(&b, "%" PRIu64, f->stack_size);
	} else {
		jitmap__buf_puts(&b, ", \"pc\": null, \"function\": null");
	}
	jitmap__buf_puts(&b, ", \"locations\": ");
	static_locations_json(&b, sm, rec, 0, rec->num_locations);
	jitmap__buf_puts(&b, ", \"live_outs\": [");
	for (size_t l = 0; l < rec->num_live_outs; l++) {
		char reg[32];
		jitmap__reg_text(sm, rec->live_outs[l].dwarf_reg, reg, sizeof(reg));
		jitmap__buf_puts(&b, l ? ", {\"register\": " : "{\"register\": ");
		jitmap__buf_json(&b, reg);
		jitmap__buf_printf(&b, ", \"dwarf_reg\": %u, \"size\": %u}",
				   rec->live_outs[l].dwarf_reg, rec->live_outs[l].size);
	}
	jitmap__buf_puts(&b, "], \"statepoint\": ");
	jitmap_statepoint_info sp;
	bool forced;
	char why[160];
	if (static_statepoint(sm, rec, mode, ids, num_ids, &sp, &forced, why, sizeof(why))) {
		const size_t pairs = sp.num_gc_pairs ? (size_t)(sp.gc_pairs - rec->locations) : 0;
		jitmap__buf_printf(&b, "{\"calling_convention\": %" PRIu64 ", \"flags\": %" PRIu64
				   ", \"deopt\": ", sp.calling_convention, sp.flags);
		static_locations_json(&b, sm, rec, sp.num_deopt ? (size_t)(sp.deopt - rec->locations)
							      : 0, sp.num_deopt);
		jitmap__buf_puts(&b, ", \"gc_roots\": [");
		for (size_t i = 0; i < sp.num_gc_pairs; i++) {
			jitmap__buf_puts(&b, i ? ", {\"base\": " : "{\"base\": ");
			static_location_json(&b, sm, rec, pairs + 2 * i);
			jitmap__buf_puts(&b, ", \"derived\": ");
			static_location_json(&b, sm, rec, pairs + 2 * i + 1);
			jitmap__buf_puts(&b, "}");
		}
		jitmap__buf_puts(&b, "], \"gc_allocas\": ");
		static_locations_json(&b, sm, rec,
				      sp.num_gc_allocas ? (size_t)(sp.gc_allocas - rec->locations) : 0,
				      sp.num_gc_allocas);
		jitmap__buf_puts(&b, "}");
	} else {
		jitmap__buf_puts(&b, "null");
	}
	jitmap__buf_puts(&b, "}");
	return jitmap__buf_finish(&b);
}

/* -- Deopt layouts (.jitmap_deopt, docs/deopt-layouts.md) -- */

static void vref_text(struct jitmap__buf *b, const jitmap_vref *v)
{
	switch (v->kind) {
	case JITMAP_VREF_NAME: jitmap__buf_text(b, v->name, ""); break;
	case JITMAP_VREF_NUMBER: jitmap__buf_u64(b, v->number, 0); break;
	case JITMAP_VREF_DEOPT: jitmap__buf_printf(b, "deopt %" PRIu64, v->number); break;
	default: jitmap__buf_puts(b, "none"); break;
	}
}

static void slots_text(struct jitmap__buf *b, const char *what, const jitmap_vslot *v, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		jitmap__buf_puts(b, i ? ", " : what);
		if (v[i].name) {
			jitmap__buf_text(b, v[i].name, "");
			jitmap__buf_puts(b, " = ");
		}
		jitmap__buf_printf(b, "deopt %u", v[i].index);
	}
}

char *jitmap_layouts_text(const jitmap_layouts *l, unsigned indent)
{
	if (!l) {
		errno = EINVAL;
		return NULL;
	}
	struct jitmap__buf b = {0};
	const size_t n = jitmap_layouts_count(l);
	jitmap__buf_indent(&b, indent);
	jitmap__buf_printf(&b, "deopt layouts (.jitmap_deopt): %zu\n", n);
	for (size_t i = 0; i < n; i++) {
		const jitmap_deopt_layout *d = jitmap_layouts_get(l, i);
		jitmap__buf_indent(&b, indent + 2);
		jitmap__buf_printf(&b, "record %" PRIu64, d->record_id);
		if (d->function) {
			jitmap__buf_puts(&b, " in ");
			jitmap__buf_text(&b, d->function, "");
		}
		jitmap__buf_printf(&b, ": %u frame%s\n", d->num_frames, d->num_frames == 1 ? "" : "s");
		for (uint32_t k = 0; k < d->num_frames; k++) {
			const jitmap_vframe_layout *f = &d->frames[k];
			jitmap__buf_indent(&b, indent + 4);
			jitmap__buf_printf(&b, "frame %u: method ", k);
			vref_text(&b, &f->method);
			if (f->bci.kind != JITMAP_VREF_NONE) {
				jitmap__buf_puts(&b, ", bci ");
				vref_text(&b, &f->bci);
			}
			slots_text(&b, "; locals ", f->locals, f->num_locals);
			slots_text(&b, "; stack ", f->stack, f->num_stack);
			jitmap__buf_puts(&b, "\n");
		}
	}
	return jitmap__buf_finish(&b);
}

/* As names.deopt_frames takes them: a name, a number, {"deopt": i}, or null. */
static void vref_json(struct jitmap__buf *b, const jitmap_vref *v)
{
	switch (v->kind) {
	case JITMAP_VREF_NAME: jitmap__buf_json(b, v->name); break;
	case JITMAP_VREF_NUMBER: jitmap__buf_u64(b, v->number, 0); break;
	case JITMAP_VREF_DEOPT: jitmap__buf_printf(b, "{\"deopt\": %" PRIu64 "}", v->number); break;
	default: jitmap__buf_puts(b, "null"); break;
	}
}

static void slots_json(struct jitmap__buf *b, const jitmap_vslot *v, unsigned n)
{
	jitmap__buf_puts(b, "[");
	for (unsigned i = 0; i < n; i++) {
		jitmap__buf_printf(b, "%s{\"deopt\": %u, \"name\": ", i ? ", " : "", v[i].index);
		if (v[i].name)
			jitmap__buf_json(b, v[i].name);
		else
			jitmap__buf_puts(b, "null");
		jitmap__buf_puts(b, "}");
	}
	jitmap__buf_puts(b, "]");
}

char *jitmap_layouts_json(const jitmap_layouts *l)
{
	if (!l) {
		errno = EINVAL;
		return NULL;
	}
	struct jitmap__buf b = {0};
	jitmap__buf_puts(&b, "[");
	for (size_t i = 0; i < jitmap_layouts_count(l); i++) {
		const jitmap_deopt_layout *d = jitmap_layouts_get(l, i);
		jitmap__buf_printf(&b, "%s{\"record_id\": %" PRIu64 ", \"function\": ", i ? ", " : "",
				   d->record_id);
		if (d->function)
			jitmap__buf_json(&b, d->function);
		else
			jitmap__buf_puts(&b, "null");
		jitmap__buf_puts(&b, ", \"frames\": [");
		for (uint32_t k = 0; k < d->num_frames; k++) {
			const jitmap_vframe_layout *f = &d->frames[k];
			jitmap__buf_puts(&b, k ? ", {\"method\": " : "{\"method\": ");
			vref_json(&b, &f->method);
			jitmap__buf_puts(&b, ", \"bci\": ");
			vref_json(&b, &f->bci);
			jitmap__buf_puts(&b, ", \"locals\": ");
			slots_json(&b, f->locals, f->num_locals);
			jitmap__buf_puts(&b, ", \"stack\": ");
			slots_json(&b, f->stack, f->num_stack);
			jitmap__buf_puts(&b, "}");
		}
		jitmap__buf_puts(&b, "]}");
	}
	jitmap__buf_puts(&b, "]");
	return jitmap__buf_finish(&b);
}

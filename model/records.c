/* records.c: records without a frame, as jitmap-dump writes a section (jitmap_record_text,
 * jitmap_record_json): where each location is, with no value, in the pieces render.c shares
 * with frame reports. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

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
	char *s = jitmap__buf_finish(&b);
	if (!s)
		errno = ENOMEM;
	return s;
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
	char *s = jitmap__buf_finish(&b);
	if (!s)
		errno = ENOMEM;
	return s;
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
	char *s = jitmap__buf_finish(&b);
	if (!s)
		errno = ENOMEM;
	return s;
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
	char *s = jitmap__buf_finish(&b);
	if (!s)
		errno = ENOMEM;
	return s;
}

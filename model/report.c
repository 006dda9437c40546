/* report.c: a frame report (jitmap_frame_report_json, jitmap_frame_report_text) as text and
 * as the JSON contract (docs/json.md): its records with their locations, values, names and
 * roles, its variables, its GC roots and registers. Its parts (a location as JSON, a record's
 * interpreter frames) are report_parts.c's; the pieces a record's text shares with records
 * without a frame are render.c's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* -- JSON of a frame report -- */


static void locations_json(struct jitmap__buf *b, const struct jitmap__rrec *x, size_t first,
			   size_t n, bool raw)
{
	jitmap__buf_puts(b, "[");
	for (size_t k = 0; k < n; k++) {
		if (k)
			jitmap__buf_puts(b, ", ");
		jitmap__location_json(b, x, first + k, x->names[first + k], raw);
	}
	jitmap__buf_puts(b, "]");
}


/* One variable of record `x`: location `i` named `name`, or `dflt` followed by `n`. */
static void variable_json(struct jitmap__buf *b, const struct jitmap__rrec *x, size_t i,
			  const char *dflt, size_t n, bool gc, bool raw, size_t *count)
{
	jitmap__buf_puts(b, (*count)++ ? ", {\"name\": " : "{\"name\": ");
	if (x->names[i]) {
		jitmap__buf_json(b, x->names[i]);
	} else {
		char d[32];
		snprintf(d, sizeof(d), "%s%zu", dflt, n);
		jitmap__buf_json(b, d);
	}
	jitmap__buf_printf(b, ", \"gc\": %s, \"location\": ", gc ? "true" : "false");
	jitmap__location_json(b, x, i, x->names[i], raw);
	jitmap__buf_puts(b, "}");
}

/* JITMAP_JSON_VARIABLES: the first record's values as a debugger's variables, in the order a
 * frame shows them, and those of its interpreter frames (frame.h says the names). */
static void variables_json(struct jitmap__buf *b, const jitmap_frame_report *r)
{
	const bool raw = r->flags & JITMAP_DESCRIBE_RAW;
	size_t count = 0;
	jitmap__buf_puts(b, "{\"variables\": [");
	const struct jitmap__rrec *x = r->nrecs ? &r->recs[0] : NULL;
	if (x && x->statepoint) {
		const jitmap_statepoint_info *sp = &x->sp;
		const size_t d = sp->num_deopt ? jitmap__rrec_index(x, sp->deopt) : 0;
		for (size_t k = 0; k < sp->num_deopt; k++)
			variable_json(b, x, d + k, "deopt", k, false, raw, &count);
		for (size_t k = 0; k < sp->num_gc_pairs; k++) {
			const size_t bi = jitmap__rrec_index(x, sp->gc_pairs) + 2 * k;
			variable_json(b, x, bi, "gc_base", k, true, raw, &count);
			variable_json(b, x, bi + 1, "gc_derived", k, true, raw, &count);
		}
		const size_t a = sp->num_gc_allocas ? jitmap__rrec_index(x, sp->gc_allocas) : 0;
		for (size_t k = 0; k < sp->num_gc_allocas; k++)
			variable_json(b, x, a + k, "gc_alloca", k, false, raw, &count);
	} else if (x) {
		for (size_t i = 0; i < x->rec->num_locations; i++)
			variable_json(b, x, i, "loc", i, false, raw, &count);
	}
	jitmap__buf_puts(b, "], \"virtual_frames\": ");
	if (x)
		jitmap__vframes_render(b, x, JITMAP__V_VARIABLES, 0, raw);
	else
		jitmap__buf_puts(b, "[]");
	jitmap__buf_puts(b, "}");
}

static void record_json(struct jitmap__buf *b, const jitmap_frame_report *r,
			const struct jitmap__rrec *x, unsigned flags, bool with_frame)
{
	const bool raw = r->flags & JITMAP_DESCRIBE_RAW;
	const jitmap_record *rec = x->rec;
	const jitmap_function *fn = jitmap_record_function(x->sm, rec);
	const uint64_t rpc = jitmap_record_pc(x->sm, rec);
	(void)flags;
	jitmap__buf_puts(b, "{");
	if (with_frame)
		jitmap__buf_printf(b, "\"frame\": %u, ", r->level);
	jitmap__buf_printf(b, "\"pc\": \"0x%" PRIx64 "\", \"function\": ", r->pc);
	jitmap__buf_json(b, x->function);
	jitmap__buf_printf(b, ", \"record\": {\"id\": %" PRIu64 ", \"offset\": %" PRIu32
			   ", \"function_address\": \"0x%" PRIx64 "\", \"stack_size\": ",
			   rec->id, rec->instruction_offset, fn ? fn->address : 0);
	if (!fn || fn->stack_size == UINT64_MAX)
		jitmap__buf_puts(b, "null");
	else
		jitmap__buf_printf(b, "%" PRIu64, fn->stack_size);
	jitmap__buf_printf(b, ", \"pc\": \"0x%" PRIx64 "\", \"match\": \"%s\", \"source\": ", rpc,
			   x->call ? "call" : "exact");
	jitmap__buf_json(b, x->source);
	if (x->call) {
		jitmap__buf_printf(b, ", \"distance\": %" PRId64 ", \"note\": ",
				   (int64_t)(r->pc - rpc));
		jitmap__buf_json(b, x->note);
	}
	if (x->nnotes) {
		jitmap__buf_puts(b, ", \"notes\": [");
		for (size_t i = 0; i < x->nnotes; i++) {
			if (i)
				jitmap__buf_puts(b, ", ");
			jitmap__buf_json(b, x->notes[i]);
		}
		jitmap__buf_puts(b, "]");
	}
	if (raw)
		jitmap__buf_printf(b, ", \"flags\": %u, \"section_offset\": %" PRIu64, rec->flags,
				   rec->section_offset);
	if (x->misfit) {
		jitmap__buf_puts(b, ", \"statepoint_misfit\": ");
		jitmap__buf_json(b, x->misfit_why);
	}
	if (jitmap__yk_record(x->sm, rec))
		jitmap__buf_printf(b, ", \"dialect\": \"%s\", \"live_vars\": %zu",
				   jitmap_dialect_name(jitmap_blob_dialect(x->sm, rec->blob)),
				   jitmap_record_num_live_vars(x->sm, rec));
	jitmap__buf_puts(b, "}, \"locations\": ");
	locations_json(b, x, 0, rec->num_locations, raw);
	jitmap__buf_puts(b, ", \"live_outs\": [");
	for (size_t i = 0; i < rec->num_live_outs; i++) {
		char reg[32];
		jitmap__reg_text(x->sm, rec->live_outs[i].dwarf_reg, reg, sizeof(reg));
		jitmap__buf_puts(b, i ? ", {\"register\": " : "{\"register\": ");
		jitmap__buf_json(b, reg);
		jitmap__buf_printf(b, ", \"size\": %u", rec->live_outs[i].size);
		if (raw)
			jitmap__buf_printf(b, ", \"dwarf_reg\": %u", rec->live_outs[i].dwarf_reg);
		jitmap__buf_puts(b, "}");
	}
	jitmap__buf_puts(b, "], \"statepoint\": ");
	if (!x->statepoint) {
		jitmap__buf_puts(b, "null");
	} else {
		const jitmap_statepoint_info *sp = &x->sp;
		jitmap__buf_printf(b, "{\"calling_convention\": %" PRIu64 ", \"flags\": %" PRIu64
				   ", \"deopt\": ", sp->calling_convention, sp->flags);
		locations_json(b, x, sp->num_deopt ? jitmap__rrec_index(x, sp->deopt) : 0, sp->num_deopt, raw);
		jitmap__buf_puts(b, ", \"gc_roots\": [");
		for (size_t k = 0; k < sp->num_gc_pairs; k++) {
			const size_t bi = jitmap__rrec_index(x, sp->gc_pairs) + 2 * k, di = bi + 1;
			jitmap__buf_puts(b, k ? ", {\"base\": " : "{\"base\": ");
			jitmap__location_json(b, x, bi, x->names[bi], raw);
			jitmap__buf_puts(b, ", \"derived\": ");
			jitmap__location_json(b, x, di, x->names[di], raw);
			int64_t off;
			if (jitmap__root_offset(x, bi, di, &off))
				jitmap__buf_printf(b, ", \"offset\": %" PRId64 "}", off);
			else
				jitmap__buf_puts(b, ", \"offset\": null}");
		}
		jitmap__buf_puts(b, "], \"gc_allocas\": ");
		locations_json(b, x, sp->num_gc_allocas ? jitmap__rrec_index(x, sp->gc_allocas) : 0,
			       sp->num_gc_allocas, raw);
		jitmap__buf_printf(b, ", \"decoded\": \"%s\"}", x->forced ? "forced" : "shape");
	}
	if (jitmap__num_vframes(x))
		jitmap__vframes_render(b, x, JITMAP__V_JSON, 0, raw);
}

/* "frame N (pc 0x... , in F) is not at a stackmap record; nearest in F: record ... ". */
static void no_record_text(struct jitmap__buf *b, const jitmap_frame_report *r)
{
	const char *fn = r->near_function ? r->near_function : r->function;
	jitmap__buf_printf(b, "frame %u (pc 0x%" PRIx64, r->level, r->pc);
	if (fn) {
		jitmap__buf_puts(b, ", in ");
		jitmap__buf_text(b, fn, "");
	}
	jitmap__buf_puts(b, ")");
	if (!r->near[0] && !r->near[1]) {
		jitmap__buf_puts(b, " is not at a stackmap record (no stackmap describes the code "
				 "there)");
		return;
	}
	jitmap__buf_puts(b, " is not at a stackmap record; nearest");
	if (r->near_function) {
		jitmap__buf_puts(b, " in ");
		jitmap__buf_text(b, r->near_function, "");
	}
	jitmap__buf_puts(b, ": ");
	for (int k = 0, n = 0; k < 2; k++) {
		if (!r->near[k])
			continue;
		const uint64_t rpc = jitmap_record_pc(r->near_sm, r->near[k]);
		const int64_t dist = (int64_t)(rpc - r->pc);
		jitmap__buf_printf(b, "%srecord %" PRIu64 " at 0x%" PRIx64 " (%" PRIu64 " bytes %s)",
				   n++ ? ", " : "", r->near[k]->id, rpc,
				   dist < 0 ? (uint64_t)-dist : (uint64_t)dist,
				   dist > 0 ? "after" : "before");
	}
	if (r->level > 0)
		jitmap__buf_puts(b, ". A record is only shown at the PC it describes");
}

/* ", \"registers\": [...]" of a report that has them (`bare`: the array alone). */
static void registers_json(struct jitmap__buf *b, const jitmap_frame_report *r, bool bare)
{
	if (!(r->flags & JITMAP_DESCRIBE_REGISTERS)) {
		if (bare)
			jitmap__buf_puts(b, "[]");
		return;
	}
	jitmap__buf_puts(b, bare ? "[" : ", \"registers\": [");
	for (size_t i = 0; i < r->nregs; i++) {
		const struct jitmap__rreg *x = &r->regs[i];
		jitmap__buf_puts(b, i ? ", {\"register\": " : "{\"register\": ");
		jitmap__buf_json(b, jitmap_reg_name(r->arch, x->regno));
		jitmap__buf_printf(b, ", \"dwarf_reg\": %u, \"value\": ", x->regno);
		if (x->v.available) {
			jitmap__buf_printf(b, "\"0x%" PRIx64 "\"}", x->v.u);
		} else {
			jitmap__buf_puts(b, "null, \"error\": ");
			jitmap__buf_json(b, jitmap__value_why(&x->v));
			jitmap__buf_puts(b, "}");
		}
	}
	jitmap__buf_puts(b, "]");
}

static void registers_text(struct jitmap__buf *b, const jitmap_frame_report *r, unsigned indent)
{
	for (size_t i = 0; i < r->nregs; i++) {
		const struct jitmap__rreg *x = &r->regs[i];
		jitmap__buf_indent(b, indent);
		jitmap__buf_printf(b, "%-8s ", jitmap_reg_name(r->arch, x->regno));
		if (x->v.available) {
			jitmap__buf_printf(b, "0x%016" PRIx64 "\n", x->v.u);
		} else {
			jitmap__buf_puts(b, "<unavailable: ");
			jitmap__buf_text(b, jitmap__value_why(&x->v), "");
			jitmap__buf_puts(b, ">\n");
		}
	}
}

static void report_json(struct jitmap__buf *b, const jitmap_frame_report *r, unsigned flags)
{
	const bool with_frame = !(flags & JITMAP_JSON_NO_FRAME);
	if (!r->nrecs) {
		jitmap__buf_puts(b, "{");
		if (with_frame)
			jitmap__buf_printf(b, "\"frame\": %u, ", r->level);
		jitmap__buf_printf(b, "\"pc\": \"0x%" PRIx64 "\", \"function\": ", r->pc);
		jitmap__buf_json(b, r->near_function ? r->near_function : r->function);
		jitmap__buf_puts(b, ", \"record\": null, \"locations\": [], \"live_outs\": [], "
				 "\"statepoint\": null, \"nearest\": [");
		for (int k = 0, n = 0; k < 2; k++) {
			if (!r->near[k])
				continue;
			const jitmap_function *fn = jitmap_record_function(r->near_sm, r->near[k]);
			const uint64_t rpc = jitmap_record_pc(r->near_sm, r->near[k]);
			jitmap__buf_printf(b, "%s{\"id\": %" PRIu64 ", \"pc\": \"0x%" PRIx64
					   "\", \"function\": ", n++ ? ", " : "", r->near[k]->id, rpc);
			jitmap__buf_json(b, fn ? fn->name : NULL);
			jitmap__buf_printf(b, ", \"distance\": %" PRId64 "}", (int64_t)(rpc - r->pc));
		}
		struct jitmap__buf t = {0};
		no_record_text(&t, r);
		jitmap__buf_puts(b, "], \"error\": ");
		jitmap__buf_json(b, t.p ? t.p : "");
		jitmap__buf_free(&t);
		registers_json(b, r, false);
		jitmap__buf_puts(b, "}");
		return;
	}
	record_json(b, r, &r->recs[0], flags, with_frame);
	if (r->nrecs > 1) {
		jitmap__buf_puts(b, ", \"other_records\": [");
		for (size_t i = 1; i < r->nrecs; i++) {
			if (i > 1)
				jitmap__buf_puts(b, ", ");
			record_json(b, r, &r->recs[i], flags, true);
			jitmap__buf_puts(b, "}");
		}
		jitmap__buf_puts(b, "]");
	}
	registers_json(b, r, false);
	jitmap__buf_puts(b, "}");
}

static void record_text(struct jitmap__buf *b, const jitmap_frame_report *r,
			const struct jitmap__rrec *x, unsigned indent)
{
	const bool raw = r->flags & JITMAP_DESCRIBE_RAW;
	const jitmap_record *rec = x->rec;
	const jitmap_function *fn = jitmap_record_function(x->sm, rec);
	jitmap__record_head(b, x->sm, rec, x->function, x->statepoint, indent);
	if (x->call) {
		jitmap__buf_indent(b, indent + 2);
		jitmap__buf_printf(b, "the record is %" PRIu64 " bytes before this frame's PC: ",
				   r->pc - jitmap_record_pc(x->sm, rec));
		jitmap__buf_text(b, x->note ? x->note : "its call sequence returns here", "");
		jitmap__buf_puts(b, "\n");
	}
	jitmap__buf_indent(b, indent + 2);
	jitmap__buf_puts(b, "function ");
	jitmap__buf_text(b, x->function, "?");
	jitmap__buf_printf(b, " at 0x%" PRIx64 ", stack size ", fn ? fn->address : 0);
	if (!fn || fn->stack_size == UINT64_MAX)
		jitmap__buf_puts(b, "dynamic");
	else
		jitmap__buf_printf(b, "%" PRIu64, fn->stack_size);
	jitmap__buf_puts(b, "; from ");
	jitmap__buf_text(b, x->source, "");
	jitmap__buf_puts(b, "\n");
	for (size_t i = 0; i < x->nnotes; i++) {
		jitmap__buf_indent(b, indent + 2);
		jitmap__buf_puts(b, "note: ");
		jitmap__buf_text(b, x->notes[i], "");
		jitmap__buf_puts(b, "\n");
	}
	if (x->misfit) {
		jitmap__buf_indent(b, indent + 2);
		jitmap__buf_printf(b, "(record %" PRIu64 " does not have a statepoint's shape: %s)\n",
				   rec->id, x->misfit_why);
	}
	if (x->statepoint)
		jitmap__statepoint_line(b, &x->sp, x->forced, indent + 2);
	char(*roles)[64] = calloc(rec->num_locations ? rec->num_locations : 1, sizeof(*roles));
	if (!roles) {
		b->failed = true;
		return;
	}
	jitmap__roles(x, roles);
	for (size_t i = 0; i < rec->num_locations; i++)
		jitmap__location_line(b, x->sm, rec, i, &x->values[i], roles[i], x->names[i], raw,
			      indent + 2);
	free(roles);
	jitmap__live_outs_text(b, x->sm, rec, indent + 2);
	if (jitmap__num_vframes(x))
		jitmap__vframes_render(b, x, JITMAP__V_RECORD, indent, raw);
}

/* -- GC roots -- */

/* Where a collector finds and updates a root: a stack address or a register. */
static void slot_text(struct jitmap__buf *b, const struct jitmap__rrec *x, size_t i)
{
	const jitmap_location *loc = &x->rec->locations[i];
	const jitmap_value *v = &x->values[i];
	char where[96];
	jitmap__where(x->sm, x->rec, i, where, sizeof(where));
	if (loc->kind == JITMAP_LOC_INDIRECT && (jitmap__value_available(v) || v->address))
		jitmap__buf_printf(b, "0x%" PRIx64, v->address);
	else if (loc->kind == JITMAP_LOC_DIRECT && jitmap__value_available(v))
		jitmap__buf_printf(b, "0x%" PRIx64, v->u);
	else
		jitmap__buf_puts(b, where);
}

static void root_value_text(struct jitmap__buf *b, const struct jitmap__rrec *x, size_t i)
{
	const jitmap_location *loc = &x->rec->locations[i];
	const jitmap_value *v = &x->values[i];
	if (!jitmap__value_available(v)) {
		jitmap__buf_puts(b, "<unavailable: ");
		jitmap__buf_text(b, jitmap__value_why(v), "");
		jitmap__buf_puts(b, ">");
	} else if (jitmap__value_wide(loc, v)) {
		jitmap__buf_puts(b, "0x");
		for (unsigned k = 0; k < loc->size && k < JITMAP_VALUE_MAX; k++)
			jitmap__buf_printf(b, "%02x", v->bytes[k]);
	} else {
		jitmap__buf_printf(b, "0x%" PRIx64, v->u);
	}
}

static const char GC_HEADER_FMT[] = "%-6s %-20s %-7s %-34s %-34s %s";

static void gc_row(struct jitmap__buf *b, const jitmap_frame_report *r,
		   const struct jitmap__rrec *x, size_t base, size_t derived, bool alloca,
		   unsigned indent)
{
	struct jitmap__buf cell = {0};
	jitmap__buf_indent(b, indent);
	jitmap__buf_printf(b, "#%-5u ", r->level);
	jitmap__buf_text_padded(b, x->function ? x->function : "?", 20, 20);
	jitmap__buf_printf(b, " %-7" PRIu64 " ", x->rec->id);
	slot_text(&cell, x, base);
	jitmap__buf_puts(&cell, " = ");
	root_value_text(&cell, x, base);
	jitmap__buf_text_padded(b, cell.p ? cell.p : "", 34, SIZE_MAX);
	jitmap__buf_puts(b, " ");
	jitmap__buf_free(&cell);
	if (alloca) {
		char where[96];
		jitmap__where(x->sm, x->rec, base, where, sizeof(where));
		jitmap__buf_puts(&cell, "(gc alloca ");
		jitmap__buf_puts(&cell, where);
		jitmap__buf_puts(&cell, ")");
		jitmap__buf_text_padded(b, cell.p ? cell.p : "", 34, SIZE_MAX);
		jitmap__buf_puts(b, " -\n");
	} else {
		slot_text(&cell, x, derived);
		jitmap__buf_puts(&cell, " = ");
		root_value_text(&cell, x, derived);
		jitmap__buf_text_padded(b, cell.p ? cell.p : "", 34, SIZE_MAX);
		int64_t off;
		if (jitmap__root_offset(x, base, derived, &off))
			jitmap__buf_printf(b, " %" PRId64 "\n", off);
		else
			jitmap__buf_puts(b, " ?\n");
	}
	jitmap__buf_free(&cell);
}

static void gc_rows(struct jitmap__buf *b, const jitmap_frame_report *r, unsigned indent)
{
	for (size_t i = 0; i < r->nrecs; i++) {
		const struct jitmap__rrec *x = &r->recs[i];
		if (!x->statepoint)
			continue;
		const jitmap_statepoint_info *sp = &x->sp;
		for (size_t k = 0; k < sp->num_gc_pairs; k++) {
			const size_t bi = jitmap__rrec_index(x, sp->gc_pairs) + 2 * k;
			gc_row(b, r, x, bi, bi + 1, false, indent);
		}
		for (size_t k = 0; k < sp->num_gc_allocas; k++) {
			const size_t ai = jitmap__rrec_index(x, sp->gc_allocas) + k;
			gc_row(b, r, x, ai, ai, true, indent);
		}
	}
}

/* -- The calls -- */

/* The frame's function as its line shows it: the record's, the nearest records', the front
 * end's. */
static const char *frame_function(const jitmap_frame_report *r)
{
	return r->nrecs ? r->recs[0].function : r->near_function ? r->near_function : r->function;
}

const char *jitmap__report_keep(jitmap_frame_report *r, struct jitmap__buf *b)
{
	char *s = jitmap__buf_finish(b);
	if (!s)
		return NULL;
	free(r->out);
	r->out = s;
	return s;
}

const char *jitmap_frame_report_json(jitmap_frame_report *r, unsigned flags)
{
	if (!r) {
		errno = EINVAL;
		return NULL;
	}
	struct jitmap__buf b = {0};
	if (flags & JITMAP_JSON_REGISTERS)
		registers_json(&b, r, true);
	else if (flags & JITMAP_JSON_VARIABLES)
		variables_json(&b, r);
	else
		report_json(&b, r, flags);
	return jitmap__report_keep(r, &b);
}

const char *jitmap_frame_report_text(jitmap_frame_report *r, jitmap_text_part part,
				     unsigned indent)
{
	if (!r) {
		errno = EINVAL;
		return NULL;
	}
	struct jitmap__buf b = {0};
	jitmap__buf_put(&b, "", 0);
	switch (part) {
	case JITMAP_TEXT_FRAME:
		jitmap__buf_indent(&b, indent);
		jitmap__buf_printf(&b, "frame #%u, pc 0x%" PRIx64, r->level, r->pc);
		if (frame_function(r)) {
			jitmap__buf_puts(&b, " in ");
			jitmap__buf_text(&b, frame_function(r), "");
		}
		jitmap__buf_puts(&b, "\n");
		if (!r->nrecs) {
			jitmap__buf_indent(&b, indent);
			no_record_text(&b, r);
			jitmap__buf_puts(&b, "\n");
		}
		/* fall through */
	case JITMAP_TEXT_RECORDS:
		for (size_t i = 0; i < r->nrecs; i++)
			record_text(&b, r, &r->recs[i], indent);
		break;
	case JITMAP_TEXT_GC_HEADER:
		jitmap__buf_indent(&b, indent);
		jitmap__buf_printf(&b, GC_HEADER_FMT, "frame", "function", "record",
				   "base (slot = value)", "derived (slot = value)", "offset");
		jitmap__buf_puts(&b, "\n");
		break;
	case JITMAP_TEXT_GC_ROOTS:
		gc_rows(&b, r, indent);
		break;
	case JITMAP_TEXT_VFRAMES:
		for (size_t i = 0; i < r->nrecs; i++)
			if (jitmap__num_vframes(&r->recs[i]))
				jitmap__vframes_render(&b, &r->recs[i], JITMAP__V_BT, indent, false);
		break;
	case JITMAP_TEXT_NO_RECORD:
		if (!r->nrecs)
			no_record_text(&b, r);
		break;
	case JITMAP_TEXT_REGISTERS:
		registers_text(&b, r, indent);
		break;
	case JITMAP_TEXT_BT:
		jitmap__buf_indent(&b, indent);
		jitmap__buf_printf(&b, "frame #%u: 0x%" PRIx64 " ", r->level, r->pc);
		{
			const char *fn = frame_function(r);
			jitmap__buf_text(&b, fn && fn[0] ? fn : NULL, "??");
		}
		if (r->nrecs)
			jitmap__buf_printf(&b, ", record %" PRIu64 "%s", r->recs[0].rec->id,
					   r->recs[0].statepoint ? " (statepoint)" : "");
		jitmap__buf_puts(&b, "\n");
		for (size_t i = 0; i < r->nrecs; i++)
			if (jitmap__num_vframes(&r->recs[i]))
				jitmap__vframes_render(&b, &r->recs[i], JITMAP__V_BT, indent + 4, false);
		break;
	default:
		jitmap__buf_free(&b);
		errno = EINVAL;
		return NULL;
	}
	return jitmap__report_keep(r, &b);
}

/* report_parts.c: the parts of a frame report that its JSON and its text share (report.c):
 * one location as JSON (in a record, among the variables, in an interpreter frame), and a
 * record's interpreter frames (deopt layouts: the image's, or a front end's own) in each form
 * a report takes. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* -- A location, as JSON -- */

void jitmap__location_json(struct jitmap__buf *b, const struct jitmap__rrec *x, size_t i,
			   const char *name, bool raw)
{
	const jitmap_location *loc = &x->rec->locations[i];
	const jitmap_value *v = &x->values[i];
	char where[96];
	jitmap__where(x->sm, x->rec, i, where, sizeof(where));
	jitmap__buf_printf(b, "{\"index\": %zu, \"kind\": \"%s\", \"where\": ", i,
			   jitmap_loc_kind_name(loc->kind));
	jitmap__buf_json(b, where);
	jitmap__buf_printf(b, ", \"size\": %u, \"value\": ", loc->size);
	jitmap__value_json(b, loc, v);
	if (!jitmap__value_available(v)) {
		jitmap__buf_puts(b, ", \"error\": ");
		jitmap__buf_json(b, jitmap__value_why(v));
	}
	if (loc->kind == JITMAP_LOC_INDIRECT && (jitmap__value_available(v) || v->address))
		jitmap__buf_printf(b, ", \"address\": \"0x%" PRIx64 "\"", v->address);
	jitmap__yk_location_json(b, x->sm, x->rec, i);
	if (name) {
		jitmap__buf_puts(b, ", \"name\": ");
		jitmap__buf_json(b, name);
	}
	if (raw) {
		jitmap__buf_printf(b, ", \"raw\": {\"kind\": %d, \"size\": %u, \"dwarf_reg\": %u, "
				   "\"offset\": %" PRId32, (int)loc->kind, loc->size, loc->dwarf_reg,
				   loc->offset);
		if (loc->kind == JITMAP_LOC_REGISTER || loc->kind == JITMAP_LOC_DIRECT ||
		    loc->kind == JITMAP_LOC_INDIRECT) {
			char r[32];
			jitmap__reg_text(x->sm, loc->dwarf_reg, r, sizeof(r));
			jitmap__buf_puts(b, ", \"register\": ");
			jitmap__buf_json(b, r);
		}
		jitmap__buf_puts(b, "}");
	}
	jitmap__buf_puts(b, "}");
}

/* -- Interpreter frames -- */

/* The values an interpreter frame's indexes count: a statepoint's deopt values, else every
 * location. */
static size_t vvalues(const struct jitmap__rrec *x, size_t *first)
{
	if (x->statepoint) {
		*first = x->sp.num_deopt ? jitmap__rrec_index(x, x->sp.deopt) : 0;
		return x->sp.num_deopt;
	}
	*first = 0;
	return x->rec->num_locations;
}

/* One interpreter frame's layout, whichever way it was given. */
struct vf {
	const jitmap_vref *method, *bci;
	size_t nlocals, nstack;
	bool own;                                       /* a front end's (else an image's) */
	const jitmap_vslot *ilocals, *istack;
	const struct jitmap__vslot *ulocals, *ustack;
};

size_t jitmap__num_vframes(const struct jitmap__rrec *x)
{
	if (x->own_layout)
		return x->nvframes;
	return x->image_layout ? x->image_layout->num_frames : 0;
}

static struct vf vframe_at(const struct jitmap__rrec *x, size_t k)
{
	struct vf f = {0};
	if (x->own_layout) {
		const struct jitmap__vframe *u = &x->vframes[k];
		f.own = true;
		f.method = &u->method, f.bci = &u->bci;
		f.nlocals = u->nlocals, f.nstack = u->nstack;
		f.ulocals = u->locals, f.ustack = u->stack;
	} else {
		const jitmap_vframe_layout *l = &x->image_layout->frames[k];
		f.method = &l->method, f.bci = &l->bci;
		f.nlocals = l->num_locals, f.nstack = l->num_stack;
		f.ilocals = l->locals, f.istack = l->stack;
	}
	return f;
}

static void slot_of(const struct vf *f, bool stack, size_t i, uint32_t *index, const char **name)
{
	if (f->own) {
		const struct jitmap__vslot *s = stack ? &f->ustack[i] : &f->ulocals[i];
		*index = s->index, *name = s->name;
	} else {
		const jitmap_vslot *s = stack ? &f->istack[i] : &f->ilocals[i];
		*index = s->index, *name = s->name;
	}
}

/* What a method or a bci comes to: nothing (null), a number, or text (a name, or the bytes of
 * a value too wide for a number). */
enum vres { VR_NULL, VR_NUMBER, VR_TEXT };

/* A method or bci: JSON into `jb`, its text into `text`, the first problem into `err`. */
static enum vres vref_render(const struct jitmap__rrec *x, const jitmap_vref *r, const char *what,
			     size_t first, size_t n, struct jitmap__buf *jb, char *text,
			     size_t text_len, char *err, size_t err_len)
{
	text[0] = 0;
	switch (r->kind) {
	case JITMAP_VREF_NAME:
		jitmap__buf_json(jb, r->name);
		snprintf(text, text_len, "%s", r->name ? r->name : "");
		return r->name ? VR_TEXT : VR_NULL;
	case JITMAP_VREF_NUMBER:
		jitmap__buf_printf(jb, "%" PRIu64, r->number);
		snprintf(text, text_len, "%" PRIu64, r->number);
		return VR_NUMBER;
	case JITMAP_VREF_DEOPT:
		break;
	default:
		jitmap__buf_puts(jb, "null");
		return VR_NULL;
	}
	if (r->number >= n) {
		if (!err[0])
			snprintf(err, err_len, "%s: deopt index %" PRIu64 " past the %zu values", what,
				 r->number, n);
		jitmap__buf_puts(jb, "null");
		return VR_NULL;
	}
	const size_t at = first + (size_t)r->number;
	const jitmap_location *loc = &x->rec->locations[at];
	const jitmap_value *v = &x->values[at];
	if (!jitmap__value_available(v)) {
		if (!err[0])
			snprintf(err, err_len, "%s: value %" PRIu64 " is unavailable (%s)", what,
				 r->number, jitmap__value_why(v));
		jitmap__buf_puts(jb, "null");
		return VR_NULL;
	}
	jitmap__value_json(jb, loc, v);
	if (jitmap__value_wide(loc, v)) {
		size_t k = 0;
		for (unsigned i = 0; i < loc->size && i < JITMAP_VALUE_MAX && k + 3 < text_len; i++)
			k += (size_t)snprintf(text + k, text_len - k, "%02x", v->bytes[i]);
		return VR_TEXT;
	}
	snprintf(text, text_len, "%" PRIu64, v->u);
	return VR_NUMBER;
}

/* The title of an interpreter frame: "Demo.inner, bci 7", "method 12", "?". */
static void vframe_title(struct jitmap__buf *b, enum vres m, const char *mtext, enum vres bci,
			 const char *btext)
{
	if (m == VR_NULL || (m == VR_TEXT && !mtext[0]))
		jitmap__buf_puts(b, "?");
	else if (m == VR_TEXT)
		jitmap__buf_text(b, mtext, "?");
	else
		jitmap__buf_printf(b, "method %s", mtext);
	if (bci != VR_NULL)
		jitmap__buf_printf(b, ", bci %s", btext);
}

/* The interpreter frames of record `x`: as JSON ("virtual_frames"), as the lines under a
 * record (`info stackmap`), as the lines under a frame in a backtrace, or as a debugger's
 * variables (JITMAP_JSON_VARIABLES: an array of arrays). */
void jitmap__vframes_render(struct jitmap__buf *b, const struct jitmap__rrec *x,
			    enum jitmap__vstyle style, unsigned indent, bool raw)
{
	size_t first;
	const size_t n = vvalues(x, &first);
	const size_t nf = jitmap__num_vframes(x);
	if (style == JITMAP__V_JSON)
		jitmap__buf_puts(b, ", \"virtual_frames\": [");
	else if (style == JITMAP__V_VARIABLES)
		jitmap__buf_puts(b, "[");
	for (size_t k = 0; k < nf; k++) {
		const struct vf f = vframe_at(x, k);
		char err[320] = "", mtext[600], btext[600];
		struct jitmap__buf mj = {0}, bj = {0};
		const enum vres m = vref_render(x, f.method, "method", first, n, &mj, mtext,
						sizeof(mtext), err, sizeof(err));
		const enum vres bci = vref_render(x, f.bci, "bci", first, n, &bj, btext,
						  sizeof(btext), err, sizeof(err));
		if (style == JITMAP__V_JSON) {
			struct jitmap__buf t = {0};
			vframe_title(&t, m, mtext, bci, btext);
			jitmap__buf_printf(b, "%s{\"method\": %s, \"bci\": %s, \"title\": ",
					   k ? ", " : "", mj.p ? mj.p : "null", bj.p ? bj.p : "null");
			jitmap__buf_json(b, t.p ? t.p : "?");
			b->failed |= t.failed;
			jitmap__buf_free(&t);
		} else if (style == JITMAP__V_RECORD) {
			jitmap__buf_indent(b, indent + 2);
			jitmap__buf_printf(b, "virtual frame %zu: ", k);
			vframe_title(b, m, mtext, bci, btext);
			jitmap__buf_puts(b, "\n");
		} else if (style == JITMAP__V_VARIABLES) {
			jitmap__buf_puts(b, k ? ", [" : "[");
		} else {
			jitmap__buf_indent(b, indent);
			jitmap__buf_puts(b, "[");
			vframe_title(b, m, mtext, bci, btext);
			jitmap__buf_puts(b, "]");
		}
		b->failed |= mj.failed || bj.failed;
		jitmap__buf_free(&mj);
		jitmap__buf_free(&bj);
		int items = 0;
		for (int part = 0; part < 2; part++) {
			const bool stack = part == 1;
			const size_t count = stack ? f.nstack : f.nlocals;
			const char *key = stack ? "stack" : "locals";
			if (style == JITMAP__V_JSON)
				jitmap__buf_printf(b, ", \"%s\": [", key);
			for (size_t i = 0, shown = 0; i < count; i++) {
				uint32_t index;
				const char *name;
				slot_of(&f, stack, i, &index, &name);
				if (index >= n) {
					if (!err[0])
						snprintf(err, sizeof(err),
							 "%s: deopt index %u past the %zu values", key,
							 index, n);
					continue;
				}
				const size_t at = first + index;
				/* An unnamed slot keeps the name the location has. */
				const char *shown_name = name ? name : x->names[at];
				const jitmap_location *loc = &x->rec->locations[at];
				if (style == JITMAP__V_JSON) {
					if (shown++)
						jitmap__buf_puts(b, ", ");
					jitmap__location_json(b, x, at, shown_name, raw);
					continue;
				}
				if (style == JITMAP__V_VARIABLES) {
					jitmap__buf_puts(b, items++ ? ", {\"name\": " : "{\"name\": ");
					if (stack || !shown_name) {
						char dflt[32];
						snprintf(dflt, sizeof(dflt), "%s%zu",
							 stack ? "stack" : "local", shown);
						jitmap__buf_json(b, dflt);
					} else {
						jitmap__buf_json(b, shown_name);
					}
					jitmap__buf_puts(b, ", \"location\": ");
					jitmap__location_json(b, x, at, shown_name, raw);
					jitmap__buf_puts(b, "}");
					shown++;
					continue;
				}
				if (style == JITMAP__V_RECORD) {
					jitmap__buf_indent(b, indent + 4);
					jitmap__buf_puts(b, stack ? "stack " : "local ");
					if (shown_name)
						jitmap__buf_text(b, shown_name, "");
					else
						jitmap__buf_printf(b, "#%zu", shown);
					jitmap__buf_puts(b, " = ");
					jitmap__value_text(b, loc, &x->values[at]);
					jitmap__buf_puts(b, "\n");
					shown++;
					continue;
				}
				jitmap__buf_puts(b, items++ ? ", " : "  ");
				if (stack)
					jitmap__buf_printf(b, "stack #%zu = ", shown);
				else if (shown_name) {
					jitmap__buf_text(b, shown_name, "");
					jitmap__buf_puts(b, " = ");
				} else {
					jitmap__buf_printf(b, "local #%zu = ", shown);
				}
				jitmap__value_text(b, loc, &x->values[at]);
				shown++;
			}
			if (style == JITMAP__V_JSON)
				jitmap__buf_puts(b, "]");
		}
		if (style == JITMAP__V_JSON) {
			if (err[0]) {
				jitmap__buf_puts(b, ", \"error\": ");
				jitmap__buf_json(b, err);
			}
			jitmap__buf_puts(b, "}");
		} else if (style == JITMAP__V_RECORD) {
			if (err[0]) {
				jitmap__buf_indent(b, indent + 4);
				jitmap__buf_printf(b, "(%s)\n", err);
			}
		} else if (style == JITMAP__V_VARIABLES) {
			if (err[0]) {
				jitmap__buf_puts(b, items ? ", " : "");
				jitmap__buf_puts(b, "{\"name\": \"error\", \"location\": "
						 "{\"value\": null, \"error\": ");
				jitmap__buf_json(b, err);
				jitmap__buf_puts(b, "}}");
			}
			jitmap__buf_puts(b, "]");
		} else {
			if (err[0])
				jitmap__buf_printf(b, "%s(%s)", items ? ", " : "  ", err);
			jitmap__buf_puts(b, "\n");
		}
	}
	if (style == JITMAP__V_JSON || style == JITMAP__V_VARIABLES)
		jitmap__buf_puts(b, "]");
}

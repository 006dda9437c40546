/* frame.c: the frame model (include/jitmap/frame.h): which record describes a frame, its
 * values, its statepoint, where its stackmap came from, the interpreter frames it stands for.
 * render.c writes what is decided here. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "jitmap/arch.h"

/* How far before a return address a patchpoint's call sequence may start (LLVM's x86-64
 * sequence is 13 bytes, AArch64's 16, s390x's up to 14; the patch region may be padded). */
#define CALL_WINDOW JITMAP_CALL_SEQUENCE_MAX
/* Records LLVM may put at one PC, as far as a report goes. */
#define MAX_RECORDS 64

/* -- Reports -- */

static void free_rrec(struct jitmap__rrec *x)
{
	free(x->note);
	free(x->source);
	for (size_t i = 0; i < x->nnotes; i++)
		free(x->notes[i]);
	free(x->notes);
	free(x->values);
	if (x->names)
		for (size_t i = 0; i < x->rec->num_locations; i++)
			free(x->names[i]);
	free(x->names);
	for (size_t i = 0; i < x->nvframes; i++) {
		struct jitmap__vframe *f = &x->vframes[i];
		free((char *)f->method.name);
		for (size_t k = 0; k < f->nlocals; k++)
			free(f->locals[k].name);
		for (size_t k = 0; k < f->nstack; k++)
			free(f->stack[k].name);
		free(f->locals);
		free(f->stack);
	}
	free(x->vframes);
}

void jitmap_frame_report_free(jitmap_frame_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nrecs; i++)
		free_rrec(&r->recs[i]);
	free(r->recs);
	free(r->regs);
	free(r->function);
	free(r->out);
	free(r);
}

static char *dup_or_null(const char *s, bool *failed)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*failed = true;
	return d;
}

/* -- Which stackmap, which source -- */

/* Where `sm` came from in `p`, copied into `x`; the layout for its record (its image's, then
 * any image whose code holds `pc`). */
static int fill_source(const jitmap_process *p, struct jitmap__rrec *x, uint64_t pc)
{
	bool failed = false;
	const size_t n = jitmap__process_num_stackmaps(p);
	const bool layouts = jitmap_process_num_layout_images(p) > 0;
	const uint64_t id = x->rec->id;
	bool named = false;
	for (size_t i = 0; i < n; i++) {
		struct jitmap__stackmap_source src;
		if (jitmap__process_stackmap(p, i, &src) != x->sm)
			continue;
		if (!named) {
			named = true;
			x->source = dup_or_null(src.name, &failed);
			if (src.num_notes && (x->notes = calloc(src.num_notes, sizeof(char *)))) {
				for (size_t k = 0; k < src.num_notes; k++)
					x->notes[x->nnotes++] = dup_or_null(src.notes[k], &failed);
			} else if (src.num_notes) {
				failed = true;
			}
		}
		if (layouts && !x->image_layout && src.image)
			x->image_layout = jitmap_layouts_find(jitmap_image_layouts(src.image), id,
							      x->function);
	}
	for (size_t i = 0; layouts && !x->image_layout && i < n; i++) {
		struct jitmap__stackmap_source src;
		jitmap__process_stackmap(p, i, &src);
		if (!src.image || !jitmap_image_layouts(src.image))
			continue;
		for (size_t k = 0; k < jitmap_image_num_code_ranges(src.image); k++) {
			const jitmap_image_range *c = jitmap_image_code_range(src.image, k);
			if (pc >= c->lo && pc < c->hi) {
				x->image_layout = jitmap_layouts_find(jitmap_image_layouts(src.image),
								      id, x->function);
				break;
			}
		}
	}
	if (!named)
		x->source = dup_or_null("", &failed);
	return failed ? -ENOMEM : 0;
}

/* The function whose records surround `pc` (the greatest address <= pc over the process's
 * stackmaps, the code's own first), with its nearest records. */
static void nearest(jitmap_process *p, const jitmap_code_info *code, uint64_t pc,
		    jitmap_frame_report *r)
{
	const jitmap_function *best = NULL;
	const size_t n = jitmap__process_num_stackmaps(p);
	for (size_t i = 0; i <= n; i++) {
		const jitmap_stackmap *sm = i == 0 ? (code ? code->stackmap : NULL)
					    : jitmap__process_stackmap(p, i - 1, NULL);
		const jitmap_record *before = NULL, *after = NULL;
		if (!sm || jitmap_stackmap_nearest(sm, pc, &before, &after) || (!before && !after))
			continue;
		const jitmap_function *fn = jitmap_record_function(sm, before ? before : after);
		if (!fn || (best && fn->address <= best->address))
			continue;
		best = fn;
		r->near_sm = sm;
		r->near[0] = before;
		r->near[1] = after;
		r->near_function = fn->name;
	}
}

/* Whether the code from record PC `rpc` to the return address `ret` is one call sequence
 * (a patchpoint's), read through the frame's memory. */
static bool call_sequence(const jitmap_frame_desc *d, jitmap_arch arch, uint64_t rpc,
			  uint64_t ret, char *note, size_t note_len)
{
	if (!d->target || !d->target->read_mem || ret <= rpc || ret - rpc > CALL_WINDOW)
		return false;
	uint8_t code[CALL_WINDOW];
	char why[64];
	const size_t len = (size_t)(ret - rpc);
	if (d->target->read_mem(d->target->ctx, rpc, code, len, why, sizeof(why)))
		return false;
	return jitmap_arch_call_sequence(arch, code, len, rpc, note, note_len) == 1;
}

/* -- Records -- */

static int add_record(jitmap_frame_report *r, const jitmap_frame_desc *d, jitmap_process *p,
		      const jitmap_stackmap *sm, const jitmap_record *rec, const char *note)
{
	struct jitmap__rrec *x = &r->recs[r->nrecs++];
	memset(x, 0, sizeof(*x));
	x->sm = sm;
	x->rec = rec;
	const jitmap_function *fn = jitmap_record_function(sm, rec);
	x->function = fn && fn->name ? fn->name : r->function;
	bool failed = false;
	if (note) {
		x->call = true;
		x->note = dup_or_null(note, &failed);
	}
	/* Statepoints: jitmap_statepoint_wanted decides; a record asked for by mode or ID that
	 * does not fit says why, one that AUTO tried quietly is just not one. */
	const uint64_t *ids = d->statepoint_ids;
	const size_t nids = ids ? d->num_statepoint_ids : 0;
	bool listed = false;
	for (size_t i = 0; i < nids; i++)
		listed |= ids[i] == rec->id;
	if (jitmap_statepoint_wanted(sm, rec, d->statepoints, ids, nids)) {
		x->forced = d->statepoints != JITMAP_STATEPOINT_AUTO || listed;
		if (jitmap_statepoint_decode(sm, rec, &x->sp, x->misfit_why,
					     sizeof(x->misfit_why)) == 0)
			x->statepoint = true;
		else
			x->misfit = x->forced;
	}
	const size_t nloc = rec->num_locations;
	x->values = calloc(nloc ? nloc : 1, sizeof(*x->values));
	x->names = calloc(nloc ? nloc : 1, sizeof(*x->names));
	if (!x->values || !x->names || failed)
		return -ENOMEM;
	JITMAP_OPTS(const jitmap_eval_opts, eo, .frame_level = r->level);
	const jitmap_target none = {0};
	for (size_t i = 0; i < nloc; i++)
		jitmap_location_eval_frame(sm, rec, &rec->locations[i], d->target ? d->target : &none,
					   &eo, &x->values[i]);
	return fill_source(p, x, r->pc);
}

/* The frame's general registers, each with its value or why it is not known here (the same
 * rule, and words, as a location's register). */
static int read_registers(jitmap_frame_report *r, const jitmap_frame_desc *d)
{
	const jitmap_stackmap *sm = r->nrecs ? r->recs[0].sm : r->near_sm;
	jitmap_arch arch = d->arch != JITMAP_ARCH_UNKNOWN ? d->arch
			   : sm ? jitmap_stackmap_arch(sm) : JITMAP_ARCH_UNKNOWN;
	const struct jitmap__arch *a = jitmap__arch(arch);
	if (!a)
		return 0; /* no register is known of an architecture jitmap does not know */
	jitmap_byte_order order = d->order != JITMAP_ORDER_AUTO ? d->order
				  : sm ? jitmap_stackmap_byte_order(sm) : a->default_order;
	r->arch = arch;
	r->regs = calloc(a->num_core_regs ? a->num_core_regs : 1, sizeof(*r->regs));
	if (!r->regs)
		return -ENOMEM;
	for (unsigned regno = 0; regno < a->num_core_regs; regno++) {
		if (!jitmap_reg_name(arch, regno))
			continue;
		struct jitmap__rreg *x = &r->regs[r->nregs++];
		x->regno = regno;
		x->v.size = 8;
		if (jitmap__frame_reg(arch, order, d->target, r->level, regno, &x->v.u, x->v.why,
				      sizeof(x->v.why)) == 0)
			x->v.available = true;
		else if (!x->v.why[0])
			snprintf(x->v.why, sizeof(x->v.why), "not known");
	}
	return 0;
}

/* The target of a frame reached by a guess: its memory, and no register (the reason). */
struct guessed_target {
	const jitmap_target *t;
	const char *why;
};

static int guessed_read_reg(void *ctx, unsigned regno, void *buf, size_t size, char *why,
			    size_t why_len)
{
	(void)regno;
	(void)buf;
	(void)size;
	snprintf(why, why_len, "%s", ((const struct guessed_target *)ctx)->why);
	return -EIO;
}

static int guessed_read_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			    size_t why_len)
{
	const jitmap_target *t = ((const struct guessed_target *)ctx)->t;
	return t->read_mem(t->ctx, addr, buf, len, why, why_len);
}

jitmap_frame_report *jitmap_frame_describe(jitmap_process *p, const jitmap_frame_desc *desc)
{
	if (!p || !desc || !JITMAP__OPTS_VALID(desc, guessed)) {
		errno = EINVAL;
		return NULL;
	}
	jitmap_frame_desc d = {0};
	memcpy(&d, desc, desc->sz < sizeof(d) ? desc->sz : sizeof(d));
	/* A frame reached by a guess: its memory is still the process's (the code of a call
	 * sequence), but every register, and what a location reads through one, is unknown. */
	char guessed_why[96];
	snprintf(guessed_why, sizeof(guessed_why), "frame %u was reached by a guess",
		 d.level);
	struct guessed_target gt = {d.target, guessed_why};
	jitmap_target guessed = {&gt, guessed_read_reg, guessed_read_mem};
	if (d.guessed && d.target && d.target->read_mem)
		d.target = &guessed;
	else if (d.guessed)
		d.target = NULL;
	jitmap_frame_report *r = calloc(1, sizeof(*r));
	bool failed = !r;
	if (r) {
		r->level = d.level;
		r->pc = d.pc;
		r->desc_arch = d.arch;
		r->flags = d.flags;
		r->function = dup_or_null(d.function, &failed);
		r->recs = calloc(MAX_RECORDS, sizeof(*r->recs));
		failed |= !r->recs;
	}
	if (failed) {
		jitmap_frame_report_free(r);
		errno = ENOMEM;
		return NULL;
	}
	/* The code the PC is in (a return address may lie just past its call's function), as
	 * the process holds it: describing reads nothing of the process model (a stop's scan
	 * or refresh read it, a walk's jitmap_process_code_at what is read at first need). */
	jitmap_code_info code;
	bool have_code = jitmap__code_known(p, d.pc, &code) == 0;
	if (!have_code && d.return_address && d.pc)
		have_code = jitmap__code_known(p, d.pc - 1, &code) == 0;

	int rc = 0;
	jitmap_hit hits[MAX_RECORDS];
	const size_t n = jitmap_index_lookup(jitmap_process_index(p), d.pc, hits, MAX_RECORDS);
	for (size_t i = 0; i < n && i < MAX_RECORDS && !rc; i++)
		rc = add_record(r, &d, p, hits[i].stackmap, hits[i].record, NULL);
	if (!n) {
		nearest(p, have_code ? &code : NULL, d.pc, r);
		const jitmap_record *before = r->near[0];
		if (before && d.return_address) {
			const uint64_t rpc = jitmap_record_pc(r->near_sm, before);
			const jitmap_arch arch = d.arch != JITMAP_ARCH_UNKNOWN
				? d.arch : jitmap_stackmap_arch(r->near_sm);
			char note[256];
			if (call_sequence(&d, arch, rpc, d.pc, note, sizeof(note))) {
				const jitmap_record *at[MAX_RECORDS];
				const size_t k = jitmap_stackmap_lookup(r->near_sm, rpc, at,
									MAX_RECORDS);
				for (size_t i = 0; i < k && i < MAX_RECORDS && !rc; i++)
					rc = add_record(r, &d, p, r->near_sm, at[i], note);
			}
		}
	}
	if (!rc && (d.flags & JITMAP_DESCRIBE_REGISTERS))
		rc = read_registers(r, &d);
	if (rc) {
		jitmap_frame_report_free(r);
		errno = -rc;
		return NULL;
	}
	return r;
}

/* -- Accessors -- */

size_t jitmap_frame_report_num_records(const jitmap_frame_report *r)
{
	return r ? r->nrecs : 0;
}

int jitmap_frame_report_record(const jitmap_frame_report *r, size_t i, const jitmap_stackmap **sm,
			       const jitmap_record **rec)
{
	if (!r || i >= r->nrecs)
		return -ERANGE;
	if (sm)
		*sm = r->recs[i].sm;
	if (rec)
		*rec = r->recs[i].rec;
	return 0;
}

size_t jitmap_frame_report_num_registers(const jitmap_frame_report *r)
{
	return r ? r->nregs : 0;
}

int jitmap_frame_report_register(const jitmap_frame_report *r, size_t i, unsigned *regno,
				 const char **name, jitmap_value *out)
{
	if (!r || i >= r->nregs)
		return -ERANGE;
	if (regno)
		*regno = r->regs[i].regno;
	if (name)
		*name = jitmap_reg_name(r->arch, r->regs[i].regno);
	if (out)
		*out = r->regs[i].v;
	return 0;
}

bool jitmap_frame_report_is_statepoint(const jitmap_frame_report *r, size_t i)
{
	return r && i < r->nrecs && r->recs[i].statepoint;
}

int jitmap_frame_report_value(const jitmap_frame_report *r, size_t i, size_t loc,
			      jitmap_value *out)
{
	if (!r || !out || i >= r->nrecs || loc >= r->recs[i].rec->num_locations)
		return -ERANGE;
	*out = r->recs[i].values[loc];
	return 0;
}

/* -- Names and interpreter frames from a front end -- */

int jitmap_frame_report_name(jitmap_frame_report *r, size_t i, size_t loc, const char *name)
{
	if (!r || i >= r->nrecs || loc >= r->recs[i].rec->num_locations)
		return -ERANGE;
	char *copy = NULL;
	if (name && !(copy = strdup(name)))
		return -ENOMEM;
	free(r->recs[i].names[loc]);
	r->recs[i].names[loc] = copy;
	return 0;
}

static int vref(jitmap_vref *v, int kind, uint64_t number, const char *name, bool name_ok)
{
	switch (kind) {
	case JITMAP_VREF_NONE:
	case JITMAP_VREF_NUMBER:
	case JITMAP_VREF_DEOPT:
		*v = (jitmap_vref){.kind = (jitmap_vref_kind)kind, .number = number};
		return 0;
	case JITMAP_VREF_NAME:
		if (!name_ok || !name)
			return -EINVAL;
		*v = (jitmap_vref){.kind = JITMAP_VREF_NAME, .name = strdup(name)};
		return v->name ? 0 : -ENOMEM;
	default:
		return -EINVAL;
	}
}

int jitmap_frame_report_add_vframe(jitmap_frame_report *r, size_t i, int method_kind,
				   uint64_t method_number, const char *method_name, int bci_kind,
				   uint64_t bci_number)
{
	if (!r || i >= r->nrecs)
		return -ERANGE;
	struct jitmap__rrec *x = &r->recs[i];
	jitmap_vref m, b;
	int rc = vref(&b, bci_kind, bci_number, NULL, false);
	if (rc || (rc = vref(&m, method_kind, method_number, method_name, true)))
		return rc;
	struct jitmap__vframe *a = realloc(x->vframes, (x->nvframes + 1) * sizeof(*a));
	if (!a) {
		free((char *)m.name);
		return -ENOMEM;
	}
	x->vframes = a;
	x->vframes[x->nvframes++] = (struct jitmap__vframe){.method = m, .bci = b};
	x->own_layout = true;
	return 0;
}

int jitmap_frame_report_add_vslot(jitmap_frame_report *r, size_t i, bool stack, uint32_t index,
				  const char *name)
{
	if (!r || i >= r->nrecs || !r->recs[i].nvframes)
		return -ERANGE;
	struct jitmap__vframe *f = &r->recs[i].vframes[r->recs[i].nvframes - 1];
	struct jitmap__vslot **slots = stack ? &f->stack : &f->locals;
	size_t *n = stack ? &f->nstack : &f->nlocals;
	char *copy = NULL;
	if (name && !(copy = strdup(name)))
		return -ENOMEM;
	struct jitmap__vslot *a = realloc(*slots, (*n + 1) * sizeof(*a));
	if (!a) {
		free(copy);
		return -ENOMEM;
	}
	*slots = a;
	a[(*n)++] = (struct jitmap__vslot){index, copy};
	return 0;
}

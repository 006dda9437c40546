/* code.c (the process model): JIT code by address. Which image's code holds a PC (the code
 * table of images.c, images handed in that may be used, a glanced image opened, a perf map's
 * code last), its function there, and the image's CFI, read once. A lookup reads only what was
 * never read (an image's first use): reading again, and dropping what is stale, is the refresh's
 * (handed.c), once per stop.
 */
#include <inttypes.h>
#include <stdio.h>

#include "internal.h"

#define MAX_CFI_SECTION (UINT64_C(64) << 20) /* .eh_frame read from the target */

/* -- JIT code by address -- */

/* The range holding `addr`, of images handed in only when `handed_only`. An image handed in
 * that may not be used (its code unreadable at its first use) is passed over. With
 * `first_use`, one used for the first time is sampled now (the staleness rule: compared at the
 * next refresh, never here); without, nothing is read and one not used yet counts as usable.
 * 0, -ENOENT, -ENOMEM. */
static int code_find(jitmap_process *p, uint64_t addr, bool handed_only, bool first_use,
		     const struct jitmap__code_range **out)
{
	if (p->code_dirty && jitmap__code_rebuild(p))
		return -ENOMEM;
	/* The range starting last at or before addr that holds it: ranges from hostile images
	 * may overlap, so look back while an earlier range may still reach addr. */
	for (size_t i = jitmap__code_after(p, addr, true); i-- > 0 && p->code[i].max_hi > addr;) {
		const struct jitmap__code_range *c = &p->code[i];
		struct jitmap__source *s = c->s;
		if (addr >= c->hi || (handed_only && !s->handed))
			continue;
		if (s->handed && !(first_use ? jitmap__image_usable(p, s)
					     : s->code_check || s->usable))
			continue;
		*out = c;
		return 0;
	}
	return -ENOENT;
}

static void code_fill(const struct jitmap__code_range *c, uint64_t addr, jitmap_code_info *out)
{
	struct jitmap__source *s = c->s;
	*out = (jitmap_code_info){
		.source = s->name,
		.entry = s->handed ? 0 : s->entry,
		.image_id = s->handed ? s->id : 0,
		.lo = c->lo,
		.hi = c->hi,
		.image = s->image,
		.stackmap = s->sm,
	};
	const jitmap_code_function *f = jitmap__make_fns(s) ? NULL : jitmap__function_in(s, addr);
	if (f) {
		out->function = f->name;
		out->function_lo = f->lo;
		out->function_hi = f->hi;
	}
}

/* Code a perf map or a jitdump names (no image, no stackmap): jitmap_process_perfmap. */
static int perfmap_code(jitmap_process *p, uint64_t addr, jitmap_code_info *out)
{
	jitmap_perfmap_sym sym = {.sz = sizeof(sym)};
	const int rc = jitmap_perfmap_lookup(p->perfmap, addr, &sym);
	if (rc)
		return rc;
	*out = (jitmap_code_info){.source = sym.source, .lo = sym.lo, .hi = sym.hi,
				  .function = sym.name, .function_lo = sym.lo,
				  .function_hi = sym.hi};
	return 0;
}

jitmap_perfmap *jitmap_process_perfmap(jitmap_process *p)
{
	if (!p) {
		errno = EINVAL;
		return NULL;
	}
	if (!p->perfmap)
		p->perfmap = jitmap_perfmap_new();
	return p->perfmap;
}

int jitmap_process_code_at(jitmap_process *p, uint64_t addr, jitmap_code_info *out)
{
	if (!p || !out)
		return -EINVAL;
	const struct jitmap__code_range *c;
	struct jitmap__source *s;
	for (;;) {
		const int rc = code_find(p, addr, false, true, &c);
		if (rc == -ENOENT && p->perfmap)
			return perfmap_code(p, addr, out);
		if (rc)
			return rc;
		s = c->s;
		if (!s->glanced)
			break;
		/* Opened now; once its code is not the glance's, the table changed: look again
		 * (each time round, one image less is glanced). */
		jitmap__open_glanced(p, s);
		if (!p->code_dirty)
			break;
	}
	if (s->recheck) { /* its first use (an image handed in, a lazy scan's entry): read now */
		s->recheck = false;
		jitmap__refresh_live_indexed(p, s);
	}
	code_fill(c, addr, out);
	return 0;
}

/* The code at `addr` as the process holds it now, for the frame model: reads nothing, drops
 * nothing. An image not opened yet (a lazy scan's) answers with its range alone; an image
 * handed in whose code could not be read at its first use is passed over. The code table is
 * made again when a scan or a newly opened image changed it. 0, -ENOENT, -ENOMEM. */
int jitmap__code_known(jitmap_process *p, uint64_t addr, jitmap_code_info *out)
{
	const struct jitmap__code_range *c;
	const int rc = code_find(p, addr, false, false, &c);
	if (!rc)
		code_fill(c, addr, out);
	if (rc == -ENOENT && p->perfmap)
		return perfmap_code(p, addr, out);
	return rc;
}

int jitmap_process_image_code_at(jitmap_process *p, uint64_t addr, jitmap_code_info *out)
{
	if (!p || !out)
		return -EINVAL;
	jitmap__refresh(p); /* a debugger's first question at a stop */
	const struct jitmap__code_range *c;
	const int rc = code_find(p, addr, true, true, &c);
	if (!rc)
		code_fill(c, addr, out);
	return rc;
}

/* The source of `code` (as code_at filled it): an image handed in by its id, a scan's
 * source by its range and image. */
static struct jitmap__source *code_source(jitmap_process *p, const jitmap_code_info *code)
{
	if (code->image_id) {
		struct jitmap__source *s = jitmap__handed(p, code->image_id);
		return s && s->image == code->image ? s : NULL;
	}
	if (!code->image || (p->code_dirty && jitmap__code_rebuild(p)))
		return NULL;
	for (size_t i = jitmap__code_after(p, code->lo, false);
	     i < p->ncode && p->code[i].lo == code->lo; i++)
		if (p->code[i].s->image == code->image && !p->code[i].s->handed)
			return p->code[i].s;
	return NULL;
}

/* Read the image's CFI (the policy in process.h); what went wrong becomes its cfi_problem. */
static void read_cfi(jitmap_process *p, struct jitmap__source *s)
{
	uint64_t eh_addr = 0, eh_len = 0;
	size_t df_len = 0;
	const void *df = jitmap_image_debug_frame(s->image, &df_len);
	const bool has_eh = jitmap_image_eh_frame(s->image, &eh_addr, &eh_len) == 0 && eh_len;
	if (!has_eh && !df) {
		s->cfi_absent = true;
		return;
	}
	char problem[400] = "", why[160];
	void *eh = NULL;
	if (has_eh && (eh_len > MAX_CFI_SECTION || eh_len > SIZE_MAX))
		snprintf(problem, sizeof(problem), "its .eh_frame at 0x%" PRIx64 " is %" PRIu64
			 " bytes, over the %" PRIu64 " MiB limit", eh_addr, eh_len,
			 MAX_CFI_SECTION >> 20);
	else if (has_eh && !(eh = malloc((size_t)eh_len)))
		snprintf(problem, sizeof(problem), "out of memory for its .eh_frame");
	else if (has_eh && jitmap__read_mem(p, eh_addr, eh, (size_t)eh_len, why, sizeof(why))) {
		free(eh);
		eh = NULL;
		snprintf(problem, sizeof(problem), "its .eh_frame at 0x%" PRIx64 " cannot be read: %s",
			 eh_addr, why);
	}
	if (eh || df) {
		jitmap_error err = {0};
		s->cfi = jitmap_cfi_new(s->arch, eh, eh ? (size_t)eh_len : 0, eh_addr, df,
					df ? df_len : 0, &err);
		if (!s->cfi) {
			const size_t n = strlen(problem);
			snprintf(problem + n, sizeof(problem) - n, "%sno usable CFI: %s", n ? "; " : "",
				 jitmap__err_text(&err));
		}
	}
	free(eh);
	if (s->cfi) {
		free(s->cfi_problem);
		s->cfi_problem = NULL;
		s->cfi_failed = 0;
		return;
	}
	s->cfi_failed = p->gen + 1;
	jitmap__set_problem(&s->cfi_problem, "%s: %s", s->name, problem);
}

const jitmap_cfi *jitmap_process_code_cfi(jitmap_process *p, const jitmap_code_info *code,
					  const char **why)
{
	struct jitmap__source *s = p && code ? code_source(p, code) : NULL;
	if (why)
		*why = NULL;
	if (!s) {
		if (why)
			*why = "not JIT code this process holds";
		return NULL;
	}
	if (!s->cfi && !s->cfi_absent && s->cfi_failed != p->gen + 1)
		read_cfi(p, s);
	if (!s->cfi && why)
		*why = s->cfi_absent ? NULL : s->cfi_problem ? s->cfi_problem : "out of memory";
	return s->cfi;
}

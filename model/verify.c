/* verify.c: a frame report checked against the frame as a debugger unwound it
 * (jitmap_frame_report_verify, `stackmap verify`): the stackmap's frame size against the
 * unwinder's, and each stack slot against the frame's bounds. Both sides are facts jitmap
 * reads elsewhere (the stackmap, the debugger's CFA); a difference means one of them is wrong,
 * and the debugger's unwinding and jitmap's values above it are then not to be trusted. */
#include <inttypes.h>
#include <stdio.h>

#include "jitmap/arch.h"
#include "internal.h"

static void problem(struct jitmap__buf *b, size_t *n, size_t record, const char *check,
		    const char *detail)
{
	jitmap__buf_printf(b, "%s{\"record\": %zu, \"check\": \"%s\", \"detail\": ", (*n)++ ? ", " : "",
			   record, check);
	jitmap__buf_json(b, detail);
	jitmap__buf_puts(b, "}");
}

/* The address a direct or indirect location names, when it was read. */
static bool slot_address(const jitmap_location *loc, const jitmap_value *v, uint64_t *addr)
{
	if (loc->kind == JITMAP_LOC_DIRECT && jitmap__value_available(v)) {
		*addr = v->u;
		return true;
	}
	if (loc->kind == JITMAP_LOC_INDIRECT && (jitmap__value_available(v) || v->address)) {
		*addr = v->address;
		return true;
	}
	return false;
}

static void check_record(struct jitmap__buf *b, size_t *n, const jitmap_frame_report *r,
			 size_t i, uint64_t sp, uint64_t cfa, uint64_t pushed)
{
	const struct jitmap__rrec *x = &r->recs[i];
	const jitmap_function *fn = jitmap_record_function(x->sm, x->rec);
	char detail[320];
	if (fn && fn->stack_size != UINT64_MAX && cfa - sp != fn->stack_size + pushed) {
		snprintf(detail, sizeof(detail),
			 "frame #%u: the stackmap's frame is %" PRIu64 " bytes + %" PRIu64
			 " (return address) = %" PRIu64 ", the unwinder's CFA - SP is %" PRId64
			 ": one of them is wrong", r->level, fn->stack_size, pushed,
			 fn->stack_size + pushed, (int64_t)(cfa - sp));
		problem(b, n, i, "frame-size", detail);
	}
	const int fp = jitmap_reg_fp(r->desc_arch), spr = jitmap_reg_sp(r->desc_arch);
	for (size_t k = 0; k < x->rec->num_locations; k++) {
		const jitmap_location *loc = &x->rec->locations[k];
		uint64_t addr;
		if ((loc->kind != JITMAP_LOC_DIRECT && loc->kind != JITMAP_LOC_INDIRECT) ||
		    ((int)loc->dwarf_reg != fp && (int)loc->dwarf_reg != spr) ||
		    !slot_address(loc, &x->values[k], &addr))
			continue;
		if (addr >= sp && addr <= cfa && loc->size <= cfa - addr)
			continue;
		char where[96];
		jitmap__where(x->sm, x->rec, k, where, sizeof(where));
		snprintf(detail, sizeof(detail),
			 "frame #%u: location %zu (%s) spans 0x%" PRIx64 "-0x%" PRIx64
			 ", outside the frame [0x%" PRIx64 ", 0x%" PRIx64 ")", r->level, k, where,
			 addr, addr + loc->size, sp, cfa);
		problem(b, n, i, "stack-slot", detail);
	}
}

const char *jitmap_frame_report_verify(jitmap_frame_report *r, uint64_t sp, uint64_t cfa)
{
	if (!r) {
		errno = EINVAL;
		return NULL;
	}
	struct jitmap__buf b = {0};
	size_t n = 0;
	jitmap__buf_puts(&b, "[");
	uint64_t pushed;
	/* The bytes the call pushed: the caller's SP for a frame of size 0 at SP 0. */
	if (jitmap_arch_stackmap_caller_sp(r->desc_arch, 0, 0, &pushed) == 0)
		for (size_t i = 0; i < r->nrecs; i++)
			check_record(&b, &n, r, i, sp, cfa, pushed);
	jitmap__buf_puts(&b, "]");
	return jitmap__report_keep(r, &b);
}

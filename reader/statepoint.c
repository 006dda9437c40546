/* statepoint.c: decode statepoint records.
 *
 * A statepoint record is not marked as such (docs/stackmap-format.md, "Statepoints"): it is
 * recognised by its shape. The rule, stated once here and in jitmap.h:
 *   - at least 3 locations, the first three small Constants: calling convention, flags, N;
 *   - flags has no bits beyond GCTransition (1) | DeoptLiveIn (2);
 *   - N deopt locations follow;
 *   - of the rest, the trailing Direct locations are gc allocas (LLVM puts them last), and
 *     the others form (base, derived) pairs: an even count, none of them Direct.
 * A plain stackmap whose first three operands are small constants also fits; users override
 * with jitmap_statepoint_wanted's ID list.
 */
#include <stdio.h>

#include "internal.h"

#define WHY(...) (why && why_len ? (void)snprintf(why, why_len, __VA_ARGS__) : (void)0)

int jitmap_statepoint_decode(const jitmap_stackmap *sm, const jitmap_record *rec,
			     jitmap_statepoint_info *out, char *why, size_t why_len)
{
	(void)sm;
	const jitmap_location *l = rec->locations;
	const size_t n = rec->num_locations;

	memset(out, 0, sizeof(*out));
	if (n < 3) {
		WHY("%zu locations; a statepoint has at least 3", n);
		return -EINVAL;
	}
	for (int i = 0; i < 3; i++) {
		if (l[i].kind != JITMAP_LOC_CONSTANT) {
			WHY("location %d is not a small constant", i);
			return -EINVAL;
		}
	}
	if (l[1].offset < 0 || (l[1].offset & ~3)) {
		WHY("flags %d has bits beyond GCTransition|DeoptLiveIn", l[1].offset);
		return -EINVAL;
	}
	if (l[2].offset < 0 || (size_t)l[2].offset > n - 3) {
		WHY("deopt count %d exceeds the %zu locations that follow", l[2].offset, n - 3);
		return -EINVAL;
	}
	const size_t ndeopt = (size_t)l[2].offset;
	size_t first_gc = 3 + ndeopt, end = n;
	while (end > first_gc && l[end - 1].kind == JITMAP_LOC_DIRECT)
		end--;
	if ((end - first_gc) % 2) {
		WHY("%zu gc locations after the deopt values do not form (base, derived) pairs",
		    end - first_gc);
		return -EINVAL;
	}
	for (size_t i = first_gc; i < end; i++) {
		if (l[i].kind == JITMAP_LOC_DIRECT) {
			WHY("gc location %zu is Direct but not among the trailing gc allocas", i);
			return -EINVAL;
		}
	}
	out->calling_convention = (uint64_t)(int64_t)l[0].offset;
	out->flags = (uint64_t)l[1].offset;
	out->num_deopt = ndeopt;
	out->deopt = l + 3;
	out->num_gc_pairs = (end - first_gc) / 2;
	out->gc_pairs = l + first_gc;
	out->num_gc_allocas = n - end;
	out->gc_allocas = l + end;
	return 0;
}

bool jitmap_statepoint_wanted(const jitmap_stackmap *sm, const jitmap_record *rec,
			      jitmap_statepoint_mode mode, const uint64_t *ids, size_t num_ids)
{
	bool listed = false;
	for (size_t i = 0; i < num_ids; i++)
		if (ids[i] == rec->id)
			listed = true;
	switch (mode) {
	case JITMAP_STATEPOINT_NONE:
		return listed;
	case JITMAP_STATEPOINT_ALL:
		return !listed;
	default: {
		jitmap_statepoint_info info;
		return !listed && jitmap_statepoint_decode(sm, rec, &info, NULL, 0) == 0;
	}
	}
}

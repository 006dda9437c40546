/* perfmap_unwind.c: the unwinding information of jitdump files: each unwinding-information
 * record gives the .eh_frame of the code load that follows it; the bytes are kept with the load
 * (and with the places code moves to), and a jitmap_cfi is built from them at the first
 * question about that code (jitmap_perfmap_cfi), then kept.
 *
 * An unwinding-information record (JIT_CODE_UNWINDING_INFO, id 4: perf's
 * jitdump-specification.txt §IX, tools/perf/util/jitdump.h's jr_code_unwinding_info):
 * unwinding_size, eh_frame_hdr_size, mapped_size (u64 each), then unwinding_size bytes of data,
 * then padding to the record's end (CPython and V8 pad to 8). What the data holds, and where,
 * from its one reader and its writers (the specification's prose says the header comes first
 * and the .eh_frame after it; none of them does that):
 *   - perf inject (tools/perf/util/genelf.c, jit_add_eh_frame_info) takes the first
 *     unwinding_size - eh_frame_hdr_size bytes as .eh_frame and the eh_frame_hdr_size bytes
 *     after them as .eh_frame_hdr, at ALIGN_8(GEN_ELF_TEXT_OFFSET + code_size) and right
 *     after it, in an image whose .text is at GEN_ELF_TEXT_OFFSET (sizeof(Elf64_Ehdr), 64);
 *     jitdump.c (jit_repipe_code_load) maps that image with .text at the load's code_addr.
 *     So .eh_frame's pc-relative encodings are read at code_addr + ALIGN_8(code_size);
 *   - CPython 3.13 -X perf_jit (Python/perf_jit_trampoline.c, perf_map_jit_write_entry)
 *     writes one before each trampoline's load: .eh_frame (a 24-byte CIE "zR", FDE encoding
 *     pcrel|sdata4, and one FDE whose pc_begin is the constant -0x30: the code 16 bytes before
 *     .eh_frame, ALIGN_8 of its 15-byte trampoline; no terminator), then a 20-byte
 *     .eh_frame_hdr whose one table entry is -(ALIGN_8(code_size) + .eh_frame's size) from the
 *     header (datarel): the same place; mapped_size is unwinding_size rounded up to 16;
 *   - V8 --perf-prof --perf-prof-unwinding-info (src/diagnostics/perf-jit.cc,
 *     LogWriteUnwindingInfo; eh-frame.cc, EhFrameWriter::Finish) writes the code object's own
 *     unwinding info, .eh_frame (CIE version 3 "zLR", an FDE whose pc_begin is
 *     -(RoundUp(code_size, 8) + the field's offset), a terminator) then its 20-byte
 *     .eh_frame_hdr; for code without any, only an empty header (unwinding_size ==
 *     eh_frame_hdr_size, mapped_size 0): no .eh_frame, no CFI.
 * mapped_size only sizes the mapping perf synthesizes, and is not used here. The record
 * belongs to the next code load, whatever records come between (perf keeps it pending until
 * jit_repipe_code_load). Here the record is checked and remembered (its offset in the input
 * in *pending); its bytes are copied when a load takes it.
 */
#include "jitmap/perfmap.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "jitmap/unwind.h"

#define JITDUMP_UNWIND 24 /* unwinding_size, eh_frame_hdr_size, mapped_size: u64 */
/* perf's GEN_ELF_TEXT_OFFSET (tools/perf/util/genelf.h) for the 64-bit machines jitmap
 * unwinds: sizeof(Elf64_Ehdr), where the image perf inject writes puts .text. */
#define PERF_TEXT_OFFSET 64
/* A record's .eh_frame larger than this is not kept (jitmap_cfi_new's own cap). */
#define MAX_EH_FRAME (UINT64_C(64) << 20)

/* -- Records -- */

void jitmap__pm_unwinding_info(struct jitmap__pm_file *f, const struct jitmap__pm_reader *r,
			       size_t off, size_t body, size_t end, unsigned rec,
			       struct jitmap__pm_pending_unwind *pending)
{
	if (pending->rec)
		jitmap__pm_problem(f, "%s: record %u at offset %zu (unwinding info): another one "
				      "follows before any code load (record %u): not used", f->path,
				   pending->rec, pending->at, rec);
	*pending = (struct jitmap__pm_pending_unwind){0};
	if (end - body < JITDUMP_UNWIND) {
		jitmap__pm_problem(f, "%s: record %u at offset %zu (unwinding info): too short",
				   f->path, rec, off);
		return;
	}
	const uint64_t size = jitmap__pm_u64(r, body), hdr = jitmap__pm_u64(r, body + 8);
	const size_t room = end - body - JITDUMP_UNWIND;
	if (size > room) {
		jitmap__pm_problem(f, "%s: record %u at offset %zu (unwinding info): %" PRIu64
				      " bytes of unwinding data do not fit in its %zu", f->path,
				   rec, off, size, room);
		return;
	}
	if (hdr > size) {
		jitmap__pm_problem(f, "%s: record %u at offset %zu (unwinding info): an "
				      ".eh_frame_hdr of %" PRIu64 " bytes in %" PRIu64 " bytes of "
				      "unwinding data", f->path, rec, off, hdr, size);
		return;
	}
	if (size - hdr > MAX_EH_FRAME) {
		jitmap__pm_problem(f, "%s: record %u at offset %zu (unwinding info): an .eh_frame "
				      "of %" PRIu64 " bytes (more than %" PRIu64 "): not used",
				   f->path, rec, off, size - hdr, MAX_EH_FRAME);
		return;
	}
	*pending = (struct jitmap__pm_pending_unwind){.off = body + JITDUMP_UNWIND,
						      .len = (size_t)(size - hdr), .rec = rec,
						      .at = off};
}

/* The bytes are read at perf's place for the code (this file's first comment says why). */
bool jitmap__pm_take_unwind(struct jitmap__pm_file *f, const struct jitmap__pm_reader *r,
			    struct jitmap__pm_entry *e,
			    const struct jitmap__pm_pending_unwind *pending)
{
	if (!pending->rec || !pending->len) /* none, or V8's empty one: no .eh_frame */
		return true;
	if (jitmap__grow(&f->unw, &f->cap_unw, f->nunw + 1, sizeof(*f->unw)) ||
	    jitmap__grow(&f->eh, &f->cap_eh, f->neh + pending->len, 1))
		return false;
	memcpy(f->eh + f->neh, r->p + pending->off, pending->len);
	const uint64_t size = e->hi - e->lo;
	/* ALIGN_8(PERF_TEXT_OFFSET + size) - PERF_TEXT_OFFSET; jitmap__pm_range_check bounded
	 * size. */
	const uint64_t after = ((PERF_TEXT_OFFSET + size + 7) & ~UINT64_C(7)) - PERF_TEXT_OFFSET;
	f->unw[f->nunw] = (struct jitmap__pm_unwind){.eh_addr = e->lo + after, .off = f->neh,
						     .len = pending->len, .rec = pending->rec};
	f->neh += pending->len;
	e->unw = (uint32_t)f->nunw++;
	return true;
}

/* The .eh_frame of a move is read as far after the new address as it was after the old one:
 * perf (jit_repipe_code_move) maps the image it wrote for the load, .text and .eh_frame
 * together, at new_code_addr (under the name jitted-PID-INDEX, without the load's ".so": a
 * slip in perf, not in the format). */
bool jitmap__pm_move_unwind(struct jitmap__pm_file *f, uint32_t from, struct jitmap__pm_entry *to)
{
	const uint32_t k = f->e[from].unw;
	if (k == JITMAP__PM_NONE)
		return true;
	if (jitmap__grow(&f->unw, &f->cap_unw, f->nunw + 1, sizeof(*f->unw)))
		return false;
	struct jitmap__pm_unwind u = f->unw[k];
	u.eh_addr = to->lo + (u.eh_addr - f->e[from].lo);
	u.rc = 0;
	u.cfi = NULL;
	f->unw[f->nunw] = u;
	to->unw = (uint32_t)f->nunw++;
	return true;
}

/* -- CFI -- */

/* The CFI of unwinding information `u`, for the code of entry `e`: built at the first call
 * (a failure, but for want of memory, is said once as a problem of the file and kept). */
static int unwind_cfi(struct jitmap__pm_file *f, const struct jitmap__pm_entry *e,
		      struct jitmap__pm_unwind *u)
{
	if (u->cfi || u->rc)
		return u->rc;
	jitmap_error err = {0};
	u->cfi = jitmap_cfi_new(f->arch, f->eh + u->off, u->len, u->eh_addr, NULL, 0, &err);
	if (!u->cfi) {
		const int code = err.code < 0 ? err.code : -EINVAL;
		if (code == -ENOMEM)
			return code;
		u->rc = code;
		if (code == -ENOTSUP)
			jitmap__pm_problem(f, "%s: record %u (unwinding info): %s: not used",
					   f->path, u->rec, err.reason);
		else if (code != -ENOENT) /* ENOENT: no FDE, which says nothing is known */
			jitmap__pm_problem(f, "%s: record %u (unwinding info, read at 0x%" PRIx64
					      " for the code at 0x%" PRIx64 "): offset %" PRIu64
					      " of its .eh_frame: %s", f->path, u->rec, u->eh_addr,
					   e->lo, err.offset, err.reason);
		return u->rc;
	}
	/* Every writer's FDE starts at the code (this file's first comment); one that does not
	 * was written for another place than perf's: say so once (its rows may still cover some
	 * PCs). */
	if (!jitmap_cfi_covers(u->cfi, e->lo, NULL, NULL))
		jitmap__pm_problem(f, "%s: record %u (unwinding info, read at 0x%" PRIx64 "): no "
				      "FDE covers the first byte of its code at 0x%" PRIx64,
				   f->path, u->rec, u->eh_addr, e->lo);
	return 0;
}

int jitmap_perfmap_cfi(jitmap_perfmap *m, uint64_t addr, const jitmap_cfi **cfi)
{
	if (cfi)
		*cfi = NULL;
	if (!m || !cfi)
		return -EINVAL;
	struct jitmap__pm_file *f;
	struct jitmap__pm_entry *e;
	int rc = jitmap__pm_entry_at(m, addr, &f, &e);
	if (rc)
		return rc;
	if (e->unw == JITMAP__PM_NONE)
		return -ENOENT;
	struct jitmap__pm_unwind *u = &f->unw[e->unw];
	rc = unwind_cfi(f, e, u);
	if (rc)
		return rc;
	if (!jitmap_cfi_covers(u->cfi, addr, NULL, NULL))
		return -ENOENT;
	*cfi = u->cfi;
	return 0;
}

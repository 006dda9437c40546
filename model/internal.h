/* internal.h (model): what the model's files share: the process model's stackmaps for the
 * frame model, and a frame report as the frame model builds it and the renderer writes it. */
#ifndef JITMAP_MODEL_INTERNAL_H
#define JITMAP_MODEL_INTERNAL_H

#include "jitmap/frame.h"
#include "../common/strbuf.h"
#include "../targets/internal.h"

/* -- The process model, for the frame model (process.c) -- */

struct jitmap_process;
/* Where a stackmap of the process came from: the name the user sees ("JIT entry 0x...", a
 * file's path, the name an image was handed in with), its image, its notes. */
struct jitmap__stackmap_source {
	const char *name;
	const jitmap_image *image;
	const char *const *notes;
	size_t num_notes;
};
/* The process's stackmaps: the last scan's sources in their order, then the images handed
 * in. Element `i` (NULL when it has no stackmap, or past the end) and, when `out` is not NULL,
 * where it came from. */
size_t jitmap__process_num_stackmaps(const struct jitmap_process *p);
const jitmap_stackmap *jitmap__process_stackmap(const struct jitmap_process *p, size_t i,
						struct jitmap__stackmap_source *out);

/* -- A frame report, as frame.c builds it and render.c writes it -- */

/* An interpreter frame of a front end's own layout (jitmap_frame_report_add_vframe). */
struct jitmap__vslot {
	uint32_t index;
	char *name;
};

struct jitmap__vframe {
	jitmap_vref method, bci; /* method.name owned */
	struct jitmap__vslot *locals, *stack;
	size_t nlocals, nstack;
};

/* One record of the report, evaluated. */
struct jitmap__rrec {
	const jitmap_stackmap *sm;
	const jitmap_record *rec;
	const char *function;     /* the stackmap's name for its function, else the frame's */
	bool call;                /* matched through the call sequence before the frame's PC */
	char *note;               /* the call sequence, for "call" */
	char *source;             /* where the stackmap came from */
	char **notes;
	size_t nnotes;
	/* Statepoints: shown as one (decoded), or asked for and not fitting (misfit). */
	bool statepoint, misfit, forced;
	jitmap_statepoint_info sp;
	char misfit_why[160];
	jitmap_value *values;     /* one per location */
	char **names;             /* one per location, NULL when unnamed */
	const jitmap_deopt_layout *image_layout; /* the image's, or NULL */
	struct jitmap__vframe *vframes; /* a front end's layout, replacing the image's */
	size_t nvframes;
	bool own_layout;
};

struct jitmap_frame_report {
	unsigned level;
	uint64_t pc;
	char *function;           /* the front end's name for it */
	unsigned flags;           /* JITMAP_DESCRIBE_* */
	struct jitmap__rrec *recs;
	size_t nrecs;
	/* JITMAP_DESCRIBE_REGISTERS: the frame's general registers. */
	jitmap_arch arch;
	size_t nregs;
	struct jitmap__rreg {
		unsigned regno;
		jitmap_value v;
	} *regs;
	/* No record: the nearest ones in the function around the PC, and its name. */
	const jitmap_stackmap *near_sm;
	const jitmap_record *near[2];
	const char *near_function;
	char *out;                /* the last string rendered */
};

/* The value of a location in the contract's terms, for the renderer: available or not (with
 * the reason), a number, or the bytes of a value wider than 8 bytes. */
static inline bool jitmap__value_wide(const jitmap_location *loc, const jitmap_value *v)
{
	return loc->size > 8 && !v->is_address &&
	       (loc->kind == JITMAP_LOC_REGISTER || loc->kind == JITMAP_LOC_INDIRECT);
}

/* -- The renderer's pieces (render.c), shared by frame reports (report.c) and records without
 * a frame (records.c) -- */

/* A value in the contract's words: whether it is known, why not, and as text or JSON. */
bool jitmap__value_available(const jitmap_value *v);
const char *jitmap__value_why(const jitmap_value *v);
void jitmap__value_text(struct jitmap__buf *b, const jitmap_location *loc, const jitmap_value *v);
void jitmap__value_json(struct jitmap__buf *b, const jitmap_location *loc, const jitmap_value *v);
/* Where location `i` of `rec` is ("[rbp-16]"), and a register's label ("rbx", "R#40"). */
void jitmap__where(const jitmap_stackmap *sm, const jitmap_record *rec, size_t i, char *w,
		   size_t len);
void jitmap__reg_text(const jitmap_stackmap *sm, unsigned regno, char *out, size_t len);
/* ykllvm's records: whether `rec` is one, and its location's live variable and extras. */
bool jitmap__yk_record(const jitmap_stackmap *sm, const jitmap_record *rec);
void jitmap__yk_location_json(struct jitmap__buf *b, const jitmap_stackmap *sm,
			      const jitmap_record *rec, size_t i);
size_t jitmap__rrec_index(const struct jitmap__rrec *x, const jitmap_location *loc);
/* Whether both values of a GC root are numbers, and the derived pointer's offset. */
bool jitmap__root_offset(const struct jitmap__rrec *x, size_t base, size_t derived, int64_t *off);
/* The role of each location of a statepoint ("deopt", "gc base", ...; "" for none). */
void jitmap__roles(const struct jitmap__rrec *x, char (*roles)[64]);
/* A record's text, line by line: a location, the live-outs, the statepoint line, the head. */
void jitmap__location_line(struct jitmap__buf *b, const jitmap_stackmap *sm,
			   const jitmap_record *rec, size_t i, const jitmap_value *v,
			   const char *role, const char *name, bool raw, unsigned indent);
void jitmap__live_outs_text(struct jitmap__buf *b, const jitmap_stackmap *sm,
			    const jitmap_record *rec, unsigned indent);
void jitmap__statepoint_line(struct jitmap__buf *b, const jitmap_statepoint_info *sp,
			     bool forced, unsigned indent);
void jitmap__record_head(struct jitmap__buf *b, const jitmap_stackmap *sm,
			 const jitmap_record *rec, const char *function, bool statepoint,
			 unsigned indent);

#endif /* JITMAP_MODEL_INTERNAL_H */

/* internal.h (model): what the model's files share: the process model's stackmaps for the
 * frame model, the process model's insides for its own files, and a frame report as the frame
 * model builds it and the renderer writes it. */
#ifndef JITMAP_MODEL_INTERNAL_H
#define JITMAP_MODEL_INTERNAL_H

#include "jitmap/frame.h"
#include "../common/strbuf.h"
#include "../targets/internal.h"
#include "jitmap/process.h"

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

/* -- Inside the process model --
 *
 * Its files, bottom first, each calling only those before it: sources.c (texts, reads of
 * target memory, parsed sections and their place in the index, a source's life) < images.c (JIT
 * entries, their images, code and functions, the code table) < handed.c (images a debugger
 * hands in, and the refresh at a stop) < scan.c (descriptors, loaded files, cores: a scan) <
 * code.c (JIT code by address, its CFI) and process.c (the object, its accessors, the frame
 * model's questions).
 *
 * Reading happens at two moments: at a stop (a scan; the refresh after a recheck, which reads
 * again, drops what is stale and frees) and at an image's first use (jitmap_process_code_at and
 * the debugger's lookups of images handed in). The frame model only looks up (code.c's
 * jitmap__code_known, process.c's accessors): describing a frame never reads. */

#define SAMPLE 64 /* image bytes compared to decide that a kept entry is the same */
#define CODE_SAMPLE 16 /* code bytes compared to decide that an image handed in is stale */
/* A lazy scan glances at images up to this size (elf.c reads one this size whole too). */
#define GLANCE_MAX_IMAGE (UINT64_C(64) << 10)

struct jitmap__parse {
	jitmap_stackmap *sm;
	uint64_t addr, size, hash; /* where the bytes were, and their hash: the sharing key */
	jitmap_arch arch;          /* what they were parsed as */
	jitmap_byte_order order;
	bool complete;             /* complete_live's answer for it */
	int filled;                /* addresses complete_live took from a registered copy */
	unsigned refs;             /* sources whose stackmap it is */
	unsigned indexed;          /* sources that put it in the index */
};

/* A JIT descriptor a scan walked, and how far. */
struct jitmap__descriptor {
	uint64_t addr;
	char *where;
	bool readable, complete;
	size_t entries;
	char *problem; /* why the list was not read to its end */
};

struct jitmap__code_range {
	uint64_t lo, hi;
	uint64_t max_hi; /* the greatest hi of this range and those before it (by lo) */
	size_t rank;     /* of the same range, the smaller rank is the answer (sorted last) */
	struct jitmap__source *s;
};

/* An image handed in that was dropped, until jitmap_process_take_dropped. */
struct jitmap__drop {
	uint64_t id;
	bool replaced;
	char *why;
};

struct jitmap__source {
	jitmap_source_kind kind;
	bool handed;    /* an image handed in by a debugger (jitmap_process_add_image) */
	uint64_t id;    /* handed: its id */
	const void *bytes; /* handed: the image's bytes, while jitmap_process_add_image runs */
	bool recheck;   /* its live section not read yet: read at its first use (an image
			 * handed in, a lazy scan's entry) */
	bool seen;      /* in the current scan */
	bool listed;    /* in jitmap_process_source's list */
	size_t listed_at; /* its index there */
	char name[64];  /* JIT: "JIT entry 0x..." */
	/* JIT entries */
	uint64_t descriptor, entry, symfile_addr, symfile_size;
	uint8_t sample[SAMPLE];
	size_t sample_len; /* 0: unreadable */
	jitmap_image *image;      /* JIT: without its stackmap copy; object: the whole file */
	bool glanced;             /* lazy scan: not opened yet; spans, arch and order from a
				   * glance at its bytes (opened when a PC falls in its code) */
	jitmap_image *full_image; /* JIT: with the copy, opened on first need */
	bool full_tried;
	char *full_problem;       /* why it did not open (said again at each re-read) */
	bool complete;            /* the live section was seen with every address set */
	uint64_t live_hash;
	bool have_hash;
	uint8_t live_head[SAMPLE]; /* the live section's first bytes when last parsed */
	size_t live_head_len;
	/* objects */
	char *path;
	int64_t mtime_ns;
	int64_t file_size;
	bool stat_ok;
	/* both */
	uint64_t sm_addr, sm_size, bias;
	bool has_section;
	jitmap_arch arch;
	jitmap_byte_order order;
	jitmap_stackmap *sm;      /* NULL, or parse->sm, or the full image's */
	struct jitmap__parse *parse;      /* when sm was parsed from memory */
	bool live;
	const jitmap_stackmap *indexed; /* what the index holds for this source */
	struct jitmap__parse *indexed_parse;    /* and its parse, if it is one */
	struct jitmap__problems problems, notes;
	size_t open_problems;     /* problems[0..open_problems) are the image's; the rest the
				   * last live read's */
	/* JIT images: code and functions as jitmap_process_code_at gives them (the policy in
	 * process.h), made at first need. */
	jitmap_image_range *spans; /* sorted, disjoint */
	size_t nspans;
	bool spans_made;
	jitmap_code_function *fns; /* sorted, disjoint, inside spans */
	size_t nfns;
	bool fns_made;
	/* CFI, read at first need (jitmap_process_code_cfi). */
	jitmap_cfi *cfi;
	bool cfi_absent;          /* neither .eh_frame nor .debug_frame: nothing to read */
	uint64_t cfi_failed;      /* the generation whose attempt failed, + 1 (0: none) */
	char *cfi_problem;
	/* Handed: whether its code is still what it was at its first use. */
	bool code_check;          /* not sampled yet: sample at its first use */
	bool usable;              /* whether its code could be sampled */
	bool sampled;
	uint64_t sample_at;
	size_t code_sample_len;
	uint8_t code_sample[CODE_SAMPLE];
	char *code_problem;       /* why it could not be sampled */
};

struct jitmap_process {
	jitmap_target target;
	bool lazy; /* JITMAP_PROCESS_LAZY */
	size_t max_entries;
	uint64_t max_image, max_section;
	struct jitmap__source **jit; /* sorted by key */
	size_t njit, cap_jit;
	struct jitmap__source **objects;
	size_t nobjects, cap_objects;
	struct jitmap__source **handed; /* images handed in, sorted by id */
	size_t nhanded, cap_handed;
	uint64_t next_id;
	bool scanning; /* between scan_begin and scan_end */
	struct jitmap__source **order; /* the last scan's list */
	size_t norder, cap_order;
	struct jitmap__problems problems;
	struct jitmap__descriptor *descs; /* the last scan's, in the order walked */
	size_t ndescs, cap_descs;
	size_t unread_files; /* files scan_core could not look into */
	/* Freed at scan_end, after the index lets go of them. */
	struct jitmap__source **dropped;
	size_t ndropped, cap_dropped;
	jitmap_stackmap **graveyard;
	size_t ngrave, cap_grave;
	struct jitmap__parse **parses; /* sorted by (addr, size, hash) */
	size_t nparses, cap_parses;
	size_t layout_images; /* sources whose image carries deopt layouts */
	struct jitmap__code_range *code; /* JIT code by address, rebuilt when code_dirty */
	size_t ncode, cap_code;
	bool code_dirty;
	jitmap_index *index;
	bool replace_images; /* JITMAP_PROCESS_REPLACE_IMAGES */
	char *debug_dirs;    /* jitmap_process_opts.debug_dirs, or NULL */
	uint64_t gen;        /* bumped by each recheck and scan: failed CFI reads try again */
	uint64_t recheck_gen; /* bumped by each recheck: the images handed in are looked at again
			       * at the next refresh (one increment, not a walk over every image:
			       * GDB rechecks at each of thousands of registrations) */
	uint64_t refreshed_gen; /* the recheck_gen the last refresh (jitmap__refresh) answered */
	struct jitmap__drop *drops;  /* images dropped, until jitmap_process_take_dropped */
	size_t ndrops, cap_drops;
	struct jitmap__problems taken; /* the `why` of the last take */
	jitmap_perfmap *perfmap; /* jitmap_process_perfmap's; NULL until asked for */
	uint8_t *glance_buf;     /* a lazy scan's image bytes (up to GLANCE_MAX_IMAGE): one buffer
				  * for every image, not an allocation each */
	size_t glance_cap;
};

/* sources.c (problems and notes are common/'s lists: jitmap__problem) */
const char *jitmap__err_text(const jitmap_error *err);
uint64_t jitmap__hash_bytes(const uint8_t *p, size_t n);
/* The target's read_mem: 0, or a negative errno with `why` said. */
int jitmap__read_mem(jitmap_process *p, uint64_t addr, void *buf, size_t len, char *why,
		     size_t why_len);
void jitmap__parse_release(jitmap_process *p, struct jitmap__parse *h);
struct jitmap__parse *jitmap__parse_bytes(jitmap_process *p, const uint8_t *bytes, uint64_t addr,
				  uint64_t size, uint64_t hash, jitmap_arch arch,
				  jitmap_byte_order order, bool *fresh, jitmap_error *err);
void jitmap__set_stackmap(jitmap_process *p, struct jitmap__source *s, jitmap_stackmap *sm,
			  struct jitmap__parse *h, bool live);
int jitmap__index_put(jitmap_process *p, struct jitmap__source *s);
void jitmap__index_drop(jitmap_process *p, struct jitmap__source *s);
int jitmap__index_now(jitmap_process *p, struct jitmap__source *s);
void jitmap__source_free(jitmap_process *p, struct jitmap__source *s);
/* Free the sources dropped and the stackmaps buried since the last call. */
void jitmap__free_buried(jitmap_process *p);
const char *jitmap__source_problem(const struct jitmap__source *s, size_t k);
void jitmap__set_problem(char **slot, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Free `s` at scan_end, once the index let go of it. */
int jitmap__drop_later(jitmap_process *p, struct jitmap__source *s);
/* Add `s` to the scan's list (jitmap_process_source), once. */
int jitmap__list_source(jitmap_process *p, struct jitmap__source *s);
int jitmap__fill_info(const struct jitmap__source *s, jitmap_source_info *out);

/* images.c */
size_t jitmap__jit_find(const jitmap_process *p, const jitmap_jit_code *c, bool *found);
void jitmap__open_opened(jitmap_process *p, struct jitmap__source *s);
bool jitmap__has_unset_address(const jitmap_stackmap *sm);
bool jitmap__refresh_live(jitmap_process *p, struct jitmap__source *s);
void jitmap__refresh_live_indexed(jitmap_process *p, struct jitmap__source *s);
int jitmap__scan_entry(jitmap_process *p, uint64_t descriptor, const jitmap_jit_code *c,
		       uint8_t *bytes);
const jitmap_image_range *jitmap__span_at(const struct jitmap__source *s, uint64_t addr);
const jitmap_code_function *jitmap__function_in(const struct jitmap__source *s, uint64_t addr);
int jitmap__make_spans(struct jitmap__source *s);
void jitmap__open_glanced(jitmap_process *p, struct jitmap__source *s);
int jitmap__make_fns(struct jitmap__source *s);
int jitmap__code_rebuild(jitmap_process *p);
void jitmap__code_insert(jitmap_process *p, struct jitmap__source *s);
void jitmap__code_remove(jitmap_process *p, const struct jitmap__source *s);
size_t jitmap__code_after(const jitmap_process *p, uint64_t addr, bool strictly);

/* handed.c */
/* The image handed in with `id`, or NULL. */
struct jitmap__source *jitmap__handed(const jitmap_process *p, uint64_t id);
/* Whether the image handed in `s` may be used (its code sampled at this, its first use, or
 * before): reads nothing else, drops nothing. */
int jitmap__image_usable(jitmap_process *p, struct jitmap__source *s);
/* A stop: once after each jitmap_process_recheck, every image handed in that was used is
 * looked at again (its code compared with its sample: stale, dropped; its live section read
 * again by the policy). Called where a stop's questions begin (scan_end, a debugger's first
 * lookup of an image handed in), never by a lookup of the frame model. */
void jitmap__refresh(jitmap_process *p);

/* code.c */
int jitmap__code_known(jitmap_process *p, uint64_t addr, jitmap_code_info *out);

/* scan.c */
void jitmap__free_descriptors(jitmap_process *p);

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
	jitmap_arch desc_arch;    /* the front end's (jitmap_frame_desc.arch) */
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

/* Make the text in `b` the report's last string (r->out) and return it; NULL with errno
 * ENOMEM when `b` failed. */
const char *jitmap__report_keep(jitmap_frame_report *r, struct jitmap__buf *b);

/* The value of a location in the contract's terms, for the renderer: available or not (with
 * the reason), a number, or the bytes of a value wider than 8 bytes. */
static inline bool jitmap__value_wide(const jitmap_location *loc, const jitmap_value *v)
{
	return loc->size > 8 && !v->is_address &&
	       (loc->kind == JITMAP_LOC_REGISTER || loc->kind == JITMAP_LOC_INDIRECT);
}

/* -- A frame report's parts (report_parts.c), for report.c -- */

/* Location `i` of record `x` as JSON, named `name` (NULL: no name). */
void jitmap__location_json(struct jitmap__buf *b, const struct jitmap__rrec *x, size_t i,
			   const char *name, bool raw);
/* How many interpreter frames record `x` stands for (a front end's layout, else its image's). */
size_t jitmap__num_vframes(const struct jitmap__rrec *x);
/* The forms a record's interpreter frames take: JSON ("virtual_frames"), the lines under a
 * record, the lines under a backtrace's frame, a debugger's variables. */
enum jitmap__vstyle { JITMAP__V_JSON, JITMAP__V_RECORD, JITMAP__V_BT, JITMAP__V_VARIABLES };
void jitmap__vframes_render(struct jitmap__buf *b, const struct jitmap__rrec *x,
			    enum jitmap__vstyle style, unsigned indent, bool raw);

/* -- The renderer's pieces (render.c), shared by frame reports (report.c) and records without
 * a frame (render.c too) -- */

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

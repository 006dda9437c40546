/* frame.h: the frame model and the renderer of libjitmap.
 *
 * One frame, one answer: which stackmap record a frame is at, how each of its values reads,
 * its GC roots and the interpreter frames it stands for are decided here, and written here as
 * text and as the JSON contract (docs/json.md), for every front end: GDB's and LLDB's
 * commands, GDB's frame filter, jitmap-stack and jitmap-dump. A front end says where the frame
 * is (its level, PC, whether the PC is a return address) and how to read its registers and
 * memory (a jitmap_target whose read_reg answers as jitmap_location_eval_frame wants), and
 * prints what comes back.
 *
 * Which record: the records at exactly the frame's PC (every stackmap the process indexes);
 * for an outer frame whose PC is a return address with no record there, the record whose
 * call sequence returns there (a patchpoint's record starts its call sequence: the code from
 * the record's PC up to the return address must be one call sequence whose only call is its
 * last instruction, jitmap_arch_call_sequence). A record is never evaluated at a PC it does not
 * describe: without one, the report says which records are nearest and how far.
 *
 * Conventions as in jitmap.h. A report owns everything it returns and is independent of the
 * target once made (values are read at jitmap_frame_describe); it points into the process's
 * stackmaps, so free it before the next jitmap_process_scan_end or jitmap_process_flush.
 */
#ifndef JITMAP_FRAME_H
#define JITMAP_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jitmap/jitmap.h"
#include "jitmap/process.h"

#ifdef __cplusplus
extern "C" {
#endif

/* -- Describing a frame -- */

/* Flags of jitmap_frame_desc. */
#define JITMAP_DESCRIBE_RAW 1u /* also the stored fields: each location's kind, size, DWARF
				* register and offset; each record's flags and section offset */
#define JITMAP_DESCRIBE_REGISTERS 2u /* also the frame's registers (the architecture's general
				      * ones, jitmap_arch_num_core_regs): each value, or why it
				      * is not known in this frame (the outer-frame rule's words) */

/* Where a frame stands and how to read it. `sz` = sizeof(jitmap_frame_desc) (libbpf's
 * convention: fields added later must be zero when unknown). */
typedef struct jitmap_frame_desc {
	size_t sz;
	unsigned level;           /* the frame's number, as the front end shows it */
	uint64_t pc;              /* for a return address, the address itself (not minus 1) */
	bool return_address;      /* `pc` is a return address: an outer frame that a call, not a
				   * signal, left; the call-sequence match applies to it only */
	jitmap_arch arch;         /* the target's (for the call-sequence match); UNKNOWN: the
				   * stackmap's */
	const char *function;     /* the front end's name for the frame's function, or NULL:
				   * shown when no stackmap names it */
	/* The frame's registers and memory: read_reg as jitmap_location_eval_frame wants it (with
	 * `level` as the frame level: the outer-frame rule applies when level > 0), read_mem for
	 * indirect values and the code of a call sequence. NULL: nothing is read (values are
	 * unavailable, calls are not matched). */
	const jitmap_target *target;
	jitmap_statepoint_mode statepoints; /* which records are decoded as statepoints */
	const uint64_t *statepoint_ids;     /* that flip the mode (jitmap_statepoint_wanted) */
	size_t num_statepoint_ids;
	unsigned flags;           /* JITMAP_DESCRIBE_* */
	jitmap_byte_order order;  /* of the target's registers; AUTO: the stackmap's, else the
				   * architecture's (s390x big-endian) */
	/* Why the frame's registers are a guess (the unwinder reached it by a step nothing
	 * proved: jitmap_stack_frame.guess), or NULL when they are not. Then no register of
	 * the frame is read: every value but a constant is unavailable, with this reason. */
	const char *guessed;
	/* A field added here: name it in JITMAP__OPTS_VALID in model/frame.c. */
} jitmap_frame_desc;

typedef struct jitmap_frame_report jitmap_frame_report;

/* Describe the frame `desc` says, against the stackmaps of `p` (its PC index, the images its
 * code lies in, their deopt layouts, the source each stackmap came from). Every location of
 * every record found is evaluated now, through desc->target. `p` is only looked up: nothing
 * is read through its target, and no image is read again, dropped or freed (its stackmaps are
 * those its scan, the stop's refresh and jitmap_process_code_at read: a lazy process's are
 * read at first need by jitmap_process_code_at, as a stack walk asks it for every frame).
 * Returns a new report, or NULL with errno set (EINVAL: a NULL argument or bad `sz`; ENOMEM).
 * Finding no record is not a failure: see jitmap_frame_report_num_records. */
JITMAP_API jitmap_frame_report *jitmap_frame_describe(jitmap_process *p,
						      const jitmap_frame_desc *desc);
JITMAP_API void jitmap_frame_report_free(jitmap_frame_report *r);

/* How many records describe the frame (0: none; several when LLVM put several at one PC),
 * and record `i` with its stackmap: 0, or -ERANGE. */
JITMAP_API size_t jitmap_frame_report_num_records(const jitmap_frame_report *r);
JITMAP_API int jitmap_frame_report_record(const jitmap_frame_report *r, size_t i,
					  const jitmap_stackmap **sm, const jitmap_record **rec);
/* Whether record `i` is shown as a statepoint (decoded under the desc's mode). */
JITMAP_API bool jitmap_frame_report_is_statepoint(const jitmap_frame_report *r, size_t i);
/* The value of location `loc` of record `i`, as evaluated: 0 with *out filled (an unavailable
 * value says why in out->why), or -ERANGE. */
JITMAP_API int jitmap_frame_report_value(const jitmap_frame_report *r, size_t i, size_t loc,
					 jitmap_value *out);

/* The frame's register `i` (JITMAP_DESCRIBE_REGISTERS; i < jitmap_frame_report_num_registers):
 * its DWARF number and name, and its value as a jitmap_value (8 bytes; unavailable with the
 * reason: "caller-saved, and not saved in frame 2", "not saved in frame 1", the target's).
 * 0, or -ERANGE. */
JITMAP_API size_t jitmap_frame_report_num_registers(const jitmap_frame_report *r);
JITMAP_API int jitmap_frame_report_register(const jitmap_frame_report *r, size_t i,
					    unsigned *regno, const char **name, jitmap_value *out);

/* -- What a front end adds: names and interpreter frames --
 *
 * A runtime author may name a record's values, and say how its deopt values form interpreter
 * frames, from a debugger script (the Python names API): the front end hands those in here
 * before it renders. Strings are copied. Each returns 0, -ERANGE for an index out of range,
 * -EINVAL for a bad kind, or -ENOMEM. */

/* Name location `loc` of record `i` (NULL: unnamed). */
JITMAP_API int jitmap_frame_report_name(jitmap_frame_report *r, size_t i, size_t loc,
					const char *name);
/* Add an interpreter frame (innermost first) to record `i`'s own layout, which then replaces
 * the one its image carries: a method and a bci, each a jitmap_vref_kind with its number or
 * name (a bci is never a name; JITMAP_VREF_NONE: none). */
JITMAP_API int jitmap_frame_report_add_vframe(jitmap_frame_report *r, size_t i,
					      int method_kind, uint64_t method_number,
					      const char *method_name, int bci_kind,
					      uint64_t bci_number);
/* Add a local (`stack` false) or an expression-stack entry to the last frame added to
 * record `i`: value `index` (of the statepoint's deopt values, or of the record's locations
 * when it is not a statepoint), named `name` (NULL: unnamed). */
JITMAP_API int jitmap_frame_report_add_vslot(jitmap_frame_report *r, size_t i, bool stack,
					     uint32_t index, const char *name);

/* -- Rendering -- */

/* What jitmap_frame_report_text writes. */
typedef enum jitmap_text_part {
	JITMAP_TEXT_FRAME = 0,   /* `info stackmap`: "frame #N, pc 0x... in F", then each
				  * record (values, roles, names, live-outs, interpreter
				  * frames); or the sentence saying why no record is shown */
	JITMAP_TEXT_RECORDS,     /* the same without the frame line (nothing when no record) */
	JITMAP_TEXT_GC_ROOTS,    /* one row per GC root and gc alloca (`info gc-roots`) */
	JITMAP_TEXT_GC_HEADER,   /* the header line of those rows */
	JITMAP_TEXT_VFRAMES,     /* one line per interpreter frame, as under a frame in `bt` */
	JITMAP_TEXT_NO_RECORD,   /* why no record describes the frame ("" when one does) */
	JITMAP_TEXT_REGISTERS,   /* one line per register: name and value, or why not known
				  * (JITMAP_DESCRIBE_REGISTERS) */
	JITMAP_TEXT_BT,          /* the frame in a backtrace (`stackmap bt`): "frame #N: PC F"
				  * (F: the function's name, "??" when nothing names it), then
				  * ", record ID" and " (statepoint)" at a record; under it, its
				  * interpreter frames, 4 spaces further in */
} jitmap_text_part;

/* Flags of jitmap_frame_report_json. */
#define JITMAP_JSON_NO_FRAME 1u /* leave out the "frame" field (jitmap-stack's "stackmap") */
#define JITMAP_JSON_REGISTERS 2u /* only the "registers" array (JITMAP_DESCRIBE_REGISTERS) */
#define JITMAP_JSON_VARIABLES 4u /* only the values of the first record as a debugger shows
				  * them as a frame's variables (GDB's frame filter, LLDB's
				  * scripted frames): see below */
/* With JITMAP_DESCRIBE_REGISTERS the object has "registers": [{"register": "rbx", "dwarf_reg":
 * 3, "value": "0x..."}, {"register": "rax", ..., "value": null, "error": "..."}]. */

/* With JITMAP_JSON_VARIABLES the object is {"variables": [...], "virtual_frames": [[...], ...]}:
 * each variable {"name": ..., "gc": true|false, "location": {the location object}}. A
 * statepoint's are its deopt values (named "deopt0", ... unless named), its GC roots
 * ("gc_base0", "gc_derived0", ...: "gc" true) and gc allocas ("gc_alloca0", ...); another
 * record's are its locations ("loc0", ... by index). Each interpreter frame's are its locals
 * ("local0", ... by position unless named), its expression stack ("stack0", ...) and, when
 * its layout could not be applied in full, "error" (a location {"value": null, "error":
 * why}). Empty arrays when no record describes the frame. */

/* The report as the JSON contract's frame object (`info stackmap -json`: one line, no newline,
 * ASCII only: every string is escaped, bytes that are not UTF-8 become U+FFFD), or as text
 * (`part`; lines end with a newline; `indent` spaces before each line; names that are not
 * UTF-8 have U+FFFD in their place). The string is owned by the report and valid until the
 * next call on it; NULL with errno ENOMEM (or EINVAL for a bad part). */
JITMAP_API const char *jitmap_frame_report_json(jitmap_frame_report *r, unsigned flags);
JITMAP_API const char *jitmap_frame_report_text(jitmap_frame_report *r, jitmap_text_part part,
						unsigned indent);

/* -- Checks of a frame against its unwinding (`stackmap verify`) -- */

/* Check the records of the frame against the frame as the debugger unwound it: `sp` its
 * stack pointer and `cfa` its canonical frame address (the caller's SP before the call).
 * "frame-size": the function's stack size from the stackmap plus the bytes the call pushed
 * (jitmap_arch_stackmap_caller_sp) differs from cfa - sp; "stack-slot": a direct or
 * indirect location off the frame or stack pointer spans bytes outside [sp, cfa). Nothing is
 * checked on an architecture whose frame-size rule jitmap does not know (the desc's arch; it
 * must be given). Returns a JSON array, [{"record": I, "check": "frame-size"|"stack-slot",
 * "detail": "frame #N: ..."}] (I: the record's number in the report), owned by the report as
 * jitmap_frame_report_json's string is; NULL with errno ENOMEM or EINVAL. */
JITMAP_API const char *jitmap_frame_report_verify(jitmap_frame_report *r, uint64_t sp,
						  uint64_t cfa);

/* -- Records without a frame (jitmap-dump) -- */

/* Record `rec` of `sm` as stored, for a dump: its text (the `record ...` line and a line per
 * location with its role, without values: as `info stackmap` writes them; `indent` spaces
 * before each line) or its JSON object (jitmap-dump's: docs/jitmap-dump.md). Statepoints
 * decoded under `mode` and `ids`. Returns a new string (free() it), or NULL with errno ENOMEM
 * or EINVAL. */
JITMAP_API char *jitmap_record_text(const jitmap_stackmap *sm, const jitmap_record *rec,
				    jitmap_statepoint_mode mode, const uint64_t *ids,
				    size_t num_ids, unsigned indent);
JITMAP_API char *jitmap_record_json(const jitmap_stackmap *sm, const jitmap_record *rec,
				    jitmap_statepoint_mode mode, const uint64_t *ids,
				    size_t num_ids);

/* Deopt layouts (an image's `.jitmap_deopt`: docs/deopt-layouts.md), for a dump: as text (a
 * "deopt layouts (.jitmap_deopt): N" line, a line per layout and one per interpreter frame;
 * `indent` spaces before the first, two more before each level) or as the JSON array
 * jitmap-dump writes as "deopt_layouts". Returns a new string (free() it), or NULL with errno
 * ENOMEM or EINVAL. */
JITMAP_API char *jitmap_layouts_text(const jitmap_layouts *l, unsigned indent);
JITMAP_API char *jitmap_layouts_json(const jitmap_layouts *l);

/* -- JSON strings -- */

/* `s` (NUL-terminated; NULL writes `null`) as a JSON string: quoted, ASCII only (\uXXXX for
 * what is not printable ASCII, surrogate pairs above U+FFFF), every byte sequence that is not
 * UTF-8 replaced by U+FFFD, so that any bytes give valid JSON. Writes at most `len` bytes
 * with a terminating NUL (when len > 0) and returns the length of the whole string, as
 * snprintf does. */
JITMAP_API size_t jitmap_json_string(const char *s, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_FRAME_H */

/* internal.h: what the files of jitmap-reader.so share (reader.c says what the plugin is):
 * its limits, the register roles of the architecture GDB debugs, the reader's state, and the
 * calls of entries.c (target memory, the entries GDB handed in) and unwind.c (GDB's unwind
 * and frame-ID callbacks). The files call one way: entries.c < unwind.c < reader.c. */
#ifndef JITMAP_PLUGIN_INTERNAL_H
#define JITMAP_PLUGIN_INTERNAL_H

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gdb/jit-reader.h>

#include <jitmap/jitmap.h>
#include <jitmap/process.h>
#include <jitmap/unwind.h>

#include "../common/search.h"

#include "jitmap-reader-api.h"

/* -- Limits -- */

#define MAX_IMAGE_SIZE (UINT64_C(1) << 30) /* a JIT image larger than this is declined */
#define MAX_NAME 1024                       /* names given to GDB are cut here */
#define READ_CHUNK (1 << 20)                /* target_read takes an int length */
#define CACHE_SLOTS 8
#define MEM_LINE 128                        /* target memory read at once while unwinding */

/* GDB's jit-reader API numbers registers as the DWARF numbering of the architecture GDB
 * debugs, and gives their bytes in its byte order, but says neither: jitmap.gdb tells the
 * reader (jitmap_reader_set_arch); until then it takes the host's (jitmap_arch_host), never an
 * image's. Every register role comes from libjitmap's table (jitmap/arch.h). */
#define MAX_GPR 64 /* registers kept per cached frame */

/* The register roles of the architecture being debugged, from its table. */
struct plugin_roles {
	jitmap_arch arch;  /* JITMAP_ARCH_UNKNOWN: none usable */
	bool big_endian;   /* GDB's register bytes */
	int sp, fp, pc;
	int ngpr;          /* DWARF 0..ngpr-1: the registers read from GDB (the PC apart) */
	int first_clobber; /* the lowest-numbered caller-saved register */
};
extern struct plugin_roles R; /* R.sp, R.fp, R.pc: short, as it is read on every register */

/* -- State -- */

/* What the reader keeps of an image GDB handed it; the rest is the process model's. */
struct entry {
	uint64_t id;     /* the image's, in the process model */
	uint64_t serial; /* GDB's reading order: "entry 3" in notes */
	bool claimed, debug_info;
	bool gdb_names; /* GDB's own ELF reader names some of its functions */
	const jitmap_stackmap *sm; /* what the model last gave, valid until the next recheck */
	char problem[256];
};

struct cache_slot {
	uint64_t gen, epoch; /* valid while both match the reader's */
	uint64_t pc, known;
	uint64_t reg[MAX_GPR];
	uint64_t id; /* the entry's (0: an empty slot) */
	jitmap_unwind_result res;
	uint64_t func_lo;
	bool outermost;
	bool guess;
};

/* Callers the reader found by a guess (a step no method proved: the frame-pointer chain
 * through code whose start is unknown), by the PC and SP it gave GDB for them, for
 * jitmap_reader_guess: GDB shows such a frame's registers as facts, and only jitmap's own
 * commands can say that they are not. */
#define GUESS_SLOTS 64
struct guess_slot {
	uint64_t gen, epoch, pc, sp;
	char why[256];
};

/* Target memory read while unwinding one frame: the return address and the save slots of a
 * frame's callee-saved registers sit within a few words of its CFA, and each target_read
 * through GDB is a system call (GDB's own unwinder reads the stack through its stack cache).
 * Valid for one compute() only: nothing is kept across frames or stops. */
struct mem_line {
	bool valid;
	uint64_t base;
	uint8_t bytes[MEM_LINE];
};

struct reader {
	struct gdb_reader_funcs funcs;
	gdb_target_read *target_read; /* GDB's, remembered from its last call */
	struct mem_line lines[2];     /* see struct mem_line */
	unsigned line_next;
	int claim_mode;
	bool debug;
	bool arch_told; /* the debugger said which architecture it debugs: R is that one's */
	uint64_t gen;   /* bumped by jitmap_reader_invalidate(RECHECK) */
	uint64_t epoch; /* bumped whenever an entry or what it caches changes */
	uint64_t next_serial;
	struct entry *entries; /* sorted by id (ids only grow) */
	size_t nentries, entries_cap;
	jitmap_process *proc; /* the images, their code, stackmaps and CFI */
	struct cache_slot cache[CACHE_SLOTS];
	unsigned cache_next;
	struct guess_slot guesses[GUESS_SLOTS];
	unsigned guess_next;
	jitmap_reader_stats stats;
};

/* The last note (plugin_note), for jitmap_reader_last_error. */
extern char plugin_last_error[256];

/* -- entries.c: the register roles, notes, target memory, the entries -- */

const jitmap_cfi *plugin_entry_cfi(struct reader *r, struct entry *e, const jitmap_code_info *code);
bool plugin_entry_code_at(struct reader *r, const struct entry *e, uint64_t addr,
			  jitmap_code_info *out);
struct entry *plugin_entry_of(struct reader *r, uint64_t id);
const jitmap_stackmap *plugin_entry_stackmap(struct reader *r, struct entry *e);
void plugin_forget_dropped(struct reader *r);
void plugin_note(struct reader *r, struct entry *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int plugin_target_read(struct reader *r, uint64_t addr, void *buf, size_t len);
int plugin_unwind_read_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			   size_t why_len);
int plugin_add_entry(struct reader *r, const struct entry *e);
void plugin_forget_all(struct reader *r);
int plugin_hand_in(struct reader *r, struct entry *e, const void *image, size_t size,
		   const jitmap_image **img, const jitmap_code_function **fns, size_t *nfns,
		   char *why, size_t why_len);
int plugin_process_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			size_t why_len);
bool plugin_set_roles(jitmap_arch arch, bool big_endian);

/* -- unwind.c: GDB's unwind and frame-ID callbacks -- */

struct gdb_frame_id plugin_get_frame_id(struct gdb_reader_funcs *self,
				       struct gdb_unwind_callbacks *cb);
enum gdb_status plugin_unwind_frame(struct gdb_reader_funcs *self,
				    struct gdb_unwind_callbacks *cb);

#endif /* JITMAP_PLUGIN_INTERNAL_H */

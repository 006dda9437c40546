/* internal.h: what the files of jitmap-reader.so share (reader.c says what the plugin is):
 * its limits, the register roles of the architecture GDB debugs, the session (everything the
 * plugin keeps, in one struct), and the calls of entries.c (target memory, the entries GDB
 * handed in) and unwind.c (GDB's unwind and frame-ID callbacks). The files call one way:
 * entries.c < unwind.c < reader.c. */
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
struct jitmap_plugin__roles {
	jitmap_arch arch;  /* JITMAP_ARCH_UNKNOWN: none usable */
	bool big_endian;   /* GDB's register bytes */
	int sp, fp, pc;
	int ngpr;          /* DWARF 0..ngpr-1: the registers read from GDB (the PC apart) */
	int first_clobber; /* the lowest-numbered caller-saved register */
};

/* -- The session's parts -- */

/* What the reader keeps of an image GDB handed it; the rest is the process model's. */
struct jitmap_plugin__entry {
	uint64_t id;     /* the image's, in the process model */
	uint64_t serial; /* GDB's reading order: "entry 3" in notes */
	bool claimed, debug_info;
	bool gdb_names; /* GDB's own ELF reader names some of its functions */
	const jitmap_stackmap *sm; /* what the model last gave, valid until the next recheck */
	char problem[256];
};

/* A frame unwound: GDB asks for a frame's ID right after unwinding it, and unwinds a frame
 * again for each command that walks the stack. */
struct jitmap_plugin__cache_slot {
	uint64_t gen, epoch; /* valid while both match the session's */
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
struct jitmap_plugin__guess {
	uint64_t gen, epoch, pc, sp;
	char why[256];
};

/* Target memory read while unwinding one frame: the return address and the save slots of a
 * frame's callee-saved registers sit within a few words of its CFA, and each target_read
 * through GDB is a system call (GDB's own unwinder reads the stack through its stack cache).
 * Valid for one compute() only: nothing is kept across frames or stops. */
struct jitmap_plugin__mem_line {
	bool valid;
	uint64_t base;
	uint8_t bytes[MEM_LINE];
};

/* -- The session --
 *
 * Everything the plugin keeps, in one struct, of which the library has one (reader.c's
 * `session`, its only mutable file-scope variable): GDB loads one reader at a time ("JIT reader
 * already loaded"), and the Python commands, which reach the same loaded library through
 * ctypes.CDLL on its path (jitmap-reader-api.h), pass no handle. GDB's callbacks reach it
 * through the priv_data of the gdb_reader_funcs the session holds; the exported API through
 * reader.c's variable. Its fields live for one of two spans:
 *   - the library's, from dlopen to dlclose (the Python side holds the library, so across
 *     `jit-reader-unload` and `jit-reader-load`, which destroy the reader and make it
 *     again): the claim mode the user chose, how many readers were made, the answer that
 *     refuses a second reader, and the last note (kept after destroy, cleared by the next
 *     gdb_init_reader);
 *   - one reader's, from gdb_init_reader (which sets `open` and every other field afresh)
 *     to GDB's destroy call (which frees the entries and the process model and clears
 *     `open`): every exported call but jitmap_reader_api_version and
 *     jitmap_reader_last_error answers "not loaded" while `open` is false.
 * GDB calls the reader from its main thread only; so do the Python commands. */
struct jitmap_plugin__session {
	/* -- The library's span -- */
	int claim_mode;       /* JITMAP_READER_CLAIM_*, once claim_env_read */
	bool claim_env_read;  /* the first reader read JITMAP_READER_CLAIM */
	uint64_t readers;     /* how many readers GDB made (jitmap_reader_process) */
	struct gdb_reader_funcs refused; /* reader_version 0: see gdb_init_reader */
	char last_error[256]; /* the last note (plugin_note), for jitmap_reader_last_error */

	/* -- One reader's span -- */
	bool open;                     /* between gdb_init_reader and destroy */
	struct gdb_reader_funcs funcs; /* what GDB holds: priv_data is this session */
	struct jitmap_plugin__roles roles; /* the debugged architecture's: read on every register */
	bool arch_told; /* the debugger said which architecture it debugs: `roles` are its */
	bool debug;     /* JITMAP_DEBUG: notes go to stderr too */
	gdb_target_read *target_read; /* GDB's, remembered from its last call */
	struct jitmap_plugin__mem_line lines[2]; /* see struct jitmap_plugin__mem_line */
	unsigned line_next;
	uint64_t gen;   /* bumped by jitmap_reader_invalidate(RECHECK) */
	uint64_t epoch; /* bumped whenever an entry or what it caches changes */
	uint64_t next_serial;
	struct jitmap_plugin__entry *entries; /* sorted by id (ids only grow) */
	size_t nentries, entries_cap;
	jitmap_process *proc; /* the images, their code, stackmaps and CFI */
	struct jitmap_plugin__cache_slot cache[CACHE_SLOTS];
	unsigned cache_next;
	struct jitmap_plugin__guess guesses[GUESS_SLOTS];
	unsigned guess_next;
	jitmap_reader_stats stats;
};

/* -- entries.c: the register roles, notes, target memory, the entries -- */

const jitmap_cfi *plugin_entry_cfi(struct jitmap_plugin__session *s,
				   struct jitmap_plugin__entry *e, const jitmap_code_info *code);
bool plugin_entry_code_at(struct jitmap_plugin__session *s, const struct jitmap_plugin__entry *e,
			  uint64_t addr, jitmap_code_info *out);
struct jitmap_plugin__entry *plugin_entry_of(struct jitmap_plugin__session *s, uint64_t id);
const jitmap_stackmap *plugin_entry_stackmap(struct jitmap_plugin__session *s,
					     struct jitmap_plugin__entry *e);
void plugin_forget_dropped(struct jitmap_plugin__session *s);
void plugin_note(struct jitmap_plugin__session *s, struct jitmap_plugin__entry *e,
		 const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int plugin_target_read(struct jitmap_plugin__session *s, uint64_t addr, void *buf, size_t len);
int plugin_unwind_read_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			   size_t why_len);
int plugin_add_entry(struct jitmap_plugin__session *s, const struct jitmap_plugin__entry *e);
void plugin_forget_all(struct jitmap_plugin__session *s);
int plugin_hand_in(struct jitmap_plugin__session *s, struct jitmap_plugin__entry *e,
		   const void *image, size_t size, const jitmap_image **img,
		   const jitmap_code_function **fns, size_t *nfns, char *why, size_t why_len);
int plugin_process_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			size_t why_len);
bool plugin_set_roles(struct jitmap_plugin__session *s, jitmap_arch arch, bool big_endian);

/* -- unwind.c: GDB's unwind and frame-ID callbacks -- */

struct gdb_frame_id plugin_get_frame_id(struct gdb_reader_funcs *self,
				       struct gdb_unwind_callbacks *cb);
enum gdb_status plugin_unwind_frame(struct gdb_reader_funcs *self,
				    struct gdb_unwind_callbacks *cb);

#endif /* JITMAP_PLUGIN_INTERNAL_H */

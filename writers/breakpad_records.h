/* breakpad_records.h (writers): what breakpad.c and breakpad_file.c share: a symbol file's
 * records, from the caller or read back from an older file for the same module, and the
 * object that holds them. Private to the two (writers/internal.h is the layer's header). */
#ifndef JITMAP_WRITERS_BREAKPAD_RECORDS_H
#define JITMAP_WRITERS_BREAKPAD_RECORDS_H

#include "internal.h"
#include "jitmap/breakpad.h"

/* Of two overlapping records the one of higher `prio` is written. The caller's records come
 * after any older file's (JITMAP__BP_NEW + the order of the calls); an older file's count
 * down from JITMAP__BP_NEW - 1 in file order, so that of two overlapping ones there the first
 * stays, as Breakpad's reader would keep it. */
#define JITMAP__BP_NEW (UINT64_C(1) << 40)
#define JITMAP__BP_MAX_ID 64 /* identifier bytes (minidump.h's cap) */

/* Addresses relative to the module's base. Names are NUL-terminated, cleaned
 * (jitmap__bp_clean). */
struct jitmap__bp_func {
	uint64_t addr, size, prio;
	char *name;
	bool is_public; /* a PUBLIC record: no size (as a range, its one address) */
	bool multiple;  /* "m": an older file's mark of a body shared by several names */
};

struct jitmap__bp_line {
	uint64_t addr, size, prio;
	char *file;
	unsigned line;
};

struct jitmap__bp_cfi {
	uint64_t addr, size, prio;
	char *rules; /* what follows "STACK CFI INIT ADDR SIZE " */
	size_t first_delta, num_deltas; /* an older file's "STACK CFI ADDR ..." rows after it:
					 * deltas[first_delta..] of its records */
};

struct jitmap__bp_records {
	struct jitmap__bp_func *funcs;
	struct jitmap__bp_line *lines;
	struct jitmap__bp_cfi *cfis;
	char **deltas; /* the text after "STACK CFI " */
	size_t num_funcs, num_lines, num_cfis, num_deltas;
	size_t cap_funcs, cap_lines, cap_cfis, cap_deltas;
};

struct jitmap_breakpad_sym {
	jitmap_arch arch;
	char *name;                /* the module's base name */
	uint8_t id[JITMAP__BP_MAX_ID];
	size_t id_len;
	char debug_id[34];         /* jitmap_breakpad_debug_id of id */
	uint64_t base;
	struct jitmap__bp_records recs; /* the caller's (strings owned) */
	uint64_t added;            /* records added: the next one's priority */
};

/* Append a record: 0 or -ENOMEM. */
int jitmap__bp_add_func(struct jitmap__bp_records *r, const struct jitmap__bp_func *f);
int jitmap__bp_add_line(struct jitmap__bp_records *r, const struct jitmap__bp_line *l);
int jitmap__bp_add_cfi(struct jitmap__bp_records *r, const struct jitmap__bp_cfi *c);
/* Free the arrays of `r` (and, when `owned`, the strings its records point at) and zero it. */
void jitmap__bp_records_free(struct jitmap__bp_records *r, bool owned);
/* `s` as one field that ends a record's line, in place (breakpad.c says how); returns it. */
char *jitmap__bp_clean(char *s);
/* A base name's bytes at most: NAME.sym must be a file name (NAME_MAX 255). */
#define JITMAP__BP_MAX_NAME 251
/* The MODULE record's line of `s`, without its newline: the line an older file must begin
 * with to be merged. `out` holds JITMAP__BP_MODULE_MAX bytes. */
#define JITMAP__BP_MODULE_MAX (JITMAP__BP_MAX_NAME + 64)
void jitmap__bp_module_line(const jitmap_breakpad_sym *s, char out[JITMAP__BP_MODULE_MAX]);
/* The symbol file's text: the records of `s` and those of `old` (an older file's, or NULL)
 * that overlap none of them, resolved and sorted (breakpad.h, jitmap_breakpad_sym_write).
 * Malloc'd, or NULL with errno ENOMEM. */
char *jitmap__bp_text(const jitmap_breakpad_sym *s, const struct jitmap__bp_records *old);

#endif /* JITMAP_WRITERS_BREAKPAD_RECORDS_H */

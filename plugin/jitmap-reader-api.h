/* jitmap-reader-api.h: what jitmap-reader.so, the GDB JIT reader plugin, exports besides GDB's
 * entry point, for the Python front end (ctypes) in the same GDB process.
 *
 * GDB loads the plugin with dlopen; `ctypes.CDLL(path)` on the same path returns the same,
 * already loaded library, so these functions see the reader's state: the JIT entries GDB has
 * shown it, their stackmaps (read by libjitmap's process model, jitmap/process.h, when GDB
 * hands the reader an entry: from the live, relocated sections in target memory) and one
 * jitmap_index over all of them. GDB has one reader at a time: there is one state.
 *
 * The plugin also exports the libjitmap functions of <jitmap/jitmap.h> (parsing, index,
 * statepoints, registers, evaluation, ELF images) and <jitmap/unwind.h>, so that the objects
 * returned here can be used through the same handle.
 *
 * Target memory: calls that parse lazily read the target through GDB's own target_read
 * callback (remembered from GDB's last call into the reader), so call them only from GDB's
 * thread while GDB can read memory (a stopped process or a core file), as Python commands do.
 *
 * Staleness: GDB never tells a reader that an entry was unregistered or that the process is
 * gone. The reader's process model guards its entries (jitmap/process.h, the staleness of
 * images handed in; the reader forgets the entries the model drops):
 *   - an entry whose code overlaps a newer entry's is replaced by it (a JIT that reuses
 *     memory, a program run again);
 *   - jitmap_reader_invalidate(JITMAP_READER_RECHECK) makes every entry re-check, before its
 *     next use, that the first bytes of its code (and those of its live stackmap) are
 *     still what they were when the entry was first used; an entry whose bytes changed or
 *     cannot be read any more is dropped (its cached stackmap alone is dropped and re-read
 *     when only the stackmap header changed);
 *   - jitmap_reader_invalidate(JITMAP_READER_FORGET) drops every entry (the process exited:
 *     GDB dropped their objfiles too).
 * Guarantee: after a RECHECK, no entry is used whose sampled bytes differ from target memory.
 * Not guaranteed: an entry whose memory was freed but not reused, or reused with the very
 * same first bytes, stays usable (it then still describes what is there). Entries are shared
 * by all inferiors: with several live inferiors, FORGET on one exit drops them all.
 * jitmap.gdb calls RECHECK on every stop and new objfile, FORGET on exit.
 */
#ifndef JITMAP_READER_API_H
#define JITMAP_READER_API_H

#include <stddef.h>
#include <stdint.h>

#include <jitmap/jitmap.h>
#include <jitmap/process.h>

#ifdef __cplusplus
extern "C" {
#endif

#define JITMAP_READER_EXPORT __attribute__((visibility("default")))

/* The version of this API: grows when functions are added, changes meaning never.
 * 2: JITMAP_READER_CLAIM_UNNAMED (the new default), jitmap_reader_get_claim,
 *    JITMAP_READER_ENTRY_GDB_NAMES, jitmap_reader_stats.outermost.
 * 3: jitmap_reader_process.
 * 4: jitmap_reader_set_arch.
 */
#define JITMAP_READER_API_VERSION 5
JITMAP_READER_EXPORT int jitmap_reader_api_version(void);

/* Whether the reader is loaded: 1 between GDB's gdb_init_reader and destroy calls, else 0.
 * Every other call below returns 0, NULL or -ENODEV while it is not. */
JITMAP_READER_EXPORT int jitmap_reader_loaded(void);

/* -- Staleness -- */

enum {
	JITMAP_READER_RECHECK = 0, /* memory may have changed: re-check entries before use */
	JITMAP_READER_FORGET = 1,  /* the process is gone: drop every entry */
};
/* Returns 0, -EINVAL for an unknown `how`, -ENODEV when the reader is not loaded. */
JITMAP_READER_EXPORT int jitmap_reader_invalidate(int how);

/* -- Architecture -- */

/* Which architecture GDB debugs (a jitmap_arch; big_endian: its register bytes' order), as
 * the debugger's Python knows it (gdb.Architecture.name, jitmap_arch_from_name). GDB's
 * jit-reader API says neither: without this call the reader takes the host's, the one it
 * was built for (never an image's e_machine, which a JIT may get wrong: asking GDB for a
 * register its architecture does not map aborts GDB). Images of another architecture than
 * the reader's are left to GDB (not claimed, not unwound). Tell it before GDB reads the
 * first image: an image read earlier keeps the claim it got, since GDB cannot be given one
 * back (one of another architecture is then neither unwound nor evaluated by the reader).
 * Returns 0, -ENOTSUP for an architecture whose register roles jitmap lacks (the reader
 * keeps the previous ones), -ENODEV when no reader is loaded. */
JITMAP_READER_EXPORT int jitmap_reader_set_arch(int arch, int big_endian);

/* -- Claiming -- */

/* Which entries the reader gives GDB symbols for ("claims"); the others it declines, and GDB
 * reads them with its own ELF reader (symbols by name, DWARF, CFI), while the reader still
 * unwinds their frames that GDB's CFI does not cover and indexes their stackmaps. A claimed
 * entry's functions are found by address only (bt, x/i, info line), not by name: GDB 13
 * does not look up reader-made symbols by name (break NAME, info symbol, info functions).
 *   UNNAMED (default): claim only an entry whose functions GDB's own reader leaves unnamed
 *     (`?? ()`): it has function symbols, no .debug_info, and none of its function symbols
 *     is one GDB names: all are absolute (SHN_ABS: GDB skips absolute symbols when it looks
 *     a PC up) or in no executable section. Every other entry is declined: never worse than
 *     GDB alone.
 *   AUTO: claim every entry with function symbols and no .debug_info. Registration is then
 *     cheaper (GDB does not open the image with BFD: about half the time with 2000 LLVM
 *     objects, bench/README.md), at the price of names by address only.
 *   NEVER: decline every entry.
 * The environment variable JITMAP_READER_CLAIM=unnamed|auto|never sets it when the reader is
 * first loaded (another value is ignored, with a note: jitmap_reader_last_error). The mode
 * survives jit-reader-unload and jit-reader-load while this library stays loaded (the
 * Python side holds it), so that entries can be read again under a new mode. It applies to
 * entries read afterwards. Returns the previous mode, or -EINVAL/-ENODEV. */
enum {
	JITMAP_READER_CLAIM_AUTO = 0,
	JITMAP_READER_CLAIM_NEVER = 1,
	JITMAP_READER_CLAIM_UNNAMED = 2,
};
JITMAP_READER_EXPORT int jitmap_reader_set_claim(int mode);
/* The mode in force (JITMAP_READER_CLAIM_*), or -ENODEV. */
JITMAP_READER_EXPORT int jitmap_reader_get_claim(void);

/* -- Entries -- */

enum {
	JITMAP_READER_ENTRY_CLAIMED = 1 << 0,    /* symbols were given to GDB by the reader */
	JITMAP_READER_ENTRY_DEBUG_INFO = 1 << 1, /* the image has .debug_info */
	JITMAP_READER_ENTRY_STACKMAP = 1 << 2,   /* the image has .llvm_stackmaps */
	JITMAP_READER_ENTRY_CFI = 1 << 3,        /* the image has .eh_frame or .debug_frame */
	JITMAP_READER_ENTRY_GDB_NAMES = 1 << 4,  /* GDB's own ELF reader names some of its
						    functions (see Claiming) */
};

typedef struct jitmap_reader_entry {
	uint64_t serial;             /* unique for the life of the reader, in reading order */
	uint64_t code_start;         /* lowest code address */
	uint64_t code_end;           /* one past the highest */
	uint64_t stackmap_address;   /* sh_addr of .llvm_stackmaps (0 when none, or not loaded) */
	uint64_t stackmap_size;
	uint64_t eh_frame_address;   /* sh_addr of .eh_frame (0 when none) */
	uint64_t eh_frame_size;
	uint32_t num_functions;      /* function symbols */
	uint32_t flags;              /* JITMAP_READER_ENTRY_* */
	const jitmap_stackmap *stackmap; /* parsed, relocated; NULL when none or not parsed yet */
	const char *problem;         /* the last thing that went wrong with it, "" if nothing */
} jitmap_reader_entry;

/* The number of entries the reader holds now. */
JITMAP_READER_EXPORT size_t jitmap_reader_num_entries(void);

/* Entry `i` (0 <= i < jitmap_reader_num_entries(); in no particular order, which changes
 * when entries are dropped). With `parse` nonzero, the entry is first re-checked if memory may
 * have changed (see Staleness) and its stackmap read and parsed if that was not done yet.
 * Pointers in `*out` stay valid until the next call into the reader by GDB or through this
 * API that may drop entries (invalidate, an unwind, a read, a parse). Returns 0; -ENOENT past
 * the end, or when the re-check dropped the entry; -ENODEV. */
JITMAP_READER_EXPORT int jitmap_reader_entry_info(size_t i, int parse, jitmap_reader_entry *out);

/* The reader's process model (jitmap/process.h): the images GDB handed it. jitmap's Python
 * commands scan the process's JIT descriptors and loaded files into the same object, through
 * this library's copy of libjitmap, so that each stackmap is parsed once in a GDB session;
 * they set their own target (jitmap_process_set_target) while they call in. `serial` (unless
 * NULL) changes each time GDB loads the reader again: a process got with another serial is
 * gone. NULL (serial 0) when the reader is not loaded. */
JITMAP_READER_EXPORT jitmap_process *jitmap_reader_process(uint64_t *serial);

/* The index of every entry's stackmap, by absolute PC, after reading and parsing every
 * stackmap not parsed yet (entries that fail to parse are left out and say why in their
 * `problem`). Owned by the reader; valid until the next call that may drop entries (as
 * above). NULL when the reader is not loaded. */
JITMAP_READER_EXPORT jitmap_index *jitmap_reader_index(void);

/* The entry whose code holds `pc`: with `stackmap` not NULL its stackmap (parsed now if
 * needed; NULL when it has none or it does not parse; not read at all when `stackmap` is
 * NULL), and with `name` not NULL the function symbol at `pc` (NULL if none) and its range
 * [*start, *end) (when the pointers are not NULL). Returns 0, -ENOENT when no entry holds
 * `pc`, -ENODEV. With every pointer NULL it answers only whether a JIT entry GDB registered
 * holds `pc` (O(log n)): GDB's JIT machinery unwinds such a frame (the reader, or GDB's DWARF
 * unwinder from the entry's CFI), and no Python unwinder should take it. */
JITMAP_READER_EXPORT int jitmap_reader_lookup(uint64_t pc, const jitmap_stackmap **stackmap,
					      const char **name, uint64_t *start, uint64_t *end);

/* The start addresses of the functions named `name` in the reader's entries (symbols GDB
 * cannot look up by name when the reader claimed their entry: `break NAME`, `info symbol`
 * and `frame function NAME` do not see them), at most `max` of them in `starts` (which may
 * be NULL when max is 0), in no particular order. Returns how many there are in all. */
JITMAP_READER_EXPORT size_t jitmap_reader_find_function(const char *name, uint64_t *starts,
							size_t max);

/* The last problem the reader met (a declined entry, a frame it could not unwind), one
 * sentence, or "" when none; static storage, overwritten by the next problem. The same text
 * goes to stderr when the environment variable JITMAP_DEBUG is set. */
JITMAP_READER_EXPORT const char *jitmap_reader_last_error(void);

/* Counters since the reader was loaded. */
typedef struct jitmap_reader_stats {
	uint64_t reads;       /* read() calls from GDB */
	uint64_t claimed;     /* entries claimed */
	uint64_t declined;    /* entries kept but left to GDB's reader */
	uint64_t rejected;    /* images not kept (not ELF, no code, malformed) */
	uint64_t replaced;    /* entries replaced by an overlapping newer one */
	uint64_t dropped;     /* entries dropped as stale or forgotten */
	uint64_t unwinds;     /* frames unwound by the reader */
	uint64_t unwind_failures; /* frames in JIT code the reader could not unwind */
	uint64_t outermost;   /* frames whose CFI marks them outermost (not in `unwinds`) */
	uint64_t guesses;     /* of `unwinds`, steps no method proved (API version 5) */
} jitmap_reader_stats;
JITMAP_READER_EXPORT int jitmap_reader_get_stats(jitmap_reader_stats *out);

/* Whether the reader found the caller it gave GDB as PC `pc` and SP `sp` by a guess, in this
 * stop: a step no method proved (the frame-pointer chain through code whose start is
 * unknown). GDB then got the caller's PC, SP and frame pointer only, and shows them as facts;
 * jitmap's commands state no value of that frame or of any above it. 1 with `why` (`len`
 * bytes) saying which step and why, else 0. (API version 5.) */
JITMAP_READER_EXPORT int jitmap_reader_guess(uint64_t pc, uint64_t sp, char *why, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_READER_API_H */

/* gdb_jit.h (private, not installed): GDB's JIT interface as the debugger reads it from the
 * process (GDB manual, "JIT Interface"; gdb/jit.h). The one statement of the layout in
 * jitmap: libjitmap-producer writes it (producer/producer.c), libjitmap walks it in a
 * target of either byte order (targets/jitdesc.c; 64-bit targets, `p` = 8, so far).
 *
 *   struct jit_code_entry { next_entry; prev_entry; symfile_addr; uint64_t symfile_size; };
 *   struct jit_descriptor { uint32_t version; uint32_t action_flag; relevant_entry;
 *                           first_entry; };
 *
 * Pointers are the target's size; symfile_size is 64-bit everywhere, aligned to 8. */
#ifndef JITMAP_COMMON_GDB_JIT_H
#define JITMAP_COMMON_GDB_JIT_H

#include <stdint.h>

enum {
	JITMAP__JIT_NOACTION = 0,
	JITMAP__JIT_REGISTER = 1,
	JITMAP__JIT_UNREGISTER = 2,
};

#define JITMAP__JIT_VERSION 1

/* Offsets for a target with pointers of `p` bytes (4 or 8). */
#define JITMAP__JIT_DESC_ACTION 4
#define JITMAP__JIT_DESC_RELEVANT(p) 8
#define JITMAP__JIT_DESC_FIRST(p) (8 + (p))
#define JITMAP__JIT_DESC_SIZE(p) (8 + 2 * (p))
#define JITMAP__JIT_ENTRY_NEXT(p) 0
#define JITMAP__JIT_ENTRY_PREV(p) (p)
#define JITMAP__JIT_ENTRY_SYMFILE(p) (2 * (p))
#define JITMAP__JIT_ENTRY_SIZE_AT(p) ((p) == 8 ? 24 : 16)
#define JITMAP__JIT_ENTRY_SIZE(p) ((p) == 8 ? 32 : 24)

/* The host's own structs, for a producer in this process. */
struct jitmap__jit_code_entry {
	struct jitmap__jit_code_entry *next_entry;
	struct jitmap__jit_code_entry *prev_entry;
	const char *symfile_addr;
	uint64_t symfile_size;
};

struct jitmap__jit_descriptor {
	uint32_t version;
	uint32_t action_flag;
	struct jitmap__jit_code_entry *relevant_entry;
	struct jitmap__jit_code_entry *first_entry;
};

#define JITMAP__HOST_P ((int)sizeof(void *))
_Static_assert(__builtin_offsetof(struct jitmap__jit_descriptor, first_entry) ==
		       JITMAP__JIT_DESC_FIRST(JITMAP__HOST_P),
	       "jit_descriptor layout");
_Static_assert(__builtin_offsetof(struct jitmap__jit_code_entry, symfile_size) ==
		       JITMAP__JIT_ENTRY_SIZE_AT(JITMAP__HOST_P),
	       "jit_code_entry layout");
_Static_assert(sizeof(struct jitmap__jit_code_entry) == JITMAP__JIT_ENTRY_SIZE(JITMAP__HOST_P),
	       "jit_code_entry size");

#endif /* JITMAP_COMMON_GDB_JIT_H */

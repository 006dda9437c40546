/* core_builder.h: synthetic Linux core files for tests and fuzz seeds.
 *
 * A core is described as notes (laid out as the kernel writes them: 4-byte header words in the
 * core's byte order, name and descriptor padded to 4) and PT_LOAD segments; cb_emit writes
 * the ELF header and program headers through libelf (in the core's byte order) and the
 * contents after them, and returns the bytes. Raw notes (cb_note_raw) and the offsets that
 * cb_emit chose let tests break one field at a time.
 */
#ifndef JITMAP_TEST_CORE_BUILDER_H
#define JITMAP_TEST_CORE_BUILDER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "jitmap/jitmap.h"

#define CB_MAX_LOADS 16
#define CB_PRSTATUS_REG 112 /* pr_reg in the 64-bit elf_prstatus */

typedef struct cb_segment {
	uint64_t vaddr, memsz, filesz;
	const uint8_t *data; /* filesz bytes */
	unsigned flags;      /* p_flags: PF_R | PF_W unless a test changes it */
} cb_segment;

typedef struct core_builder {
	jitmap_byte_order order;
	unsigned machine, type, elf_class; /* e_machine, ET_CORE, ELFCLASS64 by default */
	uint8_t notes[65536];
	size_t notes_len;
	cb_segment loads[CB_MAX_LOADS];
	size_t nloads;
	/* Filled by cb_emit: where the program headers, the notes and each segment's bytes are. */
	uint64_t phoff, notes_off, load_off[CB_MAX_LOADS];
} core_builder;

void cb_init(core_builder *b, unsigned machine, jitmap_byte_order order);
/* Store `v` as a `size`-byte integer in the core's byte order. */
void cb_put(const core_builder *b, uint8_t *p, uint64_t v, size_t size);
/* A note with the given header words, then `name_bytes` of `name` and `desc_bytes` of `desc`,
 * each padded to 4 bytes. */
void cb_note_raw(core_builder *b, uint32_t namesz, uint32_t descsz, uint32_t type,
		 const char *name, size_t name_bytes, const void *desc, size_t desc_bytes);
/* A well-formed note named `name` (with its NUL). */
void cb_note(core_builder *b, uint32_t type, const char *name, const void *desc, size_t len);
/* NT_PRSTATUS: thread `tid` stopped by `sig`, pr_reg = `len` bytes at `regs` (then 8 bytes of
 * pr_fpvalid and padding). */
void cb_prstatus(core_builder *b, uint32_t tid, int sig, const uint8_t *regs, size_t len);
/* NT_AUXV of `n` (type, value) pairs, then AT_NULL. */
void cb_auxv(core_builder *b, const uint64_t *pairs, size_t n);
/* NT_FILE: `n` mappings {start, end, offset in pages} and their paths. */
void cb_file(core_builder *b, uint64_t page, size_t n, const uint64_t (*maps)[3],
	     const char *const *paths);
void cb_load(core_builder *b, uint64_t vaddr, uint64_t memsz, const uint8_t *data,
	     uint64_t filesz);
/* The core's bytes (malloc'd; *len set), or NULL when libelf fails. */
uint8_t *cb_emit(core_builder *b, size_t *len);

/* A core the kernel writes of a child of this test, into `dir`: the child goes there, lifts
 * its core limit and runs crash(arg), which must end it by a signal that dumps. The core's
 * path (malloc'd), and the child's PID in *pid (may be NULL); NULL when this machine's cores
 * go elsewhere (core_pattern a pipe or a path: the test skips) or none was written. */
char *cb_kernel_core(const char *dir, void (*crash)(void *), void *arg, pid_t *pid);

#endif /* JITMAP_TEST_CORE_BUILDER_H */

/* breakpad.h: Breakpad symbol files for JIT code, in a symbol store's layout.
 *
 * Breakpad's stack walker (minidump_stackwalk, and the pipelines built on it: Socorro,
 * Crashpad's servers, Electron's crash reporter) names and unwinds a frame only from the
 * symbol file of the module holding its PC, found in a symbol store as DIR/NAME/ID/NAME.sym:
 * NAME the base name of the module's file (its "debug file"), ID the debug identifier it
 * derives from the module's CodeView record (jitmap_breakpad_debug_id). JIT code has no file
 * and no dump_syms run; the minidump writer lists it as modules of its own (minidump.h), and
 * these calls write their symbol files from what jitmap knows of them:
 *   - FUNC records (a name and a size: a JIT object's symbol, a perf map line), PUBLIC
 *     records (a name without a size), and line records under their FUNC (a JIT object's
 *     DWARF lines);
 *   - STACK CFI INIT records from the rules jitmap's own unwinder proved (unwind.h,
 *     jitmap_unwind_rule: a JIT object's CFI row, a stackmap's frame size, a prologue's frame
 *     record). A rule holds for every visit of the same code at the same PC, so it may go to
 *     a store that serves every crash of that code; a frame jitmap only guessed gets no row,
 *     and Breakpad falls back to its own frame-pointer walk or stack scan and says so.
 *
 * The format (Breakpad's docs/symbol_files.md, and what its reader, basic_source_line_resolver.cc,
 * accepts): one record a line, fields split by single spaces, hexadecimal without 0x and in
 * lower case, every address relative to the module's base. A name keeps its spaces, and
 * loses what would end its line (control characters become spaces; leading and trailing
 * spaces go). A `|` stays, though `minidump_stackwalk -m` strips it (its field separator).
 *
 * Breakpad looks a caller frame's rows up not at its return address but just before it
 * (jitmap_breakpad_caller_pc), so a one-byte STACK CFI row there unwinds a caller: a
 * stackmap record's return address is enough. Frame 0 needs a row at its own PC.
 *
 * Not thread-safe: one thread at a time per jitmap_breakpad_sym. Writers of the same file in
 * several processes are serialized (jitmap_breakpad_sym_write).
 */
#ifndef JITMAP_BREAKPAD_H
#define JITMAP_BREAKPAD_H

#include <stddef.h>
#include <stdint.h>

#include "jitmap/arch.h"
#include "jitmap/types.h"
#include "jitmap/unwind.h"

#ifdef __cplusplus
extern "C" {
#endif

/* -- Identifiers -- */

/* Breakpad's debug identifier of a module whose CodeView record is 'BpEL' with these `len`
 * bytes (its build ID, or jitmap_breakpad_code_id's hash): the first 16 bytes, zero-padded,
 * read as a GUID (a little-endian u32 and two u16, then 8 bytes) and printed as Breakpad's
 * processor prints it, b3b2b1b0 b5b4 b7b6 b8..b15 in upper-case hex, then the age, always
 * "0" for ELF: 33 characters and a NUL in `out`. The store's folder and the MODULE record
 * must carry exactly this, or the walker never finds the file. Returns 0; -EINVAL for NULL
 * arguments or `len` 0 (`out` is then "" when not NULL). */
JITMAP_API int jitmap_breakpad_debug_id(const uint8_t *id, size_t len, char out[34]);

/* A stable 16-byte identifier for code without a build ID: the 128-bit FNV-1a hash of its
 * `len` bytes (offset basis 0x6c62272e07bb014262b821756295c58d, prime 2^88 + 0x13b), the
 * most significant byte first in out[0]. It depends on the bytes alone, so the same code
 * gives the same identifier in every process and run (and one symbol file in a store), and
 * code that changed gives another. Breakpad's own fallback (a XOR of the first 4096 bytes of
 * .text, file_id.cc) is weaker: code that differs only past 4 KiB, or in 16-byte blocks that
 * cancel, would share a file. `code` may be NULL when `len` is 0. */
JITMAP_API void jitmap_breakpad_code_id(const void *code, size_t len, uint8_t out[16]);

/* Where Breakpad's walker looks up the symbols and STACK CFI rows of a caller frame whose
 * return address is `ra`: ra - 1 on x86-64 (stackwalker_amd64.cc), ra - 4 on AArch64
 * (stackwalker_arm64.cc: the call instruction). A row for that frame must cover this address;
 * seen with minidump_stackwalk, a row at ra - 1 on AArch64 is missed and the walk ends there.
 * Returns 0 with *pc set; -ENOTSUP for another architecture; -EINVAL for a NULL `pc` or an
 * `ra` below the offset. */
JITMAP_API int jitmap_breakpad_caller_pc(jitmap_arch arch, uint64_t ra, uint64_t *pc);

/* -- A module's symbol file -- */

typedef struct jitmap_breakpad_sym jitmap_breakpad_sym;

/* An empty symbol file for the module `name` (its path or name; its base name, after the
 * last '/' or '\\' as Breakpad's PathnameStripper takes it, names the file and the MODULE
 * record) of architecture `arch`, identified by `id` (`id_len` bytes, 1 to 64: its build ID
 * or code hash, the bytes of its CodeView record), loaded at `base`. Returns the object
 * (jitmap_breakpad_sym_free frees it), or NULL with errno: EINVAL for a NULL `name` or `id`,
 * an `id_len` out of range, or a base name that is empty, "." or "..", or holds a control
 * character (it is a folder's name in the store); ENOTSUP for an architecture other than
 * x86-64 and AArch64 (the only ones whose register names Breakpad's CFI walker and this
 * writer agree on); ENOMEM. */
JITMAP_API jitmap_breakpad_sym *jitmap_breakpad_sym_new(jitmap_arch arch, const char *name,
							const uint8_t *id, size_t id_len,
							uint64_t base);

/* Each of the calls below takes absolute addresses (base + offset) and returns 0, or
 * -EINVAL: a NULL argument, an address below the base, a range that wraps or is empty where
 * a size is needed, an empty name; or -ENOMEM. A later record over the same addresses wins
 * over an earlier one (as a perf map's later line), resolved when the file is written. */

/* A function: FUNC over [addr, addr + size), or with `size` 0 a PUBLIC record at `addr`
 * (Breakpad extends it to the next symbol). */
JITMAP_API int jitmap_breakpad_sym_func(jitmap_breakpad_sym *s, uint64_t addr, uint64_t size,
					const char *name);
/* A line record: [addr, addr + size) is line `line` of `file` (size > 0). Written under the
 * FUNC that holds `addr`, clipped to its end; left out when no FUNC holds it (Breakpad reads
 * lines only under a FUNC). */
JITMAP_API int jitmap_breakpad_sym_line(jitmap_breakpad_sym *s, uint64_t addr, uint64_t size,
					const char *file, unsigned line);
/* A STACK CFI INIT record: over [addr, addr + size) (size > 0), the caller is found by
 * `rule`, written as Breakpad's postfix rules: `.cfa: REG OFF +`, `.ra:` and one `REG:` for
 * each saved register, each as the rule places it: the word at CFA + off (`.cfa OFF + ^`),
 * the value CFA + off (`.cfa OFF +`), or a register of this frame (`REG`). Register names
 * are Breakpad's: x86-64 `$rax $rdx $rcx $rbx $rsi $rdi $rbp $rsp $r8`..`$r15 $rip` for
 * DWARF 0-16; AArch64 `x0`..`x30 sp pc` (no `$`) for DWARF 0-32. Only rules jitmap proved
 * belong here, never a guess: -EINVAL for a NULL rule, a register without a name here, a
 * `where` out of range, more than JITMAP_UNWIND_RULE_MAX_SAVED saved registers, or one
 * register saved twice. (Breakpad drops a row whose `.cfa` or `.ra` names a register it does
 * not know, and the walk falls back to guessing; a rule is written whole or not at all.) */
JITMAP_API int jitmap_breakpad_sym_cfi(jitmap_breakpad_sym *s, uint64_t addr, uint64_t size,
				       const jitmap_unwind_rule *rule);

/* Write the symbol file to DIR/NAME/ID/NAME.sym (a NAME ending in ".pdb" loses it, as
 * Breakpad's SimpleSymbolSupplier looks it up), making the folders that are missing
 * (0755 before the umask), and put its path in `path` (may be NULL; `path_len` bytes).
 *
 * A file already there for the same module (its MODULE record the same) is merged: the same
 * code crashing at other PCs in other dumps adds rows, so the records of that file that this
 * object's do not overlap are kept (its FUNC with its line records, PUBLIC, STACK CFI INIT
 * with the STACK CFI rows after it); where an old record overlaps a new one (a PUBLIC counts
 * as its one address), the new one wins. Never two overlapping FUNC or STACK CFI INIT
 * ranges, nor two overlapping lines, are written (Breakpad would keep the first silently).
 * Its records jitmap does not write (INLINE, INLINE_ORIGIN, STACK WIN) and lines it cannot
 * read are left out. Records are written by kind, each sorted by address: MODULE, INFO
 * CODE_ID (the whole identifier in upper-case hex), FILE (numbered by name), FUNC with its
 * lines, PUBLIC, STACK CFI.
 *
 * The new file replaces the old whole (a temporary file in the same folder, renamed over it):
 * a reader sees the old or the new, never a part. Writers in other processes are serialized
 * by a lock on the ID folder (flock), waited for at most 5 seconds; past that this one writes
 * anyway (the file stays whole; the other writer's new rows may be lost).
 *
 * Returns 0; or a negative errno with `err` (may be NULL) filled: -EINVAL for NULL `s` or
 * `dir`; -ENAMETOOLONG when the path does not fit `path_len` or PATH_MAX (nothing written);
 * -EEXIST when the file there is not empty and not this module's (its first line is not this
 * MODULE record), or not a regular file; -EFBIG when it is larger than 64 MiB or holds more
 * than 2^21 lines (in both cases it is left alone); -ENOMEM; the errno of the failing mkdir,
 * open, read, write or rename. */
JITMAP_API int jitmap_breakpad_sym_write(jitmap_breakpad_sym *s, const char *dir, char *path,
					 size_t path_len, jitmap_error *err);

/* Free `s` and everything it holds; NULL is accepted. */
JITMAP_API void jitmap_breakpad_sym_free(jitmap_breakpad_sym *s);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_BREAKPAD_H */

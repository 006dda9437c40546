/* llvm_object.h: the stackmap section of a Mach-O or COFF file, read for jitmap-dump through
 * LLVM's C object API (llvm-c/Object.h).
 *
 * libjitmap reads ELF with libelf and stays free of LLVM; jitmap-dump alone reads the formats
 * LLVM also writes stackmaps into. libLLVM is opened with dlopen at the first such file, not
 * linked: loading it costs about 70 ms a run, which every ELF file and raw section would pay.
 */
#ifndef JITMAP_TOOLS_LLVM_OBJECT_H
#define JITMAP_TOOLS_LLVM_OBJECT_H

#include <stddef.h>

#include <jitmap/jitmap.h>

enum llvm_object_format {
	LLVM_OBJECT_NONE,  /* none of these: ELF, a raw section, anything else */
	LLVM_OBJECT_MACHO, /* Mach-O, 32 or 64 bits, or universal */
	LLVM_OBJECT_COFF,  /* a COFF object or a PE image */
};

/* What reads Mach-O and COFF, for --version: "libLLVM-14.so.1 (dlopen)", or "not built in". */
const char *llvm_object_support(void);

/* Which of these formats the first `len` bytes of a file start like (magic numbers only). */
enum llvm_object_format llvm_object_format(const unsigned char *data, size_t len);

/* Read the file's stackmap section (__LLVM_STACKMAPS,__llvm_stackmaps or .llvm_stackmaps):
 * parsed with the file's architecture, each Function Address field relocated where an
 * object's relocation names a symbol, functions named from the symbol table (Mach-O's leading
 * underscore dropped). `kind` gets what the file is ("Mach-O relocatable object, aarch64").
 *
 * Returns 0 with *sm set (NULL when the file has no stackmap section), or -1 with `why` filled
 * (LLVM cannot be loaded or rejects the file, a universal binary, or the section does not
 * parse: then `err` holds the parser's error and its offset in the section). */
int llvm_object_read(const char *path, const unsigned char *data, size_t len, jitmap_stackmap **sm,
		     char *kind, size_t kind_len, jitmap_error *err);

#endif

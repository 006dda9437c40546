/* dump_readobj.h: jitmap-dump's llvm-readobj format (dump_readobj.c). */
#ifndef JITMAP_TOOLS_DUMP_READOBJ_H
#define JITMAP_TOOLS_DUMP_READOBJ_H

#include <stdio.h>

#include <jitmap/jitmap.h>

/* Every blob of `sm` (none when NULL) as llvm-readobj prints one, to `out`. llvm-readobj
 * knows LLVM's layout alone: a blob in another (ykllvm's) is left out, and said so on standard
 * error, naming `path`. */
void dump_readobj(FILE *out, const char *path, const jitmap_stackmap *sm);

#endif

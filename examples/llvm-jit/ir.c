/* ir.c: LLVM setup and IR handling shared by both engines: target initialisation, parsing
 * and verifying a program, and the table of the functions it defines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Target.h>

#include "demo.h"

void demo_llvm_init(void)
{
    /* Both MCJIT and ORC emit machine code through the native target's AsmPrinter (that is
     * where the stackmap section is written). */
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
    LLVMInitializeNativeAsmParser();
}

LLVMModuleRef demo_parse_ir(LLVMContextRef ctx, const char *name, const char *text, size_t size)
{
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(text, size, name);
    LLVMModuleRef mod = NULL;
    char *msg = NULL;

    /* Takes ownership of buf, whether it succeeds or not. */
    if (LLVMParseIRInContext(ctx, buf, &mod, &msg)) {
        fprintf(stderr, "jitmap-demo: %s: cannot parse IR: %s\n", name, msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return NULL;
    }
    /* A malformed statepoint or patchpoint would otherwise reach codegen, which reports
     * such things by crashing. */
    if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
        fprintf(stderr, "jitmap-demo: %s: invalid IR: %s\n", name, msg ? msg : "?");
        LLVMDisposeMessage(msg);
        LLVMDisposeModule(mod);
        return NULL;
    }
    LLVMDisposeMessage(msg);
    return mod;
}

int demo_collect_functions(LLVMModuleRef mod, struct demo_symbols *syms)
{
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
        if (LLVMIsDeclaration(fn))
            continue;
        size_t len = 0;
        const char *name = LLVMGetValueName2(fn, &len);
        struct demo_symbol *v = realloc(syms->v, (syms->n + 1) * sizeof *v);
        if (!v)
            return -1;
        syms->v = v;
        v[syms->n].name = strndup(name, len);
        v[syms->n].addr = 0;
        if (!v[syms->n].name)
            return -1;
        syms->n++;
    }
    return 0;
}

uint64_t demo_symbol_addr(const struct demo_symbols *syms, const char *name)
{
    for (size_t i = 0; i < syms->n; i++)
        if (strcmp(syms->v[i].name, name) == 0)
            return syms->v[i].addr;
    return 0;
}

const char *demo_symbol_name(const struct demo_symbols *syms, uint64_t addr)
{
    for (size_t i = 0; i < syms->n; i++)
        if (syms->v[i].addr == addr)
            return syms->v[i].name;
    return NULL;
}

void demo_symbols_free(struct demo_symbols *syms)
{
    for (size_t i = 0; i < syms->n; i++)
        free(syms->v[i].name);
    free(syms->v);
    syms->v = NULL;
    syms->n = 0;
}

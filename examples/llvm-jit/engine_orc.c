/* engine_orc.c: the --orc engine: ORC LLJIT with RuntimeDyld (not JITLink) as its object
 * linking layer and LLVM's GDB registration listener attached to that layer.
 *
 * Why RuntimeDyld: it loads every SHF_ALLOC section, .llvm_stackmaps included, through the
 * section memory manager, and the GDB listener registers each object after it has been
 * relocated. JITLink would drop the unreferenced stackmap section unless a plugin kept it.
 * The C API of LLVM 14 cannot give that layer a custom memory manager, so the section's
 * address is learnt from the object registered with GDB (see demo_scan_gdb_jit). */
#include <stdio.h>
#include <stdlib.h>

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/OrcEE.h>

#include "demo.h"

static LLVMOrcLLJITRef jit;

static int report(const char *what, LLVMErrorRef err)
{
    char *msg = LLVMGetErrorMessage(err); /* consumes err */
    fprintf(stderr, "jitmap-demo: orc: %s: %s\n", what, msg);
    LLVMDisposeErrorMessage(msg);
    return -1;
}

static LLVMOrcObjectLayerRef create_object_layer(void *ctx, LLVMOrcExecutionSessionRef es,
                                                 const char *triple)
{
    (void)ctx;
    (void)triple;
    LLVMOrcObjectLayerRef layer = LLVMOrcCreateRTDyldObjectLinkingLayerWithSectionMemoryManager(es);
    /* The listener is a process-wide singleton: nothing to free. */
    LLVMOrcRTDyldObjectLinkingLayerRegisterJITEventListener(layer, LLVMCreateGDBRegistrationListener());
    return layer;
}

static int create_jit(void)
{
    LLVMErrorRef err;

    LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetObjectLinkingLayerCreator(builder, create_object_layer, NULL);
    if ((err = LLVMOrcCreateLLJIT(&jit, builder))) /* takes the builder, even on failure */
        return report("cannot create LLJIT", err);

    /* Resolve jitmap_demo_safepoint, printf, ... from the running process. */
    LLVMOrcDefinitionGeneratorRef gen;
    if ((err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
             &gen, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL)))
        return report("cannot search the process for symbols", err);
    LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(jit), gen);
    return 0;
}

/* Parse one program into its own module and add it to the JIT (not compiled yet). The
 * functions it defines are appended to syms. */
static int add_module(const char *name, const char *text, size_t size, struct demo_symbols *syms)
{
    LLVMErrorRef err;
    LLVMOrcThreadSafeContextRef tsctx = LLVMOrcCreateNewThreadSafeContext();
    LLVMModuleRef mod = demo_parse_ir(LLVMOrcThreadSafeContextGetContext(tsctx), name, text, size);
    if (!mod) {
        LLVMOrcDisposeThreadSafeContext(tsctx);
        return -1;
    }
    /* The programs carry no triple or data layout: they are the JIT's. */
    LLVMSetTarget(mod, LLVMOrcLLJITGetTripleString(jit));
    LLVMSetDataLayout(mod, LLVMOrcLLJITGetDataLayoutStr(jit));
    if (demo_collect_functions(mod, syms) != 0) {
        LLVMDisposeModule(mod);
        LLVMOrcDisposeThreadSafeContext(tsctx);
        return -1;
    }

    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsctx);
    LLVMOrcDisposeThreadSafeContext(tsctx); /* the module keeps its own reference */
    if ((err = LLVMOrcLLJITAddLLVMIRModule(jit, LLVMOrcLLJITGetMainJITDylib(jit), tsm)))
        return report("cannot add the module", err); /* tsm was consumed */
    return 0;
}

/* Look up every function of syms from index `from` on, in order. The first lookup of a
 * module's function compiles, links and registers that whole module: one object, one GDB
 * entry, per module. */
static int lookup_all(struct demo_symbols *syms, size_t from)
{
    LLVMErrorRef err;
    for (size_t i = from; i < syms->n; i++) {
        LLVMOrcExecutorAddress addr = 0;
        if ((err = LLVMOrcLLJITLookup(jit, &addr, syms->v[i].name)))
            return report(syms->v[i].name, err);
        syms->v[i].addr = addr;
    }
    return 0;
}

int demo_orc_compile(const char *name, const char *text, size_t size, struct demo_symbols *syms)
{
    if (create_jit() || add_module(name, text, size, syms))
        return -1;
    return lookup_all(syms, 0);
}

int demo_orc_compile_many(size_t n, char *(*make)(size_t i, size_t *size, void *arg), void *arg,
                          struct demo_symbols *syms)
{
    if (create_jit())
        return -1;
    for (size_t i = 0; i < n; i++) {
        size_t size = 0;
        char *text = make(i, &size, arg);
        char name[32];
        snprintf(name, sizeof name, "object%zu", i);
        int rc = text ? add_module(name, text, size, syms) : -1;
        free(text);
        if (rc)
            return -1;
    }
    return lookup_all(syms, 0);
}

int demo_orc_add(const char *name, const char *text, size_t size, struct demo_symbols *syms)
{
    const size_t from = syms->n;
    if (!jit || add_module(name, text, size, syms))
        return -1;
    return lookup_all(syms, from);
}

void demo_orc_shutdown(void)
{
    if (!jit)
        return;
    /* Frees the code and unregisters its objects from GDB. */
    LLVMErrorRef err = LLVMOrcDisposeLLJIT(jit);
    if (err)
        report("cannot dispose LLJIT", err);
    jit = NULL;
}

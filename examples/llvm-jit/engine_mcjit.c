/* engine_mcjit.c: the --mcjit engine: MCJIT with a memory manager of our own
 * (LLVMCreateSimpleMCJITMemoryManager), whose data-section callback is told each section's
 * name and so sees where .llvm_stackmaps is placed.
 *
 * MCJIT attaches LLVM's GDB registration listener itself, and calls it when an object is
 * loaded, i.e. before relocations are applied: while GDB reads the entry, the stackmap's
 * function addresses in JIT memory are still 0. They are correct by the time any JIT code
 * runs (LLVMGetFunctionAddress finalizes the module). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <llvm-c/Core.h>
#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/Target.h>

#include "demo.h"

/* One mapping per section: wasteful, but each gets the page protection it needs. */
struct block {
    void *addr;
    size_t size;
    int final_prot;
};

struct memory_manager {
    struct block *blocks;
    size_t nblocks;
    uint64_t stackmaps_addr, stackmaps_size;
};

static struct memory_manager mm;
static LLVMContextRef context;
static LLVMExecutionEngineRef engine;

static uint8_t *allocate(struct memory_manager *m, uintptr_t size, unsigned align, int final_prot)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (align > page) {
        fprintf(stderr, "jitmap-demo: mcjit: alignment %u exceeds a page\n", align);
        return NULL;
    }
    size_t len = (size + page - 1) / page * page;
    if (len == 0)
        len = page;
    struct block *b = realloc(m->blocks, (m->nblocks + 1) * sizeof *b);
    if (!b)
        return NULL;
    m->blocks = b;
    /* RuntimeDyld copies the section in and relocates it before finalize: writable first. */
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    b[m->nblocks++] = (struct block){p, len, final_prot};
    return p;
}

static uint8_t *allocate_code(void *opaque, uintptr_t size, unsigned align, unsigned id,
                              const char *name)
{
    (void)id;
    (void)name;
    return allocate(opaque, size, align, PROT_READ | PROT_EXEC);
}

static uint8_t *allocate_data(void *opaque, uintptr_t size, unsigned align, unsigned id,
                              const char *name, LLVMBool read_only)
{
    (void)id;
    struct memory_manager *m = opaque;
    uint8_t *p = allocate(m, size, align, read_only ? PROT_READ : PROT_READ | PROT_WRITE);
    if (p && name && strcmp(name, ".llvm_stackmaps") == 0) {
        m->stackmaps_addr = (uint64_t)(uintptr_t)p;
        m->stackmaps_size = size;
    }
    return p;
}

static LLVMBool finalize(void *opaque, char **err)
{
    struct memory_manager *m = opaque;
    for (size_t i = 0; i < m->nblocks; i++) {
        struct block *b = &m->blocks[i];
        if (b->final_prot & PROT_EXEC)
            __builtin___clear_cache((char *)b->addr, (char *)b->addr + b->size);
        if (mprotect(b->addr, b->size, b->final_prot) != 0) {
            *err = strdup("mprotect failed"); /* LLVM frees it */
            return 1;
        }
    }
    return 0;
}

static void destroy(void *opaque)
{
    struct memory_manager *m = opaque;
    for (size_t i = 0; i < m->nblocks; i++)
        munmap(m->blocks[i].addr, m->blocks[i].size);
    free(m->blocks);
    m->blocks = NULL;
    m->nblocks = 0;
}

int demo_mcjit_compile(const char *name, const char *text, size_t size, struct demo_symbols *syms)
{
    LLVMLinkInMCJIT();

    /* The engine will own the module, which lives in this context: both last until shutdown. */
    context = LLVMContextCreate();
    LLVMModuleRef mod = demo_parse_ir(context, name, text, size);
    if (!mod)
        return -1;
    char *triple = LLVMGetDefaultTargetTriple();
    LLVMSetTarget(mod, triple);
    LLVMDisposeMessage(triple);
    if (demo_collect_functions(mod, syms) != 0)
        return -1;

    struct LLVMMCJITCompilerOptions opts;
    LLVMInitializeMCJITCompilerOptions(&opts, sizeof opts);
    /* The C API's default is -O0 (FastISel); ORC's LLJIT compiles at -O2. Use the same. */
    opts.OptLevel = 2;
    opts.MCJMM = LLVMCreateSimpleMCJITMemoryManager(&mm, allocate_code, allocate_data, finalize,
                                                    destroy);
    char *err = NULL;
    if (LLVMCreateMCJITCompilerForModule(&engine, mod, &opts, sizeof opts, &err)) {
        fprintf(stderr, "jitmap-demo: mcjit: cannot create the engine: %s\n", err ? err : "?");
        LLVMDisposeMessage(err);
        return -1;
    }

    /* The first call compiles, loads (registering with GDB), relocates and finalizes. */
    for (size_t i = 0; i < syms->n; i++) {
        syms->v[i].addr = LLVMGetFunctionAddress(engine, syms->v[i].name);
        if (!syms->v[i].addr) {
            fprintf(stderr, "jitmap-demo: mcjit: no address for %s\n", syms->v[i].name);
            return -1;
        }
    }
    if (mm.stackmaps_addr)
        demo_add_stackmap_section(mm.stackmaps_addr, mm.stackmaps_size, DEMO_VIA_MEMORY_MANAGER);
    return 0;
}

void demo_mcjit_shutdown(void)
{
    /* Frees the module, unregisters from GDB and calls destroy() on our memory manager. */
    if (engine)
        LLVMDisposeExecutionEngine(engine);
    if (context)
        LLVMContextDispose(context);
    engine = NULL;
    context = NULL;
}

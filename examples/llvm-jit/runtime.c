/* runtime.c: the runtime that JIT code calls, and its self-checks.
 *
 * - jitmap_demo_safepoint(id): where a debugger breaks. It prints where it was called from
 *   and which stackmap record that return address belongs to (found by reading the live,
 *   relocated section in JIT memory), and can abort() for core-dump tests.
 * - jitmap_demo_safepoint_anyreg: the target of anyregcc patchpoints, which must preserve
 *   every register; assembly, with CFI for every register it saves so that a debugger can
 *   recover the caller's values from it.
 * - The stackmap sections: learnt from the MCJIT memory manager or from the objects LLVM
 *   registered with GDB (__jit_debug_descriptor), then checked against the JIT's symbols.
 *
 * The stackmap reading here is deliberately minimal and independent of libjitmap: this
 * program is the source of truth that jitmap is tested against. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demo.h"

/* -- Stackmap sections (v3, host byte order: the JIT emits for the host) -- */

/* One per JIT object: one for the programs, one per module with --objects. */
struct section {
    uint64_t addr, size;
    unsigned via;
};
static struct section *sections;
static size_t nsections, sections_cap;
static const struct demo_symbols *known_symbols;

void demo_add_stackmap_section(uint64_t addr, uint64_t size, unsigned via)
{
    for (size_t i = 0; i < nsections; i++) {
        if (sections[i].addr == addr) {
            sections[i].via |= via;
            return;
        }
    }
    if (nsections == sections_cap) {
        size_t cap = sections_cap ? 2 * sections_cap : 16;
        struct section *v = realloc(sections, cap * sizeof *v);
        if (!v)
            return; /* the checks then report the section as missing */
        sections = v;
        sections_cap = cap;
    }
    sections[nsections++] = (struct section){addr, size, via};
}

static uint16_t rd16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

struct record {
    uint64_t id;
    uint64_t pc; /* function address + instruction offset */
    uint64_t fn_addr;
    uint16_t nlocations, nliveouts;
};

struct header {
    uint8_t version;
    uint32_t nfunctions, nconstants, nrecords;
};

/* Reads the header of the first blob (one module, one blob). */
static int read_header(const uint8_t *p, uint64_t size, struct header *h)
{
    if (size < 16)
        return -1;
    h->version = p[0];
    h->nfunctions = rd32(p + 4);
    h->nconstants = rd32(p + 8);
    h->nrecords = rd32(p + 12);
    if (h->version != 3 || 16 + 24 * (uint64_t)h->nfunctions + 8 * (uint64_t)h->nconstants > size)
        return -1;
    return 0;
}

/* Calls visit(record) for each record; stops when it returns nonzero. Returns -1 when the
 * section is malformed, else 0. */
static int walk_records(const uint8_t *p, uint64_t size,
                        int (*visit)(const struct record *, void *), void *arg)
{
    struct header h;
    if (read_header(p, size, &h) != 0)
        return -1;
    uint64_t off = 16 + 24 * (uint64_t)h.nfunctions + 8 * (uint64_t)h.nconstants;
    uint64_t seen = 0;
    for (uint32_t f = 0; f < h.nfunctions; f++) {
        const uint8_t *fn = p + 16 + 24 * (uint64_t)f;
        uint64_t fn_addr = rd64(fn), count = rd64(fn + 16);
        for (uint64_t r = 0; r < count; r++, seen++) {
            if (seen >= h.nrecords || off + 16 > size)
                return -1;
            struct record rec = {rd64(p + off), fn_addr + rd32(p + off + 8), fn_addr,
                                 rd16(p + off + 14), 0};
            uint64_t a = (off + 16 + 12 * (uint64_t)rec.nlocations + 7) & ~(uint64_t)7;
            if (a + 4 > size)
                return -1;
            rec.nliveouts = rd16(p + a + 2);
            off = (a + 4 + 4 * (uint64_t)rec.nliveouts + 7) & ~(uint64_t)7;
            if (off > size)
                return -1;
            if (visit(&rec, arg))
                return 0;
        }
    }
    return seen == h.nrecords ? 0 : -1;
}

struct find {
    uint64_t id, ret;
    int found;
    struct record best;
};

static int visit_find(const struct record *rec, void *arg)
{
    struct find *f = arg;
    /* The record whose PC is the closest at or before the return address: a stackmap's or
     * statepoint's PC is the return address itself, a patchpoint's is the start of the
     * patchable bytes that hold the call. */
    if (rec->id == f->id && rec->pc <= f->ret && (!f->found || rec->pc > f->best.pc)) {
        f->best = *rec;
        f->found = 1;
    }
    return 0;
}

/* -- The safepoint and its anyregcc trampoline -- */

int64_t jitmap_demo_anyreg_id;
/* Set by the trampoline to its own return address (the JIT code's), read once. */
__attribute__((visibility("hidden"))) volatile uint64_t jitmap_demo_trampoline_ret;

static unsigned abort_at;
static unsigned calls;
static unsigned problems;
static unsigned hold_seconds; /* --threads: each thread's first call holds */
static unsigned held;
static __thread unsigned thread_calls;

void demo_runtime_configure(unsigned at)
{
    abort_at = at;
}

static unsigned pause_at, pause_seconds;
volatile int jitmap_demo_resume;

void demo_runtime_pause(unsigned at, unsigned seconds)
{
    pause_at = at;
    pause_seconds = seconds;
}

void demo_runtime_hold(unsigned seconds)
{
    hold_seconds = seconds;
}

unsigned demo_runtime_held(void)
{
    return __atomic_load_n(&held, __ATOMIC_SEQ_CST);
}

unsigned demo_safepoint_problems(void)
{
    return problems;
}

/* Not inlined nor cloned (gcc): the safepoint must stay one real function that JIT code calls
 * by name and where users break. clang has no noclone and does not clone exported functions. */
#if defined(__clang__)
#define DEMO_NOCLONE
#else
#define DEMO_NOCLONE noclone
#endif
#ifdef JITMAP_DEMO_VARIANT
/* jitmap-demo-jit-variant (CMakeLists.txt): this code moves the safepoint and what follows it,
 * and the safepoint's larger frame changes its CFI, so that this build's symbols and unwinding
 * information are wrong for jitmap-demo-jit's code at the same addresses. */
__attribute__((noinline, used)) uint64_t jitmap_demo_variant_filler(uint64_t x)
{
    volatile uint64_t acc[16] = {0};
    for (unsigned i = 0; i < 64; i++)
        acc[i % 16] += (x ^ i) * 0x9e3779b97f4a7c15u + acc[(i + 7) % 16];
    return acc[3] ^ acc[11];
}
#endif

__attribute__((noinline, DEMO_NOCLONE)) void jitmap_demo_safepoint(int64_t id)
{
#ifdef JITMAP_DEMO_VARIANT
    uint64_t variant_pad[24];
    variant_pad[0] = (uint64_t)id;
    __asm__ volatile("" : : "r"(variant_pad) : "memory"); /* kept, with its frame */
#endif
    uint64_t ret = jitmap_demo_trampoline_ret;
    jitmap_demo_trampoline_ret = 0;
    if (!ret)
        ret = (uint64_t)(uintptr_t)__builtin_return_address(0);
    unsigned call = __atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
    const unsigned in_thread = ++thread_calls;

    struct find f = {.id = (uint64_t)id, .ret = ret};
    for (size_t i = 0; i < nsections && !f.found; i++)
        walk_records((const uint8_t *)(uintptr_t)sections[i].addr, sections[i].size, visit_find, &f);
    if (f.found) {
        const char *fn = known_symbols ? demo_symbol_name(known_symbols, f.best.fn_addr) : NULL;
        printf("jitmap-demo: safepoint id=%" PRId64 " call=%u ret=0x%" PRIx64
               " record-pc=0x%" PRIx64 " delta=%" PRIu64 " function=%s\n",
               id, call, ret, f.best.pc, ret - f.best.pc, fn ? fn : "?");
    } else {
        printf("jitmap-demo: safepoint id=%" PRId64 " call=%u ret=0x%" PRIx64 " record=none\n",
               id, call, ret);
        __atomic_add_fetch(&problems, 1, __ATOMIC_SEQ_CST);
    }
    if (hold_seconds && in_thread == 1) {
        /* --threads: this thread's JIT frames stay on its stack until jitmap_demo_resume is
         * set, or the time is up (the main thread aborts meanwhile for --abort). */
        printf("jitmap-demo: holding tid=%ld at safepoint id=%" PRId64 "\n", (long)gettid(), id);
        __atomic_add_fetch(&held, 1, __ATOMIC_SEQ_CST);
        for (unsigned ms = 0; !jitmap_demo_resume && ms < hold_seconds * 1000u; ms += 10)
            usleep(10000);
    }

    if (pause_at && call == pause_at) {
        /* For `gdb -p`: the JIT frames stay on the stack until a debugger sets
         * jitmap_demo_resume, or the time is up. */
        printf("jitmap-demo: paused pid=%ld at safepoint id=%" PRId64 " call=%u\n", (long)getpid(),
               id, call);
        fflush(stdout);
        for (unsigned ms = 0; !jitmap_demo_resume && ms < pause_seconds * 1000u; ms += 10)
            usleep(10000);
        printf("jitmap-demo: resumed%s\n", jitmap_demo_resume ? "" : " (timeout)");
    }
    if (abort_at && call == abort_at) {
        printf("jitmap-demo: aborting at safepoint id=%" PRId64 " call=%u\n", id, call);
        fflush(stdout);
        abort();
    }
    /* Keep the call (and the breakpoint site) even if the compiler thought it pure. */
    __asm__ volatile("" ::: "memory");
}

/* The anyregcc callee contract: every register except r11 (the patchpoint's scratch) and
 * rflags survives the call. Save all caller-saved GPRs and the x87/SSE state, with a CFI
 * rule for each GPR, then make an ordinary C call. AVX upper halves are not saved: the
 * programs keep no vectors live across a patchpoint. */
__asm__(
    "    .text\n"
    "    .globl jitmap_demo_safepoint_anyreg\n"
    "    .type jitmap_demo_safepoint_anyreg, @function\n"
    "jitmap_demo_safepoint_anyreg:\n"
    "    .cfi_startproc\n"
    "    pushq %rbp\n"
    "    .cfi_def_cfa_offset 16\n"
    "    .cfi_offset %rbp, -16\n"
    "    movq %rsp, %rbp\n"
    "    .cfi_def_cfa_register %rbp\n"
    "    pushq %rax\n"
    "    .cfi_offset %rax, -24\n"
    "    pushq %rcx\n"
    "    .cfi_offset %rcx, -32\n"
    "    pushq %rdx\n"
    "    .cfi_offset %rdx, -40\n"
    "    pushq %rsi\n"
    "    .cfi_offset %rsi, -48\n"
    "    pushq %rdi\n"
    "    .cfi_offset %rdi, -56\n"
    "    pushq %r8\n"
    "    .cfi_offset %r8, -64\n"
    "    pushq %r9\n"
    "    .cfi_offset %r9, -72\n"
    "    pushq %r10\n"
    "    .cfi_offset %r10, -80\n"
    "    pushq %r11\n"
    "    .cfi_offset %r11, -88\n"
    "    andq $-64, %rsp\n"
    "    subq $512, %rsp\n"
    "    fxsave64 (%rsp)\n"
    "    movq 8(%rbp), %rax\n"
    "    movq %rax, jitmap_demo_trampoline_ret(%rip)\n"
    "    movq jitmap_demo_anyreg_id(%rip), %rdi\n"
    "    call jitmap_demo_safepoint@PLT\n"
    "    fxrstor64 (%rsp)\n"
    "    leaq -72(%rbp), %rsp\n"
    "    popq %r11\n"
    "    popq %r10\n"
    "    popq %r9\n"
    "    popq %r8\n"
    "    popq %rdi\n"
    "    popq %rsi\n"
    "    popq %rdx\n"
    "    popq %rcx\n"
    "    popq %rax\n"
    "    popq %rbp\n"
    "    .cfi_def_cfa %rsp, 8\n"
    "    ret\n"
    "    .cfi_endproc\n"
    "    .size jitmap_demo_safepoint_anyreg, .-jitmap_demo_safepoint_anyreg\n");

/* -- The GDB JIT interface, read from the JIT's side -- */

/* The layout every debugger knows (GDB manual, "JIT Interface"). */
struct jit_code_entry {
    struct jit_code_entry *next_entry;
    struct jit_code_entry *prev_entry;
    const char *symfile_addr;
    uint64_t symfile_size;
};

struct jit_descriptor {
    uint32_t version;
    uint32_t action_flag;
    struct jit_code_entry *relevant_entry;
    struct jit_code_entry *first_entry;
};

/* Finds .llvm_stackmaps in a registered ELF object. LLVM registers a copy of the object in
 * which only sh_addr of each loaded section is patched to its address in JIT memory. */
static int find_stackmaps(const uint8_t *obj, uint64_t size, uint64_t *addr, uint64_t *len)
{
    Elf64_Ehdr eh;
    if (size < sizeof eh)
        return -1;
    memcpy(&eh, obj, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum ||
        eh.e_shoff > size || (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > size - eh.e_shoff)
        return -1;
    Elf64_Shdr strtab;
    memcpy(&strtab, obj + eh.e_shoff + eh.e_shstrndx * sizeof(Elf64_Shdr), sizeof strtab);
    if (strtab.sh_offset > size || strtab.sh_size > size - strtab.sh_offset)
        return -1;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, obj + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
        static const char want[] = ".llvm_stackmaps";
        if (sh.sh_name >= strtab.sh_size || strtab.sh_size - sh.sh_name < sizeof want)
            continue;
        if (memcmp(obj + strtab.sh_offset + sh.sh_name, want, sizeof want) == 0 && sh.sh_addr) {
            *addr = sh.sh_addr;
            *len = sh.sh_size;
            return 0;
        }
    }
    return -1;
}

size_t demo_scan_gdb_jit(void)
{
    /* Looked up, not linked against: an extern reference from a PIE could get a copy
     * relocation, leaving libLLVM and the debugger looking at two different descriptors. */
    const struct jit_descriptor *desc = dlsym(RTLD_DEFAULT, "__jit_debug_descriptor");
    if (!desc) {
        printf("jitmap-demo: gdb-jit descriptor=none\n");
        return 0;
    }
    size_t n = 0;
    for (const struct jit_code_entry *e = desc->first_entry; e; e = e->next_entry, n++) {
        uint64_t addr = 0, len = 0;
        int has = find_stackmaps((const uint8_t *)e->symfile_addr, e->symfile_size, &addr, &len) == 0;
        printf("jitmap-demo: gdb-jit entry=%p symfile=%p size=%" PRIu64, (const void *)e,
               (const void *)e->symfile_addr, e->symfile_size);
        if (has) {
            printf(" stackmaps=0x%" PRIx64 " stackmaps-size=%" PRIu64 "\n", addr, len);
            demo_add_stackmap_section(addr, len, DEMO_VIA_GDB_JIT);
        } else {
            printf(" stackmaps=none\n");
        }
    }
    printf("jitmap-demo: gdb-jit descriptor=%p entries=%zu\n", (const void *)desc, n);
    return n;
}

/* -- Checking the sections against the JIT -- */

static int visit_print(const struct record *rec, void *arg)
{
    (void)arg;
    const char *fn = demo_symbol_name(known_symbols, rec->fn_addr);
    printf("jitmap-demo: stackmap-record id=%" PRIu64 " pc=0x%" PRIx64 " function=%s"
           " locations=%u liveouts=%u\n",
           rec->id, rec->pc, fn ? fn : "?", rec->nlocations, rec->nliveouts);
    return 0;
}

unsigned demo_check_stackmaps(const struct demo_symbols *syms)
{
    unsigned bad = 0;
    known_symbols = syms;
    if (nsections == 0) {
        printf("jitmap-demo: stackmaps none found\n");
        return 1;
    }
    for (size_t i = 0; i < nsections; i++) {
        const struct section *s = &sections[i];
        const uint8_t *p = (const uint8_t *)(uintptr_t)s->addr;
        struct header h;
        printf("jitmap-demo: stackmaps addr=0x%" PRIx64 " size=%" PRIu64 " via=%s%s%s",
               s->addr, s->size, s->via & DEMO_VIA_MEMORY_MANAGER ? "memory-manager" : "",
               s->via == (DEMO_VIA_MEMORY_MANAGER | DEMO_VIA_GDB_JIT) ? "," : "",
               s->via & DEMO_VIA_GDB_JIT ? "gdb-jit" : "");
        if (read_header(p, s->size, &h) != 0) {
            printf(" version=%u malformed\n", s->size ? p[0] : 0);
            bad++;
            continue;
        }
        printf(" version=%u functions=%" PRIu32 " constants=%" PRIu32 " records=%" PRIu32 "\n",
               h.version, h.nfunctions, h.nconstants, h.nrecords);
        /* Relocated in place: every function address must be one the JIT handed out. */
        for (uint32_t f = 0; f < h.nfunctions; f++) {
            const uint8_t *fn = p + 16 + 24 * (uint64_t)f;
            const char *name = demo_symbol_name(syms, rd64(fn));
            printf("jitmap-demo: stackmap-function addr=0x%" PRIx64 " name=%s stack-size=%" PRIu64
                   " records=%" PRIu64 "\n",
                   rd64(fn), name ? name : "?", rd64(fn + 8), rd64(fn + 16));
            if (!name)
                bad++;
        }
        if (walk_records(p, s->size, visit_print, NULL) != 0) {
            printf("jitmap-demo: stackmaps records malformed\n");
            bad++;
        }
    }
    return bad;
}

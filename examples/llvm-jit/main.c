/* main.c: jitmap-demo-jit, a small LLVM 14 JIT whose programs stop in jitmap_demo_safepoint
 * with real stackmap, patchpoint and statepoint records on the stack, for testing jitmap
 * under GDB and LLDB, live and from core dumps.
 *
 * Every line it prints starts with "jitmap-demo: " and is key=value after the first word, so
 * tests can parse it. The programs print "truth lines" (the values each record must show),
 * the runtime prints the stackmap section and each safepoint's record: see programs/ *.ll. */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demo.h"

struct options {
    int mcjit;
    const char *program;
    const char *ir_file;
    int64_t depth;
    unsigned abort_at;
    unsigned pause_at;
    int64_t objects; /* --objects N: N modules, N objects, N GDB entries (0: off) */
    int64_t threads; /* --threads N: the program runs in N threads at once (0: in main) */
    int64_t entries; /* --entries N: N more JIT objects registered beside the program */
};

/* -- Runners: call a program's entry point and check its result against C -- */

static int check_result(const char *program, int64_t got, int64_t want)
{
    printf("jitmap-demo: result program=%s got=%" PRId64 " want=%" PRId64 " %s\n", program, got,
           want, got == want ? "ok" : "MISMATCH");
    return got == want ? 0 : 1;
}

/* Turns a JIT address into a callable function pointer of type T. */
#define ENTRY(T, syms, name) ((T)(uintptr_t)demo_symbol_addr((syms), (name)))

static int run_stackmaps(const struct demo_symbols *syms, const struct options *o)
{
    (void)o;
    int64_t (*entry)(int64_t, int32_t) = ENTRY(int64_t(*)(int64_t, int32_t), syms, "stackmaps_main");
    int64_t a = 15;
    int32_t b = -3;
    /* stackmaps_inner(s, b), then stackmaps_main's own arithmetic. */
    int64_t s = a + b;
    int16_t w = (int16_t)((int16_t)s * -100);
    int64_t inner = s + (int64_t)(-b) + w;
    int64_t want = inner + a * 200000000000 + a * 7 + s;
    return check_result("stackmaps", entry(a, b), want);
}

static int run_patchpoint(const struct demo_symbols *syms, const struct options *o)
{
    (void)o;
    int64_t (*entry)(int64_t, int64_t, int32_t) =
        ENTRY(int64_t(*)(int64_t, int64_t, int32_t), syms, "patchpoint_main");
    int64_t x = 1000, y = -22, k = 201;
    int32_t z = 7;
    int64_t from_c = 2 * x + y + z;
    int64_t s = x + y;
    int64_t from_anyreg = s * z + y + (s + k) + x * k + (y ^ k);
    return check_result("patchpoint", entry(x, y, z), from_c + from_anyreg);
}

/* The "GC heap": objects the statepoints report as roots. Nothing moves them. */
static void *new_object(const char *name, int64_t field16)
{
    int64_t *obj = calloc(8, sizeof *obj); /* 64 bytes */
    if (!obj) {
        perror("calloc");
        exit(1);
    }
    obj[0] = 0x4a4d4f424a; /* "JBOMJ": makes the object recognisable in a memory dump */
    obj[2] = field16;
    printf("jitmap-demo: heap-object name=%s addr=%p size=64 field16=%" PRId64 "\n", name,
           (void *)obj, field16);
    return obj;
}

static int run_statepoint(const struct demo_symbols *syms, const struct options *o)
{
    (void)o;
    int64_t (*entry)(void *, void *, int64_t) =
        ENTRY(int64_t(*)(void *, void *, int64_t), syms, "statepoint_main");
    void *obj = new_object("obj", 1111);
    void *obj2 = new_object("obj2", 2222);
    int64_t d = -77;
    /* field16 of obj and obj2 read through the derived pointers, d, and 1 for the null. */
    int rc = check_result("statepoint", entry(obj, obj2, d), 1111 + 2222 + d + 1);
    free(obj);
    free(obj2);
    return rc;
}

static int run_recursion(const struct demo_symbols *syms, const struct options *o)
{
    int64_t (*entry)(int64_t) = ENTRY(int64_t(*)(int64_t), syms, "recursion_main");
    int64_t n = o->depth;
    /* acc reaches 1 + ... + n; each frame adds its slot, n * n. */
    int64_t want = n * (n + 1) / 2 + n * (n + 1) * (2 * n + 1) / 6;
    return check_result("recursion", entry(n), want);
}

/* -- --objects N: N separately compiled modules, one tiny function each -- */

/* Module K defines obj_K(x, stop) = x + K, with a stackmap (ID 600000 + K) after a call to
 * jitmap_demo_safepoint that it makes only when `stop` is nonzero. */
static const char objects_ir[] =
    "declare void @jitmap_demo_safepoint(i64)\n"
    "declare void @llvm.experimental.stackmap(i64, i32, ...)\n"
    "define i64 @obj_%1$zu(i64 %%x, i64 %%stop) noinline {\n"
    "entry:\n"
    "  %%r = add i64 %%x, %1$zu\n"
    "  %%s = icmp ne i64 %%stop, 0\n"
    "  br i1 %%s, label %%call, label %%done\n"
    "call:\n"
    "  call void @jitmap_demo_safepoint(i64 %2$zu)\n"
    "  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 %2$zu, i32 0, i64 %%x, i64 %%r)\n"
    "  br label %%done\n"
    "done:\n"
    "  ret i64 %%r\n"
    "}\n";

static char *objects_make(size_t k, size_t *size, void *arg)
{
    (void)arg;
    char *text = NULL;
    int n = asprintf(&text, objects_ir, k, (size_t)600000 + k);
    if (n < 0)
        return NULL;
    *size = (size_t)n;
    return text;
}

static int run_objects(const struct demo_symbols *syms, const struct options *o)
{
    /* Every function once (each object's code runs), then the last one again, stopping in
     * the safepoint: the backtrace there is jitmap_demo_safepoint, obj_<N-1>, run_objects,
     * main. */
    int64_t got = 0, want = 0;
    int64_t (*fn)(int64_t, int64_t) = NULL;
    for (int64_t k = 0; k < o->objects; k++) {
        char name[32];
        snprintf(name, sizeof name, "obj_%" PRId64, k);
        fn = ENTRY(int64_t(*)(int64_t, int64_t), syms, name);
        if (!fn)
            return check_result("objects", -1, k);
        got += fn(k, 0);
        want += 2 * k;
    }
    printf("jitmap-demo: objects n=%" PRId64 " last=obj_%" PRId64 "\n", o->objects,
           o->objects - 1);
    got += fn(1, 1); /* obj_<N-1>(1, stop): 1 + N - 1 */
    want += o->objects;
    return check_result("objects", got, want);
}

static const struct runner {
    const char *program;
    int (*run)(const struct demo_symbols *, const struct options *);
    const char *what;
} runners[] = {
    {"stackmaps", run_stackmaps, "stackmap records after calls: args, constants, an alloca"},
    {"patchpoint", run_patchpoint, "patchpoints (C and anyregcc) calling the safepoint"},
    {"statepoint", run_statepoint, "statepoints with deopt values and derived GC pointers"},
    {"recursion", run_recursion, "a deep stack of JIT frames, one stackmap each (--depth)"},
    {"objects", run_objects, "--objects N: N modules (N JIT objects), one tiny function each"},
};

/* -- --threads N: the program in N threads at once -- */

struct job {
    const struct runner *runner;
    const struct demo_symbols *syms;
    const struct options *o;
    pthread_t thread;
    int rc;
};

static void *job_main(void *arg)
{
    struct job *j = arg;
    j->rc = j->runner->run(j->syms, j->o);
    return NULL;
}

/* Each thread holds in its first safepoint (--pause: until a debugger sets
 * jitmap_demo_resume, at most 300 s; --abort: the main thread aborts once all hold). */
static int run_threads(const struct runner *runner, const struct demo_symbols *syms,
                       const struct options *o)
{
    const int hold = o->pause_at || o->abort_at;
    demo_runtime_pause(0, 0);
    demo_runtime_configure(0);
    demo_runtime_hold(hold ? 300 : 0);
    struct job *jobs = calloc((size_t)o->threads, sizeof(*jobs));
    if (!jobs)
        return 1;
    int64_t started = 0;
    for (; started < o->threads; started++) {
        jobs[started] = (struct job){.runner = runner, .syms = syms, .o = o};
        if (pthread_create(&jobs[started].thread, NULL, job_main, &jobs[started]) != 0) {
            fprintf(stderr, "jitmap-demo: cannot start thread %" PRId64 "\n", started);
            break;
        }
    }
    if (hold) {
        for (unsigned ms = 0; demo_runtime_held() < (unsigned)started && ms < 120000; ms += 10)
            usleep(10000);
        printf("jitmap-demo: holding threads=%u pid=%ld\n", demo_runtime_held(),
               (long)getpid());
        fflush(stdout);
        if (o->abort_at) {
            printf("jitmap-demo: aborting with threads=%u held\n", demo_runtime_held());
            fflush(stdout);
            abort();
        }
    }
    int rc = started == o->threads ? 0 : 1;
    for (int64_t i = 0; i < started; i++) {
        pthread_join(jobs[i].thread, NULL);
        rc |= jobs[i].rc;
    }
    free(jobs);
    return rc;
}

/* -- Command line -- */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: jitmap-demo-jit [--orc | --mcjit] [--program NAME] [--ir FILE]\n"
            "                       [--depth N] [--objects N] [--abort] [--abort-at N]\n"
            "                       [--pause] [--threads N] [--list]\n"
            "  --orc          ORC LLJIT + RuntimeDyld + GDB listener (default)\n"
            "  --mcjit        MCJIT with a custom memory manager\n"
            "  --program NAME the IR program to run (default stackmaps; --list shows them)\n"
            "  --ir FILE      run this IR instead of the embedded text of NAME (same entry)\n"
            "  --depth N      recursion depth for --program recursion (default 40)\n"
            "  --objects N    compile N modules, each its own JIT object (one GDB entry\n"
            "                 each), with one function obj_K and a stackmap; call them all,\n"
            "                 then the last one again, stopping in the safepoint (--orc only;\n"
            "                 the same as --program objects)\n"
            "  --abort        abort() in the first jitmap_demo_safepoint call (SIGABRT)\n"
            "  --abort-at N   abort() in the Nth call instead\n"
            "  --pause        wait in the first call until a debugger attaches and sets\n"
            "                 jitmap_demo_resume = 1 (at most 300 s)\n"
            "  --threads N    run the program in N threads at once; with --pause each\n"
            "                 thread waits in its first call, with --abort the process\n"
            "                 aborts once all of them wait there (a core with N JIT stacks)\n"
            "  --entries N    also register N tiny JIT objects (obj_K, as --objects) before\n"
            "                 the program: a process with N + 1 JIT entries (--orc only)\n");
}

static int parse_count(const char *s, int64_t max, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *s == '\0' || *end != '\0' || v < 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    enum { OPT_ORC = 256, OPT_MCJIT, OPT_PROGRAM, OPT_IR, OPT_DEPTH, OPT_OBJECTS, OPT_ABORT, OPT_ABORT_AT, OPT_PAUSE, OPT_LIST, OPT_THREADS, OPT_ENTRIES };
    static const struct option longopts[] = {
        {"orc", no_argument, NULL, OPT_ORC},
        {"mcjit", no_argument, NULL, OPT_MCJIT},
        {"program", required_argument, NULL, OPT_PROGRAM},
        {"ir", required_argument, NULL, OPT_IR},
        {"depth", required_argument, NULL, OPT_DEPTH},
        {"objects", required_argument, NULL, OPT_OBJECTS},
        {"abort", no_argument, NULL, OPT_ABORT},
        {"abort-at", required_argument, NULL, OPT_ABORT_AT},
        {"pause", no_argument, NULL, OPT_PAUSE},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"entries", required_argument, NULL, OPT_ENTRIES},
        {"list", no_argument, NULL, OPT_LIST},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    int64_t v;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_ORC: o->mcjit = 0; break;
        case OPT_MCJIT: o->mcjit = 1; break;
        case OPT_PROGRAM: o->program = optarg; break;
        case OPT_IR: o->ir_file = optarg; break;
        case OPT_DEPTH:
            /* Each level prints a line and takes a small frame: keep the stack sane. */
            if (parse_count(optarg, 100000, &v) != 0) {
                fprintf(stderr, "jitmap-demo: --depth wants 0..100000\n");
                return 2;
            }
            o->depth = v;
            break;
        case OPT_OBJECTS:
            /* Each object costs a debugger (GDB) about a millisecond at a thousand entries,
             * and more as they grow: 100000 is far past any useful session. */
            if (parse_count(optarg, 100000, &v) != 0 || v == 0) {
                fprintf(stderr, "jitmap-demo: --objects wants 1..100000\n");
                return 2;
            }
            o->objects = v;
            o->program = "objects";
            break;
        case OPT_ABORT:
            if (!o->abort_at)
                o->abort_at = 1;
            break;
        case OPT_ABORT_AT:
            if (parse_count(optarg, 1000000, &v) != 0 || v == 0) {
                fprintf(stderr, "jitmap-demo: --abort-at wants 1..1000000\n");
                return 2;
            }
            o->abort_at = (unsigned)v;
            break;
        case OPT_PAUSE: o->pause_at = 1; break;
        case OPT_THREADS:
            if (parse_count(optarg, 1024, &v) != 0 || v == 0) {
                fprintf(stderr, "jitmap-demo: --threads wants 1..1024\n");
                return 2;
            }
            o->threads = v;
            break;
        case OPT_ENTRIES:
            if (parse_count(optarg, 100000, &v) != 0 || v == 0) {
                fprintf(stderr, "jitmap-demo: --entries wants 1..100000\n");
                return 2;
            }
            o->entries = v;
            break;
        case OPT_LIST:
            for (size_t i = 0; i < sizeof runners / sizeof runners[0]; i++)
                printf("%-10s %s\n", runners[i].program, runners[i].what);
            exit(0);
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }
    if (strcmp(o->program, "objects") == 0) {
        if (o->mcjit || o->ir_file) {
            fprintf(stderr, "jitmap-demo: --objects works with --orc only, without --ir\n");
            return 2;
        }
        if (!o->objects)
            o->objects = 100;
    }
    if (o->entries && (o->mcjit || o->objects)) {
        fprintf(stderr, "jitmap-demo: --entries works with --orc only, not with --objects\n");
        return 2;
    }
    return 0;
}

static char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "jitmap-demo: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len + 4096 > cap) {
            char *nb = realloc(buf, cap = (cap + 4096) * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
    } while (got > 0);
    fclose(f);
    buf[len] = '\0';
    *size = len;
    return buf;
}

int main(int argc, char **argv)
{
    struct options o = {.program = "stackmaps", .depth = 40};
    int rc = parse_options(argc, argv, &o);
    if (rc)
        return rc;

    /* Line-buffered even into a pipe: the truth lines must be out before an abort(). The
     * JIT code's printf shares this stdout. */
    setvbuf(stdout, NULL, _IOLBF, 0);

    const struct runner *runner = NULL;
    for (size_t i = 0; i < sizeof runners / sizeof runners[0]; i++)
        if (strcmp(runners[i].program, o.program) == 0)
            runner = &runners[i];
    const struct demo_ir *ir = NULL;
    for (size_t i = 0; i < demo_ir_count; i++)
        if (strcmp(demo_irs[i].name, o.program) == 0)
            ir = &demo_irs[i];
    if (!runner || (!ir && !o.objects)) {
        fprintf(stderr, "jitmap-demo: unknown program '%s' (see --list)\n", o.program);
        return 2;
    }
    const char *text = ir ? ir->text : NULL;
    size_t size = ir ? ir->size : 0;
    char *file_text = NULL;
    if (o.ir_file) {
        if (!(file_text = read_file(o.ir_file, &size)))
            return 1;
        text = file_text;
    }

    printf("jitmap-demo: start program=%s engine=%s pid=%ld abort-at=%u\n", o.program,
           o.mcjit ? "mcjit" : "orc", (long)getpid(), o.abort_at);
    demo_llvm_init();
    demo_runtime_configure(o.abort_at);
    demo_runtime_pause(o.pause_at, 300);

    struct demo_symbols syms = {0};
    int failed = o.entries ? (demo_orc_compile_many((size_t)o.entries, objects_make, NULL, &syms) ||
                              demo_orc_add(o.program, text, size, &syms))
                 : o.objects ? demo_orc_compile_many((size_t)o.objects, objects_make, NULL, &syms)
                 : o.mcjit ? demo_mcjit_compile(o.program, text, size, &syms)
                           : demo_orc_compile(o.program, text, size, &syms);
    if (!failed) {
        for (size_t i = 0; i < syms.n; i++)
            printf("jitmap-demo: function name=%s addr=0x%" PRIx64 "\n", syms.v[i].name,
                   syms.v[i].addr);
        demo_scan_gdb_jit();
        failed = demo_check_stackmaps(&syms) != 0;
        /* Run even if the check failed: the program's output helps to see why. */
        failed |= (o.threads ? run_threads(runner, &syms, &o) : runner->run(&syms, &o)) != 0;
        failed |= demo_safepoint_problems() != 0;
    }

    if (o.mcjit)
        demo_mcjit_shutdown();
    else
        demo_orc_shutdown();
    demo_symbols_free(&syms);
    free(file_text);
    printf("jitmap-demo: %s\n", failed ? "FAILED" : "done");
    return failed ? 1 : 0;
}

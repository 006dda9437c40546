/* llvm_object.c: stackmap sections of Mach-O and COFF files, through LLVM's C object API.
 *
 * What LLVM writes there (llc-14 and llc-19, x86-64 and AArch64, checked in the differential
 * test): the same section bytes as in ELF, in a section named __llvm_stackmaps (segment
 * __LLVM_STACKMAPS) or .llvm_stackmaps, little-endian, and in an object one relocation per
 * Function Address field: Mach-O's UNSIGNED (type 0 on both architectures; the field holds
 * the addend) or COFF's ADDR64 (IMAGE_REL_AMD64_ADDR64 = 1, IMAGE_REL_ARM64_ADDR64 = 14,
 * addend stored likewise). A linked image holds the addresses themselves.
 *
 * Two traps of the C API, avoided: LLVMGetRelocationTypeName returns a string without its
 * terminating NUL (LLVM 14), so types are compared by number; and an error inside LLVM
 * (contents out of the file's bounds, a symbol naming a section that does not exist) is
 * report_fatal_error, which ends the process (a COFF section name pointing past the end of
 * its string table is one): a handler says which file it was, and exits with status 1.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/search.h"
#include "llvm_object.h"

#ifdef JITMAP_HAVE_LLVM_OBJECT_H
#include <llvm-c/Core.h>
#include <llvm-c/ErrorHandling.h>
#include <llvm-c/Object.h>
#endif

static uint32_t le32(const unsigned char *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* COFF machines LLVM writes stackmaps for, and their ELF counterparts (for jitmap's arch). */
static const struct {
	uint16_t coff;
	unsigned elf;
} coff_machines[] = {
	{0x8664, 62},  /* IMAGE_FILE_MACHINE_AMD64: EM_X86_64 */
	{0xaa64, 183}, /* IMAGE_FILE_MACHINE_ARM64: EM_AARCH64 */
	{0xa641, 183}, /* IMAGE_FILE_MACHINE_ARM64EC */
	{0x014c, 3},   /* IMAGE_FILE_MACHINE_I386: EM_386 (registers unnamed) */
};

enum llvm_object_format llvm_object_format(const unsigned char *d, size_t len)
{
	if (len >= 4) {
		const uint32_t m = le32(d);
		if (m == 0xfeedfacfu || m == 0xfeedfaceu)
			return LLVM_OBJECT_MACHO;
		/* Universal: big-endian 0xcafebabe, as Java class files; a count of architectures
		 * below 20 tells them apart (a class file has its version there, 45 and up). */
		if (m == 0xbebafecau && len >= 8 && d[4] == 0 && d[5] == 0 && d[6] == 0 && d[7] < 20)
			return LLVM_OBJECT_MACHO;
	}
	if (len >= 2 && d[0] == 'M' && d[1] == 'Z')
		return LLVM_OBJECT_COFF;
	if (len >= 20) /* a COFF file header */
		for (size_t i = 0; i < sizeof(coff_machines) / sizeof(coff_machines[0]); i++)
			if (le16(d) == coff_machines[i].coff)
				return LLVM_OBJECT_COFF;
	return LLVM_OBJECT_NONE;
}

static int fail(jitmap_error *err, const char *fmt, const char *detail)
{
	err->code = -22; /* EINVAL */
	err->offset = 0;
	snprintf(err->reason, sizeof(err->reason), fmt, detail);
	return -1;
}

#ifndef JITMAP_HAVE_LLVM_OBJECT_H

const char *llvm_object_support(void)
{
	return "not built in";
}

int llvm_object_read(const char *path, const unsigned char *data, size_t len, jitmap_stackmap **sm,
		     char *kind, size_t kind_len, jitmap_error *err)
{
	(void)path, (void)data, (void)len, (void)sm, (void)kind, (void)kind_len;
	return fail(err, "a %s file: this jitmap-dump was built without LLVM's object library "
			 "(llvm-c/Object.h), which reads Mach-O and COFF",
		    llvm_object_format(data, len) == LLVM_OBJECT_MACHO ? "Mach-O" : "COFF");
}

#else

/* The functions used, each resolved from libLLVM with its declared type. */
#define LLVM_FUNCTIONS(X)                                                                          \
	X(LLVMCreateMemoryBufferWithMemoryRange)                                                   \
	X(LLVMDisposeMemoryBuffer)                                                                 \
	X(LLVMCreateBinary)                                                                        \
	X(LLVMDisposeBinary)                                                                       \
	X(LLVMBinaryGetType)                                                                       \
	X(LLVMDisposeMessage)                                                                      \
	X(LLVMInstallFatalErrorHandler)                                                            \
	X(LLVMObjectFileCopySectionIterator)                                                       \
	X(LLVMObjectFileIsSectionIteratorAtEnd)                                                    \
	X(LLVMMoveToNextSection)                                                                   \
	X(LLVMDisposeSectionIterator)                                                              \
	X(LLVMGetSectionName)                                                                      \
	X(LLVMGetSectionSize)                                                                      \
	X(LLVMGetSectionContents)                                                                  \
	X(LLVMGetRelocations)                                                                      \
	X(LLVMIsRelocationIteratorAtEnd)                                                           \
	X(LLVMMoveToNextRelocation)                                                                \
	X(LLVMDisposeRelocationIterator)                                                           \
	X(LLVMGetRelocationOffset)                                                                 \
	X(LLVMGetRelocationType)                                                                   \
	X(LLVMGetRelocationSymbol)                                                                 \
	X(LLVMObjectFileCopySymbolIterator)                                                        \
	X(LLVMObjectFileIsSymbolIteratorAtEnd)                                                     \
	X(LLVMMoveToNextSymbol)                                                                    \
	X(LLVMDisposeSymbolIterator)                                                               \
	X(LLVMGetSymbolName)                                                                       \
	X(LLVMGetSymbolAddress)

static struct {
#define DECLARE(f) __typeof__(f) *f;
	LLVM_FUNCTIONS(DECLARE)
#undef DECLARE
} llvm;

/* The library jitmap-dump was configured with first (JITMAP_LIBLLVM), then newer ones; the
 * environment's JITMAP_LIBLLVM before all. The C object API used here has not changed since
 * LLVM 9. */
static const char *const libllvm_names[] = {
#ifdef JITMAP_LIBLLVM
	JITMAP_LIBLLVM,
#endif
	"libLLVM.so.23.1", "libLLVM.so.22.1", "libLLVM.so.21.1", "libLLVM.so.20.1",
	"libLLVM-19.so.1", "libLLVM-18.so.1", "libLLVM-17.so.1", "libLLVM-16.so.1",
	"libLLVM-15.so.1", "libLLVM-14.so.1", "libLLVM.so",
};

const char *llvm_object_support(void)
{
	return libllvm_names[0];
}

static const char *fatal_path;

/* LLVM's handlers must not return (LLVM aborts after them): what was printed is kept, the file
 * is named, and jitmap-dump ends with status 1, the files after it unread. */
static void fatal_handler(const char *reason)
{
	size_t n = strlen(reason);
	while (n && (reason[n - 1] == '\n' || reason[n - 1] == ' '))
		n--;
	fflush(stdout);
	fprintf(stderr, "jitmap-dump: %s: LLVM could not read it: %.*s (the files after it are not "
			"read)\n",
		fatal_path ? fatal_path : "?", (int)n, reason);
	_exit(1);
}

/* 0, or -1 with `err` filled once and for every later call. */
static int load_llvm(jitmap_error *err)
{
	static int state; /* 0 not tried, 1 loaded, -1 failed */
	static char tried[160];
	if (state)
		return state > 0 ? 0 : fail(err, "reading Mach-O and COFF needs LLVM's shared "
						 "library (%.60s): install libllvm, or name it in "
						 "JITMAP_LIBLLVM", tried);
	void *h = NULL;
	const char *env = getenv("JITMAP_LIBLLVM");
	if (env && *env)
		h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
	for (size_t i = 0; !h && i < sizeof(libllvm_names) / sizeof(libllvm_names[0]); i++)
		h = dlopen(libllvm_names[i], RTLD_NOW | RTLD_LOCAL);
	snprintf(tried, sizeof(tried), "%s%s%s", env && *env ? env : "",
		 env && *env ? " or " : "", libllvm_names[0]);
	if (!h) {
		state = -1;
		return load_llvm(err);
	}
#define RESOLVE(f)                                                                                 \
	if (!(llvm.f = (__typeof__(f) *)dlsym(h, #f))) {                                           \
		snprintf(tried, sizeof(tried), "a libLLVM with " #f);                              \
		state = -1;                                                                        \
		return load_llvm(err);                                                             \
	}
	LLVM_FUNCTIONS(RESOLVE)
#undef RESOLVE
	llvm.LLVMInstallFatalErrorHandler(fatal_handler);
	state = 1;
	return 0;
}

/* What the file is, from its header, and the ELF machine of its architecture (0: unknown). */
static unsigned describe(const unsigned char *d, size_t len, enum llvm_object_format f, char *kind,
			 size_t kind_len)
{
	unsigned machine = 0;
	const char *what = "file";
	if (f == LLVM_OBJECT_MACHO && len >= 16) {
		const uint32_t cpu = le32(d + 4), type = le32(d + 12);
		machine = cpu == 0x01000007u ? 62 : cpu == 0x0100000cu ? 183 : cpu == 7 ? 3 : 0;
		what = type == 1   ? "relocatable object"
		       : type == 2 ? "executable"
		       : type == 6 ? "dynamic library"
		       : type == 8 ? "bundle"
				   : "file";
		snprintf(kind, kind_len, "Mach-O %s, %s", what,
			 jitmap_arch_name(jitmap_arch_from_elf_machine(machine)));
		return machine;
	}
	uint16_t m = len >= 2 ? le16(d) : 0;
	if (len >= 64 && d[0] == 'M' && d[1] == 'Z') {
		/* A PE image: the COFF header follows "PE\0\0" at e_lfanew. */
		const uint32_t pe = le32(d + 60);
		m = pe <= len - 6 ? le16(d + pe + 4) : 0;
		what = "PE image";
	} else {
		what = "COFF relocatable object";
	}
	for (size_t i = 0; i < sizeof(coff_machines) / sizeof(coff_machines[0]); i++)
		if (m == coff_machines[i].coff)
			machine = coff_machines[i].elf;
	snprintf(kind, kind_len, "%s, %s", what,
		 jitmap_arch_name(jitmap_arch_from_elf_machine(machine)));
	return machine;
}

/* The relocation types that write a symbol's 64-bit address (plus the stored addend). */
static int is_abs64(enum llvm_object_format f, unsigned machine, uint64_t type)
{
	if (f == LLVM_OBJECT_MACHO)
		return type == 0; /* X86_64_RELOC_UNSIGNED, ARM64_RELOC_UNSIGNED */
	return (machine == 62 && type == 1) || (machine == 183 && type == 14);
}

static const char *symbol_name(enum llvm_object_format f, const char *name)
{
	if (!name || !*name)
		return NULL;
	return f == LLVM_OBJECT_MACHO && name[0] == '_' && name[1] ? name + 1 : name;
}

/* The function whose Function Address field is at `off`, or SIZE_MAX. */
static size_t function_at(const jitmap_stackmap *sm, uint64_t off)
{
	/* Functions are in section order, one array: a search, not a scan per relocation (n^2
	 * steps for an object of n functions, as targets/elf_reloc.c found). */
	const size_t n = jitmap_stackmap_num_functions(sm);
	if (!n)
		return SIZE_MAX;
	const jitmap_function *fns = jitmap_stackmap_function(sm, 0);
	const size_t i = JITMAP_LOWER_BOUND(fns, n, section_offset, off);
	return i < n && fns[i].section_offset == off ? i : SIZE_MAX;
}

static int relocate(LLVMBinaryRef bin, LLVMSectionIteratorRef sec, enum llvm_object_format f,
		    unsigned machine, jitmap_stackmap *sm)
{
	LLVMRelocationIteratorRef r = llvm.LLVMGetRelocations(sec);
	int rc = 0;
	for (; !rc && !llvm.LLVMIsRelocationIteratorAtEnd(sec, r); llvm.LLVMMoveToNextRelocation(r)) {
		const size_t fi = function_at(sm, llvm.LLVMGetRelocationOffset(r));
		if (fi == SIZE_MAX || !is_abs64(f, machine, llvm.LLVMGetRelocationType(r)))
			continue; /* not a Function Address field: left as stored */
		LLVMSymbolIteratorRef s = llvm.LLVMGetRelocationSymbol(r);
		if (llvm.LLVMObjectFileIsSymbolIteratorAtEnd(bin, s)) {
			/* Mach-O's section-relative form: the field holds the address itself. */
			llvm.LLVMDisposeSymbolIterator(s);
			continue;
		}
		const jitmap_function *fn = jitmap_stackmap_function(sm, fi);
		rc = jitmap_stackmap_set_function_address(sm, fn->section_offset,
							  llvm.LLVMGetSymbolAddress(s) + fn->raw_address);
		const char *name = symbol_name(f, llvm.LLVMGetSymbolName(s));
		if (!rc && name)
			rc = jitmap_stackmap_set_function_name(sm, fi, name);
		llvm.LLVMDisposeSymbolIterator(s);
	}
	llvm.LLVMDisposeRelocationIterator(r);
	return rc;
}

struct unnamed {
	uint64_t address;
	size_t function;
};

static int by_address(const void *a, const void *b)
{
	const struct unnamed *x = a, *y = b;
	return x->address < y->address ? -1 : x->address > y->address;
}

/* Name the functions no relocation named by a symbol at their address (a linked image): the
 * unnamed ones sorted by address, each symbol looked up among them. */
static int name_by_address(LLVMBinaryRef bin, enum llvm_object_format f, jitmap_stackmap *sm)
{
	const size_t nf = jitmap_stackmap_num_functions(sm);
	struct unnamed *u = malloc((nf + 1) * sizeof(*u));
	if (!u)
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < nf; i++) {
		const jitmap_function *fn = jitmap_stackmap_function(sm, i);
		if (!fn->name && fn->address)
			u[n++] = (struct unnamed){fn->address, i};
	}
	qsort(u, n, sizeof(*u), by_address);
	int rc = 0;
	LLVMSymbolIteratorRef s = n ? llvm.LLVMObjectFileCopySymbolIterator(bin) : NULL;
	for (; s && !rc && !llvm.LLVMObjectFileIsSymbolIteratorAtEnd(bin, s);
	     llvm.LLVMMoveToNextSymbol(s)) {
		const char *name = symbol_name(f, llvm.LLVMGetSymbolName(s));
		const struct unnamed key = {llvm.LLVMGetSymbolAddress(s), 0};
		const struct unnamed *hit = name ? bsearch(&key, u, n, sizeof(*u), by_address) : NULL;
		/* every function at that address (several stackmaps of one function: rare) */
		while (hit && hit > u && hit[-1].address == key.address)
			hit--;
		for (; !rc && hit && hit < u + n && hit->address == key.address; hit++)
			if (!jitmap_stackmap_function(sm, hit->function)->name)
				rc = jitmap_stackmap_set_function_name(sm, hit->function, name);
	}
	if (s)
		llvm.LLVMDisposeSymbolIterator(s);
	free(u);
	return rc;
}

int llvm_object_read(const char *path, const unsigned char *data, size_t len, jitmap_stackmap **sm,
		     char *kind, size_t kind_len, jitmap_error *err)
{
	const enum llvm_object_format f = llvm_object_format(data, len);
	*sm = NULL;
	if (load_llvm(err))
		return -1;
	const unsigned machine = describe(data, len, f, kind, kind_len);
	fatal_path = path;
	LLVMMemoryBufferRef buf =
		llvm.LLVMCreateMemoryBufferWithMemoryRange((const char *)data, len, path, 0);
	char *msg = NULL;
	LLVMBinaryRef bin = llvm.LLVMCreateBinary(buf, NULL, &msg);
	if (!bin) {
		fail(err, "LLVM cannot read it: %s", msg ? msg : "no reason given");
		llvm.LLVMDisposeMessage(msg);
		llvm.LLVMDisposeMemoryBuffer(buf);
		return -1;
	}
	int rc = 0;
	const LLVMBinaryType t = llvm.LLVMBinaryGetType(bin);
	if (t == LLVMBinaryTypeMachOUniversalBinary) {
		rc = fail(err, "a universal Mach-O file: take one architecture out first (%s)",
			  "lipo -thin ARCH, or llvm-lipo");
		goto out;
	}
	if (t != LLVMBinaryTypeMachO32L && t != LLVMBinaryTypeMachO64L && t != LLVMBinaryTypeCOFF) {
		rc = fail(err, "%s: not an object jitmap-dump reads this way (a big-endian "
			       "Mach-O file, an import library, or an archive)",
			  "LLVM reads it");
		goto out;
	}
	LLVMSectionIteratorRef sec = llvm.LLVMObjectFileCopySectionIterator(bin);
	for (; !llvm.LLVMObjectFileIsSectionIteratorAtEnd(bin, sec); llvm.LLVMMoveToNextSection(sec)) {
		/* Mach-O's name fills its 16-byte field: no NUL ends it, the segment follows. */
		const char *name = llvm.LLVMGetSectionName(sec);
		if (!name || (f == LLVM_OBJECT_MACHO ? strncmp(name, "__llvm_stackmaps", 16)
						     : strcmp(name, ".llvm_stackmaps")))
			continue;
		JITMAP_OPTS(jitmap_parse_opts, opts, .order = JITMAP_ORDER_LITTLE,
			    .arch = jitmap_arch_from_elf_machine(machine));
		*sm = jitmap_stackmap_parse(llvm.LLVMGetSectionContents(sec),
					    llvm.LLVMGetSectionSize(sec), &opts, err);
		if (!*sm) {
			rc = -1;
			break;
		}
		if (relocate(bin, sec, f, machine, *sm) || name_by_address(bin, f, *sm)) {
			jitmap_stackmap_free(*sm);
			*sm = NULL;
			rc = fail(err, "%s", "out of memory");
		}
		break;
	}
	llvm.LLVMDisposeSectionIterator(sec);
out:
	llvm.LLVMDisposeBinary(bin);
	llvm.LLVMDisposeMemoryBuffer(buf);
	fatal_path = NULL;
	return rc;
}

#endif

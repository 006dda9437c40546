/* shapes_jit.c: JIT images whose shape GDB's own JIT reader handles differently from jitmap's,
 * for tests/gdb/test_gdb_shapes.sh.
 *
 * Usage: jitmap-shapes-jit CASE
 *   absolute   one function whose symbol is absolute (SHN_ABS, its address in st_value), as
 *              some JITs write them. GDB's ELF reader makes it an mst_abs minimal symbol,
 *              which its PC lookups skip: GDB alone shows `?? ()`. jitmap's reader claims
 *              such an image by default and names the function.
 *   address    one function of an ET_REL image whose symbol keeps its section (.text) but holds
 *              its absolute address in st_value, not its offset in .text (some hand-written
 *              JITs write them so). GDB's ELF reader adds sh_addr and places it outside its
 *              section: GDB alone shows `?? ()`. libjitmap reads such values as addresses when
 *              that reading is unambiguous, and the reader names the function.
 *   outermost  one function whose .eh_frame marks the return address undefined (DWARF's
 *              end-of-stack mark, as on a thread's entry function). GDB's DWARF unwinder
 *              ends the backtrace there, and so must jitmap's reader when it claims the
 *              image. (The function does return to main, so that the program goes on: the
 *              CFI is what matters to a debugger.)
 *   abi-break  two functions and a stackmap (a record after each call): the JIT function
 *              below (shapes_abi_fine), and shapes_abi_break, which breaks the ABI: it
 *              changes rbx and r12, callee-saved registers, without saving them (and r13 only
 *              after pushing it, which is fine). `jitmap verify` must name those two
 *              instructions and nothing else. It is never called (it would corrupt main's
 *              registers): the check reads code, it does not run it. Prints
 *              "jitmap-shapes: abi-break name=shapes_abi_break addr=0x... rbx=+9 r12=+14".
 * The JIT function (push rbp; mov rbp,rsp; call shapes_stop; pop rbp; ret) calls
 * shapes_stop(), where the test breaks. The image is the one jitmap's producer API builds
 * (jitmap_jit_build_image), changed as the case says, and registered through the
 * `__jit_debug_descriptor` of libjitmap.so (looked up with dlsym: an extern reference from a
 * PIE could get a copy relocation, and the debugger would read the library's own copy).
 * Prints "jitmap-shapes: function name=NAME addr=0x..." and, at the end, "done".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "jitmap/producer.h"

#define EXPORT __attribute__((visibility("default"), noinline, used))

EXPORT void shapes_stop(void)
{
	__asm__ volatile("" ::: "memory");
}

/* -- The GDB JIT interface (GDB manual, "JIT Interface") -- */

struct jit_code_entry {
	struct jit_code_entry *next_entry, *prev_entry;
	const void *symfile_addr;
	uint64_t symfile_size;
};

struct jit_descriptor {
	uint32_t version, action_flag;
	struct jit_code_entry *relevant_entry, *first_entry;
};

static int register_image(const void *image, size_t size)
{
	struct jit_descriptor *desc = dlsym(RTLD_DEFAULT, "__jit_debug_descriptor");
	void (*hook)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "__jit_debug_register_code");
	if (!desc || !hook)
		return -1;
	static struct jit_code_entry entry;
	entry = (struct jit_code_entry){desc->first_entry, NULL, image, size};
	if (entry.next_entry)
		entry.next_entry->prev_entry = &entry;
	desc->first_entry = &entry;
	desc->relevant_entry = &entry;
	desc->action_flag = 1; /* JIT_REGISTER_FN */
	hook();
	desc->action_flag = 0;
	desc->relevant_entry = NULL;
	return 0;
}

/* -- The code and its CFI -- */

static size_t put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return 4;
}

/* An .eh_frame at `eh` for the function [code, code + len): a CIE whose initial rules are
 * CFA = rsp + 8 and the return address (column 16) undefined, and an FDE for the frame
 * pointer prologue. Pointers pc-relative, as LLVM writes them. Returns its size. */
static size_t outermost_eh_frame(uint8_t *eh, const uint8_t *code, size_t len)
{
	static const uint8_t cie[] = {
		1, 'z', 'R', 0, /* version, augmentation */
		1, 0x78, 16,    /* code alignment 1, data alignment -8, return address column 16 */
		1, 0x1b,        /* augmentation data: FDE pointers pcrel | sdata4 */
		0x0c, 7, 8,     /* DW_CFA_def_cfa rsp, 8 */
		0x07, 16,       /* DW_CFA_undefined rip: the outermost frame */
		0, 0, 0,        /* DW_CFA_nop padding */
	};
	static const uint8_t fde_insns[] = {
		0x41, 0x0e, 16, /* advance 1 (after push rbp): def_cfa_offset 16 */
		0x86, 2,        /* rbp at cfa - 16 */
		0x43, 0x0d, 6,  /* advance 3 (after mov rbp,rsp): def_cfa_register rbp */
		0, 0, 0,
	};
	size_t k = 0;
	k += put32(eh + k, 4 + sizeof(cie));
	k += put32(eh + k, 0); /* CIE id */
	memcpy(eh + k, cie, sizeof(cie));
	k += sizeof(cie);
	const size_t fde = k;
	k += put32(eh + k, 4 + 4 + 4 + 1 + sizeof(fde_insns));
	k += put32(eh + k, (uint32_t)(fde + 4)); /* back to the CIE */
	k += put32(eh + k, (uint32_t)(int32_t)((intptr_t)code - (intptr_t)(eh + k)));
	k += put32(eh + k, (uint32_t)len);
	eh[k++] = 0; /* no augmentation data */
	memcpy(eh + k, fde_insns, sizeof(fde_insns));
	k += sizeof(fde_insns);
	k += put32(eh + k, 0); /* terminator */
	return k;
}

/* The abi-break case: shapes_abi_break at code + 64 (after the JIT function, `fine` bytes
 * at `code`), the stackmap of both (a record after each call: ids 1 and 2), and the region
 * grown to hold both. Returns the stackmap (NULL on failure). */
static void *abi_break(uint8_t *code, size_t fine, jitmap_jit_function *fns,
		       jitmap_jit_region *region)
{
	enum { AT = 64 };
	static const uint8_t head[] = {
		0x55,                         /* +0  push rbp */
		0x48, 0x89, 0xe5,             /* +1  mov rbp, rsp */
		0x41, 0x55,                   /* +4  push r13 */
		0x49, 0x89, 0xfd,             /* +6  mov r13, rdi: fine, r13 was saved */
		0xbb, 0x2a, 0x00, 0x00, 0x00, /* +9  mov ebx, 42: rbx never saved */
		0x45, 0x31, 0xe4,             /* +14 xor r12d, r12d: r12 never saved */
		0x48, 0xb8,                   /* +17 movabs rax, shapes_stop */
	};
	static const uint8_t tail[] = {
		0xff, 0xd0, /* +27 call rax */
		0x41, 0x5d, /* +29 pop r13 */
		0x5d,       /* pop rbp */
		0xc3,       /* ret */
	};
	uint8_t *p = code + AT;
	const uint64_t target = (uint64_t)(uintptr_t)shapes_stop;
	memcpy(p, head, sizeof(head));
	memcpy(p + sizeof(head), &target, 8);
	memcpy(p + sizeof(head) + 8, tail, sizeof(tail));
	const size_t len = sizeof(head) + 8 + sizeof(tail);
	fns[1] = (jitmap_jit_function){"shapes_abi_break", (uint64_t)(uintptr_t)p, len};
	region->size = AT + len;
	region->num_functions = 2;

	jitmap_smbuilder *smb = jitmap_smbuilder_new(JITMAP_ORDER_AUTO);
	void *sm = NULL;
	size_t sm_size = 0;
	jitmap_error err = {0};
	/* The JIT function's frame: the pushed rbp (8); shapes_abi_break's: rbp and r13 (16). */
	if (!smb || jitmap_smbuilder_add_function(smb, fns[0].address, 8, &err) ||
	    jitmap_smbuilder_add_record(smb, 1, (uint32_t)(fine - 2), NULL, 0, NULL, 0, &err) ||
	    jitmap_smbuilder_add_function(smb, fns[1].address, 16, &err) ||
	    jitmap_smbuilder_add_record(smb, 2, 29, NULL, 0, NULL, 0, &err) ||
	    jitmap_smbuilder_finish(smb, &sm, &sm_size)) {
		fprintf(stderr, "jitmap-shapes: stack map: %s\n", err.reason[0] ? err.reason : "failed");
		jitmap_smbuilder_free(smb);
		return NULL;
	}
	jitmap_smbuilder_free(smb);
	region->stackmap = sm;
	region->stackmap_size = sm_size;
	printf("jitmap-shapes: abi-break name=shapes_abi_break addr=0x%" PRIx64 " rbx=+9 r12=+14\n",
	       fns[1].address);
	return sm;
}

/* Make every function symbol of the image absolute (SHN_ABS, st_value its address); with
 * keep_section, only st_value becomes the address (the "address" case). */
static void make_symbols_absolute(void *image, int keep_section)
{
	Elf64_Ehdr *eh = image;
	Elf64_Shdr *sh = (Elf64_Shdr *)((char *)image + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		Elf64_Sym *s = (Elf64_Sym *)((char *)image + sh[i].sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*s); k++) {
			if (ELF64_ST_TYPE(s[k].st_info) != STT_FUNC)
				continue;
			if (s[k].st_shndx && s[k].st_shndx < eh->e_shnum && eh->e_type == ET_REL)
				s[k].st_value += sh[s[k].st_shndx].sh_addr;
			if (!keep_section)
				s[k].st_shndx = SHN_ABS;
		}
	}
}

int main(int argc, char **argv)
{
	const char *c = argc == 2 ? argv[1] : "";
	const int absolute = !strcmp(c, "absolute"), outermost = !strcmp(c, "outermost");
	const int address = !strcmp(c, "address"), abi = !strcmp(c, "abi-break");
	if (!absolute && !outermost && !address && !abi) {
		fprintf(stderr, "usage: jitmap-shapes-jit absolute|address|outermost|abi-break\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	size_t n = 0;
	code[n++] = 0x55;                                     /* push rbp */
	code[n++] = 0x48, code[n++] = 0x89, code[n++] = 0xe5; /* mov rbp,rsp */
	code[n++] = 0x48, code[n++] = 0xb8;                   /* movabs rax, shapes_stop */
	const uint64_t target = (uint64_t)(uintptr_t)shapes_stop;
	memcpy(code + n, &target, 8);
	n += 8;
	code[n++] = 0xff, code[n++] = 0xd0; /* call rax */
	code[n++] = 0x5d;                   /* pop rbp */
	code[n++] = 0xc3;                   /* ret */

	const char *name = absolute  ? "shapes_absolute_fn"
			   : address ? "shapes_address_fn"
			   : abi     ? "shapes_abi_fine"
				     : "shapes_outermost_fn";
	jitmap_jit_function fns[2] = {{name, (uint64_t)(uintptr_t)code, n}};
	const jitmap_jit_function f = fns[0];
	jitmap_jit_region region = {.address = f.address, .size = n, .functions = fns,
				    .num_functions = 1};
	void *stackmap = NULL;
	if (abi && (stackmap = abi_break(code, n, fns, &region)) == NULL)
		return 1;
	if (outermost) {
		uint8_t *eh = code + 2048; /* within reach of a pc-relative sdata4 */
		region.eh_frame = eh;
		region.eh_frame_size = outermost_eh_frame(eh, code, n);
	}
	void *image;
	size_t size;
	jitmap_error err;
	if (jitmap_jit_build_image(&region, &image, &size, &err)) {
		fprintf(stderr, "jitmap-shapes: %s\n", err.reason);
		return 1;
	}
	if (absolute || address)
		make_symbols_absolute(image, address);
	if (register_image(image, size)) {
		fprintf(stderr, "jitmap-shapes: no __jit_debug_descriptor\n");
		return 1;
	}
	printf("jitmap-shapes: function name=%s addr=0x%" PRIx64 "\n", name, f.address);
	((void (*)(void))code)();
	printf("jitmap-shapes: done\n");
	return 0;
}

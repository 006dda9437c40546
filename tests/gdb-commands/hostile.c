/* hostile.c: a JIT whose GDB JIT descriptor list goes bad, for the commands' robustness tests.
 *
 *   gdb-commands-hostile MODE
 *
 * It registers one good entry through jitmap's producer API: a function, good_fn, that keeps
 * 4242 in rbx across a call to hostile_stop (where tests break), with stackmap record 5 at the
 * call's return address (locations: rbx, and rdi, which no callee saves). Then, behind the debugger's back (no call to the registration hook,
 * as a crashed JIT would leave it), it appends to the list what MODE says:
 *
 *   cycle       two entries pointing at each other     self        an entry pointing at itself
 *   wild        an entry whose next pointer is wild    wild-image  an image at a wild address
 *   huge        an image size of 2^60 bytes            version     the descriptor's version is 7
 *   garbage     an image that is not ELF               truncated   the good image cut in half
 *   bad-section a copy of the good image whose live .llvm_stackmaps (at its sh_addr) is malformed
 *   long        150,000 more entries (empty images)
 *
 * The good entry stays first, so a reader that stops at the first problem still has it
 * (except under `version`, where there is no list at all).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "jitmap/producer.h"

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

__attribute__((visibility("default"), noinline, used)) void hostile_stop(void)
{
	__asm__ volatile("" ::: "memory");
}

static struct jit_code_entry *new_entry(const void *image, uint64_t size)
{
	struct jit_code_entry *e = calloc(1, sizeof(*e));
	if (!e) {
		perror("calloc");
		exit(1);
	}
	e->symfile_addr = image;
	e->symfile_size = size;
	return e;
}

static void append(struct jit_code_entry *after, struct jit_code_entry *e)
{
	e->prev_entry = after;
	e->next_entry = after->next_entry;
	after->next_entry = e;
}

/* The section header of .llvm_stackmaps in an ELF64 image, or NULL. */
static Elf64_Shdr *stackmap_header(uint8_t *img, size_t size)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	if (size < sizeof(*eh) || eh->e_shoff > size ||
	    (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size - eh->e_shoff)
		return NULL;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff);
	const char *names = (const char *)img + sh[eh->e_shstrndx].sh_offset;
	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (!strcmp(names + sh[i].sh_name, ".llvm_stackmaps"))
			return &sh[i];
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gdb-commands-hostile MODE\n");
		return 2;
	}
	const char *mode = argv[1];

	/* good_fn: push rbx; mov ebx, 4242; movabs rax, hostile_stop; call rax; pop rbx; ret */
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	size_t n = 0;
	code[n++] = 0x53;
	code[n++] = 0xbb;
	const uint32_t v = 4242;
	memcpy(code + n, &v, 4);
	n += 4;
	code[n++] = 0x48;
	code[n++] = 0xb8;
	const uint64_t target = (uint64_t)(uintptr_t)hostile_stop;
	memcpy(code + n, &target, 8);
	n += 8;
	code[n++] = 0xff;
	code[n++] = 0xd0;
	const uint32_t record_offset = (uint32_t)n;
	code[n++] = 0x5b;
	code[n++] = 0xc3;
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC)) {
		perror("mprotect");
		return 1;
	}

	jitmap_error err;
	jitmap_smbuilder *b = jitmap_smbuilder_new(JITMAP_ORDER_AUTO);
	/* rbx (callee-saved: known in frame 1) and rdi (caller-saved: hostile_stop may have
	 * changed it, so frame 1 must show it as unavailable, never frame 0's value). */
	const jitmap_location locs[2] = {{JITMAP_LOC_REGISTER, 8, 3, 0}, {JITMAP_LOC_REGISTER, 8, 5, 0}};
	void *sm;
	size_t sm_size;
	if (!b || jitmap_smbuilder_add_function(b, (uint64_t)(uintptr_t)code, 8, &err) ||
	    jitmap_smbuilder_add_record(b, 5, record_offset, locs, 2, NULL, 0, &err) ||
	    jitmap_smbuilder_finish(b, &sm, &sm_size)) {
		fprintf(stderr, "hostile: stackmap\n");
		return 1;
	}
	jitmap_smbuilder_free(b);
	const jitmap_jit_function fn = {"good_fn", (uint64_t)(uintptr_t)code, n};
	const jitmap_jit_region region = {
		.address = (uint64_t)(uintptr_t)code, .size = n, .functions = &fn, .num_functions = 1,
		.stackmap = sm, .stackmap_size = sm_size,
	};
	jitmap_jit_entry *entry = jitmap_jit_register(&region, &err);
	if (!entry) {
		fprintf(stderr, "hostile: register: %s\n", err.reason);
		return 1;
	}
	size_t image_size;
	const uint8_t *image = jitmap_jit_entry_image(entry, &image_size);

	struct jit_descriptor *d = dlsym(RTLD_DEFAULT, "__jit_debug_descriptor");
	if (!d || !d->first_entry) {
		fprintf(stderr, "hostile: no descriptor\n");
		return 1;
	}
	struct jit_code_entry *good = d->first_entry;

	if (!strcmp(mode, "cycle")) {
		struct jit_code_entry *a = new_entry(image, image_size), *c = new_entry(image, image_size);
		append(good, a);
		append(a, c);
		c->next_entry = a;
	} else if (!strcmp(mode, "self")) {
		struct jit_code_entry *a = new_entry(image, image_size);
		append(good, a);
		a->next_entry = a;
	} else if (!strcmp(mode, "wild")) {
		struct jit_code_entry *a = new_entry(image, image_size);
		append(good, a);
		a->next_entry = (struct jit_code_entry *)(uintptr_t)0xdead00000000;
	} else if (!strcmp(mode, "wild-image")) {
		append(good, new_entry((const void *)(uintptr_t)0xdead00000000, 4096));
	} else if (!strcmp(mode, "huge")) {
		append(good, new_entry(image, UINT64_C(1) << 60));
	} else if (!strcmp(mode, "version")) {
		d->version = 7;
	} else if (!strcmp(mode, "garbage")) {
		uint8_t *junk = malloc(4096);
		memset(junk, 0x5a, 4096);
		append(good, new_entry(junk, 4096));
	} else if (!strcmp(mode, "truncated")) {
		append(good, new_entry(image, image_size / 2));
	} else if (!strcmp(mode, "bad-section")) {
		uint8_t *copy = malloc(image_size);
		memcpy(copy, image, image_size);
		Elf64_Shdr *sh = stackmap_header(copy, image_size);
		if (!sh) {
			fprintf(stderr, "hostile: no .llvm_stackmaps in the image\n");
			return 1;
		}
		uint8_t *live = malloc(sm_size);
		memcpy(live, sm, sm_size);
		live[0] = 9; /* an unknown stackmap version */
		sh->sh_addr = (uint64_t)(uintptr_t)live;
		append(good, new_entry(copy, image_size));
	} else if (!strcmp(mode, "long")) {
		struct jit_code_entry *at = good;
		for (int i = 0; i < 150000; i++) {
			struct jit_code_entry *e = new_entry(NULL, 0);
			append(at, e);
			at = e;
		}
	} else {
		fprintf(stderr, "hostile: unknown mode %s\n", mode);
		return 2;
	}
	printf("hostile: mode=%s good=%p image=%p size=%zu\n", mode, (void *)good, (const void *)image,
	       image_size);
	fflush(stdout);

	((void (*)(void))(uintptr_t)code)();
	return 0;
}

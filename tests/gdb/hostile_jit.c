/* hostile_jit.c: a program that registers corrupt JIT entries with the GDB JIT interface, to
 * check that GDB with jitmap's reader neither crashes nor hangs (tests/gdb/test_gdb_hostile.sh).
 *
 * It defines its own `__jit_debug_descriptor` and `__jit_debug_register_code` (as LuaJIT does)
 * and registers, one at a time through the hook, each entry the chosen case names. Then it
 * calls hostile_stop() (break there) through a few frames, and exits 0.
 *
 * Usage: jitmap-hostile-jit [--pause] CASE...   (CASE "all": every case below)
 *   garbage     4 KiB of pseudo-random bytes
 *   wild-addr   symfile_addr points at unmapped memory
 *   huge-size   symfile_size is 2^62 (the image is 4 KiB)
 *   zero-size   symfile_size is 0
 *   truncated   an ELF header whose section header table lies past the image
 *   shnum       e_shnum 0xffff, e_shentsize 0
 *   wrap        a code section whose sh_addr + sh_size wraps past 2^64
 *   wild-sections  .llvm_stackmaps and .eh_frame at unmapped addresses, 2^40 bytes
 *   bad-symbols symbols with names past the string table, wild section indexes, huge sizes
 *   bad-stackmap .llvm_stackmaps placed at real memory holding garbage, counts that lie
 *   self-text  a code section over this program's own main(), with a symbol "not_main"
 *   overlap    two images over the same code (the second replaces the first)
 *   cyclic     the list loops: A.next = B, B.next = A (register A)
 *   unregister-unknown  an unregister notice for an entry never registered
 * --pause: after registering, wait (at most 300 s) in hostile_stop until a debugger sets
 * jitmap_hostile_resume = 1 (for attach, where GDB walks the whole list).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default"), noinline, used))

/* -- The GDB JIT interface (GDB manual, "JIT Interface") -- */

typedef enum { JIT_NOACTION = 0, JIT_REGISTER_FN, JIT_UNREGISTER_FN } jit_actions_t;

struct jit_code_entry {
	struct jit_code_entry *next_entry, *prev_entry;
	const char *symfile_addr;
	uint64_t symfile_size;
};

struct jit_descriptor {
	uint32_t version;
	uint32_t action_flag;
	struct jit_code_entry *relevant_entry, *first_entry;
};

__attribute__((visibility("default"), used)) struct jit_descriptor __jit_debug_descriptor = {
	1, 0, NULL, NULL};

EXPORT void __jit_debug_register_code(void)
{
	__asm__ volatile("" ::: "memory");
}

static void notify(struct jit_code_entry *e, jit_actions_t action)
{
	__jit_debug_descriptor.relevant_entry = e;
	__jit_debug_descriptor.action_flag = action;
	__jit_debug_register_code();
	__jit_debug_descriptor.action_flag = JIT_NOACTION;
	__jit_debug_descriptor.relevant_entry = NULL;
}

/* Link `e` at the head of the list and register it. Entries are never freed: the program is
 * short-lived and the debugger may read the list at any time. */
static void add(const void *addr, uint64_t size)
{
	struct jit_code_entry *e = calloc(1, sizeof(*e));
	if (!e)
		exit(1);
	e->symfile_addr = addr;
	e->symfile_size = size;
	e->next_entry = __jit_debug_descriptor.first_entry;
	if (e->next_entry)
		e->next_entry->prev_entry = e;
	__jit_debug_descriptor.first_entry = e;
	notify(e, JIT_REGISTER_FN);
}

/* -- A small ELF64 relocatable image, for the cases to corrupt -- */

enum { S_NULL, S_TEXT, S_SM, S_EH, S_SYMTAB, S_STRTAB, S_SHSTRTAB, NSEC };

struct image {
	Elf64_Ehdr eh;
	Elf64_Shdr sh[NSEC];
	Elf64_Sym sym[3];
	char strtab[32];
	char shstrtab[80];
	uint8_t sm[64];
	uint8_t eh_frame[32];
};

static struct image *new_image(uint64_t text_addr, uint64_t text_size)
{
	struct image *im = calloc(1, sizeof(*im));
	if (!im)
		exit(1);
	memcpy(im->eh.e_ident, ELFMAG, SELFMAG);
	im->eh.e_ident[EI_CLASS] = ELFCLASS64;
	im->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	im->eh.e_ident[EI_VERSION] = EV_CURRENT;
	im->eh.e_type = ET_REL;
	im->eh.e_machine = EM_X86_64;
	im->eh.e_version = EV_CURRENT;
	im->eh.e_ehsize = sizeof(Elf64_Ehdr);
	im->eh.e_shoff = offsetof(struct image, sh);
	im->eh.e_shentsize = sizeof(Elf64_Shdr);
	im->eh.e_shnum = NSEC;
	im->eh.e_shstrndx = S_SHSTRTAB;
	static const char names[] = "\0.text\0.llvm_stackmaps\0.eh_frame\0.symtab\0.strtab\0.shstrtab";
	memcpy(im->shstrtab, names, sizeof(names));
	const unsigned off_text = 1, off_sm = 7, off_eh = 23, off_symtab = 33, off_strtab = 41,
		       off_shstrtab = 49;
	im->sh[S_TEXT] = (Elf64_Shdr){.sh_name = off_text, .sh_type = SHT_NOBITS,
				      .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = text_addr,
				      .sh_size = text_size, .sh_addralign = 16};
	im->sh[S_SM] = (Elf64_Shdr){.sh_name = off_sm, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
				    .sh_offset = offsetof(struct image, sm), .sh_size = sizeof(im->sm),
				    .sh_addralign = 8};
	im->sh[S_EH] = (Elf64_Shdr){.sh_name = off_eh, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
				    .sh_offset = offsetof(struct image, eh_frame),
				    .sh_size = sizeof(im->eh_frame), .sh_addralign = 8};
	im->sh[S_SYMTAB] = (Elf64_Shdr){.sh_name = off_symtab, .sh_type = SHT_SYMTAB,
					.sh_offset = offsetof(struct image, sym),
					.sh_size = sizeof(im->sym), .sh_link = S_STRTAB, .sh_info = 1,
					.sh_entsize = sizeof(Elf64_Sym), .sh_addralign = 8};
	im->sh[S_STRTAB] = (Elf64_Shdr){.sh_name = off_strtab, .sh_type = SHT_STRTAB,
					.sh_offset = offsetof(struct image, strtab),
					.sh_size = sizeof(im->strtab), .sh_addralign = 1};
	im->sh[S_SHSTRTAB] = (Elf64_Shdr){.sh_name = off_shstrtab, .sh_type = SHT_STRTAB,
					  .sh_offset = offsetof(struct image, shstrtab),
					  .sh_size = sizeof(im->shstrtab), .sh_addralign = 1};
	memcpy(im->strtab, "\0hostile_fn\0not_main", 21);
	im->sym[1] = (Elf64_Sym){.st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				 .st_shndx = S_TEXT, .st_value = 0, .st_size = text_size};
	/* Without sh_addr (not placed), the stackmap and CFI are unused unless a case says so. */
	return im;
}

/* -- Cases -- */

static uint8_t scratch[1 << 16]; /* real, mapped memory for images to point into */

static void case_garbage(void)
{
	uint8_t *b = malloc(4096);
	uint32_t x = 2463534242u;
	for (int i = 0; i < 4096; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		b[i] = (uint8_t)x;
	}
	add(b, 4096);
}

static void case_wild_addr(void) { add((const void *)(uintptr_t)0xdead00000000ull, 4096); }

static void case_huge_size(void) { add(new_image((uint64_t)(uintptr_t)scratch, 64), UINT64_C(1) << 62); }

static void case_zero_size(void) { add(new_image((uint64_t)(uintptr_t)scratch, 64), 0); }

static void case_truncated(void)
{
	struct image *im = new_image((uint64_t)(uintptr_t)scratch, 64);
	im->eh.e_shoff = sizeof(*im) - 8;
	add(im, sizeof(*im));
}

static void case_shnum(void)
{
	struct image *im = new_image((uint64_t)(uintptr_t)scratch, 64);
	im->eh.e_shnum = 0xffff;
	im->eh.e_shentsize = 0;
	add(im, sizeof(*im));
}

static void case_wrap(void)
{
	struct image *im = new_image(UINT64_C(0xfffffffffffff000), 0x100000);
	add(im, sizeof(*im));
}

static void case_wild_sections(void)
{
	struct image *im = new_image((uint64_t)(uintptr_t)scratch + 4096, 256);
	im->sh[S_SM].sh_addr = 0x10;
	im->sh[S_SM].sh_size = UINT64_C(1) << 40;
	im->sh[S_EH].sh_addr = 0xdead00000000ull;
	im->sh[S_EH].sh_size = (UINT64_C(64) << 20) - 8;
	add(im, sizeof(*im));
}

static void case_bad_symbols(void)
{
	struct image *im = new_image((uint64_t)(uintptr_t)scratch + 8192, 256);
	im->sym[1].st_name = 100000;
	im->sym[2] = (Elf64_Sym){.st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				 .st_shndx = 0xfff0, .st_value = UINT64_MAX - 4, .st_size = UINT64_MAX};
	im->sh[S_STRTAB].sh_size = 3; /* names run past it, unterminated */
	im->sh[S_SYMTAB].sh_size = sizeof(im->sym) - 5;
	add(im, sizeof(*im));
}

static void case_bad_stackmap(void)
{
	/* A stackmap "placed" in real memory: a v3 header whose counts claim far more than the
	 * section holds, then noise. */
	uint8_t *sm = scratch + 16384;
	memset(sm, 0xa5, 64);
	sm[0] = 3, sm[1] = 0, sm[2] = 0, sm[3] = 0;
	const uint32_t counts[3] = {0x7fffffff, 0x7fffffff, 0x7fffffff};
	memcpy(sm + 4, counts, sizeof(counts));
	struct image *im = new_image((uint64_t)(uintptr_t)scratch + 12288, 256);
	im->sh[S_SM].sh_addr = (uint64_t)(uintptr_t)sm;
	im->sh[S_SM].sh_size = 64;
	im->sh[S_EH].sh_addr = (uint64_t)(uintptr_t)sm; /* garbage CFI too */
	im->sh[S_EH].sh_size = 64;
	add(im, sizeof(*im));
}

int main(int argc, char **argv);

static void case_self_text(void)
{
	/* Lies about the program's own code: a JIT image whose code covers main(). */
	struct image *im = new_image((uint64_t)(uintptr_t)main, 64);
	im->sym[1].st_name = 12; /* "not_main" */
	add(im, sizeof(*im));
}

static void case_overlap(void)
{
	add(new_image((uint64_t)(uintptr_t)scratch + 20480, 256), sizeof(struct image));
	add(new_image((uint64_t)(uintptr_t)scratch + 20480 + 128, 256), sizeof(struct image));
}

static void case_cyclic(void)
{
	struct jit_code_entry *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	if (!a || !b)
		exit(1);
	struct image *im = new_image((uint64_t)(uintptr_t)scratch + 24576, 256);
	a->symfile_addr = (const char *)im;
	a->symfile_size = sizeof(*im);
	b->symfile_addr = (const char *)im;
	b->symfile_size = sizeof(*im);
	a->next_entry = b, b->next_entry = a;
	a->prev_entry = b, b->prev_entry = a;
	__jit_debug_descriptor.first_entry = a;
	notify(a, JIT_REGISTER_FN);
}

static void case_unregister_unknown(void)
{
	static struct jit_code_entry ghost = {NULL, NULL, (const char *)scratch, 64};
	notify(&ghost, JIT_UNREGISTER_FN);
}

static const struct {
	const char *name;
	void (*run)(void);
} cases[] = {
	{"garbage", case_garbage},
	{"wild-addr", case_wild_addr},
	{"huge-size", case_huge_size},
	{"zero-size", case_zero_size},
	{"truncated", case_truncated},
	{"shnum", case_shnum},
	{"wrap", case_wrap},
	{"wild-sections", case_wild_sections},
	{"bad-symbols", case_bad_symbols},
	{"bad-stackmap", case_bad_stackmap},
	{"self-text", case_self_text},
	{"overlap", case_overlap},
	{"unregister-unknown", case_unregister_unknown},
	{"cyclic", case_cyclic}, /* last: nothing can be linked after a cycle */
};

/* -- Where the debugger stops -- */

__attribute__((visibility("default"), used)) volatile int jitmap_hostile_resume;
static int pause_here;

EXPORT void hostile_stop(int depth)
{
	printf("jitmap-hostile: stop depth=%d\n", depth);
	fflush(stdout);
	if (pause_here) {
		printf("jitmap-hostile: paused pid=%ld\n", (long)getpid());
		fflush(stdout);
		for (int ms = 0; !jitmap_hostile_resume && ms < 300000; ms += 10)
			usleep(10000);
	}
	__asm__ volatile("" ::: "memory");
}

EXPORT void hostile_level(int depth)
{
	if (depth > 0)
		hostile_level(depth - 1);
	else
		hostile_stop(depth);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	int ran = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pause")) {
			pause_here = 1;
			continue;
		}
		const int all = !strcmp(argv[i], "all");
		int found = 0;
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			if (all || !strcmp(argv[i], cases[c].name)) {
				printf("jitmap-hostile: case %s\n", cases[c].name);
				cases[c].run();
				found = ran = 1;
			}
		}
		if (!found) {
			fprintf(stderr, "jitmap-hostile: unknown case %s\n", argv[i]);
			return 2;
		}
	}
	if (!ran) {
		fprintf(stderr, "usage: jitmap-hostile-jit [--pause] CASE... (or all)\n");
		return 2;
	}
	hostile_level(3);
	printf("jitmap-hostile: done\n");
	return 0;
}

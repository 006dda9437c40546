/* hostile.c: the one inferior that mistreats the GDB JIT interface, for every debugger test.
 *
 *   jitmap-hostile [--pause] MODE...
 *
 * It writes its own `__jit_debug_descriptor` and `__jit_debug_register_code` (as LuaJIT does:
 * no jitmap code in the inferior, so that it can write what jitmap's producer never would) and
 * first registers one good entry: good_fn, hand-written x86-64 code without unwind tables
 *
 *     push rbx; mov rbx, [rip + DATA]; movabs rax, hostile_stop; call rax; mov eax, ebx;
 *     pop rbx; ret                                               (DATA: a word holding 4242)
 *
 * and a stackmap (v3) with record 5 at the call's return address: rbx (4242; callee-saved, so
 * known in frame 1) and rdi (caller-saved: hostile_stop may have changed it, so a debugger must
 * call it unavailable in frame 1, never show frame 0's value). Then each MODE, in order, adds
 * something bad beside it, and main calls run_jit -> good_fn -> hostile_stop(phase), where the
 * tests break:
 *
 *   #0 hostile_stop  #1 good_fn (JIT, record 5)  #2 run_jit  #3 main
 *
 * Announced modes: a bad entry registered through the hook (the debugger reads it at once).
 *   garbage           4 KiB of pseudo-random bytes, not ELF
 *   wild-image        symfile_addr at unmapped memory
 *   zero-size         an ELF image with symfile_size 0
 *   truncated         an ELF image whose section header table lies past symfile_size
 *   shnum             e_shnum 0xffff, e_shentsize 0
 *   wrap              a code section whose sh_addr + sh_size wraps past 2^64
 *   wild-sections     .llvm_stackmaps and .eh_frame at unmapped addresses, 2^40 bytes
 *   bad-symbols       symbol names past the string table, wild section indexes, huge sizes
 *   stackmap-counts   a live .llvm_stackmaps whose counts (0x7fffffff each) overflow any
 *                     32-bit size, then noise; the same noise as .eh_frame
 *   stackmap-version  a live .llvm_stackmaps of version 9
 *   self-text         an image whose code covers this program's main(), named "not_main"
 *   overlap           two images over the same code (the second replaces the first)
 *   unregister-unknown  an unregister notice for an entry never registered
 *   action-flag       an entry linked and the hook called with action_flag 0x7777
 *   huge-announced    symfile_size 2^62 through the hook (GDB aborts with any JIT reader)
 * Silent modes: the list changed behind the debugger's back (as a crashed JIT leaves it); the
 * list-shape ones (*) end the list, so nothing may follow them.
 *   cycle (*)         two entries pointing at each other
 *   self (*)          an entry pointing at itself
 *   wild-next (*)     an entry whose next pointer is wild
 *   long (*)          150,000 more entries (empty images)
 *   huge              an entry of 2^60 bytes
 *   version           the descriptor's version becomes 7 (the hook is called, with no action)
 * Modes with two stops (hostile_stop(1), then hostile_stop(2)):
 *   change            at stop 2, good_fn's data word and its live stackmap were rewritten in
 *                     place, its code not: record 7 (not 5), rbx 4343
 *   unregister        stop 1 is in doomed_fn (a second entry, record 6, rbx 6161); then it is
 *                     unregistered (hook) and its code, image and stackmap unmapped; stop 2 is
 *                     in good_fn
 *   churn             a thread rewrites the list without pause (entries linked and unlinked,
 *                     their memory unmapped, sizes and next pointers flipped) while the main
 *                     thread stops: the debugger sees whatever instant it stopped at, twice
 *
 * Truth lines (stdout): "jitmap-hostile: good name=good_fn entry=0x.. image=0x.. code=0x..
 * record=5 pc=0x.. rbx=4242 ..." for each good function, "jitmap-hostile: mode NAME
 * entry=0x.. image=0x.. size=N" for what each mode added, "jitmap-hostile: stop phase=N".
 * --pause: hostile_stop waits (at most 300 s) until a debugger sets jitmap_hostile_resume = 1
 * (for attach). Exit 0 at the end, 2 on usage errors.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default"), noinline, used))

/* -- The GDB JIT interface (GDB manual, "JIT Interface"), written by hand -- */

enum { JIT_NOACTION = 0, JIT_REGISTER_FN, JIT_UNREGISTER_FN };

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
	1, JIT_NOACTION, NULL, NULL};

EXPORT void __jit_debug_register_code(void)
{
	__asm__ volatile("" ::: "memory");
}

static void notify(struct jit_code_entry *e, uint32_t action)
{
	__jit_debug_descriptor.relevant_entry = e;
	__jit_debug_descriptor.action_flag = action;
	__jit_debug_register_code();
	__jit_debug_descriptor.action_flag = JIT_NOACTION;
	__jit_debug_descriptor.relevant_entry = NULL;
}

static struct jit_code_entry *tail; /* the last entry linked */

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void *zalloc(size_t n)
{
	void *p = calloc(1, n);
	if (!p)
		die("calloc");
	return p;
}

static struct jit_code_entry *new_entry(const void *image, uint64_t size)
{
	struct jit_code_entry *e = zalloc(sizeof(*e));
	e->symfile_addr = image;
	e->symfile_size = size;
	return e;
}

/* Link `e` at the end of the list (entries are never freed unless a mode says so). */
static void link_entry(struct jit_code_entry *e)
{
	e->prev_entry = tail;
	e->next_entry = NULL;
	if (tail)
		tail->next_entry = e;
	else
		__jit_debug_descriptor.first_entry = e;
	tail = e;
}

static void unlink_entry(struct jit_code_entry *e)
{
	if (e->prev_entry)
		e->prev_entry->next_entry = e->next_entry;
	else
		__jit_debug_descriptor.first_entry = e->next_entry;
	if (e->next_entry)
		e->next_entry->prev_entry = e->prev_entry;
	if (tail == e)
		tail = e->prev_entry;
}

static struct jit_code_entry *announce(const void *image, uint64_t size)
{
	struct jit_code_entry *e = new_entry(image, size);
	link_entry(e);
	notify(e, JIT_REGISTER_FN);
	return e;
}

/* -- ELF64 images: one layout, good or corrupted -- */

enum { S_NULL, S_TEXT, S_SM, S_EH, S_SYMTAB, S_STRTAB, S_SHSTRTAB, NSEC };

/* Contents first, the section header table last (as linkers place it), so that cutting an
 * image short loses its section headers. */
struct image {
	Elf64_Ehdr eh;
	Elf64_Sym sym[3];
	char strtab[32];
	char shstrtab[80];
	uint8_t sm[128];
	uint8_t eh_frame[64];
	Elf64_Shdr sh[NSEC];
};

static const char SHSTRTAB[] =
	"\0.text\0.llvm_stackmaps\0.eh_frame\0.symtab\0.strtab\0.shstrtab\0.note.hostile";
enum { N_TEXT = 1, N_SM = 7, N_EH = 23, N_SYMTAB = 33, N_STRTAB = 41, N_SHSTRTAB = 49,
       N_NOTE = 59 };
static const char STRTAB[] = "\0hostile_fn\0not_main"; /* names at 1 and 12 */

/* An ET_REL image like LLVM's registered copies and jitmap's producer: .text SHT_NOBITS at the
 * code (the debugger reads code from the process), a section-relative STT_FUNC symbol, and a
 * .llvm_stackmaps copy whose sh_addr is the live section. Without `sm`, and in the .eh_frame
 * slot unless a mode makes it one, an empty note stands in: an entry without a stackmap is
 * normal, so what a debugger says about a bad image is about what makes it bad. */
static struct image *new_image(const char *fn_name, uint64_t text_addr, uint64_t text_size,
			       const void *sm, size_t sm_size)
{
	struct image *im = zalloc(sizeof(*im));
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
	memcpy(im->shstrtab, SHSTRTAB, sizeof(SHSTRTAB));
	im->sh[S_TEXT] = (Elf64_Shdr){.sh_name = N_TEXT, .sh_type = SHT_NOBITS,
				      .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = text_addr,
				      .sh_offset = sizeof(Elf64_Ehdr), .sh_size = text_size,
				      .sh_addralign = 16};
	if (sm_size > sizeof(im->sm))
		die("stackmap too large for the image");
	if (sm)
		memcpy(im->sm, sm, sm_size);
	im->sh[S_SM] = (Elf64_Shdr){.sh_name = sm ? N_SM : N_NOTE, .sh_type = SHT_PROGBITS,
				    .sh_flags = sm ? SHF_ALLOC : 0,
				    .sh_addr = (uint64_t)(uintptr_t)sm,
				    .sh_offset = offsetof(struct image, sm), .sh_size = sm_size,
				    .sh_addralign = 8};
	im->sh[S_EH] = (Elf64_Shdr){.sh_name = N_NOTE, .sh_type = SHT_PROGBITS,
				    .sh_offset = offsetof(struct image, eh_frame), .sh_addralign = 8};
	im->sh[S_SYMTAB] = (Elf64_Shdr){.sh_name = N_SYMTAB, .sh_type = SHT_SYMTAB,
					.sh_offset = offsetof(struct image, sym),
					.sh_size = 2 * sizeof(Elf64_Sym), .sh_link = S_STRTAB,
					.sh_info = 1, .sh_entsize = sizeof(Elf64_Sym),
					.sh_addralign = 8};
	im->sh[S_STRTAB] = (Elf64_Shdr){.sh_name = N_STRTAB, .sh_type = SHT_STRTAB,
					.sh_offset = offsetof(struct image, strtab),
					.sh_size = sizeof(im->strtab), .sh_addralign = 1};
	im->sh[S_SHSTRTAB] = (Elf64_Shdr){.sh_name = N_SHSTRTAB, .sh_type = SHT_STRTAB,
					  .sh_offset = offsetof(struct image, shstrtab),
					  .sh_size = sizeof(im->shstrtab), .sh_addralign = 1};
	/* The function's name goes at 21, after the fixed ones. */
	memcpy(im->strtab, STRTAB, sizeof(STRTAB));
	if (strlen(fn_name) >= sizeof(im->strtab) - sizeof(STRTAB))
		die("function name too long");
	strcpy(im->strtab + sizeof(STRTAB), fn_name);
	im->sym[1] = (Elf64_Sym){.st_name = sizeof(STRTAB),
				 .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				 .st_shndx = S_TEXT, .st_value = 0, .st_size = text_size};
	return im;
}

/* Make the image's stackmap slot a .llvm_stackmaps at `addr` of `size` bytes. */
static void set_stackmap(struct image *im, uint64_t addr, uint64_t size)
{
	im->sh[S_SM].sh_name = N_SM;
	im->sh[S_SM].sh_flags = SHF_ALLOC;
	im->sh[S_SM].sh_addr = addr;
	im->sh[S_SM].sh_size = size;
}

/* Turn the image's spare section into a .eh_frame at `addr` of `size` bytes. */
static void set_eh_frame(struct image *im, uint64_t addr, uint64_t size)
{
	im->sh[S_EH].sh_name = N_EH;
	im->sh[S_EH].sh_flags = SHF_ALLOC;
	im->sh[S_EH].sh_addr = addr;
	im->sh[S_EH].sh_size = size;
}

/* -- Good JIT functions -- */

/* A stackmap v3 (LLVM's StackMaps.rst) for one function with one record of two register
 * locations: header (16), function (24), record header (16), 2 locations (12 each), then
 * padding to 8, a u16 padding and the live-out count, padding to 8: 88 bytes. */
enum { SM_SIZE = 88, SM_RECORD_ID = 40 };

static void put(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void write_stackmap(uint8_t *sm, uint64_t fn_addr, uint64_t id, uint32_t offset)
{
	memset(sm, 0, SM_SIZE);
	sm[0] = 3;                 /* version */
	put(sm + 4, 1, 4);         /* functions */
	put(sm + 8, 0, 4);         /* constants */
	put(sm + 12, 1, 4);        /* records */
	put(sm + 16, fn_addr, 8);  /* function address */
	put(sm + 24, 8, 8);        /* stack size: the pushed rbx */
	put(sm + 32, 1, 8);        /* record count */
	put(sm + 40, id, 8);       /* record: id */
	put(sm + 48, offset, 4);   /* instruction offset */
	put(sm + 54, 2, 2);        /* locations */
	const uint16_t regs[2] = {3, 5}; /* DWARF: rbx, rdi */
	for (int i = 0; i < 2; i++) {
		uint8_t *l = sm + 56 + 12 * i;
		l[0] = 1;                  /* Register */
		put(l + 2, 8, 2);          /* size */
		put(l + 4, regs[i], 2);    /* DWARF register */
	}
	/* 80: u16 padding, u16 live-outs = 0, then padding to 88 */
}

struct jit_fn {
	const char *name;
	uint8_t *code;  /* its own page: code, its data word, then the live stackmap */
	size_t code_size;
	uint8_t *data;  /* the value good_fn loads into rbx */
	uint8_t *sm;    /* the live .llvm_stackmaps */
	uint32_t record_offset;
	uint64_t id;
	uint32_t rbx;
	struct image *image;
	struct jit_code_entry *entry;
};

EXPORT void hostile_stop(int phase);

static void write_code(struct jit_fn *f)
{
	uint8_t *c = f->code;
	size_t n = 0;
	c[n++] = 0x53; /* push rbx */
	c[n++] = 0x48; /* mov rbx, [rip + disp32]: the value, from the data word */
	c[n++] = 0x8b;
	c[n++] = 0x1d;
	put(c + n, (uint64_t)(f->data - (c + n + 4)), 4);
	n += 4;
	c[n++] = 0x48; /* movabs rax, imm64 */
	c[n++] = 0xb8;
	put(c + n, (uint64_t)(uintptr_t)hostile_stop, 8);
	n += 8;
	c[n++] = 0xff; /* call rax */
	c[n++] = 0xd0;
	/* The record's instruction must not move rsp: jitmap's frame-size rule declines there,
	 * since pushed call arguments look the same (unwinder/step_frame.c). */
	f->record_offset = (uint32_t)n;
	c[n++] = 0x89; /* mov eax, ebx */
	c[n++] = 0xd8;
	c[n++] = 0x5b; /* pop rbx */
	c[n++] = 0xc3; /* ret */
	f->code_size = n;
	put(f->data, f->rbx, 8);
	write_stackmap(f->sm, (uint64_t)(uintptr_t)f->code, f->id, f->record_offset);
}

static void make_fn(struct jit_fn *f, const char *name, uint64_t id, uint32_t rbx)
{
	memset(f, 0, sizeof(*f));
	f->name = name, f->id = id, f->rbx = rbx;
	f->code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f->code == MAP_FAILED)
		die("mmap");
	f->data = f->code + 1024;
	f->sm = f->code + 2048;
	write_code(f);
	if (mprotect(f->code, 4096, PROT_READ | PROT_EXEC))
		die("mprotect");
	/* The image in pages of its own, so that `unregister` can unmap it. */
	struct image *im = new_image(name, (uint64_t)(uintptr_t)f->code, f->code_size, f->sm, SM_SIZE);
	f->image = mmap(NULL, sizeof(*im), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f->image == MAP_FAILED)
		die("mmap");
	memcpy(f->image, im, sizeof(*im));
	free(im);
	f->entry = announce(f->image, sizeof(*f->image));
	printf("jitmap-hostile: good name=%s entry=%p image=%p size=%zu code=%p record=%llu "
	       "pc=%p rbx=%u stackmap=%p\n",
	       name, (void *)f->entry, (void *)f->image, sizeof(*f->image), (void *)f->code,
	       (unsigned long long)id, (void *)(f->code + f->record_offset), rbx, (void *)f->sm);
}

/* Rewrite f's data and stackmap in place (the same addresses, the same code): a JIT that
 * patches a function's constants and renumbers its records without telling the debugger. */
static void rewrite_fn(struct jit_fn *f, uint64_t id, uint32_t rbx)
{
	if (mprotect(f->code, 4096, PROT_READ | PROT_WRITE))
		die("mprotect");
	f->id = id, f->rbx = rbx;
	put(f->data, f->rbx, 8);
	write_stackmap(f->sm, (uint64_t)(uintptr_t)f->code, f->id, f->record_offset);
	if (mprotect(f->code, 4096, PROT_READ | PROT_EXEC))
		die("mprotect");
	printf("jitmap-hostile: good name=%s entry=%p image=%p size=%zu code=%p record=%llu "
	       "pc=%p rbx=%u stackmap=%p rewritten\n",
	       f->name, (void *)f->entry, (void *)f->image, sizeof(*f->image), (void *)f->code,
	       (unsigned long long)id, (void *)(f->code + f->record_offset), rbx, (void *)f->sm);
}

/* -- Modes -- */

static struct jit_fn good, doomed;
static uint8_t scratch[1 << 16]; /* real, mapped memory for bad images to place code in */
#define SCRATCH(k) ((uint64_t)(uintptr_t)scratch + 4096 * (k))

static void said(const char *mode, const struct jit_code_entry *e, const char *what)
{
	printf("jitmap-hostile: mode %s entry=%p image=%p size=%llu%s%s\n", mode, (const void *)e,
	       e ? (const void *)e->symfile_addr : NULL,
	       e ? (unsigned long long)e->symfile_size : 0ull, what ? " " : "", what ? what : "");
}

static struct image *bad_image(int k)
{
	return new_image("hostile_fn", SCRATCH(k), 256, NULL, 0);
}

static void m_garbage(const char *m)
{
	uint8_t *b = zalloc(4096);
	uint32_t x = 2463534242u;
	for (int i = 0; i < 4096; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		b[i] = (uint8_t)x;
	}
	said(m, announce(b, 4096), NULL);
}

static void m_wild_image(const char *m) { said(m, announce((void *)(uintptr_t)0xdead00000000ull, 4096), NULL); }

static void m_zero_size(const char *m) { said(m, announce(bad_image(1), 0), NULL); }

static void m_truncated(const char *m)
{
	said(m, announce(bad_image(2), offsetof(struct image, sh) + 8), NULL);
}

static void m_shnum(const char *m)
{
	struct image *im = bad_image(3);
	im->eh.e_shnum = 0xffff;
	im->eh.e_shentsize = 0;
	said(m, announce(im, sizeof(*im)), NULL);
}

static void m_wrap(const char *m)
{
	struct image *im = new_image("hostile_fn", UINT64_C(0xfffffffffffff000), 0x100000, NULL, 0);
	said(m, announce(im, sizeof(*im)), NULL);
}

static void m_wild_sections(const char *m)
{
	struct image *im = bad_image(4);
	set_stackmap(im, 0x10, UINT64_C(1) << 40);
	set_eh_frame(im, 0xdead00000000ull, (UINT64_C(64) << 20) - 8);
	said(m, announce(im, sizeof(*im)), NULL);
}

static void m_bad_symbols(const char *m)
{
	struct image *im = bad_image(5);
	im->sym[1].st_name = 100000;
	im->sym[2] = (Elf64_Sym){.st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				 .st_shndx = 0xfff0, .st_value = UINT64_MAX - 4, .st_size = UINT64_MAX};
	im->sh[S_STRTAB].sh_size = 3; /* names run past it, unterminated */
	im->sh[S_SYMTAB].sh_size = sizeof(im->sym) - 5;
	said(m, announce(im, sizeof(*im)), NULL);
}

static void m_stackmap_counts(const char *m)
{
	/* Placed in real memory: a v3 header whose counts claim far more than the section holds
	 * (0x7fffffff functions of 24 bytes overflow 32 bits), then noise. */
	uint8_t *sm = scratch + 4096 * 6 + 2048;
	memset(sm, 0xa5, 64);
	sm[0] = 3, sm[1] = 0, sm[2] = 0, sm[3] = 0;
	put(sm + 4, 0x7fffffff, 4);
	put(sm + 8, 0x7fffffff, 4);
	put(sm + 12, 0x7fffffff, 4);
	struct image *im = bad_image(6);
	set_stackmap(im, (uint64_t)(uintptr_t)sm, 64);
	memcpy(im->sm, sm, 64); /* the registered copy says the same */
	set_eh_frame(im, (uint64_t)(uintptr_t)sm, 64); /* noise as CFI too */
	char what[64];
	snprintf(what, sizeof(what), "stackmap=%p", (void *)sm);
	said(m, announce(im, sizeof(*im)), what);
}

static void m_stackmap_version(const char *m)
{
	/* A good stackmap for code in scratch, but of version 9, live. */
	uint8_t *sm = scratch + 4096 * 7 + 2048;
	write_stackmap(sm, SCRATCH(7), 8, 16);
	sm[0] = 9;
	struct image *im = new_image("hostile_fn", SCRATCH(7), 256, sm, SM_SIZE);
	char what[64];
	snprintf(what, sizeof(what), "stackmap=%p", (void *)sm);
	said(m, announce(im, sizeof(*im)), what);
}

int main(int argc, char **argv);

static void m_self_text(const char *m)
{
	struct image *im = new_image("not_main", (uint64_t)(uintptr_t)main, 64, NULL, 0);
	said(m, announce(im, sizeof(*im)), NULL);
}

static void m_overlap(const char *m)
{
	said(m, announce(bad_image(8), sizeof(struct image)), "first");
	struct image *im = new_image("hostile_fn", SCRATCH(8) + 128, 256, NULL, 0);
	said(m, announce(im, sizeof(*im)), "second");
}

static void m_unregister_unknown(const char *m)
{
	static struct jit_code_entry ghost = {NULL, NULL, (const char *)scratch, 64};
	notify(&ghost, JIT_UNREGISTER_FN);
	said(m, &ghost, NULL);
}

static void m_action_flag(const char *m)
{
	struct jit_code_entry *e = new_entry(bad_image(9), sizeof(struct image));
	link_entry(e);
	notify(e, 0x7777);
	said(m, e, NULL);
}

static void m_huge_announced(const char *m)
{
	said(m, announce(bad_image(10), UINT64_C(1) << 62), NULL);
}

static void m_cycle(const char *m)
{
	struct jit_code_entry *a = new_entry(bad_image(11), sizeof(struct image));
	struct jit_code_entry *b = new_entry(bad_image(12), sizeof(struct image));
	link_entry(a);
	link_entry(b);
	b->next_entry = a;
	said(m, a, "first");
	said(m, b, "second");
}

static void m_self(const char *m)
{
	struct jit_code_entry *a = new_entry(bad_image(11), sizeof(struct image));
	link_entry(a);
	a->next_entry = a;
	said(m, a, NULL);
}

static void m_wild_next(const char *m)
{
	struct jit_code_entry *a = new_entry(bad_image(11), sizeof(struct image));
	link_entry(a);
	a->next_entry = (struct jit_code_entry *)(uintptr_t)0xdead00000000ull;
	said(m, a, NULL);
}

static void m_long(const char *m)
{
	struct jit_code_entry *first = NULL;
	for (int i = 0; i < 150000; i++) {
		struct jit_code_entry *e = new_entry(NULL, 0);
		link_entry(e);
		if (!first)
			first = e;
	}
	said(m, first, "150000 entries");
}

static void m_huge(const char *m)
{
	struct jit_code_entry *e = new_entry(bad_image(13), UINT64_C(1) << 60);
	link_entry(e);
	said(m, e, NULL);
}

static void m_version(const char *m)
{
	__jit_debug_descriptor.version = 7;
	notify(NULL, JIT_NOACTION);
	said(m, NULL, "version=7");
}

/* -- Modes with two stops -- */

static int two_stops;
static void (*between[4])(void); /* run between stop 1 and stop 2 */
static int nbetween;
static struct jit_fn *first_stop_in = &good;

static void at_stop2(void (*fn)(void))
{
	two_stops = 1;
	if (nbetween < 4)
		between[nbetween++] = fn;
}

static void rewrite_good(void) { rewrite_fn(&good, 7, 4343); }

static void m_change(const char *m)
{
	at_stop2(rewrite_good);
	said(m, good.entry, "rewritten at stop 2: record=7 rbx=4343");
}

static void unregister_doomed(void)
{
	unlink_entry(doomed.entry);
	notify(doomed.entry, JIT_UNREGISTER_FN);
	/* Freed as a JIT frees: the code (with its live stackmap) and the image are gone. */
	if (munmap(doomed.code, 4096) || munmap(doomed.image, sizeof(*doomed.image)))
		die("munmap");
	printf("jitmap-hostile: unregistered name=%s entry=%p code=%p\n", doomed.name,
	       (void *)doomed.entry, (void *)doomed.code);
}

static void m_unregister(const char *m)
{
	make_fn(&doomed, "doomed_fn", 6, 6161);
	at_stop2(unregister_doomed);
	first_stop_in = &doomed;
	said(m, doomed.entry, "unregistered after stop 1");
}

/* churn: a second thread that keeps changing the list after the good entry, with no notice
 * and no lock, so that a stop freezes it at any instant. Its entries live in their own pages,
 * which it unmaps after unlinking them: a stale pointer is then wild. */
enum { CHURN_SLOTS = 8 };
static volatile int churn_stop;
static volatile unsigned long churn_rounds;

static void *churn_thread(void *arg)
{
	(void)arg;
	struct jit_code_entry *slot[CHURN_SLOTS] = {0};
	uint32_t x = 88172645u;
	struct image *im = bad_image(14);
	while (!churn_stop) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		const unsigned k = x % CHURN_SLOTS;
		volatile struct jit_code_entry *e = slot[k];
		switch ((x >> 8) % 4) {
		case 0: /* link a new entry, its fields written after it is reachable */
			if (e)
				break;
			{
				struct jit_code_entry *n = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
								MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				if (n == MAP_FAILED)
					break;
				link_entry(n);
				e = n;
				e->symfile_addr = (const char *)im;
				e->symfile_size = sizeof(*im);
				slot[k] = n;
			}
			break;
		case 1: /* unlink and unmap */
			if (!e)
				break;
			unlink_entry(slot[k]);
			munmap(slot[k], 4096);
			slot[k] = NULL;
			break;
		case 2: /* a size that lies, for a moment */
			if (!e)
				break;
			e->symfile_size = (x & 0x100) ? UINT64_C(1) << 60 : 0;
			e->symfile_size = sizeof(*im);
			break;
		default: /* a next pointer that loops, for a moment */
			if (!e)
				break;
			{
				struct jit_code_entry *next = e->next_entry;
				e->next_entry = slot[k];
				e->next_entry = next;
			}
			break;
		}
		churn_rounds++;
	}
	return NULL;
}

static pthread_t churn_tid;

static void m_churn(const char *m)
{
	two_stops = 1;
	if (pthread_create(&churn_tid, NULL, churn_thread, NULL))
		die("pthread_create");
	while (churn_rounds < 100000)
		usleep(1000);
	said(m, good.entry, "a thread changes the entries after it");
}

static const struct mode {
	const char *name;
	void (*run)(const char *);
	int ends_list;
} modes[] = {
	{"garbage", m_garbage, 0},
	{"wild-image", m_wild_image, 0},
	{"zero-size", m_zero_size, 0},
	{"truncated", m_truncated, 0},
	{"shnum", m_shnum, 0},
	{"wrap", m_wrap, 0},
	{"wild-sections", m_wild_sections, 0},
	{"bad-symbols", m_bad_symbols, 0},
	{"stackmap-counts", m_stackmap_counts, 0},
	{"stackmap-version", m_stackmap_version, 0},
	{"self-text", m_self_text, 0},
	{"overlap", m_overlap, 0},
	{"unregister-unknown", m_unregister_unknown, 0},
	{"action-flag", m_action_flag, 0},
	{"huge-announced", m_huge_announced, 0},
	{"huge", m_huge, 0},
	{"version", m_version, 0},
	{"change", m_change, 0},
	{"unregister", m_unregister, 0},
	{"churn", m_churn, 1},
	{"cycle", m_cycle, 1},
	{"self", m_self, 1},
	{"wild-next", m_wild_next, 1},
	{"long", m_long, 1},
};

/* -- Where the debugger stops -- */

__attribute__((visibility("default"), used)) volatile int jitmap_hostile_resume;
static int pause_here;

EXPORT void hostile_stop(int phase)
{
	printf("jitmap-hostile: stop phase=%d\n", phase);
	if (pause_here) {
		printf("jitmap-hostile: paused pid=%ld\n", (long)getpid());
		fflush(stdout);
		for (int ms = 0; !jitmap_hostile_resume && ms < 300000; ms += 10)
			usleep(10000);
		jitmap_hostile_resume = 0;
	}
	__asm__ volatile("" ::: "memory");
}

/* The C frame between main and the JIT code: its caller must be found again through good_fn,
 * which has no unwind tables. */
EXPORT void run_jit(const struct jit_fn *f, int phase)
{
	((void (*)(int))(uintptr_t)f->code)(phase);
	__asm__ volatile("" ::: "memory");
}

static const struct mode *find_mode(const char *name)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(name, modes[i].name))
			return &modes[i];
	return NULL;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	int first = 1;
	if (argc > 1 && !strcmp(argv[1], "--pause"))
		pause_here = 1, first = 2;
	if (first >= argc) {
		fprintf(stderr, "usage: jitmap-hostile [--pause] MODE...\n");
		return 2;
	}
	for (int i = first; i < argc; i++) {
		const struct mode *md = find_mode(argv[i]);
		if (!md) {
			fprintf(stderr, "jitmap-hostile: unknown mode %s\n", argv[i]);
			return 2;
		}
		if (md->ends_list && i + 1 < argc) {
			fprintf(stderr, "jitmap-hostile: %s ends the list: nothing may follow it\n",
				argv[i]);
			return 2;
		}
	}
	make_fn(&good, "good_fn", 5, 4242);
	for (int i = first; i < argc; i++) {
		find_mode(argv[i])->run(argv[i]);
	}
	run_jit(first_stop_in, 1);
	if (two_stops) {
		for (int i = 0; i < nbetween; i++)
			between[i]();
		run_jit(&good, 2);
	}
	if (churn_tid) {
		churn_stop = 1;
		pthread_join(churn_tid, NULL);
	}
	printf("jitmap-hostile: done\n");
	return 0;
}

/* reader_stress.c: plays GDB for jitmap-reader's callbacks, with hostile inputs.
 *
 *   jitmap-reader-stress [ITERATIONS [SEED]] [OBJECT.o ...]
 *
 * Builds JIT images the two ways real JITs do (a producer-API image over hand-written code
 * with its stackmap; each OBJECT.o "loaded" the way LLVM's JIT loads it: sh_addr patched,
 * contents placed in fake target memory), then, for ITERATIONS rounds: mutates an image (byte
 * noise, lying section headers, wild addresses and sizes), hands it to read(), asks unwind()
 * and get_frame_id() about random and real frames over a fake stack, scribbles on target
 * memory, invalidates, and walks the exported API. The callbacks check what GDB 13 needs and
 * does not check itself (a block name, blocks inside [begin, end), only mapped x86-64 DWARF
 * registers, a `free` function on every value set): a violation aborts. Meant to run under
 * AddressSanitizer and UndefinedBehaviorSanitizer (cmake -DJITMAP_SANITIZE=ON); in a plain
 * build it still catches crashes and the checks above.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gdb/jit-reader.h>

#include <jitmap/producer.h>

#include "jitmap-reader-api.h"

extern struct gdb_reader_funcs *gdb_init_reader(void);

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "reader-stress: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                           \
		}                                                                          \
	} while (0)

/* -- Randomness (xorshift64*, seeded) -- */

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}
static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }

/* -- Fake target memory -- */

struct region {
	uint64_t addr;
	size_t len;
	uint8_t *bytes;
};
static struct region mem[64];
static int nmem;

static struct region *map(uint64_t addr, size_t len)
{
	CHECK(nmem < 64);
	struct region *r = &mem[nmem++];
	r->addr = addr;
	r->len = len;
	r->bytes = calloc(1, len);
	CHECK(r->bytes);
	return r;
}

static enum gdb_status target_read(GDB_CORE_ADDR addr, void *buf, int len)
{
	CHECK(len >= 0 && buf);
	for (int i = 0; i < nmem; i++) {
		const struct region *r = &mem[i];
		if (addr >= r->addr && addr - r->addr <= r->len && (uint64_t)len <= r->len - (addr - r->addr)) {
			memcpy(buf, r->bytes + (addr - r->addr), (size_t)len);
			return GDB_SUCCESS;
		}
	}
	return GDB_FAIL;
}

/* -- Symbol callbacks: what GDB 13 would choke on -- */

static int dummy_object, dummy_symtab;
static size_t blocks_seen;

static struct gdb_object *object_open(struct gdb_symbol_callbacks *cb)
{
	(void)cb;
	return (struct gdb_object *)&dummy_object;
}
static struct gdb_symtab *symtab_open(struct gdb_symbol_callbacks *cb, struct gdb_object *obj,
				      const char *file)
{
	(void)cb, (void)file;
	CHECK(obj == (struct gdb_object *)&dummy_object);
	return (struct gdb_symtab *)&dummy_symtab;
}
static struct gdb_block *block_open(struct gdb_symbol_callbacks *cb, struct gdb_symtab *st,
				    struct gdb_block *parent, GDB_CORE_ADDR begin,
				    GDB_CORE_ADDR end, const char *name)
{
	(void)cb, (void)parent;
	CHECK(st == (struct gdb_symtab *)&dummy_symtab);
	CHECK(name && *name); /* GDB 13 crashes on a NULL name */
	CHECK(begin < end);
	blocks_seen++;
	return NULL;
}
static void line_mapping_add(struct gdb_symbol_callbacks *cb, struct gdb_symtab *st, int n,
			     struct gdb_line_mapping *lines)
{
	(void)cb, (void)st;
	CHECK(n >= 0 && (n == 0 || lines));
	for (int i = 1; i < n; i++)
		CHECK(lines[i - 1].pc <= lines[i].pc);
}
static void symtab_close(struct gdb_symbol_callbacks *cb, struct gdb_symtab *st) { (void)cb, (void)st; }
static void object_close(struct gdb_symbol_callbacks *cb, struct gdb_object *o) { (void)cb, (void)o; }

static struct gdb_symbol_callbacks symcb = {object_open, symtab_open, block_open, symtab_close,
					    object_close, line_mapping_add, target_read, NULL};

/* -- Unwind callbacks: a frame's registers -- */

static uint64_t frame_reg[17];
static int frame_defined[17];
static size_t sets;

static void value_free(struct gdb_reg_value *v) { free(v); }

static struct gdb_reg_value *reg_get(struct gdb_unwind_callbacks *cb, int n)
{
	(void)cb;
	CHECK(n >= 0 && n <= 16); /* GDB aborts on a DWARF number x86-64 does not map */
	struct gdb_reg_value *v = malloc(sizeof(*v) + 7);
	CHECK(v);
	v->size = 8;
	v->defined = frame_defined[n];
	v->free = value_free;
	memcpy(v->value, &frame_reg[n], 8);
	return v;
}

static void reg_set(struct gdb_unwind_callbacks *cb, int n, struct gdb_reg_value *v)
{
	(void)cb;
	CHECK(n >= 0 && n <= 16);
	CHECK(v && v->free); /* GDB calls it unconditionally */
	CHECK(v->size >= 8);
	sets++;
	v->free(v);
}

static struct gdb_unwind_callbacks uwcb = {reg_get, reg_set, target_read, NULL};
static struct gdb_unwind_callbacks idcb = {reg_get, NULL, target_read, NULL};

/* -- Images -- */

struct image {
	uint8_t *bytes;
	size_t len;
	uint64_t code_lo, code_hi;
};
static struct image images[16];
static int nimages;

/* Hand-written code (a frame-pointer function and a frameless one) with a stackmap, through the
 * producer API, as jitmap-handjit does. */
static void add_producer_image(uint64_t base)
{
	struct region *code = map(base, 256);
	static const uint8_t fp_fn[] = {0x55, 0x48, 0x89, 0xe5, 0x53, 0x48, 0x83, 0xec, 0x08,
					0xff, 0xd0, 0x48, 0x83, 0xc4, 0x08, 0x5b, 0x5d, 0xc3};
	static const uint8_t leaf[] = {0x48, 0x83, 0xec, 0x18, 0xff, 0xd0, 0x48, 0x83, 0xc4, 0x18, 0xc3};
	memcpy(code->bytes, fp_fn, sizeof(fp_fn));
	memcpy(code->bytes + 64, leaf, sizeof(leaf));
	jitmap_smbuilder *b = jitmap_smbuilder_new(JITMAP_ORDER_AUTO);
	const jitmap_location locs[2] = {{JITMAP_LOC_REGISTER, 8, 3, 0}, {JITMAP_LOC_INDIRECT, 8, 6, -16}};
	CHECK(b && !jitmap_smbuilder_add_function(b, base, 24, NULL) &&
	      !jitmap_smbuilder_add_record(b, 1, 11, locs, 2, NULL, 0, NULL) &&
	      !jitmap_smbuilder_add_function(b, base + 64, 24, NULL) &&
	      !jitmap_smbuilder_add_record(b, 2, 6, locs, 1, NULL, 0, NULL));
	void *sm;
	size_t sm_len;
	CHECK(!jitmap_smbuilder_finish(b, &sm, &sm_len));
	jitmap_smbuilder_free(b);
	struct region *smr = map(base + 0x10000, sm_len);
	memcpy(smr->bytes, sm, sm_len);
	const jitmap_jit_function fns[2] = {{"fp_fn", base, sizeof(fp_fn)}, {"leaf", base + 64, sizeof(leaf)}};
	const jitmap_jit_region region = {base, 256, fns, 2, smr->bytes, sm_len, NULL, 0};
	void *img;
	size_t len;
	jitmap_error err;
	CHECK(!jitmap_jit_build_image(&region, &img, &len, &err));
	/* The image places the stackmap at its bytes' address in this process: move it to the
	 * fake target's address. */
	Elf64_Ehdr *eh = img;
	Elf64_Shdr *sh = (Elf64_Shdr *)((uint8_t *)img + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_addr == (uint64_t)(uintptr_t)smr->bytes)
			sh[i].sh_addr = smr->addr;
	free(sm);
	images[nimages++] = (struct image){img, len, base, base + 256};
}

/* An object file loaded the way LLVM's JIT loads it: each allocated section gets an address
 * (sh_addr patched in the registered copy) and its contents in target memory; the copy keeps
 * its unrelocated contents. */
static void add_object_image(const char *path, uint64_t base)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "reader-stress: %s: cannot open, skipped\n", path);
		return;
	}
	uint8_t *buf = malloc(1 << 22);
	size_t len = fread(buf, 1, 1 << 22, f);
	fclose(f);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > len) {
		fprintf(stderr, "reader-stress: %s: not an ELF64 object, skipped\n", path);
		free(buf);
		return;
	}
	Elf64_Shdr *sh = (Elf64_Shdr *)(buf + eh->e_shoff);
	uint64_t at = base, lo = UINT64_MAX, hi = 0;
	for (int i = 0; i < eh->e_shnum; i++) {
		if (!(sh[i].sh_flags & SHF_ALLOC) || !sh[i].sh_size || nmem >= 60)
			continue;
		at = (at + 4095) & ~4095ull;
		sh[i].sh_addr = at;
		struct region *r = map(at, sh[i].sh_size);
		if (sh[i].sh_type != SHT_NOBITS && sh[i].sh_offset + sh[i].sh_size <= len)
			memcpy(r->bytes, buf + sh[i].sh_offset, sh[i].sh_size);
		if (sh[i].sh_flags & SHF_EXECINSTR) {
			lo = at < lo ? at : lo;
			hi = at + sh[i].sh_size > hi ? at + sh[i].sh_size : hi;
		}
		at += sh[i].sh_size;
	}
	/* Relocate the placed contents as the JIT's linker does (the registered copy stays as it
	 * is): absolute and PC-relative relocations against symbols of placed sections. */
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_RELA || sh[i].sh_info >= eh->e_shnum ||
		    sh[i].sh_link >= eh->e_shnum || sh[i].sh_offset + sh[i].sh_size > len)
			continue;
		const Elf64_Shdr *target = &sh[sh[i].sh_info], *symtab = &sh[sh[i].sh_link];
		struct region *r = NULL;
		for (int m = 0; m < nmem; m++)
			if (target->sh_addr && mem[m].addr == target->sh_addr)
				r = &mem[m];
		if (!r || symtab->sh_offset + symtab->sh_size > len)
			continue;
		const Elf64_Rela *rel = (const Elf64_Rela *)(buf + sh[i].sh_offset);
		const Elf64_Sym *syms = (const Elf64_Sym *)(buf + symtab->sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*rel); k++) {
			const size_t si = ELF64_R_SYM(rel[k].r_info);
			if (si >= symtab->sh_size / sizeof(*syms) || syms[si].st_shndx >= eh->e_shnum ||
			    rel[k].r_offset + 8 > r->len)
				continue;
			const uint64_t S = sh[syms[si].st_shndx].sh_addr + syms[si].st_value;
			const uint64_t P = r->addr + rel[k].r_offset;
			const uint64_t v = S + (uint64_t)rel[k].r_addend;
			switch (ELF64_R_TYPE(rel[k].r_info)) {
			case R_X86_64_64: memcpy(r->bytes + rel[k].r_offset, &v, 8); break;
			case R_X86_64_PC64: { const uint64_t d = v - P; memcpy(r->bytes + rel[k].r_offset, &d, 8); break; }
			case R_X86_64_PC32: { const uint32_t d = (uint32_t)(v - P); memcpy(r->bytes + rel[k].r_offset, &d, 4); break; }
			default: break;
			}
		}
	}
	images[nimages++] = (struct image){buf, len, lo == UINT64_MAX ? base : lo, hi ? hi : base};
}

/* -- Mutations -- */

static const uint64_t interesting[] = {0, 1, 7, 8, 0x40, 0xffff, 0x7fffffff, 0x80000000,
				       0xffffffff, 1ull << 32, 1ull << 40, 1ull << 62,
				       UINT64_MAX, UINT64_MAX - 7, 0x100000};

static void mutate(uint8_t *b, size_t len)
{
	const int n = 1 + (int)below(4);
	for (int k = 0; k < n; k++) {
		switch (below(4)) {
		case 0: /* a random byte */
			b[below(len)] = (uint8_t)rnd();
			break;
		case 1: { /* a section header field gets an interesting value */
			const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b;
			if (len < sizeof(*eh) || eh->e_shoff >= len || !eh->e_shnum)
				break;
			const uint64_t sh = eh->e_shoff + below(eh->e_shnum) * sizeof(Elf64_Shdr) + 8 * below(8);
			uint64_t v = interesting[below(sizeof(interesting) / sizeof(interesting[0]))];
			if (below(3) == 0 && nmem)
				v = mem[below(nmem)].addr + below(64);
			if (sh + 8 <= len)
				memcpy(b + sh, &v, 8);
			break;
		}
		case 2: { /* an ELF header field */
			uint64_t v = interesting[below(sizeof(interesting) / sizeof(interesting[0]))];
			const size_t at = below(sizeof(Elf64_Ehdr) - 1);
			memcpy(b + at, &v, at + 8 <= len ? 8 : len - at);
			break;
		}
		default: { /* a run of noise */
			const size_t at = below(len), n2 = below(32);
			for (size_t i = 0; i < n2 && at + i < len; i++)
				b[at + i] = (uint8_t)rnd();
		}
		}
	}
}

/* -- Frames -- */

static struct region *stack;

static void random_frame(void)
{
	const struct image *im = &images[below(nimages)];
	const uint64_t sp = stack->addr + 8 * below(stack->len / 8 - 64);
	for (int i = 0; i < 17; i++) {
		frame_reg[i] = rnd();
		frame_defined[i] = below(8) != 0;
	}
	frame_reg[7] = sp;
	frame_reg[6] = below(2) ? sp + 8 * below(64) : rnd();
	switch (below(4)) {
	case 0: frame_reg[16] = rnd(); break;
	case 1: frame_reg[16] = im->code_hi; break;
	default: frame_reg[16] = im->code_lo + below(im->code_hi - im->code_lo + 1);
	}
	/* Return addresses into the code on the fake stack, now and then. */
	for (int i = 0; i < 8; i++)
		if (below(3) == 0) {
			const uint64_t ra = im->code_lo + below(im->code_hi - im->code_lo + 1);
			memcpy(stack->bytes + below(stack->len - 8), &ra, 8);
		}
}

int main(int argc, char **argv)
{
	long iterations = 3000;
	int a = 1;
	if (a < argc && argv[a][0] >= '0' && argv[a][0] <= '9')
		iterations = strtol(argv[a++], NULL, 10);
	if (a < argc && argv[a][0] >= '0' && argv[a][0] <= '9')
		rng_state = (strtoull(argv[a++], NULL, 10) + 1) * 0x9e3779b97f4a7c15ull;

	stack = map(0x7ff000000000ull, 1 << 16);
	for (size_t i = 0; i < stack->len; i++)
		stack->bytes[i] = (uint8_t)rnd();
	add_producer_image(0x10000000);
	add_producer_image(0x20000000);
	for (; a < argc && nimages < 15; a++)
		add_object_image(argv[a], 0x30000000 + 0x1000000ull * (uint64_t)nimages);

	struct gdb_reader_funcs *r = gdb_init_reader();
	CHECK(r && r->reader_version == GDB_READER_INTERFACE_VERSION);
	CHECK(gdb_init_reader()->reader_version != GDB_READER_INTERFACE_VERSION); /* one at a time */

	/* By default the reader declines images GDB's own reader names (all of these): claim
	 * them here, so that the symbol callbacks are played; the rounds switch modes. */
	CHECK(jitmap_reader_get_claim() == JITMAP_READER_CLAIM_UNNAMED);
	CHECK(jitmap_reader_set_claim(JITMAP_READER_CLAIM_AUTO) == JITMAP_READER_CLAIM_UNNAMED);
	CHECK(jitmap_reader_set_claim(7) == -EINVAL);

	/* The pristine images first: they must be claimed and unwind. */
	for (int i = 0; i < nimages; i++)
		r->read(r, &symcb, images[i].bytes, (long)images[i].len);
	CHECK(blocks_seen >= 4);
	CHECK(jitmap_reader_num_entries() == (size_t)nimages);

	size_t unwound = 0;
	for (long it = 0; it < iterations; it++) {
		const struct image *im = &images[below(nimages)];
		if (below(2)) {
			uint8_t *copy = malloc(im->len);
			memcpy(copy, im->bytes, im->len);
			mutate(copy, im->len);
			long len = (long)im->len;
			if (below(16) == 0)
				len = (long)below(im->len + 1);
			r->read(r, &symcb, copy, len);
			free(copy);
		} else {
			r->read(r, &symcb, im->bytes, (long)im->len);
		}
		for (int k = 0; k < 8; k++) {
			random_frame();
			const size_t before = sets;
			if (r->unwind(r, &uwcb) == GDB_SUCCESS) {
				CHECK(sets > before);
				unwound++;
				struct gdb_frame_id id1 = r->get_frame_id(r, &idcb);
				struct gdb_frame_id id2 = r->get_frame_id(r, &idcb);
				CHECK(id1.code_address == id2.code_address &&
				      id1.stack_address == id2.stack_address);
			}
		}
		switch (below(16)) {
		case 0: /* the JIT rewrites its memory */
			for (int k = 0; k < 16; k++) {
				struct region *m = &mem[below(nmem)];
				m->bytes[below(m->len)] = (uint8_t)rnd();
			}
			jitmap_reader_invalidate(JITMAP_READER_RECHECK);
			break;
		case 1:
			jitmap_reader_invalidate(JITMAP_READER_RECHECK);
			break;
		case 2:
			if (below(8) == 0)
				jitmap_reader_invalidate(JITMAP_READER_FORGET);
			break;
		case 3: {
			jitmap_index *idx = jitmap_reader_index();
			CHECK(idx);
			jitmap_hit hits[4];
			jitmap_index_lookup(idx, im->code_lo + below(256), hits, 4);
			break;
		}
		case 4:
			for (size_t i = 0; i < jitmap_reader_num_entries(); i++) {
				jitmap_reader_entry e;
				if (!jitmap_reader_entry_info(i, (int)below(2), &e))
					CHECK(e.code_start < e.code_end && e.problem);
			}
			break;
		case 6: {
			uint64_t starts[4];
			const size_t n = jitmap_reader_find_function("fp_fn", starts, 4);
			for (size_t i = 0; i < n && i < 4; i++) {
				const char *name = NULL;
				if (!jitmap_reader_lookup(starts[i], NULL, &name, NULL, NULL)) /* not stale */
					CHECK(name && !strcmp(name, "fp_fn"));
			}
			CHECK(jitmap_reader_find_function(NULL, NULL, 0) == 0);
			break;
		}
		case 7: { /* the user changes `set jitmap reader-claim` */
			static const int modes[] = {JITMAP_READER_CLAIM_AUTO, JITMAP_READER_CLAIM_NEVER,
						    JITMAP_READER_CLAIM_UNNAMED};
			const int m = modes[below(3)];
			CHECK(jitmap_reader_set_claim(m) >= 0 && jitmap_reader_get_claim() == m);
			break;
		}
		case 5: {
			const jitmap_stackmap *sm;
			const char *name;
			uint64_t lo, hi;
			jitmap_reader_lookup(im->code_lo + below(300), &sm, &name, &lo, &hi);
			break;
		}
		default:
			break;
		}
	}
	jitmap_reader_stats st;
	CHECK(!jitmap_reader_get_stats(&st));
	printf("reader-stress: %ld rounds, %" PRIu64 " reads (%" PRIu64 " claimed, %" PRIu64
	       " declined, %" PRIu64 " rejected, %" PRIu64 " replaced, %" PRIu64
	       " dropped), %zu frames unwound, last problem: %s\n",
	       iterations, st.reads, st.claimed, st.declined, st.rejected, st.replaced, st.dropped,
	       unwound, jitmap_reader_last_error());
	CHECK(unwound > 0);
	r->destroy(r);
	CHECK(!jitmap_reader_loaded());
	CHECK(jitmap_reader_index() == NULL);
	for (int i = 0; i < nimages; i++)
		free(images[i].bytes);
	for (int i = 0; i < nmem; i++)
		free(mem[i].bytes);
	return 0;
}

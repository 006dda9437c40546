/* core_seeds.c OUTDIR [ELF]: write the seed cores of fuzz_core (make-corpus.sh builds and runs
 * it). Each seed is a small process: threads with registers, an auxiliary vector, NT_FILE
 * mappings, the first page of ELF (default: this program, for its build ID) dumped at a
 * mapping's start, two adjacent segments and a JIT descriptor with two entries; for x86-64 and
 * AArch64 little endian, s390x big endian; plus variants with broken notes, one without
 * NT_FILE and one with a small core's note (jitmap-core-handler --small). The last byte of every seed is fuzz_core's trailer: bit 0, --exe.
 *
 * The "scan" seeds carry the file the core maps (trailer bit 1: fuzz_core writes it under a
 * sysroot of its own), laid out as a kernel core of a JIT is: /bin/prog, a small shared
 * object defining __jit_debug_descriptor and a .llvm_stackmaps section, mapped at 0x600000
 * in a read-only segment the core holds no bytes of (read from the file), the descriptor's
 * page dumped (0x601000: the descriptor, two entries: the first registers the file's own
 * image, the second half a page of the core), so that jitmap_process_scan_stopped finds, walks
 * and reads all of it. */
#include <elf.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_builder.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

static uint8_t page[4096], seg[0x200], jit[0x100];

/* -- The scan seed's file: a shared object, laid out by hand (little-endian x86-64) -- */

#define PROG_BASE 0x600000 /* where the core maps it: its bias (its PT_LOAD is at 0) */
#define PROG_DESC 0x1000   /* __jit_debug_descriptor's value: the core's dumped page */
#define PROG_TEXT 0x100
#define PROG_SM 0x120      /* .llvm_stackmaps: one function, one record */
#define PROG_SM_SIZE 80
#define PROG_SYMTAB 0x170
#define PROG_STRTAB 0x1b8
#define PROG_SHSTRTAB 0x1d8
#define PROG_SHDRS 0x220
#define PROG_SIZE (PROG_SHDRS + 6 * 64)

static uint8_t prog[PROG_SIZE];

static void le(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void shdr(int i, uint32_t name, uint32_t type, uint64_t flags, uint64_t addr,
		 uint64_t off, uint64_t size, uint32_t link, uint32_t info, uint64_t entsize)
{
	uint8_t *h = prog + PROG_SHDRS + 64 * i;
	le(h, name, 4);
	le(h + 4, type, 4);
	le(h + 8, flags, 8);
	le(h + 16, addr, 8);
	le(h + 24, off, 8);
	le(h + 32, size, 8);
	le(h + 40, link, 4);
	le(h + 44, info, 4);
	le(h + 48, 8, 8);
	le(h + 56, entsize, 8);
}

static void make_prog(void)
{
	memset(prog, 0, sizeof(prog));
	memcpy(prog, "\177ELF\2\1\1", 7);
	le(prog + 16, ET_DYN, 2);
	le(prog + 18, EM_X86_64, 2);
	le(prog + 20, EV_CURRENT, 4);
	le(prog + 32, 64, 8);          /* e_phoff */
	le(prog + 40, PROG_SHDRS, 8);  /* e_shoff */
	le(prog + 52, 64, 2);          /* e_ehsize */
	le(prog + 54, 56, 2);
	le(prog + 56, 1, 2);           /* e_phnum */
	le(prog + 58, 64, 2);
	le(prog + 60, 6, 2);           /* e_shnum */
	le(prog + 62, 5, 2);           /* e_shstrndx */
	uint8_t *ph = prog + 64;       /* PT_LOAD of the whole file at 0, r-x */
	le(ph, PT_LOAD, 4);
	le(ph + 4, PF_R | PF_X, 4);
	le(ph + 32, PROG_SIZE, 8);
	le(ph + 40, PROG_SIZE, 8);
	le(ph + 48, 0x1000, 8);
	memset(prog + PROG_TEXT, 0xc3, 16);
	uint8_t *sm = prog + PROG_SM; /* version 3: 1 function, 0 constants, 1 record */
	le(sm, 3, 1);
	le(sm + 4, 1, 4);
	le(sm + 12, 1, 4);
	le(sm + 16, PROG_BASE + PROG_TEXT, 8); /* the function, where the core maps it */
	le(sm + 24, 16, 8);                    /* stack size */
	le(sm + 32, 1, 8);                     /* records */
	le(sm + 40, 77, 8);                    /* record 77 at +8 */
	le(sm + 48, 8, 4);
	le(sm + 54, 1, 2);                     /* one location: register 3, 8 bytes */
	le(sm + 56, 1, 1);
	le(sm + 58, 8, 2);
	le(sm + 60, 3, 2);
	static const char strtab[] = "\0f\0__jit_debug_descriptor";
	memcpy(prog + PROG_STRTAB, strtab, sizeof(strtab));
	uint8_t *sym = prog + PROG_SYMTAB + 24; /* [1] f, [2] the descriptor */
	le(sym, 1, 4);
	sym[4] = STB_GLOBAL << 4 | STT_FUNC;
	le(sym + 6, 1, 2);
	le(sym + 8, PROG_TEXT, 8);
	le(sym + 16, 16, 8);
	sym += 24;
	le(sym, 3, 4);
	sym[4] = STB_GLOBAL << 4 | STT_OBJECT;
	le(sym + 6, SHN_ABS, 2);
	le(sym + 8, PROG_DESC, 8);
	le(sym + 16, 24, 8);
	static const char names[] = "\0.text\0.llvm_stackmaps\0.symtab\0.strtab\0.shstrtab";
	memcpy(prog + PROG_SHSTRTAB, names, sizeof(names));
	shdr(1, 1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, PROG_TEXT, PROG_TEXT, 16, 0, 0, 0);
	shdr(2, 7, SHT_PROGBITS, SHF_ALLOC, PROG_SM, PROG_SM, PROG_SM_SIZE, 0, 0, 0);
	shdr(3, 23, SHT_SYMTAB, 0, 0, PROG_SYMTAB, 3 * 24, 4, 1, 24);
	shdr(4, 31, SHT_STRTAB, 0, 0, PROG_STRTAB, sizeof(strtab), 0, 0, 0);
	shdr(5, 39, SHT_STRTAB, 0, 0, PROG_SHSTRTAB, sizeof(names), 0, 0, 0);
}

/* The scan seed's core (x86-64): /bin/prog mapped at PROG_BASE, not dumped; its descriptor's
 * page dumped with two entries. */
static void make_scan(core_builder *b)
{
	cb_init(b, EM_X86_64, JITMAP_ORDER_LITTLE);
	uint8_t regs[27 * 8] = {0};
	le(regs + 16 * 8, PROG_BASE + PROG_TEXT + 8, 8); /* rip: at the record */
	le(regs + 19 * 8, PROG_BASE + PROG_DESC + 0x100, 8); /* rsp */
	cb_prstatus(b, 100, 6, regs, sizeof(regs));
	const uint64_t aux[] = {6, 4096, 9, PROG_BASE + PROG_TEXT};
	cb_auxv(b, aux, 2);
	const uint64_t maps[][3] = {{PROG_BASE, PROG_BASE + 0x1000, 0}};
	const char *const paths[] = {"/bin/prog"};
	cb_file(b, 4096, 1, maps, paths);
	const uint64_t d = PROG_BASE + PROG_DESC;
	memset(jit, 0, sizeof(jit));
	cb_put(b, jit, 1, 4);
	cb_put(b, jit + 8, d + 0x40, 8);    /* relevant_entry */
	cb_put(b, jit + 16, d + 0x40, 8);   /* first_entry */
	cb_put(b, jit + 0x40, d + 0x60, 8); /* entry 1: the file's image, as a JIT registers one */
	cb_put(b, jit + 0x50, PROG_BASE, 8);
	cb_put(b, jit + 0x58, PROG_SIZE, 8);
	cb_put(b, jit + 0x68, d + 0x40, 8); /* entry 2: half a page of the core */
	cb_put(b, jit + 0x70, d + 0x80, 8);
	cb_put(b, jit + 0x78, 0x40, 8);
	cb_load(b, PROG_BASE, 0x1000, NULL, 0);
	b->loads[0].flags = PF_R | PF_X;
	cb_load(b, d, sizeof(jit), jit, sizeof(jit));
}

static void make(core_builder *b, unsigned machine, jitmap_byte_order order, int variant)
{
	cb_init(b, machine, order);
	uint8_t regs[512] = {0};
	for (size_t k = 0; k < 34; k++)
		cb_put(b, regs + 8 * k, k == 7 || k == 19 || k == 31 ? 0x20000 + 8 * k : 0x1000 + k, 8);
	if (variant == 1) {
		cb_note_raw(b, 0xfffffff0u, 8, NT_PRSTATUS, "CORE", 5, regs, 8);
	} else {
		cb_prstatus(b, 100, 11, regs, machine == EM_AARCH64 ? 272 : 216);
		cb_prstatus(b, 101, 0, regs, 40);
	}
	const uint64_t aux[] = {3, 0x400040, 6, 4096, 9, 0x20000};
	cb_auxv(b, aux, 3);
	const uint64_t maps[][3] = {{0x400000, 0x402000, 0}, {0x500000, 0x501000, 1},
				    {0x401000, 0x403000, variant == 2 ? UINT64_MAX : 0}};
	const char *const paths[] = {"/bin/prog", "/lib/libx.so", "/bin/prog"};
	if (variant != 5)
		cb_file(b, 4096, variant == 3 ? 2 : 3, maps, paths);
	memset(jit, 0, sizeof(jit));
	cb_put(b, jit, 1, 4);
	cb_put(b, jit + 8, 0x20040, 8);
	cb_put(b, jit + 16, 0x20040, 8);
	cb_put(b, jit + 0x40, 0x20060, 8);
	cb_put(b, jit + 0x50, 0x400000, 8);
	cb_put(b, jit + 0x58, 0x1000, 8);
	cb_put(b, jit + 0x70, 0x1fff0, 8);
	cb_put(b, jit + 0x78, 0x40, 8);
	for (size_t i = 0; i < sizeof(seg); i++)
		seg[i] = (uint8_t)i;
	cb_load(b, 0x400000, 0x2000, page, sizeof(page));
	cb_load(b, 0x1fe00, sizeof(seg), seg, sizeof(seg));
	cb_load(b, 0x20000, sizeof(jit), jit, variant == 4 ? 0x48 : sizeof(jit));
	if (variant == 6) { /* a small core's note: left out [0x401000, 0x402000) of /bin/prog
			     * (code, read from the file) and [0x500000, 0x500800) (writable) */
		uint8_t small[24 + 3 * 24] = {0};
		cb_put(b, small, 1, 4);
		cb_put(b, small + 4, 1, 4);
		cb_put(b, small + 8, 2, 4);
		cb_put(b, small + 16, 8 << 20, 8);
		const uint64_t r[3][3] = {{0x20000, 0x20100, 4}, {0x401000, 0x402000, 5},
					  {0x500000, 0x500800, 6}};
		for (int k = 0; k < 3; k++) {
			cb_put(b, small + 24 + 24 * k, r[k][0], 8);
			cb_put(b, small + 32 + 24 * k, r[k][1], 8);
			cb_put(b, small + 40 + 24 * k, r[k][2], 4);
		}
		cb_note(b, 3 /* JITMAP_CORE_NOTE_SMALL */, "JITMAP", small, sizeof(small));
	}
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s OUTDIR [ELF]\n", argv[0]);
		return 2;
	}
	FILE *f = fopen(argc == 3 ? argv[2] : "/proc/self/exe", "rb");
	if (!f || fread(page, 1, sizeof(page), f) < 64) {
		fprintf(stderr, "%s: cannot read the first page of an ELF file\n", argv[0]);
		return 1;
	}
	fclose(f);
	static const struct {
		const char *name;
		unsigned machine;
		jitmap_byte_order order;
	} arches[] = {{"x86_64", EM_X86_64, JITMAP_ORDER_LITTLE},
		      {"aarch64", EM_AARCH64, JITMAP_ORDER_LITTLE},
		      {"s390x", EM_S390, JITMAP_ORDER_BIG}};
	static const char *const variants[] = {"", "_huge_namesz", "_bad_offset", "_two_maps",
					       "_short_segment", "_no_nt_file", "_small"};
	int n = 0;
	for (size_t a = 0; a < sizeof(arches) / sizeof(arches[0]); a++)
		for (int v = 0; v < 7; v++) {
			if (v && a)
				continue; /* the broken variants once, on x86-64 */
			core_builder b;
			make(&b, arches[a].machine, arches[a].order, v);
			size_t len;
			uint8_t *bytes = cb_emit(&b, &len);
			if (!bytes) {
				fprintf(stderr, "%s: the builder failed\n", argv[0]);
				return 1;
			}
			for (int exe = 0; exe < 2; exe++) {
				char path[4096];
				snprintf(path, sizeof(path), "%s/core_%s%s%s", argv[1], arches[a].name,
					 variants[v], exe ? "_exe" : "");
				FILE *o = fopen(path, "wb");
				const uint8_t last = (uint8_t)exe;
				if (!o || fwrite(bytes, 1, len, o) != len || fwrite(&last, 1, 1, o) != 1 ||
				    fclose(o)) {
					fprintf(stderr, "%s: cannot write %s\n", argv[0], path);
					return 1;
				}
				n++;
			}
			free(bytes);
		}
	/* The scan seeds: the core, then /bin/prog, its length, the trailer. */
	make_prog();
	for (int exe = 0; exe < 2; exe++) {
		core_builder b;
		make_scan(&b);
		size_t len;
		uint8_t *bytes = cb_emit(&b, &len), n4[4];
		char path[4096];
		snprintf(path, sizeof(path), "%s/core_x86_64_scan%s", argv[1], exe ? "_exe" : "");
		le(n4, PROG_SIZE, 4);
		const uint8_t last = (uint8_t)(2 | exe);
		FILE *o = bytes ? fopen(path, "wb") : NULL;
		if (!o || fwrite(bytes, 1, len, o) != len || fwrite(prog, 1, PROG_SIZE, o) != PROG_SIZE ||
		    fwrite(n4, 1, 4, o) != 4 || fwrite(&last, 1, 1, o) != 1 || fclose(o)) {
			fprintf(stderr, "%s: cannot write %s\n", argv[0], path);
			return 1;
		}
		free(bytes);
		n++;
	}
	printf("core_seeds: %d seeds in %s\n", n, argv[1]);
	return 0;
}

/* core_seeds.c OUTDIR [ELF]: write the seed cores of fuzz_core (make-corpus.sh builds and runs
 * it). Each seed is a small process: threads with registers, an auxiliary vector, NT_FILE
 * mappings, the first page of ELF (default: this program, for its build ID) dumped at a
 * mapping's start, two adjacent segments and a JIT descriptor with two entries; for x86-64 and
 * AArch64 little endian, s390x big endian; plus variants with broken notes and one without
 * NT_FILE. The last byte of
 * every seed is 0x01 or 0x00: fuzz_core gives --exe when it is odd. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_builder.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

static uint8_t page[4096], seg[0x200], jit[0x100];

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
					       "_short_segment", "_no_nt_file"};
	int n = 0;
	for (size_t a = 0; a < sizeof(arches) / sizeof(arches[0]); a++)
		for (int v = 0; v < 6; v++) {
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
	printf("core_seeds: %d seeds in %s\n", n, argv[1]);
	return 0;
}

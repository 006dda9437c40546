/* fuzz_plugin: libFuzzer target for the GDB JIT reader plugin's callbacks (the plugin's files,
 * compiled into this harness), driven as GDB drives them with images and memory the fuzzer
 * writes.
 *
 * Input: [control][17 registers, 8 bytes each, little-endian][memory...], the memory mapped at
 * BASE and laid out like fuzz_process's (a descriptor at BASE whose entries point at images;
 * process_seeds.py). Each entry's image, where it lies inside the memory, is handed to read()
 * as GDB hands a registered object; then unwind() and get_frame_id() are asked about frames at
 * the fuzzed registers' PC and at PCs across the memory, the entries are re-checked, the
 * exported API is walked, and the reader is destroyed. Control bit 0 sets the claim mode to
 * auto (else the default), bits 1-6 say which registers read as undefined, bit 7 leaves the
 * reader untold (else it is told it serves x86-64, jitmap_reader_set_arch, as jitmap.gdb tells
 * it from GDB's architecture; untold it must serve the host's, x86-64 too). The callbacks check
 * what GDB 13 needs and does not check itself (tests/gdb/reader_stress.c has the same rules):
 * a named block inside [begin, end), only x86-64 DWARF registers 0-16, a free function on
 * every value the reader sets.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gdb/jit-reader.h>

#include "fuzz_common.h"
#include "jitmap-reader-api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern struct gdb_reader_funcs *gdb_init_reader(void);

#define BASE UINT64_C(0x10000)
#define NREGS 17

static const uint8_t *mem;
static size_t mem_len;
static uint64_t regs[NREGS];
static unsigned undefined_mask;

static uint64_t load64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static enum gdb_status target_read(GDB_CORE_ADDR addr, void *buf, int len)
{
	CHECK(len >= 0 && buf);
	if (addr < BASE || addr - BASE > mem_len || (uint64_t)len > mem_len - (addr - BASE))
		return GDB_FAIL;
	memcpy(buf, mem + (addr - BASE), (size_t)len);
	return GDB_SUCCESS;
}

/* -- Symbol callbacks -- */

static int the_object, the_symtab;

static struct gdb_object *object_open(struct gdb_symbol_callbacks *cb)
{
	(void)cb;
	return (struct gdb_object *)&the_object;
}

static struct gdb_symtab *symtab_open(struct gdb_symbol_callbacks *cb, struct gdb_object *obj,
				      const char *file)
{
	(void)cb, (void)file;
	CHECK(obj == (struct gdb_object *)&the_object);
	return (struct gdb_symtab *)&the_symtab;
}

static struct gdb_block *block_open(struct gdb_symbol_callbacks *cb, struct gdb_symtab *st,
				    struct gdb_block *parent, GDB_CORE_ADDR begin,
				    GDB_CORE_ADDR end, const char *name)
{
	(void)cb, (void)parent;
	CHECK(st == (struct gdb_symtab *)&the_symtab);
	CHECK(name && name[0]); /* GDB 13 crashes on a NULL name */
	CHECK(begin < end);
	return NULL;
}

static void line_mapping_add(struct gdb_symbol_callbacks *cb, struct gdb_symtab *st, int n,
			     struct gdb_line_mapping *lines)
{
	(void)cb, (void)st;
	CHECK(n >= 0 && (n == 0 || lines));
}

static void symtab_close(struct gdb_symbol_callbacks *cb, struct gdb_symtab *st)
{
	(void)cb, (void)st;
}

static void object_close(struct gdb_symbol_callbacks *cb, struct gdb_object *obj)
{
	(void)cb;
	CHECK(obj == (struct gdb_object *)&the_object);
}

static struct gdb_symbol_callbacks symcb = {object_open, symtab_open, block_open, symtab_close,
					    object_close, line_mapping_add, target_read, NULL};

/* -- Unwind callbacks -- */

static void value_free(struct gdb_reg_value *v)
{
	free(v);
}

static struct gdb_reg_value *reg_get(struct gdb_unwind_callbacks *cb, int n)
{
	(void)cb;
	CHECK(n >= 0 && n < NREGS); /* GDB aborts on a DWARF number x86-64 does not map */
	struct gdb_reg_value *v = malloc(sizeof(*v) + 7);
	CHECK(v);
	v->size = 8;
	v->defined = !(undefined_mask >> (n % 7) & 1);
	v->free = value_free;
	memcpy(v->value, &regs[n], 8);
	return v;
}

static void reg_set(struct gdb_unwind_callbacks *cb, int n, struct gdb_reg_value *v)
{
	(void)cb;
	CHECK(n >= 0 && n < NREGS);
	CHECK(v && v->free);
	CHECK(v->size >= 8);
	v->free(v);
}

static struct gdb_unwind_callbacks uwcb = {reg_get, reg_set, target_read, NULL};
static struct gdb_unwind_callbacks idcb = {reg_get, NULL, target_read, NULL};

/* -- Driving the reader -- */

static void frame_at(struct gdb_reader_funcs *f, uint64_t pc)
{
	regs[16] = pc;
	(void)f->unwind(f, &uwcb);
	(void)f->get_frame_id(f, &idcb);
	const jitmap_stackmap *sm;
	const char *name;
	uint64_t lo, hi;
	(void)jitmap_reader_lookup(pc, &sm, &name, &lo, &hi);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 + 8 * NREGS + 32)
		return 0;
	for (int i = 0; i < NREGS; i++)
		regs[i] = load64(data + 1 + 8 * i);
	undefined_mask = (data[0] >> 1) & 0x3f;
	mem = data + 1 + 8 * NREGS;
	mem_len = size - 1 - 8 * NREGS;

	struct gdb_reader_funcs *f = gdb_init_reader();
	CHECK(f && f->reader_version == GDB_READER_INTERFACE_VERSION);
	jitmap_reader_set_claim(data[0] & 1 ? JITMAP_READER_CLAIM_AUTO : JITMAP_READER_CLAIM_UNNAMED);
	/* GDB debugs x86-64 here, as jitmap.gdb tells the reader (or, untold, the reader takes
	 * the host's): an image whose e_machine says otherwise must not make it ask for another
	 * architecture's registers. */
	if (!(data[0] & 0x80))
		CHECK(jitmap_reader_set_arch(JITMAP_ARCH_X86_64, 0) == 0);
	/* The registered images, as GDB reads them from the descriptor's list. */
	uint64_t at = load64(mem + 8), images = 0;
	while (at && images < 8) {
		images++;
		if (at < BASE || at - BASE > mem_len || mem_len - (at - BASE) < 32)
			break;
		const uint8_t *e = mem + (at - BASE);
		const uint64_t addr = load64(e + 16), len = load64(e + 24);
		if (addr >= BASE && addr - BASE <= mem_len && len <= mem_len - (addr - BASE))
			(void)f->read(f, &symcb, (void *)(mem + (addr - BASE)), (long)len);
		at = load64(e);
	}
	const uint64_t fuzzed_pc = regs[16];
	for (int round = 0; round < 2; round++) {
		frame_at(f, fuzzed_pc);
		for (uint64_t pc = BASE; pc < BASE + mem_len && pc < BASE + 0x4000; pc += 0x35)
			frame_at(f, pc);
		jitmap_reader_invalidate(0);
	}
	for (size_t i = 0; i < jitmap_reader_num_entries(); i++) {
		jitmap_reader_entry info;
		if (jitmap_reader_entry_info(i, 1, &info) == 0) {
			CHECK(info.code_start <= info.code_end);
			CHECK(info.problem);
		}
	}
	(void)jitmap_reader_index();
	uint64_t starts[4];
	(void)jitmap_reader_find_function("fixture_first", starts, 4);
	jitmap_reader_stats stats;
	CHECK(jitmap_reader_get_stats(&stats) == 0);
	f->destroy(f);
	return 0;
}

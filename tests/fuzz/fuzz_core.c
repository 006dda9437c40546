/* fuzz_core: libFuzzer target for jitmap_core_open_memory (an ELF core through libelf: the
 * ELF header, program headers, NT_PRSTATUS, NT_AUXV, NT_FILE, build IDs in mapped first pages)
 * and every accessor of the core, with memory reads across segment and mapping edges.
 *
 * Mapped files are never opened (JITMAP_CORE_NO_FILES): a fuzzed NT_FILE names any path. When
 * the input's last byte is odd, --exe is this program, which sends the build-ID matching
 * through the core's copies of first pages, or, in a core without NT_FILE, places this
 * program by the fuzzed auxiliary vector and walks a fuzzed dynamic linker's list. Reads are checked against each other: a read
 * that succeeds gives the same bytes as its two halves read apart.
 */
#include "fuzz_common.h"
#include "jitmap/core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t buf_a[4096 + 64], buf_b[4096 + 64];

static uint64_t load8(const uint8_t *p, jitmap_byte_order order)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[order == JITMAP_ORDER_BIG ? i : 7 - i];
	return v;
}

static void read_around(const jitmap_target *t, uint64_t addr)
{
	static const size_t lens[] = {1, 8, 24, 4096};
	static const int64_t deltas[] = {-8, -1, 0, 1};
	char why[160];
	for (size_t d = 0; d < sizeof(deltas) / sizeof(deltas[0]); d++)
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			const uint64_t a = addr + (uint64_t)deltas[d];
			const size_t n = lens[l];
			why[0] = 0;
			int rc = t->read_mem(t->ctx, a, buf_a, n, why, sizeof(why));
			CHECK(rc == 0 || rc == -EFAULT);
			check_string(why, sizeof(why));
			if (rc) {
				CHECK(why[0] != '\0');
				continue;
			}
			if (n < 2)
				continue;
			const size_t half = n / 2;
			CHECK(t->read_mem(t->ctx, a, buf_b, half, why, sizeof(why)) == 0);
			CHECK(t->read_mem(t->ctx, a + half, buf_b + half, n - half, why, sizeof(why)) == 0);
			CHECK(!memcmp(buf_a, buf_b, n));
		}
}

static void walk_lists(const jitmap_target *t, uint64_t addr, jitmap_byte_order order)
{
	jitmap_jit_list *l = jitmap_jit_list_read(t, addr, order, 64, NULL);
	if (!l)
		return;
	CHECK(jitmap_jit_list_count(l) <= 64);
	for (size_t i = 0; i < jitmap_jit_list_count(l); i++)
		read_around(t, jitmap_jit_list_code(l, i)->symfile_addr);
	jitmap_jit_list_free(l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	jitmap_core_opts opts = {.sz = sizeof(opts), .flags = JITMAP_CORE_NO_FILES};
	if (size && data[size - 1] & 1)
		opts.exe = "/proc/self/exe";
	jitmap_error err;
	jitmap_core *c = jitmap_core_open_memory(data, size, &opts, &err);
	if (!c) {
		CHECK(err.code < 0 && errno == -err.code);
		check_string(err.reason, sizeof(err.reason));
		CHECK(err.reason[0] != '\0');
		return 0;
	}
	const jitmap_byte_order order = jitmap_core_byte_order(c);
	CHECK(order == JITMAP_ORDER_LITTLE || order == JITMAP_ORDER_BIG);
	(void)jitmap_arch_name(jitmap_core_arch(c));
	(void)jitmap_core_elf_machine(c);
	for (size_t i = 0; jitmap_core_warning(c, i); i++) {
		CHECK(i < 32);
		CHECK(jitmap_core_warning(c, i)[0] != '\0');
	}

	const jitmap_target t = jitmap_core_target(c);
	CHECK(t.read_mem && !t.read_reg);

	/* Threads: registers sorted, each found, each readable through the thread's target. */
	const size_t nt = jitmap_core_num_threads(c);
	CHECK(jitmap_core_thread(c, nt) == NULL);
	CHECK(jitmap_core_thread_target(c, nt).read_mem == NULL);
	for (size_t i = 0; i < nt; i++) {
		const jitmap_core_thread_info *th = jitmap_core_thread(c, i);
		CHECK(th && th->num_regs <= 64);
		const jitmap_target tt = jitmap_core_thread_target(c, i);
		for (size_t r = 0; r < th->num_regs; r++) {
			uint64_t v;
			if (r)
				CHECK(th->regs[r - 1].regno < th->regs[r].regno);
			CHECK(jitmap_core_thread_reg(th, th->regs[r].regno, &v) == 0);
			CHECK(v == th->regs[r].value);
			uint8_t b[8];
			char why[96];
			CHECK(tt.read_reg(tt.ctx, th->regs[r].regno, b, 8, why, sizeof(why)) == 0);
			CHECK(load8(b, order) == v);
			if (i < 2 && r < 40)
				read_around(&tt, v);
		}
		CHECK(jitmap_core_thread_reg(th, 65535, NULL) == -ENOENT);
	}

	/* Mappings: sorted, disjoint, non-empty; reads at their edges. */
	const size_t nm = jitmap_core_num_mappings(c);
	CHECK(jitmap_core_mapping(c, nm) == NULL);
	for (size_t i = 0; i < nm; i++) {
		const jitmap_core_mapping_info *m = jitmap_core_mapping(c, i);
		CHECK(m && m->start < m->end && m->path && m->core_path);
		if (i)
			CHECK(jitmap_core_mapping(c, i - 1)->end <= m->start);
		if (i < 32) {
			read_around(&t, m->start);
			read_around(&t, m->end);
		}
	}

	/* The auxiliary vector, and what its addresses point at. */
	static const uint64_t types[] = {3 /* AT_PHDR */, 6 /* AT_PAGESZ */, 9 /* AT_ENTRY */,
					 33 /* AT_SYSINFO_EHDR */, 0, 1000};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		uint64_t v = 0;
		int rc = jitmap_core_auxv(c, types[i], &v);
		CHECK(rc == 0 || rc == -ENOENT);
		if (!types[i])
			CHECK(rc == -ENOENT);
		if (!rc) {
			read_around(&t, v);
			walk_lists(&t, v, order);
			walk_lists(&t, v, JITMAP_ORDER_AUTO);
		}
	}
	read_around(&t, 0);
	read_around(&t, UINT64_MAX - 4);

	uint64_t addrs[4];
	const char *files[4];
	CHECK(jitmap_core_find_symbol(c, "__jit_debug_descriptor", addrs, files, 4) == 0);
	jitmap_core_free(c);
	return 0;
}

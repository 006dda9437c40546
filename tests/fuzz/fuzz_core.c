/* fuzz_core: libFuzzer target for jitmap_stopped_open_core_memory (an ELF core through libelf:
 * the ELF header, program headers, NT_PRSTATUS, NT_AUXV, NT_FILE, build IDs in mapped first
 * pages) and every accessor of the core, with memory reads across segment and mapping edges,
 * where each byte comes from (jitmap_stopped_memory, checked against the reads), the JIT descriptor
 * walk, and the one scan of a core (jitmap_process_scan_stopped: the files the core maps, their
 * descriptors and .llvm_stackmaps, each entry's image and stackmap, over the fuzzed memory).
 *
 * Input: the core, then a trailer in the last byte. Bit 1: the core carries one mapped file:
 * the N bytes before the 4-byte little-endian N before the last byte are written to
 * "/bin/prog" under this run's own sysroot (a temporary directory holding nothing else), and
 * mapped files are read; without it they never are (JITMAP_STOPPED_NO_FILES: a fuzzed NT_FILE
 * names any path). Bit 0: --exe; that file when there is one (matched to the mapping it
 * stands for, or placed by the auxiliary vector), else this program, which sends the
 * build-ID matching through the core's copies of first pages, or, in a core without NT_FILE,
 * places this program by the fuzzed auxiliary vector and walks a fuzzed dynamic linker's
 * list (this program defines no JIT descriptor: the scan is left out there, it would only
 * search its large symbol table). Reads are checked against each other: a read that
 * succeeds gives the same bytes as its two halves read apart. With a mapped file, the core
 * is also made small (jitmap_core_add_jit_files, JITMAP_CORE_ADD_SMALL) from a memory file.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "jitmap/core.h"
#include "jitmap/minidump.h"
#include "jitmap/process.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t buf_a[4096 + 64], buf_b[4096 + 64];

static uint64_t load8(const uint8_t *p, jitmap_byte_order order)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[order == JITMAP_ORDER_BIG ? i : 7 - i];
	return v;
}

/* What jitmap_stopped_memory says of `addr` agrees with what a read finds there. */
static void check_origin(jitmap_stopped *c, const jitmap_target *t, uint64_t addr)
{
	jitmap_stopped_memory_info mi = {.sz = sizeof(mi)};
	char why[192];
	CHECK(jitmap_stopped_memory(c, addr, &mi) == 0);
	CHECK(mi.size >= 1);
	CHECK(mi.source >= JITMAP_STOPPED_MEM_CORE && mi.source <= JITMAP_STOPPED_MEM_NONE);
	CHECK(mi.segment_start <= mi.segment_end);
	check_string(mi.why, sizeof(mi.why));
	const size_t n = mi.size < 16 ? (size_t)mi.size : 16;
	const int rc = t->read_mem(t->ctx, addr, buf_a, mi.source == JITMAP_STOPPED_MEM_NONE ? 1 : n,
				   why, sizeof(why));
	if (mi.source == JITMAP_STOPPED_MEM_NONE) {
		CHECK(rc == -EFAULT && mi.why[0]);
	} else {
		/* (a mapped file may have shrunk since: then the read says so) */
		CHECK(rc == 0 || (mi.source == JITMAP_STOPPED_MEM_FILE && rc == -EFAULT));
		CHECK(!mi.file_unusable);
	}
}

static void read_around(const jitmap_target *t, uint64_t addr)
{
	static const size_t lens[] = {1, 8, 24, 4096};
	static const int64_t deltas[] = {-8, -1, 0, 1};
	char why[192];
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

/* The one scan of a core over its memory; again (keeping what the first read) when it found
 * a descriptor. */
static void scan_core(jitmap_stopped *c)
{
	const jitmap_target t = jitmap_stopped_target(c);
	JITMAP_OPTS(const jitmap_process_opts, o, .max_entries = 64, .max_image = 1 << 20,
		    .max_section = 1 << 20);
	jitmap_process *p = jitmap_process_new(&t, &o);
	CHECK(p);
	for (int round = 0; round < 2 && (!round || jitmap_process_num_descriptors(p)); round++) {
		CHECK(jitmap_process_scan_begin(p) == 0);
		const int n = jitmap_process_scan_stopped(p, c);
		CHECK(n >= 0);
		CHECK(jitmap_process_scan_end(p) == 0);
		CHECK((size_t)n == jitmap_process_num_descriptors(p));
		jitmap_descriptor_info d = {.sz = sizeof(d)};
		CHECK(jitmap_process_descriptor(p, (size_t)n, &d) == -ERANGE);
		for (size_t i = 0; i < (size_t)n; i++) {
			CHECK(jitmap_process_descriptor(p, i, &d) == 0);
			CHECK(d.where && d.where[0]);
			CHECK(d.num_entries <= 64);
			if (d.complete)
				CHECK(d.readable && !d.problem);
			else
				CHECK(d.problem && d.problem[0]);
			if (!d.readable)
				CHECK(d.num_entries == 0);
			for (size_t k = 0; k < i; k++) { /* each address once */
				jitmap_descriptor_info e = {.sz = sizeof(e)};
				CHECK(jitmap_process_descriptor(p, k, &e) == 0 && e.address != d.address);
			}
		}
		for (size_t k = 0; jitmap_process_problem(p, k); k++)
			CHECK(jitmap_process_problem(p, k)[0]);
		/* each file not read is a problem too */
		CHECK(jitmap_process_num_unread_files(p) <= jitmap_process_num_problems(p));
		jitmap_source_info si = {.sz = sizeof(si)};
		for (size_t i = 0; i < jitmap_process_num_sources(p); i++) {
			CHECK(jitmap_process_source(p, i, &si) == 0);
			for (size_t k = 0; k < si.num_problems; k++)
				CHECK(jitmap_process_source_problem(p, i, k)[0]);
			if (si.stackmap)
				fuzz_walk_stackmap(si.stackmap);
			if (si.kind == JITMAP_SOURCE_JIT) {
				jitmap_code_info ci;
				(void)jitmap_process_code_at(p, si.symfile_addr, &ci);
			}
		}
	}
	jitmap_process_free(p);
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

/* This run's sysroot, with the one file an input may carry (/bin/prog). */
static char g_root[64], g_prog[96];

static void remove_root(void)
{
	unlink(g_prog);
	char bin[80];
	snprintf(bin, sizeof(bin), "%s/bin", g_root);
	rmdir(bin);
	rmdir(g_root);
}

static int write_prog(const uint8_t *bytes, size_t len)
{
	if (!g_root[0]) {
		snprintf(g_root, sizeof(g_root), "/tmp/fuzz_core.XXXXXX");
		CHECK(mkdtemp(g_root));
		char bin[80];
		snprintf(bin, sizeof(bin), "%s/bin", g_root);
		CHECK(mkdir(bin, 0700) == 0);
		snprintf(g_prog, sizeof(g_prog), "%s/prog", bin);
		atexit(remove_root);
	}
	FILE *f = fopen(g_prog, "wb");
	CHECK(f);
	const int ok = fwrite(bytes, 1, len, f) == len;
	CHECK(fclose(f) == 0 && ok);
	return 0;
}

/* The core made small from a file, as `jitmap-core-handler --small --from=CORE` does (the
 * ranges found in the fuzzed memory, the files under `root`: none but /bin/prog, and none at
 * all for NULL): no crash, and what it writes opens as a core. */
static void shrink(const uint8_t *data, size_t size, const char *root)
{
	if (!root || size > (1u << 20))
		return;
	const int in = memfd_create("fuzz-core", MFD_CLOEXEC);
	const int out = memfd_create("fuzz-small", MFD_CLOEXEC);
	CHECK(in >= 0 && out >= 0);
	CHECK(write(in, data, size) == (ssize_t)size && lseek(in, 0, SEEK_SET) == 0);
	JITMAP_OPTS(const jitmap_core_add_opts, opts, .flags = JITMAP_CORE_ADD_SMALL,
		    .sysroot = root);
	char note[512];
	jitmap_error err;
	const int rc = jitmap_core_add_jit_files(in, out, 0, &opts, note, sizeof(note), &err);
	check_string(note, sizeof(note));
	struct stat st;
	if (rc >= 0 && fstat(out, &st) == 0 && st.st_size > 0 && st.st_size < (64 << 20)) {
		uint8_t *bytes = malloc((size_t)st.st_size);
		CHECK(bytes && pread(out, bytes, (size_t)st.st_size, 0) == st.st_size);
		JITMAP_OPTS(jitmap_stopped_opts, copts, .flags = JITMAP_STOPPED_NO_FILES);
		jitmap_stopped_free(jitmap_stopped_open_core_memory(bytes, (size_t)st.st_size, &copts, &err));
		free(bytes);
	}
	close(in);
	close(out);
}

/* A minidump of the core, with all its memory asked for (writers/minidump.c): written whole or
 * refused for its architecture, never a crash or a hang; as long as it says, within
 * Breakpad's counts, its header first. */
static void check_minidump(jitmap_stopped *c)
{
	const int fd = memfd_create("fuzz-minidump", MFD_CLOEXEC);
	if (fd < 0)
		return;
	const jitmap_minidump_range all[] = {{0, UINT64_MAX}};
	JITMAP_OPTS(const jitmap_minidump_opts, mo, .memory = all, .num_memory = 1,
		    .stack_bytes = 64 << 10);
	jitmap_minidump_info info = {.sz = sizeof(info)};
	jitmap_error err;
	const int rc = jitmap_minidump_write(c, fd, &mo, &info, &err);
	CHECK(rc == 0 || rc == -ENOTSUP || rc == -ENOMEM);
	if (rc) {
		CHECK(err.code == rc && err.reason[0]);
	} else {
		uint8_t head[8];
		CHECK(lseek(fd, 0, SEEK_CUR) == (off_t)info.bytes);
		CHECK(pread(fd, head, sizeof(head), 0) == (ssize_t)sizeof(head));
		CHECK(!memcmp(head, "MDMP\x93\xa7", 6));
		CHECK(info.num_threads <= 4096 && info.num_modules <= 2048 &&
		      info.num_memory <= 4096 && info.bytes < (UINT64_C(1) << 32));
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	JITMAP_OPTS(jitmap_stopped_opts, opts, .flags = JITMAP_STOPPED_NO_FILES);
	const uint8_t trailer = size ? data[size - 1] : 0;
	if (trailer & 1)
		opts.exe = "/proc/self/exe";
	if ((trailer & 2) && size >= 5) {
		const size_t n = (size_t)data[size - 5] | (size_t)data[size - 4] << 8 |
				 (size_t)data[size - 3] << 16 | (size_t)data[size - 2] << 24;
		if (n <= size - 5) {
			write_prog(data + size - 5 - n, n);
			opts.flags = 0;
			opts.sysroot = g_root;
			if (opts.exe)
				opts.exe = g_prog;
			size -= 5 + n;
		}
	}
	jitmap_error err;
	jitmap_stopped *c = jitmap_stopped_open_core_memory(data, size, &opts, &err);
	if (!c) {
		CHECK(err.code < 0 && errno == -err.code);
		check_string(err.reason, sizeof(err.reason));
		CHECK(err.reason[0] != '\0');
		return 0;
	}
	const jitmap_byte_order order = jitmap_stopped_byte_order(c);
	CHECK(order == JITMAP_ORDER_LITTLE || order == JITMAP_ORDER_BIG);
	(void)jitmap_arch_name(jitmap_stopped_arch(c));
	(void)jitmap_stopped_elf_machine(c);
	for (size_t i = 0; jitmap_stopped_warning(c, i); i++) {
		CHECK(i < 32);
		CHECK(jitmap_stopped_warning(c, i)[0] != '\0');
	}

	const jitmap_target t = jitmap_stopped_target(c);
	CHECK(t.read_mem && !t.read_reg);

	/* Threads: registers sorted, each found, each readable through the thread's target. */
	const size_t nt = jitmap_stopped_num_threads(c);
	CHECK(jitmap_stopped_thread(c, nt) == NULL);
	CHECK(jitmap_stopped_thread_target(c, nt).read_mem == NULL);
	for (size_t i = 0; i < nt; i++) {
		const jitmap_stopped_thread_info *th = jitmap_stopped_thread(c, i);
		CHECK(th && th->num_gregs <= 64);
		const jitmap_target tt = jitmap_stopped_thread_target(c, i);
		for (size_t r = 0; r < th->num_gregs; r++) {
			uint64_t v;
			if (r)
				CHECK(th->gregs[r - 1].regno < th->gregs[r].regno);
			CHECK(jitmap_stopped_thread_reg(th, th->gregs[r].regno, &v) == 0);
			CHECK(v == th->gregs[r].value);
			uint8_t b[8];
			char why[96];
			CHECK(tt.read_reg(tt.ctx, th->gregs[r].regno, b, 8, why, sizeof(why)) == 0);
			CHECK(load8(b, order) == v);
			if (i < 2 && r < 40)
				read_around(&tt, v);
		}
		CHECK(jitmap_stopped_thread_reg(th, 65535, NULL) == -ENOENT);
	}

	/* Mappings: sorted, disjoint, non-empty; reads at their edges. */
	const size_t nm = jitmap_stopped_num_mappings(c);
	CHECK(jitmap_stopped_mapping(c, nm) == NULL);
	for (size_t i = 0; i < nm; i++) {
		const jitmap_stopped_mapping_info *m = jitmap_stopped_mapping(c, i);
		CHECK(m && m->start < m->end && m->path && m->core_path);
		if (i)
			CHECK(jitmap_stopped_mapping(c, i - 1)->end <= m->start);
		if (i < 32) {
			read_around(&t, m->start);
			read_around(&t, m->end);
			check_origin(c, &t, m->start);
			check_origin(c, &t, m->end - 1);
		}
	}

	/* The auxiliary vector, and what its addresses point at. */
	static const uint64_t types[] = {3 /* AT_PHDR */, 6 /* AT_PAGESZ */, 9 /* AT_ENTRY */,
					 33 /* AT_SYSINFO_EHDR */, 0, 1000};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		uint64_t v = 0;
		int rc = jitmap_stopped_auxv(c, types[i], &v);
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
	check_origin(c, &t, 0);
	check_origin(c, &t, UINT64_MAX);

	uint64_t addrs[4];
	const char *files[4];
	const size_t found = jitmap_stopped_find_symbol(c, "__jit_debug_descriptor", addrs, files, 4);
	if (opts.flags & JITMAP_STOPPED_NO_FILES) /* no file that defines it can be opened */
		CHECK(found == 0);
	for (size_t i = 0; i < found && i < 4; i++) {
		CHECK(files[i] && files[i][0]);
		check_origin(c, &t, addrs[i]);
	}
	if (!opts.exe || opts.exe == g_prog)
		scan_core(c);
	check_minidump(c);
	uint64_t bound = 0, kept = 0, left = 0;
	const int small = jitmap_stopped_small(c, &bound, &kept, &left);
	CHECK(small == 0 || small == 1);
	CHECK(small || (!bound && !kept && !left));
	jitmap_stopped_free(c);
	shrink(data, size, opts.flags ? NULL : g_root);
	return 0;
}

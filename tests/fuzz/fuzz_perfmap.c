/* fuzz_perfmap: libFuzzer target for the perf map and jitdump readers (files/perfmap*.c).
 *
 * Input: one control byte (bit 0: a jitdump, else a perf map's text; bit 1: read it a second
 * time under another name, so that two files overlap), then the file. Whatever was read is
 * looked up at addresses from the input and around every range a lookup finds: each answer
 * holds the address, its strings end, and every problem is a sentence that ends.
 */
#include "fuzz_common.h"

#include "jitmap/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void look(jitmap_perfmap *m, uint64_t addr)
{
	jitmap_perfmap_sym s = {.sz = sizeof(s)};
	const int rc = jitmap_perfmap_lookup(m, addr, &s);
	CHECK(rc == 0 || rc == -ENOENT);
	if (rc)
		return;
	CHECK(s.lo <= addr && addr < s.hi);
	CHECK(s.hi - s.lo <= JITMAP_PERFMAP_MAX_RANGE);
	CHECK(s.name && s.origin && s.source && s.line > 0);
	(void)strlen(s.name);
	(void)strlen(s.source);
	if (s.file)
		(void)strlen(s.file);
	jitmap_perfmap_sym edge = {.sz = sizeof(edge)};
	CHECK(jitmap_perfmap_lookup(m, s.lo, &edge) == 0 || s.lo < addr);
	(void)jitmap_perfmap_lookup(m, s.hi, &edge);
	(void)jitmap_perfmap_lookup(m, s.lo - 1, &edge);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const bool jitdump = data[0] & 1, twice = data[0] & 2;
	const size_t len = size - 1;
	uint8_t *buf = malloc(len ? len : 1); /* exact size: ASan sees any overread */
	CHECK(buf);
	if (len)
		memcpy(buf, data + 1, len);
	jitmap_perfmap *m = jitmap_perfmap_new();
	CHECK(m);
	for (int k = 0; k < (twice ? 2 : 1); k++) {
		const char *origin = k ? "/tmp/second" : "/tmp/first";
		int rc;
		if (jitdump) {
			jitmap_error err;
			rc = jitmap_perfmap_add_jitdump(m, len ? buf : NULL, len, origin, &err);
			if (rc == -EINVAL) {
				CHECK(err.offset <= len);
				check_string(err.reason, sizeof(err.reason));
				CHECK(err.reason[0] != '\0');
			}
		} else {
			rc = jitmap_perfmap_add_perf_map(m, len ? (const char *)buf : NULL, len, origin);
		}
		CHECK(rc >= 0 || rc == -EINVAL);
	}
	free(buf); /* the map keeps no pointer into the input */
	for (size_t k = 0; k < jitmap_perfmap_num_problems(m); k++) {
		const char *p = jitmap_perfmap_problem(m, k);
		CHECK(p && p[0]);
	}
	CHECK(!jitmap_perfmap_problem(m, jitmap_perfmap_num_problems(m)));
	for (size_t i = 1; i + 8 <= size && i < 256; i += 4) {
		uint64_t addr;
		memcpy(&addr, data + i, 8);
		look(m, addr);
	}
	/* Hex numbers of a perf map's text, as the lines give them. */
	for (size_t i = 1; i < size && i < 4096; i++) {
		if (i > 1 && data[i - 1] != '\n')
			continue;
		uint64_t v = 0;
		for (size_t j = i; j < size && j < i + 16; j++) {
			const int c = data[j] | 0x20;
			const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
			if (d < 0)
				break;
			v = v << 4 | (uint64_t)d;
		}
		look(m, v);
		look(m, v + 1);
	}
	(void)jitmap_perfmap_num_ranges(m);
	jitmap_perfmap_free(m);
	return 0;
}

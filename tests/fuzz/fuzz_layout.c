/* fuzz_layout: libFuzzer target for jitmap_layouts_parse, the `.jitmap_deopt` section a JIT
 * registers beside its stackmap (deopt layouts: reader/layout.c).
 *
 * Input: one control byte (bit 0: big-endian), then the section. Layouts that parse are
 * walked (fuzz_common.h: every frame, slot and string in bounds, each layout found again by
 * its key) and looked up by IDs from the input; a section that does not parse must say where
 * and why, within the input.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const jitmap_byte_order order = data[0] & 1 ? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE;
	const size_t len = size - 1;
	uint8_t *buf = malloc(len ? len : 1); /* exact size: ASan sees any overread */
	CHECK(buf);
	if (len)
		memcpy(buf, data + 1, len);
	jitmap_error err;
	jitmap_layouts *l = jitmap_layouts_parse(len ? buf : NULL, len, order, &err);
	free(buf); /* the layouts keep no pointer into the input */
	if (!l) {
		CHECK(err.code == -EINVAL && errno == EINVAL);
		CHECK(err.offset <= len);
		check_string(err.reason, sizeof(err.reason));
		CHECK(err.reason[0] != '\0');
		return 0;
	}
	fuzz_walk_layouts(l);
	for (size_t i = 1; i + 8 <= size && i < 64; i += 8) {
		uint64_t id;
		memcpy(&id, data + i, 8);
		(void)jitmap_layouts_find(l, id, NULL);
		(void)jitmap_layouts_find(l, id, "f");
	}
	jitmap_layouts_free(l);
	return 0;
}

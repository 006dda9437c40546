/* fuzz_parse: libFuzzer target for jitmap_stackmap_parse, the parse-from-memory entry point.
 *
 * Input: one control byte (byte order and architecture, see fuzz_opts_from_byte), then the
 * section. A stackmap that parses is walked through every accessor (fuzz_common.h); one that
 * does not must say where and why, within the input.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const jitmap_parse_opts opts = fuzz_opts_from_byte(data[0]);
	const size_t len = size - 1;
	/* An exact-size copy, so that AddressSanitizer sees any read past the section. */
	uint8_t *buf = malloc(len ? len : 1);
	CHECK(buf);
	if (len)
		memcpy(buf, data + 1, len);

	jitmap_error err;
	jitmap_stackmap *sm = jitmap_stackmap_parse(len ? buf : NULL, len, &opts, &err);
	free(buf); /* the stackmap keeps no pointer into the input */
	if (!sm) {
		CHECK(err.code < 0 && errno == -err.code);
		CHECK(err.offset <= len);
		check_string(err.reason, sizeof(err.reason));
		CHECK(err.reason[0] != '\0');
		CHECK(jitmap_strerror(err.code) != NULL);
		return 0;
	}
	CHECK(opts.order == JITMAP_ORDER_AUTO || jitmap_stackmap_byte_order(sm) == opts.order);
	CHECK(jitmap_stackmap_arch(sm) == opts.arch);
	fuzz_walk_stackmap(sm);
	fuzz_mutate_stackmap(sm);
	jitmap_stackmap_free(sm);
	return 0;
}

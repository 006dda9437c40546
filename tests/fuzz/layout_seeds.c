/* layout_seeds OUTDIR: seeds for fuzz_layout (OUTDIR/layout: `.jitmap_deopt` sections written
 * by libjitmap-producer in both byte orders, with the control byte fuzz_layout reads first)
 * and for fuzz_elf (OUTDIR/elf: a registered image carrying one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitmap/producer.h"

static void write_file(const char *dir, const char *name, int ctl, const void *b, size_t len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || (ctl >= 0 && fputc(ctl, f) == EOF) || fwrite(b, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: layout_seeds OUTDIR\n");
		return 2;
	}
	char dir[4096];
	static const jitmap_vslot inner[] = {{2, "x"}, {3, "y"}, {4, NULL}};
	static const jitmap_vslot outer[] = {{6, "n"}, {7, "i"}, {8, "acc"}, {9, NULL}};
	static const jitmap_vframe_layout frames[] = {
		{.method = {JITMAP_VREF_NAME, 0, "Demo.square"}, .bci = {JITMAP_VREF_DEOPT, 0, NULL},
		 .locals = inner, .num_locals = 2, .stack = inner + 2, .num_stack = 1},
		{.method = {JITMAP_VREF_DEOPT, 5, NULL}, .bci = {JITMAP_VREF_NUMBER, 10, NULL},
		 .locals = outer, .num_locals = 3, .stack = outer + 3, .num_stack = 1},
	};
	static const jitmap_deopt_layout layouts[] = {
		{1000, NULL, frames, 2}, {1000, "f", frames + 1, 1}, {7, NULL, frames, 1}};
	jitmap_error err;
	void *b;
	size_t len;
	snprintf(dir, sizeof(dir), "%s/layout", argv[1]);
	for (int big = 0; big < 2; big++) {
		for (size_t n = 0; n <= 3; n++) {
			char name[32];
			if (jitmap_jit_encode_layouts(layouts, n, big ? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE,
						      &b, &len, &err)) {
				fprintf(stderr, "layout_seeds: %s\n", err.reason);
				return 1;
			}
			snprintf(name, sizeof(name), "layouts-%zu-%s", n, big ? "be" : "le");
			write_file(dir, name, big, b, len);
			free(b);
		}
	}
	/* An image as jitmap_jit_register builds it, with a stackmap and the layouts. */
	jitmap_smbuilder *smb = jitmap_smbuilder_new(JITMAP_ORDER_AUTO);
	const jitmap_location loc = {JITMAP_LOC_REGISTER, 8, 3, 0};
	const uint64_t code = 0x7f0000001000;
	void *sm;
	size_t sm_len;
	if (!smb || jitmap_smbuilder_add_function(smb, code, 16, &err) ||
	    jitmap_smbuilder_add_record(smb, 1000, 8, &loc, 1, NULL, 0, &err) ||
	    jitmap_smbuilder_add_record(smb, 7, 12, &loc, 1, NULL, 0, &err) ||
	    jitmap_smbuilder_finish(smb, &sm, &sm_len)) {
		fprintf(stderr, "layout_seeds: stackmap: %s\n", err.reason);
		return 1;
	}
	jitmap_smbuilder_free(smb);
	const jitmap_jit_function fns[] = {{"f", code, 0x100}};
	const jitmap_jit_region region = {.address = code, .size = 0x100, .functions = fns,
					  .num_functions = 1, .stackmap = sm, .stackmap_size = sm_len};
	JITMAP_OPTS(jitmap_jit_region_opts, opts, .layouts = layouts, .num_layouts = 3);
	if (jitmap_jit_build_image_opts(&region, &opts, &b, &len, &err)) {
		fprintf(stderr, "layout_seeds: image: %s\n", err.reason);
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/elf", argv[1]);
	write_file(dir, "image-with-layouts", -1, b, len);
	free(b);
	free(sm);
	return 0;
}

/* bench_parse: how fast libjitmap parses a section and finds records by PC.
 *
 *   bench_parse parse FILE [--runs N]
 *       jitmap_stackmap_parse (validation and decoding) and a first lookup (which builds the
 *       PC index) on the raw section in FILE, N times (default 10); prints the best and the
 *       median time and the throughput of the best run in MB/s (10^6 bytes per second of
 *       input).
 *   bench_parse lookup FILE [--queries N] [--runs N]
 *       Parses FILE once, then times jitmap_stackmap_lookup on N (default 10^6) PCs drawn at
 *       random from the records' PCs (hits) and on the same PCs + 2 (misses: bench_gen puts
 *       records 4-byte aligned), and jitmap_index_lookup and jitmap_stackmap_nearest on the
 *       hits; prints nanoseconds per call, best of the runs (default 5). The PCs are random
 *       so that caches and branch predictors see what a debugger's scattered lookups do.
 *
 * Times come from clock_gettime(CLOCK_MONOTONIC). Exit 1 if a lookup gives a wrong answer.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jitmap/jitmap.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || n < 0 || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "bench_parse: cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static jitmap_stackmap *parse_or_die(const char *path, const unsigned char *buf, size_t len)
{
	jitmap_error err;
	jitmap_stackmap *sm = jitmap_stackmap_parse(buf, len, NULL, &err);
	if (!sm) {
		fprintf(stderr, "bench_parse: %s: offset 0x%" PRIx64 ": %s\n", path, err.offset,
			err.reason);
		exit(1);
	}
	return sm;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int bench_parse(const char *path, int runs)
{
	size_t len;
	unsigned char *buf = read_all(path, &len);
	double *t = calloc((size_t)runs, sizeof(*t));
	size_t records = 0, functions = 0, blobs = 0;
	if (!t)
		return 1;
	for (int i = 0; i < runs; i++) {
		double t0 = now();
		jitmap_stackmap *sm = parse_or_die(path, buf, len);
		jitmap_stackmap_lookup(sm, 0, NULL, 0); /* builds the PC index */
		t[i] = now() - t0;
		records = jitmap_stackmap_num_records(sm);
		functions = jitmap_stackmap_num_functions(sm);
		blobs = jitmap_stackmap_num_blobs(sm);
		jitmap_stackmap_free(sm);
	}
	qsort(t, (size_t)runs, sizeof(*t), cmp_double);
	printf("parse  %s: %.1f MB, %zu records, %zu functions, %zu blobs: best %.1f ms = %.0f MB/s"
	       " (%.2f M records/s), median %.1f ms, %d runs\n",
	       path, (double)len / 1e6, records, functions, blobs, t[0] * 1e3,
	       (double)len / 1e6 / t[0], (double)records / 1e6 / t[0], t[runs / 2] * 1e3, runs);
	free(t);
	free(buf);
	return 0;
}

/* -- Lookups -- */

static uint64_t rng = 0x243f6a8885a308d3u;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

enum op { OP_HIT, OP_MISS, OP_INDEX_HIT, OP_NEAREST };

/* One pass over the queries; returns a count that the caller checks (and that keeps the
 * compiler from dropping the calls). */
static size_t pass(enum op op, const jitmap_stackmap *sm, jitmap_index *idx, const uint64_t *pcs,
		   size_t n)
{
	size_t found = 0;
	const jitmap_record *rec[4];
	jitmap_hit hits[4];
	for (size_t i = 0; i < n; i++) {
		switch (op) {
		case OP_HIT:
			found += jitmap_stackmap_lookup(sm, pcs[i], rec, 4) > 0;
			break;
		case OP_MISS:
			found += jitmap_stackmap_lookup(sm, pcs[i] + 2, rec, 4) > 0;
			break;
		case OP_INDEX_HIT:
			found += jitmap_index_lookup(idx, pcs[i], hits, 4) > 0;
			break;
		case OP_NEAREST: {
			const jitmap_record *before, *after;
			found += jitmap_stackmap_nearest(sm, pcs[i] + 2, &before, &after) == 0 &&
				 before != NULL;
			break;
		}
		}
	}
	return found;
}

static int bench_lookup(const char *path, size_t queries, int runs)
{
	static const char *const names[] = {"lookup hit", "lookup miss", "index hit",
					    "nearest (miss)"};
	size_t len;
	unsigned char *buf = read_all(path, &len);
	jitmap_stackmap *sm = parse_or_die(path, buf, len);
	jitmap_stackmap_lookup(sm, 0, NULL, 0); /* its PC index, built outside the timing */
	free(buf);
	const size_t nr = jitmap_stackmap_num_records(sm);
	uint64_t *pcs = malloc((queries + 1) * sizeof(*pcs));
	jitmap_index *idx = jitmap_index_new();
	if (!pcs || !idx || !nr || jitmap_index_add(idx, sm))
		return 1;
	for (size_t i = 0; i < queries; i++)
		pcs[i] = jitmap_record_pc(sm, jitmap_stackmap_record(sm, rnd() % nr));
	(void)jitmap_index_num_records(idx); /* build the index outside the timing */

	printf("lookup %s: %zu records, %zu random PCs, best of %d:", path, nr, queries, runs);
	int status = 0;
	for (enum op op = OP_HIT; op <= OP_NEAREST; op++) {
		double best = 1e30;
		for (int r = 0; r < runs; r++) {
			double t0 = now();
			size_t found = pass(op, sm, idx, pcs, queries);
			double t = now() - t0;
			best = t < best ? t : best;
			if (found != (op == OP_MISS ? 0 : queries)) {
				fprintf(stderr, "\nbench_parse: %s: %zu of %zu found\n", names[op], found,
					queries);
				status = 1;
			}
		}
		printf("%s %s %.1f ns", op ? "," : "", names[op], best * 1e9 / (double)queries);
	}
	printf("\n");
	jitmap_index_free(idx);
	free(pcs);
	jitmap_stackmap_free(sm);
	return status;
}

int main(int argc, char **argv)
{
	int runs = -1;
	size_t queries = 1000000;
	if (argc < 3) {
		fputs("usage: bench_parse parse FILE [--runs N]\n"
		      "       bench_parse lookup FILE [--queries N] [--runs N]\n",
		      stderr);
		return 2;
	}
	for (int i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--runs"))
			runs = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--queries"))
			queries = strtoull(argv[i + 1], NULL, 0);
	}
	if (!strcmp(argv[1], "parse"))
		return bench_parse(argv[2], runs > 0 ? runs : 10);
	if (!strcmp(argv[1], "lookup"))
		return bench_lookup(argv[2], queries, runs > 0 ? runs : 5);
	fprintf(stderr, "bench_parse: unknown mode '%s'\n", argv[1]);
	return 2;
}

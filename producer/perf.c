/* perf.c: what jitmap_jit_register registers, told to Linux perf too (jitmap_perf_open): a
 * perf map line and a jitdump code load per function, so that `perf report` names the
 * functions GDB and jitmap name, from one registration.
 *
 * The perf map is /tmp/perf-PID.map, one "START SIZE NAME" line per function, appended with
 * one write() each (lines of concurrent writers never interleave). The jitdump is
 * DIR/jit-PID.dump in perf's format (tools/perf/Documentation/jitdump-specification.txt): a
 * header, then a JIT_CODE_LOAD record per function with its code bytes, timestamps from
 * CLOCK_MONOTONIC (`perf record -k mono`); its first page is mapped executable, the mark perf
 * looks for in the process's mmap events to find the file. Both are written under the
 * registration lock, and each record whole or not at all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define JITDUMP_MAGIC 0x4A695444u
#define JIT_CODE_LOAD 0
#define JIT_CODE_CLOSE 3

static struct {
	unsigned flags;
	int map_fd, dump_fd;
	void *mark;
	long page;
	uint64_t code_index;
} perf = {0, -1, -1, NULL, 0, 0};
/* Guards `perf`: taken by jitmap_perf_open and _close, and by jitmap_producer__perf_register
 * under the registration lock (always in that order). */
static pthread_mutex_t perf_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* All of `n` bytes, or -errno (a short write leaves the file as it was: truncated back). */
static int write_whole(int fd, const void *p, size_t n)
{
	const off_t at = lseek(fd, 0, SEEK_END);
	for (size_t done = 0; done < n;) {
		const ssize_t w = write(fd, (const char *)p + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			const int code = w < 0 ? -errno : -EIO;
			if (at >= 0)
				(void)!ftruncate(fd, at);
			return code;
		}
		done += (size_t)w;
	}
	return 0;
}

static void close_all(void)
{
	if (perf.dump_fd >= 0) { /* the last record: the JIT is done with this file */
		const uint32_t head[2] = {JIT_CODE_CLOSE, 16};
		const uint64_t ts = now_ns();
		uint8_t rec[16];
		memcpy(rec, head, 8);
		memcpy(rec + 8, &ts, 8);
		(void)write_whole(perf.dump_fd, rec, sizeof(rec));
	}
	if (perf.mark)
		munmap(perf.mark, (size_t)perf.page);
	if (perf.dump_fd >= 0)
		close(perf.dump_fd);
	if (perf.map_fd >= 0)
		close(perf.map_fd);
	perf.mark = NULL;
	perf.map_fd = perf.dump_fd = -1;
	perf.flags = 0;
}

static int open_jitdump(const char *dir)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/jit-%d.dump", dir && *dir ? dir : ".", (int)getpid()) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	perf.dump_fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
	if (perf.dump_fd < 0)
		return -errno;
	struct {
		uint32_t magic, version, total_size, elf_mach, pad1, pid;
		uint64_t timestamp, flags;
	} h = {JITDUMP_MAGIC, 1, 40, HOST_MACHINE, 0, (uint32_t)getpid(), now_ns(), 0};
	int rc = write_whole(perf.dump_fd, &h, sizeof(h));
	if (rc)
		return rc;
	/* perf finds the file by this mapping of it, executable (its mmap event). */
	perf.page = sysconf(_SC_PAGESIZE);
	perf.mark = mmap(NULL, (size_t)perf.page, PROT_READ | PROT_EXEC, MAP_PRIVATE, perf.dump_fd, 0);
	if (perf.mark == MAP_FAILED) {
		perf.mark = NULL;
		return -errno;
	}
	return 0;
}

int jitmap_perf_open(unsigned flags, const char *jitdump_dir)
{
	if (flags & ~(unsigned)(JITMAP_PERF_MAP | JITMAP_PERF_JITDUMP))
		return -EINVAL;
	pthread_mutex_lock(&perf_lock);
	close_all();
	int rc = 0;
	if (flags & JITMAP_PERF_MAP) {
		char path[64];
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		perf.map_fd = open(path, O_CREAT | O_APPEND | O_WRONLY | O_CLOEXEC, 0644);
		if (perf.map_fd < 0)
			rc = -errno;
	}
	if (!rc && (flags & JITMAP_PERF_JITDUMP))
		rc = open_jitdump(jitdump_dir);
	if (rc)
		close_all();
	else
		perf.flags = flags;
	pthread_mutex_unlock(&perf_lock);
	return rc;
}

void jitmap_perf_close(void)
{
	pthread_mutex_lock(&perf_lock);
	close_all();
	pthread_mutex_unlock(&perf_lock);
}

static void code_load(const jitmap_jit_function *f)
{
	const size_t name_len = strlen(f->name) + 1;
	/* header (16) + pid, tid (8) + vma, code_addr, code_size, code_index (32) + name + code */
	const uint64_t total = 16 + 8 + 32 + name_len + f->size;
	if (total > UINT32_MAX)
		return; /* a record's size field is 32 bits: a function that large is not told */
	uint8_t *rec = malloc((size_t)total);
	if (!rec)
		return;
	const uint32_t head[2] = {JIT_CODE_LOAD, (uint32_t)total};
	const uint64_t ts = now_ns();
	const uint32_t ids[2] = {(uint32_t)getpid(), (uint32_t)syscall(SYS_gettid)};
	const uint64_t body[4] = {f->address, f->address, f->size, perf.code_index++};
	uint8_t *p = rec;
	memcpy(p, head, 8), p += 8;
	memcpy(p, &ts, 8), p += 8;
	memcpy(p, ids, 8), p += 8;
	memcpy(p, body, 32), p += 32;
	memcpy(p, f->name, name_len), p += name_len;
	memcpy(p, (const void *)(uintptr_t)f->address, (size_t)f->size); /* the code itself */
	(void)write_whole(perf.dump_fd, rec, (size_t)total);
	free(rec);
}

void jitmap_producer__perf_register(const jitmap_jit_region *r)
{
	pthread_mutex_lock(&perf_lock);
	for (size_t i = 0; perf.flags && i < r->num_functions; i++) {
		const jitmap_jit_function *f = &r->functions[i];
		if (perf.map_fd >= 0) {
			char *line = NULL;
			const int n = asprintf(&line, "%llx %llx %s\n", (unsigned long long)f->address,
					       (unsigned long long)f->size, f->name);
			if (n > 0)
				(void)write_whole(perf.map_fd, line, (size_t)n);
			free(line);
		}
		if (perf.dump_fd >= 0)
			code_load(f);
	}
	pthread_mutex_unlock(&perf_lock);
}

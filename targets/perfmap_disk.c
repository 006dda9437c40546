/* perfmap_disk.c: perf maps and jitdump files read from disk: one by its path (a jitdump told
 * from a perf map by its magic), and those of a process: its /tmp/perf-PID.map, by the PID it
 * sees itself as, and the jit-*.dump files it maps. */
#define _GNU_SOURCE
#include "jitmap/perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "jitmap/core.h"
#include "jitmap/live.h"

#define MAX_FILE (UINT64_C(1) << 30) /* a perf map or jitdump larger is not read (its text
					and index would take gigabytes inside the debugger) */

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* A problem of its own for a file that could not be read (replacing what it said). */
static int unreadable(jitmap_perfmap *m, const char *path, int code, const char *what)
{
	struct jitmap__pm_file *f = jitmap__pm_file_for(m, path, JITMAP_PERFMAP_MAP);
	if (!f)
		return -ENOMEM;
	jitmap__pm_problem(f, "%s: %s (%s)", path, what, strerror(-code));
	return code;
}

/* A jitdump's bytes added as the file at `path` (`where` said after its name); bytes that are no
 * jitdump are a problem of that file, which says where they went wrong. */
static int add_jitdump(jitmap_perfmap *m, const void *data, size_t len, const char *path,
		       const char *where, jitmap_error *err)
{
	jitmap_error e;
	const int rc = jitmap_perfmap_add_jitdump(m, data, len, path, &e);
	if (rc == -EINVAL) {
		struct jitmap__pm_file *f = jitmap__pm_file_for(m, path, JITMAP_PERFMAP_JITDUMP);
		if (f)
			jitmap__pm_problem(f, "%s%s: not a jitdump file: at offset %" PRIu64 ", %s",
					   path, where, e.offset, e.reason);
		if (err)
			*err = e;
	}
	return rc;
}

int jitmap_perfmap_add_file(jitmap_perfmap *m, const char *path, jitmap_error *err)
{
	if (!m || !path)
		return jitmap__fail(err, -EINVAL, 0, "no map or path");
	const int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return unreadable(m, path, -errno, "cannot be opened");
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		const int code = S_ISREG(st.st_mode) ? -errno : -EINVAL;
		close(fd);
		return unreadable(m, path, code, "not a regular file");
	}
	struct jitmap__pm_file *old = jitmap__pm_file_named(m, path);
	if (old && old->have_st && same_file(&old->st, &st)) {
		close(fd);
		return old->nranges > INT32_MAX ? INT32_MAX : (int)old->nranges;
	}
	if ((uint64_t)st.st_size > MAX_FILE) {
		close(fd);
		return unreadable(m, path, -EFBIG, "larger than 1 GiB: not read");
	}
	/* Read to the end (a live runtime may be appending: what is there now), into memory
	 * faulted in by one call: a large map read into fresh pages otherwise takes a fault a
	 * page, which costs more than reading it on a virtual machine. Not the file mapped: a
	 * writer that truncates it would make reading it a SIGBUS in the debugger. */
	size_t cap = (size_t)st.st_size + 1, len = 0;
	char *buf = mmap(NULL, cap, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (len == cap) {
			close(fd);
			break; /* grew while read: what was there when it was looked at */
		}
		const ssize_t got = read(fd, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			const int code = got < 0 ? -errno : 0;
			close(fd);
			if (code) {
				munmap(buf, cap);
				return unreadable(m, path, code, "cannot be read");
			}
			break;
		}
		len += (size_t)got;
	}
	int rc;
	if (jitmap__pm_jitdump_order((const uint8_t *)buf, len, NULL)) {
		rc = add_jitdump(m, buf, len, path, "", err);
	} else {
		/* A map that grew while it was read may end inside a line being written: up to
		 * its last whole line. */
		size_t upto = len;
		if (len == cap)
			while (upto && buf[upto - 1] != '\n')
				upto--;
		struct jitmap__pm_file *f = jitmap__pm_file_for(m, path, JITMAP_PERFMAP_MAP);
		if (!f) {
			munmap(buf, cap);
			return -ENOMEM;
		}
		rc = jitmap__pm_perf_map_take(f, buf, upto, cap); /* the file keeps the buffer */
		buf = NULL;
	}
	if (buf)
		munmap(buf, cap);
	struct jitmap__pm_file *f = jitmap__pm_file_named(m, path);
	if (f && rc >= 0) {
		f->st = st;
		f->have_st = true;
	}
	return rc;
}

static bool is_jitdump_name(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const size_t n = strlen(base);
	return n > 9 && !strncmp(base, "jit-", 4) && !strcmp(base + n - 5, ".dump");
}

int jitmap__perfmap_process_paths(int pid, int (*each)(void *ctx, const char *path), void *ctx)
{
	if (pid <= 0)
		return -EINVAL;
	int found = 0, rc;
	char root[64], path[4200];
	/* Its files as it sees them (its mount namespace, a container's or a private /tmp),
	 * its perf map by the PID it knows itself by: never a file of ours by that name. */
	const int own = jitmap_pid_ns_pid(pid);
	if (own < 0 || jitmap_pid_root(pid, root, sizeof(root)) < 0)
		return 0; /* gone */
	snprintf(path, sizeof(path), "%s/tmp/perf-%d.map", root, own);
	if (access(path, F_OK) == 0) {
		found++;
		if ((rc = each(ctx, path)) < 0)
			return rc;
	}
	char maps[64];
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	FILE *fp = fopen(maps, "re");
	if (!fp)
		return found;
	char line[4200], last[4200] = "";
	while (fgets(line, sizeof(line), fp)) {
		char *file = strchr(line, '/');
		if (!file)
			continue;
		file[strcspn(file, "\n")] = 0;
		if (!is_jitdump_name(file) || !strcmp(file, last))
			continue;
		snprintf(last, sizeof(last), "%s", file);
		snprintf(path, sizeof(path), "%s%s", root, file);
		found++;
		if ((rc = each(ctx, path)) < 0) {
			fclose(fp);
			return rc;
		}
	}
	fclose(fp);
	return found;
}

static int add_found(void *m, const char *path)
{
	return jitmap_perfmap_add_file(m, path, NULL) == -ENOMEM ? -ENOMEM : 0;
}

int jitmap_perfmap_add_process(jitmap_perfmap *m, int pid)
{
	if (!m || pid <= 0)
		return -EINVAL;
	return jitmap__perfmap_process_paths(pid, add_found, m);
}

int jitmap_perfmap_add_core(jitmap_perfmap *m, jitmap_stopped *s)
{
	if (!m || !s)
		return -EINVAL;
	int added = 0;
	for (size_t i = 0; i < jitmap_stopped_num_jit_files(s); i++) {
		const jitmap_stopped_jit_file_info *jf = jitmap_stopped_jit_file(s, i);
		int rc;
		if (jf->kind == JITMAP_PERFMAP_JITDUMP) {
			rc = add_jitdump(m, jf->data, jf->size, jf->path, " (in the core)", NULL);
		} else {
			rc = jitmap_perfmap_add_perf_map(m, jf->data, jf->size, jf->path);
		}
		if (rc == -ENOMEM)
			return rc;
		struct jitmap__pm_file *f = jitmap__pm_file_named(m, jf->path);
		if (!f)
			continue;
		char *source = NULL;
		if (asprintf(&source, "%s %s (in the core)",
			     jf->kind == JITMAP_PERFMAP_JITDUMP ? "jitdump" : "perf map",
			     jf->path) < 0)
			return -ENOMEM;
		free(f->source);
		f->source = source;
		f->in_core = true;
		f->have_st = false; /* a file on disk by the same path is read again */
		added++;
	}
	return added;
}

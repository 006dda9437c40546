/* live_stopped.c: a live process as a stopped process (include/jitmap/stopped.h): what it says
 * of itself (its threads, its problems), what a core says that a process can say too (its
 * memory's mappings, its file mappings, its auxiliary vector), and the live process's table
 * of operations that stopped.c asks; and the files it maps, opened as it sees them, with their
 * build IDs. Stopping it is live.c's, its memory live_memory.c's, its mappings live_maps.c's.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "live_internal.h"

#define MAX_AUXV 512 /* entries of /proc/PID/auxv read at most (Linux writes about 30) */

/* -- What a process says of itself -- */

pid_t jitmap__live_pid(const jitmap__live *l) { return l->pid; }
const char *jitmap__live_name(const jitmap__live *l) { return l->name; }
jitmap_arch jitmap__live_arch(const jitmap__live *l) { return l->arch; }
jitmap_byte_order jitmap__live_byte_order(const jitmap__live *l) { return l->order; }
size_t jitmap__live_num_threads(const jitmap__live *l) { return l->threads.n; }

bool jitmap__live_stopped(const jitmap__live *l)
{
	for (size_t i = 0; i < l->threads.n; i++)
		if (l->threads.v[i]->stopped)
			return true;
	return false;
}

struct jitmap__threads *jitmap__live_threads(jitmap__live *l)
{
	return &l->threads;
}

const char *jitmap__live_warning(const jitmap__live *l, size_t i)
{
	return jitmap__problem_at(&l->warnings, i);
}

/* -- What a core says, asked of a process -- */

/* A file has an inode and a path; "[heap]" and its kind have neither, and anonymous shared
 * memory ("/dev/zero (deleted)", a memfd) is a file that holds no image. */
static bool is_file(const struct jitmap__mapping *m)
{
	return m->inode && m->path && m->path[0] == '/';
}

int jitmap__live_memory(jitmap__live *l, uint64_t addr, jitmap_stopped_memory_info *out)
{
	const int rc = jitmap__live_read_mappings(l);
	if (rc)
		return rc;
	const struct jitmap__mapping *m = jitmap__live_mapping_at(l, addr);
	if (!m) {
		const size_t i = JITMAP_UPPER_BOUND(l->maps, l->nmaps, start, addr);
		out->source = JITMAP_STOPPED_MEM_NONE;
		out->size = i < l->nmaps ? l->maps[i].start - addr : UINT64_MAX;
		snprintf(out->why, sizeof(out->why), "0x%" PRIx64 " is in no mapping of process %d",
			 addr, (int)l->pid);
		return 0;
	}
	out->source = JITMAP_STOPPED_MEM_PROCESS;
	out->size = m->end - addr;
	out->segment_start = m->start;
	out->segment_end = m->end;
	out->segment_flags = (m->perms[0] == 'r' ? PF_R : 0) | (m->perms[1] == 'w' ? PF_W : 0) |
			     (m->perms[2] == 'x' ? PF_X : 0);
	if (is_file(m)) {
		out->path = m->path;
		out->offset = m->offset + (addr - m->start);
	}
	return 0;
}

/* The file mappings, made once from the mappings (their paths copied: the mappings may be
 * read again, and the list is the caller's until the process is freed). */
static int make_files(jitmap__live *l)
{
	if (l->files_made)
		return 0;
	if (jitmap__live_read_mappings(l))
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < l->nmaps; i++)
		n += is_file(&l->maps[i]);
	jitmap_stopped_mapping_info *v = n ? calloc(n, sizeof(*v)) : NULL;
	if (n && !v)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < l->nmaps; i++) {
		const struct jitmap__mapping *m = &l->maps[i];
		if (!is_file(m))
			continue;
		char *path = strdup(m->path);
		if (!path) {
			while (k--)
				free((char *)v[k].path);
			free(v);
			return -1;
		}
		v[k++] = (jitmap_stopped_mapping_info){.start = m->start, .end = m->end,
						       .offset = m->offset, .path = path,
						       .core_path = path};
	}
	l->files = v;
	l->nfiles = k;
	l->files_made = true;
	return 0;
}

size_t jitmap__live_num_mappings(jitmap__live *l)
{
	return make_files(l) ? 0 : l->nfiles;
}

const jitmap_stopped_mapping_info *jitmap__live_mapping(jitmap__live *l, size_t i)
{
	return !make_files(l) && i < l->nfiles ? &l->files[i] : NULL;
}

/* /proc/PID/auxv: pairs of words in the host's layout, read once. */
int jitmap__live_auxv(jitmap__live *l, uint64_t type, uint64_t *value)
{
	if (!l->auxv_read) {
		l->auxv_read = true;
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/auxv", (int)l->pid);
		const int fd = open(path, O_RDONLY | O_CLOEXEC);
		uint64_t *v = fd >= 0 ? malloc(MAX_AUXV * 2 * sizeof(*v)) : NULL;
		size_t got = 0;
		while (v && got < MAX_AUXV * 2 * sizeof(*v)) {
			const ssize_t n = read(fd, (char *)v + got, MAX_AUXV * 2 * sizeof(*v) - got);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		if (fd >= 0)
			close(fd);
		l->auxv = v;
		l->nauxv = got / (2 * sizeof(*v));
	}
	for (size_t i = 0; i < l->nauxv && l->auxv[2 * i] != 0 /* AT_NULL */; i++)
		if (l->auxv[2 * i] == type) {
			if (value)
				*value = l->auxv[2 * i + 1];
			return 0;
		}
	return -ENOENT;
}

/* -- The files mapped -- */

/* Whether the file open at `fd` is the one mapping `m` maps: the device and inode the kernel
 * lists for it, else (a file system whose stat() and maps disagree on the device, as
 * overlayfs may) the build ID of its first page in memory. */
static bool is_mapped_file(jitmap__live *l, const struct jitmap__mapping *m, int fd)
{
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return false;
	if ((uint64_t)st.st_ino == m->inode && major(st.st_dev) == m->dev_major &&
	    minor(st.st_dev) == m->dev_minor)
		return true;
	/* The mapping at offset 0 of the same file holds its headers. */
	const struct jitmap__mapping *head = NULL;
	for (size_t i = 0; i < l->nmaps && !head; i++)
		if (l->maps[i].offset == 0 && l->maps[i].inode == m->inode && l->maps[i].path &&
		    !strcmp(l->maps[i].path, m->path))
			head = &l->maps[i];
	uint8_t want[JITMAP__MAX_BUILD_ID], got[JITMAP__MAX_BUILD_ID];
	const jitmap_target t = jitmap__live_target(l);
	const size_t want_len = head ? jitmap__target_build_id(&t, head->start, want) : 0;
	const size_t got_len = want_len ? jitmap__fd_build_id(fd, got) : 0;
	return want_len && got_len == want_len && !memcmp(want, got, want_len) &&
	       lseek(fd, 0, SEEK_SET) == 0;
}

int jitmap__live_mapped_file(jitmap__live *l, uint64_t addr, char *path, size_t path_len,
			    char *why, size_t why_len)
{
	if (!l || !path || !path_len)
		return -EINVAL;
	path[0] = 0;
	int rc = jitmap__live_read_mappings(l);
	if (rc) {
		snprintf(why, why_len, "/proc/%d/maps cannot be read: %s", (int)l->pid,
			 strerror(-rc));
		return rc;
	}
	const struct jitmap__mapping *m = jitmap__live_mapping_at(l, addr);
	if (!m || !m->path || m->path[0] != '/' || !m->inode) {
		snprintf(why, why_len, "no file is mapped at 0x%" PRIx64, addr);
		return -ENOENT;
	}
	/* The file the process maps, whatever its path names now (root, or
	 * CAP_CHECKPOINT_RESTORE: Linux lets no one else open these links). */
	char link[96];
	snprintf(link, sizeof(link), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)l->pid,
		 m->start, m->end);
	int fd = open(link, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd >= 0 && is_mapped_file(l, m, fd)) {
		snprintf(path, path_len, "%s", link);
		return fd;
	}
	if (fd >= 0)
		close(fd);
	const int link_errno = fd < 0 ? errno : 0;
	if (!m->deleted) {
		/* The path as the process sees it: through /proc/PID/root where its mount
		 * namespace or root is not ours (a container's /usr), never a file of ours by
		 * the same name in its place. */
		char root[64], in_root[PATH_MAX];
		if (jitmap_pid_root((int)l->pid, root, sizeof(root)) < 0)
			root[0] = 0; /* gone: the open below says so */
		snprintf(in_root, sizeof(in_root), "%s%s", root, m->path);
		fd = open(in_root, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd >= 0 && is_mapped_file(l, m, fd)) {
			snprintf(path, path_len, "%s", in_root);
			return fd;
		}
		if (fd >= 0) {
			close(fd);
			snprintf(why, why_len, "%s is not the file the process mapped (another inode "
				 "and build), and %s cannot be opened (%s)", in_root, link,
				 strerror(link_errno ? link_errno : EINVAL));
			return -ESTALE;
		}
		const int open_errno = errno;
		snprintf(why, why_len, "%s cannot be opened (%s)", in_root, strerror(open_errno));
		return -open_errno;
	}
	snprintf(why, why_len, "%s was deleted since the process mapped it, and %s cannot be "
		 "opened (%s)", m->path, link, strerror(link_errno ? link_errno : EINVAL));
	return -ESTALE;
}

size_t jitmap__live_build_id_at(jitmap__live *l, uint64_t addr, uint8_t *out, size_t len)
{
	if (!l || !out || jitmap__live_read_mappings(l))
		return 0;
	const struct jitmap__mapping *m = jitmap__live_mapping_at(l, addr);
	if (!m || !m->path || !m->inode)
		return 0;
	/* The same file's mapping at offset 0 holds its headers. */
	const struct jitmap__mapping *head = NULL;
	for (size_t i = 0; i < l->nmaps && !head; i++)
		if (l->maps[i].offset == 0 && l->maps[i].inode == m->inode &&
		    l->maps[i].dev_major == m->dev_major && l->maps[i].dev_minor == m->dev_minor)
			head = &l->maps[i];
	uint8_t id[JITMAP__MAX_BUILD_ID];
	const jitmap_target t = jitmap__live_target(l);
	const size_t n = head ? jitmap__target_build_id(&t, head->start, id) : 0;
	if (!n || n > len)
		return 0;
	memcpy(out, id, n);
	return n;
}

/* -- The table -- */

static void live_free(void *k) { jitmap__live_free(k); }
static int live_detach(void *k) { return jitmap__live_detach(k); }
static jitmap_arch live_arch(const void *k) { return jitmap__live_arch(k); }
static const char *live_name(const void *k) { return jitmap__live_name(k); }
static pid_t live_pid(const void *k) { return jitmap__live_pid(k); }
static bool live_is_stopped(const void *k) { return jitmap__live_stopped(k); }
static struct jitmap__threads *live_threads(void *k) { return jitmap__live_threads(k); }
static jitmap_target live_target(void *k) { return jitmap__live_target(k); }
static size_t live_num_mappings(void *k) { return jitmap__live_num_mappings(k); }

/* The host's e_machine: a process this library traces runs its code. */
static unsigned live_elf_machine(const void *k)
{
	const struct jitmap__arch *a = jitmap__arch(jitmap__live_arch(k));
	return a ? a->elf_machine : 0;
}

static const char *live_problem(const void *k, size_t i, uint8_t *status)
{
	const jitmap__live *l = k;
	const char *text = jitmap__live_warning(l, i);
	if (text)
		*status = l->warn_status[i];
	return text;
}

static jitmap_target live_thread_target(void *k, size_t i)
{
	return jitmap__live_thread_target(k, i);
}

static jitmap_target live_thread_stack_target(void *k, size_t i)
{
	return jitmap__live_thread_stack_target(k, i);
}

static int live_memory(void *k, uint64_t addr, jitmap_stopped_memory_info *out)
{
	return jitmap__live_memory(k, addr, out);
}

static int live_code_at(void *k, uint64_t pc, char *why, size_t why_len)
{
	return jitmap__live_code_at(k, pc, why, why_len);
}

static int live_module_at(void *k, uint64_t addr, jitmap_stopped_module_info *out)
{
	const jitmap_target mem = jitmap__live_target(k);
	return jitmap__live_module_at(k, &mem, addr, out);
}

static size_t live_build_id_at(void *k, uint64_t addr, uint8_t *out, size_t len)
{
	return jitmap__live_build_id_at(k, addr, out, len);
}

static const jitmap_stopped_mapping_info *live_mapping(void *k, size_t i)
{
	return jitmap__live_mapping(k, i);
}

static int live_mapped_file(void *k, uint64_t addr, char *path, size_t path_len, char *why,
			    size_t why_len)
{
	return jitmap__live_mapped_file(k, addr, path, path_len, why, why_len);
}

static int live_auxv(void *k, uint64_t type, uint64_t *value)
{
	return jitmap__live_auxv(k, type, value);
}

/* What a process does not have (stopped.h gives "none"): compression, placed files, a core's
 * symbols, an ELF handle, a small core's note, JIT files in notes. */
const struct jitmap__stopped_ops jitmap__live_ops = {
	.kind = JITMAP_STOPPED_LIVE,
	.free = live_free,
	.detach = live_detach,
	.arch = live_arch,
	.elf_machine = live_elf_machine,
	.name = live_name,
	.pid = live_pid,
	.is_stopped = live_is_stopped,
	.threads = live_threads,
	.problem = live_problem,
	.target = live_target,
	.thread_target = live_thread_target,
	.thread_stack_target = live_thread_stack_target,
	.memory = live_memory,
	.code_at = live_code_at,
	.module_at = live_module_at,
	.build_id_at = live_build_id_at,
	.num_mappings = live_num_mappings,
	.mapping = live_mapping,
	.mapped_file = live_mapped_file,
	.auxv = live_auxv,
};

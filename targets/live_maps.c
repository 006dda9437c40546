/* live_maps.c: a live process's mappings (/proc/PID/maps), read and kept: where code can be,
 * and the module at an address. See include/jitmap/stopped.h. */
#define _GNU_SOURCE
#include <errno.h>
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

/* -- Mappings --
 *
 * /proc/PID/maps, read once: while the threads are stopped, a process changes none of its
 * mappings. A line is "START-END PERMS OFFSET MAJOR:MINOR INODE [PATH]", the path being
 * everything after the inode's spaces (it may hold spaces), with " (deleted)" appended by the
 * kernel when the file was unlinked since it was mapped. */

#define MAX_MAPPINGS (1u << 20)

static int cmp_mapping(const void *a, const void *b)
{
	const struct jitmap__mapping *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

/* A number in `base` (16 or 10) at *p, then `sep` (0: any run of spaces, or the end): true,
 * with *p past them. By hand: sscanf cost 5,000 instructions a line, and a JIT with 30,000
 * objects maps 60,000 lines. */
static bool parse_num(const char **p, unsigned base, char sep, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0;
	for (;; s++, digits++) {
		const char c = *s;
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else
			break;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	if (!digits)
		return false;
	if (sep && *s++ != sep)
		return false;
	if (!sep) {
		if (*s && *s != ' ' && *s != '\n')
			return false;
		while (*s == ' ')
			s++;
	}
	*out = v;
	*p = s;
	return true;
}

static int parse_mapping(const char *line, struct jitmap__mapping *m)
{
	uint64_t start, end, offset, major, minor, inode;
	memset(m, 0, sizeof(*m));
	const char *p = line;
	if (!parse_num(&p, 16, '-', &start) || !parse_num(&p, 16, ' ', &end) || end <= start)
		return -EINVAL;
	size_t np = strcspn(p, " \n");
	if (np < 1 || np > 4 || p[np] != ' ')
		return -EINVAL;
	memcpy(m->perms, p, np);
	p += np + 1;
	if (!parse_num(&p, 16, ' ', &offset) || !parse_num(&p, 16, ':', &major) ||
	    !parse_num(&p, 16, ' ', &minor) || !parse_num(&p, 10, 0, &inode) ||
	    major > UINT_MAX || minor > UINT_MAX)
		return -EINVAL;
	m->start = start;
	m->end = end;
	m->offset = offset;
	m->dev_major = (unsigned)major;
	m->dev_minor = (unsigned)minor;
	m->inode = inode;
	const int path_at = (int)(p - line);
	if (!line[path_at] || line[path_at] == '\n')
		return 0;
	size_t n = strcspn(line + path_at, "\n");
	static const char deleted[] = " (deleted)";
	const size_t dl = sizeof(deleted) - 1;
	if (n > dl && !memcmp(line + path_at + n - dl, deleted, dl)) {
		m->deleted = true;
		n -= dl;
	}
	m->path = strndup(line + path_at, n);
	return m->path ? 0 : -ENOMEM;
}

int jitmap__live_read_mappings(jitmap__live *l)
{
	if (l->maps_read)
		return l->maps_read < 0 ? l->maps_read : 0;
	char path[96];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)l->pid);
	FILE *f = fopen(path, "re");
	/* A process whose main thread has exited (a zombie) lists no mapping there: a living
	 * thread's list is the process's. */
	int c = f ? fgetc(f) : EOF;
	for (size_t i = 0; c == EOF && i < l->threads.n; i++) {
		if (l->threads.v[i]->pub.tid == l->pid || l->threads.v[i]->pub.error == -ESRCH)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", (int)l->pid,
			 (int)l->threads.v[i]->pub.tid);
		FILE *g = fopen(path, "re");
		if (!g)
			continue;
		if (f)
			fclose(f);
		f = g;
		c = fgetc(f);
	}
	if (!f)
		return l->maps_read = -errno;
	if (c != EOF)
		ungetc(c, f);
	char *line = NULL;
	size_t cap = 0, mcap = 0, n = 0;
	int rc = 0;
	while (getline(&line, &cap, f) > 0 && n < MAX_MAPPINGS) {
		struct jitmap__mapping m;
		rc = parse_mapping(line, &m);
		if (rc == -EINVAL) {
			rc = 0;
			continue;
		}
		if (rc || (rc = jitmap__grow(&l->maps, &mcap, n + 1, sizeof(m)))) {
			free(m.path);
			break;
		}
		l->maps[n++] = m;
	}
	free(line);
	fclose(f);
	l->nmaps = n;
	if (rc)
		return rc; /* out of memory: read again next time */
	if (l->nmaps) /* qsort's array may not be NULL */
		qsort(l->maps, l->nmaps, sizeof(*l->maps), cmp_mapping);
	l->maps_read = 1;
	return 0;
}

/* The mappings read again at the next need. */
void jitmap__live_forget_mappings(jitmap__live *l)
{
	for (size_t i = 0; i < l->nmaps; i++)
		free(l->maps[i].path);
	free(l->maps);
	l->maps = NULL;
	l->nmaps = 0;
	l->maps_read = 0;
}

/* The mapping holding `addr`, or NULL. */
const struct jitmap__mapping *jitmap__live_mapping_at(const jitmap__live *l, uint64_t addr)
{
	const size_t i = JITMAP_UPPER_BOUND(l->maps, l->nmaps, start, addr);
	return i && addr < l->maps[i - 1].end ? &l->maps[i - 1] : NULL;
}

const struct jitmap__mapping *jitmap__live_mapping_now(jitmap__live *l, uint64_t addr)
{
	return jitmap__live_read_mappings(l) ? NULL : jitmap__live_mapping_at(l, addr);
}

int jitmap__live_code_at(jitmap__live *l, uint64_t pc, char *why, size_t why_len)
{
	if (!l)
		return -EINVAL;
	const int rc = jitmap__live_read_mappings(l);
	if (rc)
		return rc;
	const struct jitmap__mapping *m = jitmap__live_mapping_at(l, pc);
	if (m && m->perms[2] == 'x')
		return 1;
	if (why && why_len && m)
		snprintf(why, why_len, "0x%" PRIx64 " is in %s mapping [0x%" PRIx64 ", 0x%" PRIx64
			 ")%s%s, not code", pc, m->perms, m->start, m->end, m->path ? " of " : "",
			 m->path ? m->path : "");
	else if (why && why_len)
		snprintf(why, why_len, "0x%" PRIx64 " is in no mapping of the process", pc);
	return 0;
}

/* -- Modules -- */

int jitmap__live_module_at(jitmap__live *l, const jitmap_target *mem, uint64_t addr,
			   jitmap_stopped_module_info *out)
{
	const int rc = jitmap__live_read_mappings(l);
	if (rc)
		return rc;
	const struct jitmap__mapping *m = jitmap__live_mapping_at(l, addr);
	if (!m)
		return -ENOENT;
	out->start = m->start;
	out->end = m->end;
	out->name = m->path;
	/* A file has an inode and a path; "[heap]" and its kind have neither, and anonymous
	 * shared memory ("/dev/zero (deleted)", a memfd) is a file that holds no image. */
	out->file = m->inode && m->path && m->path[0] == '/';
	if (!out->file)
		return 0;
	/* The file's headers: in its first page, mapped at offset 0 (the nearest such mapping
	 * below, the image this one belongs to; any other of the same file holds the same). */
	const struct jitmap__mapping *head = NULL;
	for (size_t i = 0; i < l->nmaps; i++) {
		const struct jitmap__mapping *h = &l->maps[i];
		if (h->offset == 0 && h->inode == m->inode && h->dev_major == m->dev_major &&
		    h->dev_minor == m->dev_minor && (!head || h->start <= addr))
			head = h;
	}
	uint64_t vaddr;
	if (!head || !jitmap__target_file_vaddr(mem, head->start, m->offset + (addr - m->start),
						&vaddr))
		return 0;
	out->bias = addr - vaddr;
	return 1;
}

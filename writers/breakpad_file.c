/* breakpad_file.c: a Breakpad symbol file into a symbol store (jitmap_breakpad_sym_write):
 * its path, the folders, the older file for the same module read back so that its rows are
 * kept, and the new text put in place whole. breakpad.c makes the text.
 *
 * The older file is read as Breakpad's reader reads one (basic_source_line_resolver.cc):
 * lines split at \r and \n, fields at single spaces, the last field of a FUNC, PUBLIC or FILE
 * record the rest of the line; a line it cannot read is skipped, as that reader skips it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "breakpad_records.h"

/* An older file larger than this, or with more records, is not read: a JIT module's file is
 * kilobytes to a few megabytes (dump_syms' of a browser is hundreds, but that is no JIT
 * module), and each record read back costs about 48 bytes of memory, a line of 8 bytes. */
#define MAX_OLD_FILE (UINT64_C(64) << 20)
#define MAX_OLD_RECORDS (2u << 20)
/* How long a writer waits for another's lock on the ID folder. */
#define LOCK_WAIT_MS 5000

/* -- Reading an older file -- */

/* A hexadecimal field (1 to 16 digits) ending at a space or at the line's end, past which
 * *p moves (and past the space). */
static bool hex_field(char **p, uint64_t *v)
{
	char *c = *p;
	uint64_t x = 0;
	unsigned n = 0;
	for (; n < 17; c++, n++) {
		unsigned d;
		if (*c >= '0' && *c <= '9')
			d = (unsigned)(*c - '0');
		else if (*c >= 'a' && *c <= 'f')
			d = (unsigned)(*c - 'a' + 10);
		else if (*c >= 'A' && *c <= 'F')
			d = (unsigned)(*c - 'A' + 10);
		else
			break;
		x = x << 4 | d;
	}
	if (!n || n > 16 || (*c != ' ' && *c))
		return false;
	*p = *c ? c + 1 : c;
	*v = x;
	return true;
}

/* A decimal field below 2^31 (Breakpad reads them as long), ending as hex_field's. */
static bool dec_field(char **p, unsigned *v)
{
	char *c = *p;
	uint64_t x = 0;
	for (; *c >= '0' && *c <= '9' && x < (UINT64_C(1) << 31); c++)
		x = x * 10 + (uint64_t)(*c - '0');
	if (c == *p || x >= (UINT64_C(1) << 31) || (*c != ' ' && *c))
		return false;
	*p = *c ? c + 1 : c;
	*v = (unsigned)x;
	return true;
}

/* A FILE record's number and name, to name the older lines' files by. */
struct file_name {
	unsigned num;
	char *name;
};

static int by_num(const void *a, const void *b)
{
	const struct file_name *x = a, *y = b;
	return x->num < y->num ? -1 : x->num > y->num;
}

/* Line `ln` (NUL-terminated, in the older file's buffer) as a record into `r`, its strings
 * pointing into the buffer; an unreadable one is left out. `line_file[i]` gets the file
 * number of r->lines[i]. `prio` falls with each record. 0 or -ENOMEM. */
static int read_record(char *ln, struct jitmap__bp_records *r, struct file_name **files,
		       size_t *num_files, size_t *cap_files, unsigned **line_file,
		       size_t *cap_line_file, uint64_t prio)
{
	uint64_t a, z, param;
	unsigned u, v;
	if (!strncmp(ln, "FILE ", 5)) {
		char *p = ln + 5;
		if (!dec_field(&p, &u) || !*jitmap__bp_clean(p))
			return 0;
		if (jitmap__grow(files, cap_files, *num_files + 1, sizeof(**files)))
			return -ENOMEM;
		(*files)[(*num_files)++] = (struct file_name){u, p};
		return 0;
	}
	if (!strncmp(ln, "FUNC ", 5) || !strncmp(ln, "PUBLIC ", 7)) {
		const bool pub = ln[0] == 'P';
		char *p = ln + (pub ? 7 : 5);
		struct jitmap__bp_func f = {.is_public = pub, .prio = prio};
		if ((f.multiple = !strncmp(p, "m ", 2)))
			p += 2;
		if (!hex_field(&p, &a) || (!pub && !hex_field(&p, &z)) || !hex_field(&p, &param) ||
		    !*jitmap__bp_clean(p))
			return 0;
		/* Breakpad's RangeMap refuses an empty or wrapping FUNC: so is it here. */
		if (!pub && (!z || z > UINT64_MAX - a))
			return 0;
		f.addr = a;
		f.size = pub ? 0 : z;
		f.name = p;
		return jitmap__bp_add_func(r, &f);
	}
	if (!strncmp(ln, "STACK CFI INIT ", 15)) {
		char *p = ln + 15;
		if (!hex_field(&p, &a) || !hex_field(&p, &z) || !z || z > UINT64_MAX - a || !*p)
			return 0;
		struct jitmap__bp_cfi c = {a, z, prio, p, r->num_deltas, 0};
		return jitmap__bp_add_cfi(r, &c);
	}
	if (!strncmp(ln, "STACK CFI ", 10)) {
		/* A row of the INIT record before it, within its range: kept with it. */
		char *p = ln + 10, *rules = p;
		struct jitmap__bp_cfi *c = r->num_cfis ? &r->cfis[r->num_cfis - 1] : NULL;
		if (!c || !hex_field(&rules, &a) || !*rules || a - c->addr >= c->size ||
		    c->first_delta + c->num_deltas != r->num_deltas)
			return 0;
		if (jitmap__grow(&r->deltas, &r->cap_deltas, r->num_deltas + 1,
				 sizeof(*r->deltas)))
			return -ENOMEM;
		r->deltas[r->num_deltas++] = p;
		c->num_deltas++;
		return 0;
	}
	/* MODULE and INFO are written anew; INLINE, INLINE_ORIGIN and STACK WIN records jitmap
	 * does not write are left out (an INLINE names an origin by number, an INLINE_ORIGIN a
	 * file by number: keeping them would mean renumbering both). */
	if (!strncmp(ln, "MODULE ", 7) || !strncmp(ln, "INFO ", 5) || !strncmp(ln, "INLINE", 6) ||
	    !strncmp(ln, "STACK ", 6))
		return 0;
	/* A line record: ADDR SIZE LINE FILENUM, under whichever FUNC holds it when written. */
	char *p = ln;
	if (!hex_field(&p, &a) || !hex_field(&p, &z) || !dec_field(&p, &u) || !dec_field(&p, &v) ||
	    *p || !z || z > UINT64_MAX - a)
		return 0;
	if (jitmap__grow(line_file, cap_line_file, r->num_lines + 1, sizeof(**line_file)))
		return -ENOMEM;
	struct jitmap__bp_line l = {a, z, prio, NULL, u};
	(*line_file)[r->num_lines] = v;
	return jitmap__bp_add_line(r, &l);
}

/* The records of the older file's text `buf` (`len` bytes, buf[len] writable) into `r`,
 * pointing into `buf`. 0; -EEXIST when its first line is not `module` (its MODULE record);
 * -EFBIG past MAX_OLD_RECORDS lines; -ENOMEM. */
static int read_old(char *buf, size_t len, const char *module, struct jitmap__bp_records *r)
{
	struct file_name *files = NULL;
	unsigned *line_file = NULL;
	size_t num_files = 0, cap_files = 0, cap_line_file = 0;
	uint64_t prio = JITMAP__BP_NEW - 1;
	int rc = 0;
	buf[len] = '\0';
	/* A NUL inside is a '_' to Breakpad's reader, which then reads on. */
	for (size_t i = 0; i < len; i++)
		if (!buf[i])
			buf[i] = '_';
	bool first = true;
	size_t records = 0;
	for (char *ln = buf, *end; !rc && *ln; ln = end) {
		end = ln + strcspn(ln, "\r\n");
		if (*end)
			*end++ = '\0';
		if (!*ln)
			continue;
		if (first) {
			first = false;
			if (strcmp(ln, module)) {
				rc = -EEXIST;
				break;
			}
			continue;
		}
		if (++records > MAX_OLD_RECORDS)
			rc = -EFBIG;
		else
			rc = read_record(ln, r, &files, &num_files, &cap_files, &line_file,
					 &cap_line_file, prio--);
	}
	if (!rc && first && len)
		rc = -EEXIST; /* not empty, yet not one record */
	/* Lines name their files by the older file's numbers. The last FILE record of a number
	 * names it (there should be one); a line naming none is left out. */
	if (num_files)
		qsort(files, num_files, sizeof(*files), by_num);
	size_t n = 0;
	for (size_t i = 0; !rc && i < r->num_lines; i++) {
		struct file_name key = {line_file[i], NULL}, *f;
		f = num_files ? bsearch(&key, files, num_files, sizeof(*files), by_num) : NULL;
		if (!f)
			continue;
		while (f + 1 < files + num_files && f[1].num == f->num)
			f++;
		r->lines[n] = r->lines[i];
		r->lines[n++].file = f->name;
	}
	if (!rc)
		r->num_lines = n;
	free(files);
	free(line_file);
	return rc;
}

/* -- Writing -- */

/* Each folder of `path` (up to its last '/') made when missing. 0 or -errno. The folders
 * below `dir` (the store's: NAME/ID, made here) must be folders, not links: a store others
 * may write to must not send a writer (a core handler runs as root) elsewhere (-ELOOP). */
static int make_folders(char *path, size_t dir_len)
{
	for (char *c = path + 1; *c; c++) {
		if (*c != '/')
			continue;
		*c = '\0';
		int rc = mkdir(path, 0755) && errno != EEXIST ? -errno : 0;
		struct stat st;
		if (!rc && (size_t)(c - path) > dir_len &&
		    (lstat(path, &st) || !S_ISDIR(st.st_mode)))
			rc = -ELOOP;
		*c = '/';
		if (rc)
			return rc;
	}
	return 0;
}

/* An exclusive flock on the folder `fd`, waited for at most LOCK_WAIT_MS: whether held. */
static bool lock_folder(int fd)
{
	for (unsigned waited = 0;; waited += 10) {
		if (!flock(fd, LOCK_EX | LOCK_NB))
			return true;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return false;
		if (waited >= LOCK_WAIT_MS)
			return false;
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	}
}

/* The older file at `path` into *text (malloc'd, NULL when there is none) and *len. 0, or a
 * negative errno with `err` filled. */
static int slurp(const char *path, char **text, size_t *len, jitmap_error *err)
{
	*text = NULL;
	*len = 0;
	/* Not through a link, and never waiting on a FIFO planted there. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? 0 : jitmap__fail(err, errno == ELOOP ? -EEXIST : -errno, 0,
							  "cannot open %s", path);
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st))
		rc = jitmap__fail(err, -errno, 0, "cannot stat %s", path);
	else if (!S_ISREG(st.st_mode))
		rc = jitmap__fail(err, -EEXIST, 0, "%s is not a regular file", path);
	else if ((uint64_t)st.st_size > MAX_OLD_FILE)
		rc = jitmap__fail(err, -EFBIG, 0, "%s is larger than %" PRIu64 " MiB, not merged",
				  path, MAX_OLD_FILE >> 20);
	else if (!(*text = malloc((size_t)st.st_size + 1)))
		rc = jitmap__fail(err, -ENOMEM, 0, "out of memory reading %s", path);
	/* Read until the end, whatever its size became since fstat. */
	while (!rc && *len < (size_t)st.st_size) {
		ssize_t got = read(fd, *text + *len, (size_t)st.st_size - *len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			rc = jitmap__fail(err, -errno, *len, "cannot read %s", path);
		else if (!got)
			break;
		else
			*len += (size_t)got;
	}
	close(fd);
	if (rc) {
		free(*text);
		*text = NULL;
	}
	return rc;
}

/* `len` bytes of `text` to a new file in `folder`, fsync'd, then renamed to `path`. */
static int put_whole(const char *folder, const char *path, const char *text, size_t len,
		     jitmap_error *err)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s/.jitmap-sym-XXXXXX", folder) >= (int)sizeof(tmp))
		return jitmap__fail(err, -ENAMETOOLONG, 0, "the path under %s is too long", folder);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return jitmap__fail(err, -errno, 0, "cannot create a file in %s", folder);
	int rc = 0;
	for (size_t done = 0; !rc && done < len;) {
		ssize_t put = write(fd, text + done, len - done);
		if (put < 0 && errno != EINTR)
			rc = jitmap__fail(err, -errno, done, "cannot write %s", tmp);
		else if (put == 0)
			rc = jitmap__fail(err, -EIO, done, "cannot write %s", tmp);
		else if (put > 0)
			done += (size_t)put;
	}
	/* mkstemp's 0600 would keep a store's readers out. */
	if (!rc && (fchmod(fd, 0644) || fsync(fd)))
		rc = jitmap__fail(err, -errno, 0, "cannot write %s", tmp);
	if (close(fd) && !rc)
		rc = jitmap__fail(err, -errno, 0, "cannot write %s", tmp);
	if (!rc && rename(tmp, path))
		rc = jitmap__fail(err, -errno, 0, "cannot rename %s to %s", tmp, path);
	if (rc)
		unlink(tmp);
	return rc;
}

int jitmap_breakpad_sym_write(jitmap_breakpad_sym *s, const char *dir, char *path,
			      size_t path_len, jitmap_error *err)
{
	if (!s || !dir || !*dir)
		return jitmap__fail(err, -EINVAL, 0, "no symbol file or no folder");
	if (path && path_len)
		path[0] = '\0';
	/* SimpleSymbolSupplier's file name: the debug file's name, less ".pdb", plus ".sym". */
	size_t stem = strlen(s->name);
	if (stem > 4 && !strcasecmp(s->name + stem - 4, ".pdb"))
		stem -= 4;
	char folder[PATH_MAX], file[PATH_MAX];
	int n = snprintf(folder, sizeof(folder), "%s/%s/%s", dir, s->name, s->debug_id);
	int m = n < 0 || n >= (int)sizeof(folder)
			? -1
			: snprintf(file, sizeof(file), "%s/%.*s.sym", folder, (int)stem, s->name);
	if (m < 0 || m >= (int)sizeof(file) || (path && (size_t)m >= path_len))
		return jitmap__fail(err, -ENAMETOOLONG, 0, "the symbol file's path under %s is "
				    "too long", dir);
	char made[PATH_MAX + 1];
	snprintf(made, sizeof(made), "%s/", folder);
	int rc = make_folders(made, strlen(dir));
	if (rc)
		return jitmap__fail(err, rc, 0, "cannot make the folder %s", folder);
	int dfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0)
		return jitmap__fail(err, -errno, 0, "cannot open the folder %s", folder);
	lock_folder(dfd); /* not held: written all the same (breakpad.h) */

	char *old_text = NULL, *text = NULL;
	size_t old_len = 0;
	struct jitmap__bp_records old = {0};
	rc = slurp(file, &old_text, &old_len, err);
	if (!rc && old_text) {
		char module[JITMAP__BP_MODULE_MAX];
		jitmap__bp_module_line(s, module);
		rc = read_old(old_text, old_len, module, &old);
		if (rc == -EEXIST)
			jitmap__fail(err, rc, 0, "%s is not the symbol file of %s %s: left alone",
				     file, s->name, s->debug_id);
		else if (rc == -EFBIG)
			jitmap__fail(err, rc, 0, "%s has more than %u records, not merged", file,
				     MAX_OLD_RECORDS);
		else if (rc)
			jitmap__fail(err, rc, 0, "out of memory reading %s", file);
	}
	if (!rc && !(text = jitmap__bp_text(s, old_text ? &old : NULL)))
		rc = jitmap__fail(err, -ENOMEM, 0, "out of memory writing %s", file);
	if (!rc)
		rc = put_whole(folder, file, text, strlen(text), err);
	if (!rc && path)
		memcpy(path, file, (size_t)m + 1);
	free(text);
	jitmap__bp_records_free(&old, false);
	free(old_text);
	close(dfd); /* and the lock with it */
	return rc;
}

/* debugfile.c: a stripped file's separate debug file, found where GDB finds one (GDB manual,
 * "Debugging Information in Separate Files"), and the data symbols looked up in it.
 *
 * Distributions strip their executables and libraries and ship the symbol tables apart
 * (Debian's -dbg and -dbgsym packages). A symbol that is not exported lives only there: Mono's
 * `__jit_debug_descriptor` is in /usr/lib/debug/.build-id/0b/ae2a...debug, not in the stripped
 * /usr/bin/mono-sgen, and GDB finds Mono's JIT entries through it. So the file is looked for
 * in GDB's order:
 *
 *   1. by build ID: DIR/.build-id/xx/yyyy.debug for each debug directory DIR;
 *   2. by `.gnu_debuglink` (a file name and the CRC32 of that file): in the file's own folder,
 *      in its .debug/ subfolder, and in each DIR followed by the file's folder
 *      (/usr/lib/debug/usr/bin/NAME); the CRC is checked;
 *   3. from debuginfod, by build ID, when DEBUGINFOD_URLS names a server (libdebuginfod,
 *      opened with dlopen as libdw opens it: nothing links it).
 *
 * A file found is used only when its build ID is the loaded file's (a core's copy of the
 * mapping's first page, when the caller has it): a debug file of another build would give
 * another build's addresses. A debug file's symbol values are link-time addresses, as the
 * loaded file's own: the caller moves them by the same load bias.
 *
 * Files are read under a root (a core's sysroot, /proc/PID/root of a process in another
 * mount namespace): the debug directories are tried under it first, then as given, as GDB
 * tries them under its sysroot.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "jitmap/live.h"

#define DEFAULT_DEBUG_DIRS "/usr/lib/debug"

/* -- CRC32 of .gnu_debuglink --
 *
 * The CRC binutils writes (objcopy --add-gnu-debuglink) and GDB checks: ISO 3309's CRC-32,
 * zlib's crc32(). */

static uint32_t crc32_table[256];
static pthread_once_t crc32_once = PTHREAD_ONCE_INIT;

static void crc32_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc32_table[i] = c;
	}
}

/* The CRC32 of all of `fd`: 0 and *crc, or -1 when it cannot be read. */
static int file_crc32(int fd, uint32_t *crc)
{
	enum { CHUNK = 1 << 16 };
	pthread_once(&crc32_once, crc32_init);
	unsigned char *buf = malloc(CHUNK);
	if (!buf)
		return -1;
	uint32_t c = 0xffffffffu;
	int rc = 0;
	for (off_t off = 0;;) {
		const ssize_t n = pread(fd, buf, CHUNK, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -1 : 0;
			break;
		}
		for (ssize_t i = 0; i < n; i++)
			c = crc32_table[(c ^ buf[i]) & 0xff] ^ (c >> 8);
		off += n;
	}
	free(buf);
	*crc = c ^ 0xffffffffu;
	return rc;
}

/* -- The loaded file -- */

/* Whether `elf` has a full symbol table (.symtab): then it is not stripped, and what it does
 * not define is nowhere. */
static bool has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return true;
	}
	return false;
}

/* The file name and CRC of `elf`'s .gnu_debuglink: true, with `name` NUL-terminated. The
 * section holds the name, zeros to a multiple of 4, and the CRC in the file's byte order. */
static bool debuglink(Elf *elf, char *name, size_t len, uint32_t *crc)
{
	size_t shstrndx;
	GElf_Ehdr eh;
	if (elf_getshdrstrndx(elf, &shstrndx) || !gelf_getehdr(elf, &eh))
		return false;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sn;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(sn = elf_strptr(elf, shstrndx, sh.sh_name)) || strcmp(sn, ".gnu_debuglink"))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			return false;
		const char *b = d->d_buf;
		const size_t n = strnlen(b, d->d_size);
		const size_t at = (n + 4) & ~(size_t)3; /* past the NUL, aligned */
		if (!n || n >= len || at + 4 > d->d_size || memchr(b, '/', n))
			return false;
		memcpy(name, b, n);
		name[n] = 0;
		const unsigned char *c = (const unsigned char *)b + at;
		const bool big = eh.e_ident[EI_DATA] == ELFDATA2MSB;
		*crc = 0;
		for (int i = 0; i < 4; i++)
			*crc |= (uint32_t)c[big ? 3 - i : i] << (8 * i);
		return true;
	}
	return false;
}

/* -- Candidates -- */

struct search {
	const struct jitmap__debug_lookup *how;
	char root[PATH_MAX];    /* "" for none */
	char logical[PATH_MAX]; /* the loaded file's path under the root */
	struct stat self;       /* the loaded file, never its own debug file */
	bool have_self;
	uint8_t want[JITMAP__MAX_BUILD_ID];
	size_t want_len;
	GElf_Ehdr eh;           /* the loaded file's header: a debug file is of its class and
				 * machine */
	char *found;
	size_t found_len;
};

/* Whether the ELF at `fd` may be the debug file: of the loaded file's class and machine, not
 * the loaded file itself, with its build ID when that is known; with `crc` (not NULL) its
 * CRC32 that too. */
static bool acceptable(struct search *s, int fd, const uint32_t *crc)
{
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return false;
	if (s->have_self && st.st_dev == s->self.st_dev && st.st_ino == s->self.st_ino)
		return false;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	bool ok = elf && elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &eh) &&
		  eh.e_ident[EI_CLASS] == s->eh.e_ident[EI_CLASS] &&
		  eh.e_machine == s->eh.e_machine;
	if (ok && s->want_len) {
		uint8_t got[JITMAP__MAX_BUILD_ID];
		const size_t n = jitmap__elf_build_id(elf, got);
		ok = n == s->want_len && !memcmp(got, s->want, n);
	}
	elf_end(elf);
	uint32_t c;
	if (ok && crc)
		ok = file_crc32(fd, &c) == 0 && c == *crc;
	return ok;
}

/* The file at `path` when acceptable: its descriptor, its path in s->found; else -1. */
static int try_path(struct search *s, const char *path, const uint32_t *crc)
{
	const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (!acceptable(s, fd, crc)) {
		close(fd);
		return -1;
	}
	if (s->found && s->found_len)
		snprintf(s->found, s->found_len, "%s", path);
	return fd;
}

/* The file `dir` + `rest`: under the root first when there is one (GDB tries its
 * debug-file-directory under its sysroot so), then as given. */
static int try_rooted(struct search *s, const char *dir, const char *rest, const uint32_t *crc)
{
	char path[PATH_MAX];
	for (int pass = s->root[0] ? 0 : 1; pass < 2; pass++) {
		if (snprintf(path, sizeof(path), "%s%s%s", pass ? "" : s->root, dir, rest) >=
		    (int)sizeof(path))
			continue;
		const int fd = try_path(s, path, crc);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

/* Each debug directory of the ':'-separated list, in turn: the first `fn` gives a file
 * for. */
static int each_dir(struct search *s, int (*fn)(struct search *, const char *, const void *),
		    const void *arg)
{
	const char *dirs = s->how && s->how->dirs ? s->how->dirs : DEFAULT_DEBUG_DIRS;
	for (const char *p = dirs; *p;) {
		const char *end = strchrnul(p, ':');
		char dir[PATH_MAX];
		const size_t n = (size_t)(end - p);
		if (n && n < sizeof(dir)) {
			memcpy(dir, p, n);
			dir[n] = 0;
			while (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/')
				dir[strlen(dir) - 1] = 0;
			const int fd = fn(s, dir, arg);
			if (fd >= 0)
				return fd;
		}
		p = *end ? end + 1 : end;
	}
	return -1;
}

static int by_build_id(struct search *s, const char *dir, const void *arg)
{
	(void)arg;
	char hex[2 * JITMAP__MAX_BUILD_ID + 1], rest[2 * JITMAP__MAX_BUILD_ID + 32];
	jitmap__build_id_hex(s->want, s->want_len, hex, sizeof(hex));
	snprintf(rest, sizeof(rest), "/.build-id/%.2s/%s.debug", hex, hex + 2);
	return try_rooted(s, dir, rest, NULL);
}

struct link {
	const char *name;   /* .gnu_debuglink's */
	uint32_t crc;
	const char *folder; /* the loaded file's folder, as the process sees it (under the root) */
};

static int by_link_in_dir(struct search *s, const char *dir, const void *arg)
{
	const struct link *l = arg;
	char rest[PATH_MAX];
	if (snprintf(rest, sizeof(rest), "%s/%s", l->folder, l->name) >= (int)sizeof(rest))
		return -1;
	return try_rooted(s, dir, rest, &l->crc);
}

/* By .gnu_debuglink: beside the file, in its .debug/, then under each debug directory
 * followed by the file's folder (all as the process sees them, under the root). */
static int by_link(struct search *s, Elf *elf)
{
	char name[256], folder[PATH_MAX], file[PATH_MAX];
	struct link l = {.name = name, .folder = folder};
	if (!debuglink(elf, name, sizeof(name), &l.crc) || s->logical[0] != '/')
		return -1;
	const size_t n = (size_t)(strrchr(s->logical, '/') - s->logical);
	memcpy(folder, s->logical, n);
	folder[n] = 0;
	for (int i = 0; i < 2; i++) {
		if (snprintf(file, sizeof(file), "%s%s%s/%s", s->root, folder, i ? "/.debug" : "",
			     name) < (int)sizeof(file)) {
			const int fd = try_path(s, file, &l.crc);
			if (fd >= 0)
				return fd;
		}
	}
	return each_dir(s, by_link_in_dir, &l);
}

/* The loaded file's path as the process sees it (s->logical) and the root its files are read
 * under (s->root), from the path it was read at: a mapping opened through
 * /proc/PID/map_files/ (jitmap_stopped_mapped_file) names its file by the link's target, under
 * the process's root (jitmap_pid_root: a container's); a path under /proc/PID/root is that
 * root's; any other is under the caller's root (a core's sysroot) when it starts with it. */
static void where_seen(struct search *s, const char *path, const char *root)
{
	unsigned pid;
	int n = 0;
	s->logical[0] = s->root[0] = 0;
	if (!path)
		return;
	if (sscanf(path, "/proc/%u/map_files/%n", &pid, &n) == 1 && n > 0) {
		const ssize_t k = readlink(path, s->logical, sizeof(s->logical) - 1);
		s->logical[k > 0 ? k : 0] = 0;
		const size_t dl = strlen(" (deleted)"), len = strlen(s->logical);
		if (len > dl && !strcmp(s->logical + len - dl, " (deleted)"))
			s->logical[len - dl] = 0;
		if (jitmap_pid_root((int)pid, s->root, sizeof(s->root)) != 1)
			s->root[0] = 0;
		return;
	}
	if (sscanf(path, "/proc/%u/root/%n", &pid, &n) == 1 && n > 0 &&
	    (size_t)n < sizeof(s->root)) {
		snprintf(s->root, sizeof(s->root), "%.*s", n - 1, path);
		snprintf(s->logical, sizeof(s->logical), "%s", path + n - 1);
		return;
	}
	const size_t rl = root && strcmp(root, "/") ? strlen(root) : 0;
	if (rl && rl < sizeof(s->root) && !strncmp(path, root, rl) && path[rl] == '/') {
		memcpy(s->root, root, rl);
		s->root[rl] = 0;
		path += rl;
	}
	snprintf(s->logical, sizeof(s->logical), "%s", path);
}

/* -- debuginfod (libdebuginfod, opened at first use) -- */

typedef struct debuginfod_client debuginfod_client;
static struct {
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
	int (*find_executable)(debuginfod_client *, const unsigned char *, int, char **);
	void (*end)(debuginfod_client *);
} dfd;
static pthread_once_t dfd_once = PTHREAD_ONCE_INIT;

static void dfd_open(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return;
	*(void **)&dfd.begin = dlsym(h, "debuginfod_begin");
	*(void **)&dfd.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&dfd.end = dlsym(h, "debuginfod_end");
	*(void **)&dfd.find_executable = dlsym(h, "debuginfod_find_executable");
	if (!dfd.begin || !dfd.find_debuginfo || !dfd.end)
		dfd.begin = NULL; /* kept open: a library half found is not closed under a user */
}

/* The debug file (or, `executable`, the file itself) of build ID `id` from debuginfod, when
 * DEBUGINFOD_URLS is set: an open descriptor and its path in *path (the caller frees it), or
 * -1. */
static int dfd_fetch(bool executable, const uint8_t *id, size_t len, char **path)
{
	*path = NULL;
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!urls || !urls[strspn(urls, " ")] || !len)
		return -1;
	pthread_once(&dfd_once, dfd_open);
	int (*find)(debuginfod_client *, const unsigned char *, int, char **) =
		executable ? dfd.find_executable : dfd.find_debuginfo;
	debuginfod_client *c = dfd.begin && find ? dfd.begin() : NULL;
	if (!c)
		return -1;
	const int fd = find(c, id, (int)len, path);
	dfd.end(c);
	return fd < 0 ? -1 : fd;
}

static int by_debuginfod(struct search *s)
{
	char *path;
	int fd = dfd_fetch(false, s->want, s->want_len, &path);
	if (fd >= 0 && !acceptable(s, fd, NULL)) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0 && s->found && s->found_len)
		snprintf(s->found, s->found_len, "%s", path ? path : "(debuginfod)");
	free(path);
	return fd < 0 ? -1 : fd;
}

int jitmap__debuginfod_executable(const uint8_t *id, size_t len, char *found, size_t found_len)
{
	if (len > JITMAP__MAX_BUILD_ID)
		return -ENOENT;
	char *path;
	int fd = dfd_fetch(true, id, len, &path);
	/* The server's word is not taken for it: the file must hold the build ID asked for. */
	uint8_t got[JITMAP__MAX_BUILD_ID];
	if (fd >= 0 && (jitmap__fd_build_id(fd, got) != len || memcmp(got, id, len))) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0 && found && found_len)
		snprintf(found, found_len, "%s", path ? path : "(debuginfod)");
	free(path);
	return fd < 0 ? -ENOENT : fd;
}

/* -- Asked -- */

int jitmap__debug_file_open(Elf *elf, const char *path, const struct jitmap__debug_lookup *how,
			    char *found, size_t found_len)
{
	struct search *s = calloc(1, sizeof(*s)); /* two paths: off the caller's stack */
	if (found && found_len)
		found[0] = 0;
	if (!s)
		return -ENOMEM;
	s->how = how;
	s->found = found;
	s->found_len = found_len;
	int fd = -1;
	if (elf && gelf_getehdr(elf, &s->eh)) {
		where_seen(s, path, how ? how->root : NULL);
		s->have_self = path && stat(path, &s->self) == 0;
		if (how && how->build_id_len && how->build_id_len <= JITMAP__MAX_BUILD_ID) {
			memcpy(s->want, how->build_id, how->build_id_len);
			s->want_len = how->build_id_len;
		} else {
			s->want_len = jitmap__elf_build_id(elf, s->want);
		}
		if (s->want_len)
			fd = each_dir(s, by_build_id, NULL);
		if (fd < 0)
			fd = by_link(s, elf);
		if (fd < 0)
			fd = by_debuginfod(s);
	}
	free(s);
	return fd < 0 ? -ENOENT : fd;
}

int jitmap__file_data_symbol(Elf *elf, const char *path, const struct jitmap__debug_lookup *how,
			     const char *name, uint64_t *value, char *from, size_t from_len)
{
	if (from && from_len)
		from[0] = 0;
	if (jitmap__elf_data_symbol(elf, name, value) == 0)
		return 0;
	if (has_symtab(elf))
		return -ENOENT;
	char found[PATH_MAX];
	const int fd = jitmap__debug_file_open(elf, path, how, found, sizeof(found));
	if (fd < 0)
		return -ENOENT;
	Elf *dbg = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const int rc = dbg && elf_kind(dbg) == ELF_K_ELF ? jitmap__elf_data_symbol(dbg, name, value)
							 : -ENOENT;
	elf_end(dbg);
	close(fd);
	if (!rc && from && from_len)
		snprintf(from, from_len, "%s", found);
	return rc;
}

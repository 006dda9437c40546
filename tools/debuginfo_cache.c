/* debuginfo_cache.c: separate debug files with their DWARF decompressed once, for
 * jitmap-stack.
 *
 * To number frames as GDB does, jitmap-stack asks libdw for the functions inlined at each
 * native frame's PC and for the call sites of tail calls. Debian's -dbg packages (libc6-dbg)
 * ship their DWARF compressed (SHF_COMPRESSED sections), and libdw decompresses every debug
 * section of a file when it opens it: for libc's 4 MB debug file, 10 MB of zlib each run,
 * about 90 ms of a 140 ms jitmap-stack on a 2-core machine (eu-stack -i pays the same). The
 * decompressed copy is kept under the cache folder, named by build ID (a build ID names one
 * build: the copy never goes stale), written to a temporary file and renamed, so that two
 * runs at once each see a whole file or none. Later runs map it: no zlib at all.
 *
 * The folder: $JITMAP_CACHE_DIR, else $XDG_CACHE_HOME/jitmap/debuginfo, else
 * ~/.cache/jitmap/debuginfo; JITMAP_CACHE_DIR set to "" turns the cache off. Anything that
 * goes wrong (no folder, a full disk, a file libelf cannot rewrite) leaves libdw with the
 * file as found: the cache only ever saves time.
 */
#define _GNU_SOURCE
#include "debuginfo_cache.h"

#include <jitmap/jitmap.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A debug file larger than this is left compressed (its copy would be too big to keep). */
#define MAX_UNCOMPRESSED (UINT64_C(1) << 30)

static bool cache_dir(char *buf, size_t len)
{
	const char *env = getenv("JITMAP_CACHE_DIR");
	int n;
	if (env)
		n = snprintf(buf, len, "%s", env);
	else if (getenv("XDG_CACHE_HOME") && getenv("XDG_CACHE_HOME")[0] == '/')
		n = snprintf(buf, len, "%s/jitmap/debuginfo", getenv("XDG_CACHE_HOME"));
	else if (getenv("HOME") && getenv("HOME")[0] == '/')
		n = snprintf(buf, len, "%s/.cache/jitmap/debuginfo", getenv("HOME"));
	else
		return false;
	return n > 0 && (size_t)n < len;
}

/* mkdir -p, each level private to the user where it is created. */
static bool make_dirs(const char *path)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return false;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0700) && errno != EEXIST)
			return false;
		*s = '/';
	}
	return !mkdir(p, 0700) || errno == EEXIST;
}

/* A copy of `fd` at `path` with every compressed section decompressed: its descriptor, or -1
 * (nothing left behind). */
static int write_copy(int fd, const char *dir, const char *path)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s/.tmp-XXXXXX", dir) >= (int)sizeof(tmp))
		return -1;
	const int out = mkostemp(tmp, O_CLOEXEC);
	if (out < 0)
		return -1;
	if (jitmap_elf_decompress(fd, out) || fchmod(out, 0600) || rename(tmp, path)) {
		unlink(tmp);
		close(out);
		return -1;
	}
	return out;
}

int stack_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			 GElf_Addr base, const char *file_name, const char *debuglink_file,
			 GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	char dir[PATH_MAX - 160], path[PATH_MAX] = "";
	const unsigned char *id;
	GElf_Addr at;
	const int idlen = dwfl_module_build_id(mod, &id, &at);
	if (idlen >= 4 && idlen <= 64 && cache_dir(dir, sizeof(dir)) && dir[0]) {
		char hex[129];
		for (int i = 0; i < idlen; i++)
			snprintf(hex + 2 * i, 3, "%02x", id[i]);
		if (snprintf(path, sizeof(path), "%s/%s.debug", dir, hex) >= (int)sizeof(path))
			path[0] = 0;
	}
	/* A copy made before: before the standard search, which, when it finds the file by
	 * build ID, opens it and hands libdwfl that handle whatever this returns. */
	int fd = path[0] ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		char *name = strdup(path);
		if (name) {
			free(*debuginfo_file_name);
			*debuginfo_file_name = name;
			return fd;
		}
		close(fd);
	}
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	/* This run reads the file as found (libdwfl may hold it already); the next ones read
	 * the copy. */
	uint64_t total;
	if (fd >= 0 && path[0] && jitmap_elf_compressed(fd, &total) == 1 && total <= MAX_UNCOMPRESSED &&
	    make_dirs(dir)) {
		const int copy = write_copy(fd, dir, path);
		if (copy >= 0)
			close(copy);
	}
	return fd;
}

/* proc_root.c: where a live process's files are read, as it sees them. The one place that
 * decides it: perf maps and jitdumps (perfmap_disk.c, and through it jitmap-core-handler),
 * the files it maps (live.c), and every front end that asks through those.
 *
 * A process in a mount namespace of its own (a container; a systemd service with
 * PrivateTmp=yes) has its own /tmp, and maybe its own /usr, while readlink and stat of
 * /proc/PID/root still say "/": the root directory is the same dentry, the mounts over it are
 * not. So the mount namespaces are compared (/proc/PID/ns/mnt against ours), and the root
 * only after that (a chroot shares our namespace). Its perf map is named by its own PID, the
 * last field of NSpid: PID 1 in a container is not our PID 1, and /tmp/perf-1.map of ours is
 * another process's file. */
#define _GNU_SOURCE
#include "jitmap/live.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool same_inode(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

int jitmap_pid_root(int pid, char *root, size_t root_len)
{
	if (pid <= 0 || !root || root_len < sizeof("/proc/2147483647/root"))
		return -EINVAL;
	snprintf(root, root_len, "/proc/%d/root", pid);
	char ns[64], dir[64];
	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", pid);
	snprintf(dir, sizeof(dir), "/proc/%d", pid);
	struct stat st;
	if (stat(dir, &st))
		return -ESRCH;
	/* Same namespace and same root: its paths are ours. Anything else, or what cannot be
	 * told (its namespace link is not ours to read), goes through its root: a file there
	 * that cannot be opened is said, where one of ours by the same name would be wrong. */
	if (same_inode(ns, "/proc/self/ns/mnt") && same_inode(root, "/")) {
		root[0] = 0;
		return 0;
	}
	return 1;
}

int jitmap_pid_ns_pid(int pid)
{
	if (pid <= 0)
		return -EINVAL;
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	FILE *fp = fopen(path, "re");
	if (!fp)
		return -ESRCH;
	long own = pid;
	while (fgets(line, sizeof(line), fp)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		/* "NSpid:\t21206\t1": outermost namespace first, the process's own last. */
		char *s = line + 6, *e;
		for (long v; (v = strtol(s, &e, 10)), e != s; s = e)
			if (v > 0 && v <= INT32_MAX)
				own = v;
		break;
	}
	fclose(fp);
	return (int)own;
}

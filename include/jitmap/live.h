/* live.h: a live Linux process's files in libjitmap, as it sees them.
 *
 * A live process is read as a stopped process (stopped.h: jitmap_stopped_open_pid, and every
 * question of it asked of that handle). What stays here takes no stopped process: where a
 * process's files are read (its root and mount namespace: a container's), and the PID it
 * names its perf map by. Conventions as in jitmap.h.
 */
#ifndef JITMAP_LIVE_H
#define JITMAP_LIVE_H

#include "jitmap/jitmap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* -- A process's files, as it sees them -- */

/* Where the files of live process `pid` are read (its perf maps, jitdumps, executable,
 * libraries): "" in `root` (`root_len` bytes, at least 22) when it shares this process's mount
 * namespace (/proc/PID/ns/mnt) and root, its paths then being ours; else "/proc/PID/root",
 * to put before each of its paths. A process in a namespace of its own (a container, a systemd
 * service with PrivateTmp=yes) has a /tmp that is not ours even where readlink of
 * /proc/PID/root says "/"; one whose namespace cannot be told is read through its root too,
 * never through a file of ours by the same name. Returns 0 (its paths are ours), 1 (through
 * /proc/PID/root), -ESRCH (no such process; `root` holds /proc/PID/root), -EINVAL. */
JITMAP_API int jitmap_pid_root(int pid, char *root, size_t root_len);

/* The PID live process `pid` has in its own PID namespace (the last field of NSpid in
 * /proc/PID/status: 1 for a container's first process), by which it names its perf map; `pid`
 * itself where it shares ours or the kernel does not say. -ESRCH when the process is gone,
 * -EINVAL for pid <= 0. */
JITMAP_API int jitmap_pid_ns_pid(int pid);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_LIVE_H */

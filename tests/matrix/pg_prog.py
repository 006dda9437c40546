"""The PostgreSQL program of the runtime matrix (rt_postgres.py): a server of its own (run as
`nobody` when this is root: PostgreSQL refuses root) that JIT-compiles every expression and
registers its code with GDB's JIT interface (jit_above_cost = 0, jit_debugging_support = on),
and a client whose query blocks in pg_sleep, called from the JIT-compiled targetlist.

    python3 pg_prog.py POSTGRES WORKDIR

POSTGRES is the server's executable (a copy, for the matrix's `deleted`); initdb and psql are
the installed ones. Prints "target PID" (the backend that runs the query, as this namespace
sees it), then "ready", and waits; killing its process group ends everything.
"""
import os
import pwd
import subprocess
import sys
import time

PG_BIN = "/usr/lib/postgresql/15/bin"
postgres, work = sys.argv[1], sys.argv[2]
as_user = []
if os.geteuid() == 0:
    pw = pwd.getpwnam("nobody")
    as_user = ["runuser", "-u", "nobody", "--"]
pg = os.path.join(work, "pg")
os.mkdir(pg)
if as_user:
    os.chown(pg, pw.pw_uid, pw.pw_gid)
data, log = os.path.join(pg, "data"), os.path.join(pg, "log")
r = subprocess.run(as_user + [os.path.join(PG_BIN, "initdb"), "-D", data, "-A", "trust", "-U",
                              "postgres"], capture_output=True, text=True)
if r.returncode:
    sys.exit("initdb: %s" % r.stderr[-500:])
with open(os.path.join(data, "postgresql.conf"), "a") as f:
    f.write("listen_addresses = ''\nunix_socket_directories = '%s'\njit = on\n"
            "jit_above_cost = 0\njit_inline_above_cost = -1\njit_optimize_above_cost = -1\n"
            "jit_debugging_support = on\n" % pg)
server = subprocess.Popen(as_user + [postgres, "-D", data], stdout=open(log, "w"),
                          stderr=subprocess.STDOUT)
psql = [os.path.join(PG_BIN, "psql"), "-h", pg, "-U", "postgres", "-Atc"]
for _ in range(300):
    if subprocess.run(psql + ["SELECT 1"], capture_output=True).returncode == 0:
        break
    time.sleep(0.1)
client = subprocess.Popen(psql + ["SELECT pg_sleep(600) FROM generate_series(1, 3) g "
                                  "WHERE g > 0"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
for _ in range(300):
    r = subprocess.run(psql + ["SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' "
                               "AND query LIKE '%pg_sleep(600)%'"], capture_output=True, text=True)
    if r.stdout.strip():
        print("target %s" % r.stdout.split()[0])
        print("ready", flush=True)
        break
    time.sleep(0.1)
else:
    with open(log) as f:
        sys.exit("no backend in pg_sleep: %s" % f.read()[-500:])
time.sleep(600)

#!/usr/bin/env bash
# bench/register.sh [BUILD_DIR]: what registering N JIT functions through jitmap's producer API
# costs, batched (one jitmap_jit_register with N functions: one jit_code_entry) against one
# registration per function (N entries), as GDB sees it and without a debugger. See
# bench/README.md, "Registering JIT code".
#
#   1. check, once per mode at a small N, that GDB really loads the entries (`maint info jit`
#      lists them, `info symbol` names a JIT function) and stops in bench_register_done;
#   2. hyperfine, GDB alone (no jitmap plugin, -nx): from `gdb -batch` start to the breakpoint
#      in bench_register_done (reached after every registration) and the process's exit:
#        gdb -batch -nx -iex 'set debuginfod enabled off' -ex 'break bench_register_done' \
#            -ex run -ex continue --args \
#            bench_register N MODE
#      and the same with MODE --none (nothing registered: GDB's fixed cost);
#   3. hyperfine, the same program without GDB;
#   4. the registration calls alone, timed inside the program (median of BENCH_INNER runs).
#
# BUILD_DIR defaults to build-bench; it is configured (with its existing options) if needed
# and only bench_register is built. Environment:
#   BENCH_N            N for both modes (default "100 1000 2000 5000")
#   BENCH_BATCHED_N    further N for the batched mode only (default "10000 50000"; set it
#                      empty for none)
#   BENCH_RUNS         hyperfine runs (default 10); per-function runs at N >= 2000 use
#                      BENCH_SLOW_RUNS (default 3), since each takes seconds to a minute
#   BENCH_INNER        runs for the in-process timing (default 11)
#   GDB                the debugger (default gdb)
# Prints a Markdown table at the end (GDB's extra CPU for the registrations is computed from
# user+sys time, which other jobs on the machine disturb far less than wall time); the raw
# hyperfine JSON is kept in BUILD_DIR/bench-data/register.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-bench}
ns=${BENCH_N:-100 1000 2000 5000}
batched_ns=${BENCH_BATCHED_N-10000 50000} # set but empty: none
runs=${BENCH_RUNS:-10}
slow_runs=${BENCH_SLOW_RUNS:-3}
inner=${BENCH_INNER:-11}
gdb=${GDB:-gdb}
"$top/scripts/setup.sh" --bench
for tool in "$gdb" hyperfine cmake python3; do
  command -v "$tool" >/dev/null || { echo "bench/register.sh: $tool not found" >&2; exit 1; }
done

echo "== build ($build)"
[ -f "$build/CMakeCache.txt" ] || cmake -S "$top" -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)" --target bench_register >/dev/null
bin=$build/bench/bench_register
data=$build/bench-data/register
mkdir -p "$data"
rm -f "$data"/*.json

echo "== machine"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1); Linux $(uname -r)"
echo "cc: $(sed -n 's/^CMAKE_C_COMPILER:[^=]*=//p' "$build/CMakeCache.txt") $(sed -n 's/^CMAKE_BUILD_TYPE:[^=]*=//p' "$build/CMakeCache.txt");" \
  "$("$gdb" --version | head -n 1); $(hyperfine --version); load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# The GDB command line that is timed, for MODE and N.
gdb_cmd() {
  echo "$gdb -batch -nx -iex 'set debuginfod enabled off' -ex 'break bench_register_done'" \
    "-ex run -ex continue --args $bin $2 --$1"
}

echo "== check what GDB sees"
check_n=100
for mode in batched per-function; do
  out=$data/check-$mode.txt
  "$gdb" -batch -nx -iex 'set debuginfod enabled off' -ex 'break bench_register_done' -ex run \
    -ex 'maint info jit' -ex 'info symbol jit_fn_7' -ex continue \
    --args "$bin" "$check_n" "--$mode" >"$out" 2>&1
  want=$([ "$mode" = batched ] && echo 1 || echo "$check_n")
  # `maint info jit`: a header line, then one "0x... 0x... size" line per entry.
  got=$(sed -n '/^jit_code_entry address/,/^jit_fn_7 /p' "$out" | grep -c '^0x' || true)
  if ! grep -q "^Breakpoint 1, bench_register_done (n=n@entry=$check_n" "$out" ||
     ! grep -q '^jit_fn_7 in section .text of <in-memory@' "$out" ||
     ! grep -q 'exited normally' "$out" || [ "$got" != "$want" ]; then
    echo "bench/register.sh: GDB did not see the $mode registration as expected ($got entries, want $want):" >&2
    cat "$out" >&2
    exit 1
  fi
  echo "$mode, N=$check_n: $got JIT entries in GDB, breakpoint hit, jit_fn_7 symbolized"
done

# time NAME RUNS COMMAND: hyperfine (no shell: -N) into $data/NAME.json; prints mean and range.
time_cmd() {
  local warmup=1
  [ "$2" -ge "$runs" ] || warmup=0 # the slow ones: earlier runs have warmed the caches
  if ! hyperfine -N --warmup "$warmup" --runs "$2" --style none --export-json "$data/$1.json" "$3" \
       2>"$data/$1.err"; then
    cat "$data/$1.err" >&2
    exit 1
  fi
  python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print("  %.1f ms ± %.1f ms, min %.1f ms, user+sys %.1f ms, %d runs" % (r["mean"] * 1e3,
      (r["stddev"] or 0) * 1e3, r["min"] * 1e3, (r["user"] + r["system"]) * 1e3, len(r["times"])))' \
    "$data/$1.json"
}

echo "== timing"
for n in $(printf '%s\n' $ns $batched_ns | sort -nu); do
  modes="none batched per-function"
  [[ " $ns " == *" $n "* ]] || modes="none batched"
  for mode in $modes; do
    r=$runs
    [ "$mode" = per-function ] && [ "$n" -ge 2000 ] && r=$slow_runs
    echo "N=$n $mode, GDB ($r runs):"
    time_cmd "gdb-$mode-$n" "$r" "$(gdb_cmd "$mode" "$n")"
    echo "N=$n $mode, no debugger:"
    time_cmd "nodbg-$mode-$n" "$runs" "$bin $n --$mode"
    if [ "$mode" != none ]; then
      for _ in $(seq "$inner"); do "$bin" "$n" "--$mode" --time; done |
        sed -n 's/^register: .*: \([0-9]*\) us$/\1/p' | sort -n |
        awk -v n="$n" -v m="$mode" '{v[NR] = $1} END {
          printf "  registration calls alone: median %d us (min %d)\n", v[int((NR + 1) / 2)], v[1]
          print v[int((NR + 1) / 2)] > "'"$data"'/inner-" m "-" n ".txt" }'
    fi
  done
done

echo "== summary (Markdown)"
python3 - "$data" $ns $batched_ns <<'EOF'
import json, os, sys
data, ns = sys.argv[1], sorted({int(x) for x in sys.argv[2:]})

def get(name):
    p = os.path.join(data, name + ".json")
    if not os.path.exists(p):
        return None
    return json.load(open(p))["results"][0]

def t(s):
    return f"{s * 1000:.0f} ms" if s < 1 else f"{s:.2f} s"

print("| N | mode | GDB: start to breakpoint and exit, mean ± σ | min | CPU (user+sys) |"
      " GDB's extra CPU for the registrations (CPU − CPU of `none`) | no debugger, whole process |"
      " registration calls alone (median) |")
print("|---|---|---|---|---|---|---|---|")
for n in ns:
    base = get(f"gdb-none-{n}")
    for mode in ("none", "batched", "per-function"):
        g, p = get(f"gdb-{mode}-{n}"), get(f"nodbg-{mode}-{n}")
        if not g:
            continue
        inner = os.path.join(data, f"inner-{mode}-{n}.txt")
        inner = f"{int(open(inner).read()):,} µs" if os.path.exists(inner) else "–"
        # CPU time, not wall time: it is what GDB does, and other jobs on the machine
        # disturb it far less.
        cpu = g["user"] + g["system"]
        extra = cpu - (base["user"] + base["system"])
        extra = "–" if mode == "none" else "≈ 0" if extra < 0.02 else t(extra)
        print(f"| {n:,} | {mode} | {t(g['mean'])} ± {t(g['stddev'] or 0)} | {t(g['min'])} |"
              f" {t(cpu)} | {extra} | {p['mean'] * 1e3:.1f} ms | {inner} |")
EOF

# bench/hold.sh: sourced by the benchmark scripts that time tools on a held demo JIT process.
#
#   hold_demo NAME LOG THREADS COMMAND...
# runs COMMAND (the demo with --threads THREADS --pause, maybe under env) in the background,
# its output in LOG, waits (2 minutes at most) until it says every thread holds, and sets
# `pid` to the demo's process ID; exits with "bench/NAME: ..." if it never does.
hold_demo() {
  local name=$1 log=$2 threads=$3
  shift 3
  "$@" >"$log" 2>&1 &
  for _ in $(seq 1200); do
    grep -q "holding threads=$threads" "$log" && break
    sleep 0.1
  done
  pid=$(sed -n "s/.*holding threads=$threads pid=\([0-9]*\).*/\1/p" "$log")
  [[ -n $pid ]] || { echo "bench/$name: the demo did not hold its threads" >&2; exit 1; }
}

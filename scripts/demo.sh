#!/usr/bin/env bash
# The main job: set up, build, and run the LLVM demo JIT under GDB, stopped in the runtime's
# safepoint with two JIT frames on the stack: the backtrace through them and, once the jitmap
# commands are built, the stackmap record of the JIT frame.
# Also shows jitmap-dump on a stackmap-bearing object the build compiles from the project's IR.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${JITMAP_BUILD_DIR:-$top/build}

# Only what the demo needs: no test, benchmark or fuzz programs (scripts/test.sh builds those
# in its own tree).
"$top/scripts/setup.sh" --demo
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITMAP_BUILD_TESTS=OFF \
  -DJITMAP_BUILD_BENCH=OFF -DJITMAP_BUILD_FUZZ=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null

jit=$build/examples/llvm-jit/jitmap-demo-jit
gdbinit=$build/share/jitmap/jitmap.gdb
gdb_args=(-q -batch -nx)
if [ -f "$gdbinit" ]; then
  gdb_args+=(-ex "source $gdbinit")
fi
gdb_args+=(-ex 'break jitmap_demo_safepoint if id == 101' -ex run -ex bt -ex 'frame 1')
if [ -f "$gdbinit" ] && grep -q stackmap "$gdbinit"; then
  gdb_args+=(-ex 'info stackmap')
fi

if [ -x "$jit" ]; then
  printf '$ gdb'
  for a in "${gdb_args[@]}"; do case $a in *' '*) printf " '%s'" "$a" ;; *) printf ' %s' "$a" ;; esac; done
  echo ' --args jitmap-demo-jit --program stackmaps'
  # The demo prints its own lines (jitmap-demo: ...): the values each record must hold.
  gdb "${gdb_args[@]}" --args "$jit" --program stackmaps 2>&1 |
    grep -v -e '^\[Thread debugging' -e '^Using host libthread_db' -e '^\[Inferior 1'
  echo
else
  echo "demo: $jit was not built (it needs llvm-config-14 and x86-64); showing jitmap-dump only"
fi

echo "\$ jitmap-dump build/demo.o"
"$build/jitmap-dump" "$build/demo.o"

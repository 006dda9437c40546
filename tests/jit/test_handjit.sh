#!/usr/bin/env bash
# test_handjit.sh BUILD_DIR: jitmap-handjit (hand-written x86-64 JIT code registered through the
# producer API) under the real debuggers, without any jitmap extension loaded.
#
#   1. The JIT alone: truth lines, its registered ELF image (readelf without warnings; the
#      stack map as llvm-readobj prints it, and jitmap-dump printing the same text).
#   2. GDB (batch): the built-in JIT reader loads our image: `maint info jit` lists it, and the
#      PCs in both JIT functions symbolize. `bt` is recorded, not checked: GDB cannot unwind
#      the frameless function without unwind info (the reader plugin's job).
#   3. Negative control, GDB at exit: the entry and its symbols are there while registered,
#      and gone after --unregister.
#   4. LLDB (when lldb-16 or lldb is installed): `image list` shows the JIT(0x...) module and
#      the JIT frames symbolize.
#
# Prints "handjit: N passed, M failed"; exits 0 when nothing failed, 77 when GDB is missing.
set -u
build=${1:?usage: test_handjit.sh BUILD_DIR}
build=$(cd "$build" && pwd)

bin=$build/examples/handjit/jitmap-handjit
[ -x "$bin" ] || bin=$(find "$build" -type f -name jitmap-handjit -perm -u+x 2>/dev/null | head -n 1)
dump=$build/jitmap-dump
[ -x "$dump" ] || dump=$(find "$build" -type f -name jitmap-dump -perm -u+x 2>/dev/null | head -n 1)
if ! command -v gdb >/dev/null; then
  echo "handjit: gdb not found; skipped"
  exit 77
fi

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok: $*"; }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
# check NAME HAYSTACK-FILE FIXED-STRING
check() {
  if grep -qF -- "$3" "$2"; then pass "$1"; else fail "$1: no \"$3\" in $2"; fi
}
finish() {
  echo "handjit: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit $?
}

if [ -z "$bin" ]; then
  fail "jitmap-handjit not built under $build"
  finish
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# field FILE ID KEY: the value of KEY= on the truth line of record ID.
field() {
  sed -n "s/^jitmap-handjit: record id=$2 .* $3=\([^ ]*\).*/\1/p" "$1" | head -n 1
}
# fn FILE NAME KEY: the value of KEY= on the function line of NAME.
fn() {
  sed -n "s/^jitmap-handjit: function name=$2 .*$3=\([^ ]*\).*/\1/p" "$1" | head -n 1
}

# -- 1. The JIT alone --

out=$work/run.txt
if "$bin" --image "$work/image.o" >"$out" 2>&1; then pass "jitmap-handjit exits 0"
else fail "jitmap-handjit exit status $?"; fi
check "jitmap-handjit says done" "$out" "jitmap-handjit: done"
check "truth line for the outer record" "$out" "record id=1001 function=handjit_outer"
check "truth line for the inner record" "$out" "record id=1002 function=handjit_inner"
check "the safepoint ran" "$out" "jitmap-handjit: safepoint id=1002"
if grep -qE '^jitmap-handjit: result=([0-9]+) expected=\1$' "$out"; then pass "JIT code computed the right result"
else fail "JIT code result differs: $(grep result= "$out")"; fi
# The outer function's pinned rbx is what the inner function sees in rbx (local0 of both).
if [ -n "$(field "$out" 1001 local0)" ] && [ "$(field "$out" 1001 local0)" = "$(field "$out" 1002 local0)" ]; then
  pass "rbx is the same in both frames"
else fail "rbx differs between the frames"; fi
# The inner frame's CFA is the outer frame's SP at its call.
if [ "$(field "$out" 1002 cfa)" = "$(field "$out" 1001 sp)" ]; then pass "inner CFA = outer SP"
else fail "inner CFA $(field "$out" 1002 cfa) != outer SP $(field "$out" 1001 sp)"; fi

if command -v readelf >/dev/null; then
  if readelf -a -W "$work/image.o" >"$work/readelf.txt" 2>"$work/readelf.err" && [ ! -s "$work/readelf.err" ]; then
    pass "readelf -a reads the image without warnings"
  else fail "readelf -a: $(cat "$work/readelf.err")"; fi
  check "image is a relocatable object" "$work/readelf.txt" "REL (Relocatable file)"
  check "image has the stack map" "$work/readelf.txt" ".llvm_stackmaps"
  check "image names the inner function" "$work/readelf.txt" "FUNC    GLOBAL DEFAULT    1 handjit_inner"
fi

readobj=$(command -v llvm-readobj-14 || command -v llvm-readobj-19 || command -v llvm-readobj || true)
if [ -n "$readobj" ]; then
  "$readobj" --stackmap "$work/image.o" >"$work/readobj.txt" 2>&1
  outer_addr=$(fn "$out" handjit_outer address) inner_addr=$(fn "$out" handjit_inner address)
  outer_off=$(( $(field "$out" 1001 pc) - outer_addr )) inner_off=$(( $(field "$out" 1002 pc) - inner_addr ))
  check "readobj: outer function" "$work/readobj.txt" "Function address: $((outer_addr)), stack size: 40, callsite record count: 1"
  check "readobj: inner function" "$work/readobj.txt" "Function address: $((inner_addr)), stack size: 24, callsite record count: 1"
  check "readobj: one pooled constant, shared" "$work/readobj.txt" "Num Constants: 1"
  check "readobj: outer record" "$work/readobj.txt" "Record ID: 1001, instruction offset: $outer_off"
  check "readobj: inner record" "$work/readobj.txt" "Record ID: 1002, instruction offset: $inner_off"
  check "readobj: register location" "$work/readobj.txt" "#2: Register R#12, size: 8"
  check "readobj: indirect location" "$work/readobj.txt" "#3: Indirect [R#6 + -24], size: 8"
  check "readobj: direct location" "$work/readobj.txt" "#4: Direct R#7 + 8, size: 8"
  check "readobj: small constant" "$work/readobj.txt" "#5: Constant 4294967289, size: 8"
  check "readobj: pooled constant" "$work/readobj.txt" "#6: ConstantIndex #0 (1234605616436508552), size: 8"
  if [ -n "$dump" ]; then
    sed -n '/^LLVM StackMap Version:/,$p' "$work/readobj.txt" >"$work/readobj.body"
    "$dump" --format=llvm-readobj "$work/image.o" >"$work/dump.txt" 2>&1
    sed -n '/^LLVM StackMap Version:/,$p' "$work/dump.txt" >"$work/dump.body"
    if [ -s "$work/readobj.body" ] && cmp -s "$work/readobj.body" "$work/dump.body"; then
      pass "jitmap-dump prints the image's stack map exactly as llvm-readobj"
    else fail "jitmap-dump and llvm-readobj differ: $(diff "$work/readobj.body" "$work/dump.body" | head -n 5)"; fi
  fi
else
  echo "note: llvm-readobj not found; its checks skipped"
fi

# --ykllvm: the same stack map in ykllvm's layout (docs/stackmap-format.md, "ykllvm"); jitmap-dump
# names it, groups the locations as the JIT says, and leaves it out of llvm-readobj's format.
if [ -n "$dump" ]; then
  "$bin" --ykllvm --image "$work/yk.o" >"$work/yk-run.txt" 2>&1
  check "--ykllvm: the JIT says its grouping" "$work/yk-run.txt" "jitmap-handjit: ykllvm variables=0,1,2,2,3,4"
  "$dump" "$work/yk.o" >"$work/yk-dump.txt" 2>&1
  check "jitmap-dump names ykllvm's layout" "$work/yk-dump.txt" "version 3 (ykllvm-extras layout), 2 functions, 1 constant, 2 records"
  check "jitmap-dump: handjit_outer's spills" "$work/yk-dump.txt" "frame pointer; callee-saved spills: rbx at frame index -2, r12 at frame index -3"
  check "jitmap-dump: record 1001's variables" "$work/yk-dump.txt" "5 live variables in 6 locations (ykllvm-extras)"
  check "jitmap-dump: variable of location 3" "$work/yk-dump.txt" "#3   direct         rbp-24                 size 8  variable 2"
  if "$dump" --format=json "$work/yk.o" >"$work/yk.json" 2>"$work/yk-json.err" &&
     python3 "$(dirname "$0")/../lib/jsoncontract.py" jitmap-dump "$work/yk.json" 2>>"$work/yk-json.err" &&
     python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["blobs"][0]
assert d["dialect"] == "ykllvm-extras", d["dialect"]
assert [l["live_var"] for l in d["records"][0]["locations"]] == [0, 1, 2, 2, 3, 4]
assert d["functions"][0]["spills"][1] == {"register": "r12", "dwarf_reg": 12, "frame_index": -3}' "$work/yk.json" 2>>"$work/yk-json.err"
  then pass "jitmap-dump --format=json of ykllvm's layout"
  else fail "jitmap-dump --format=json of ykllvm's layout: $(tail -n 3 "$work/yk-json.err")"; fi
  "$dump" --format=llvm-readobj "$work/yk.o" >"$work/yk-readobj.txt" 2>"$work/yk-readobj.err"
  if [ ! -s "$work/yk-readobj.txt" ]; then pass "llvm-readobj's format leaves a ykllvm blob out"
  else fail "llvm-readobj's format printed a ykllvm blob"; fi
  check "llvm-readobj's format says why" "$work/yk-readobj.err" "blob 0 is in ykllvm's layout, which llvm-readobj's format cannot show: left out"
fi

if "$bin" --unregister >"$work/unreg.txt" 2>&1; then pass "--unregister exits 0"; else fail "--unregister exit status $?"; fi
check "--unregister says so" "$work/unreg.txt" "jitmap-handjit: unregistered"
# (an inner shell reports the abort, into the log, so that this one stays quiet)
bash -c 'ulimit -c 0; "$0" --abort; exit $?' "$bin" >"$work/abort.txt" 2>&1
rc=$?
if [ $rc -eq 134 ] && grep -qF "jitmap-handjit: safepoint id=1002" "$work/abort.txt" &&
   ! grep -qF "jitmap-handjit: done" "$work/abort.txt"; then pass "--abort aborts in the safepoint"
else fail "--abort: exit status $rc"; fi

# -- 2. GDB with its built-in JIT reader --

gdb_run() { # LOG ARGS...: gdb batch with the commands in $work/cmds
  local log=$1; shift
  timeout 120 gdb -nx -batch -iex 'set debuginfod enabled off' -iex 'set confirm off' \
    -x "$work/cmds" --args "$bin" "$@" >"$log" 2>&1
}

cat >"$work/cmds" <<'EOF'
break jitmap_handjit_safepoint
run
echo ==maint\n
maint info jit
echo ==bt\n
bt 10
echo ==frame1\n
frame 1
info symbol $pc
x/i $pc
echo ==outer\n
info symbol *(unsigned long *)&jitmap_handjit_truth_pc
x/i *(unsigned long *)&jitmap_handjit_truth_pc
echo ==end\n
kill
EOF
g=$work/gdb.txt
gdb_run "$g"
image=$(sed -n 's/^jitmap-handjit: registered image=\(0x[0-9a-f]*\) .*/\1/p' "$g")
inner_off=$(( $(field "$g" 1002 pc) - $(fn "$g" handjit_inner address) ))
outer_off=$(( $(field "$g" 1001 pc) - $(fn "$g" handjit_outer address) ))
check "gdb: stops in the safepoint" "$g" "Breakpoint 1, jitmap_handjit_safepoint"
if [ -n "$image" ] && sed -n '/^==maint/,/^==bt/p' "$g" | grep -qE "0x0*${image#0x} +[0-9]+"; then
  pass "gdb: maint info jit lists the entry ($image)"
else fail "gdb: maint info jit does not list $image"; fi
pc=$(field "$g" 1002 pc)
if [ -n "$pc" ] && grep -qE "^#1 +0x0*${pc#0x} in handjit_inner \(\)" "$g"; then
  pass "gdb: bt frame 1 is the inner JIT function"
else fail "gdb: bt frame 1 is not handjit_inner at $pc"; fi
check "gdb: info symbol in frame 1" "$g" "handjit_inner + $inner_off in section .text of <in-memory@$image>"
check "gdb: x/i in frame 1" "$g" "<handjit_inner+$inner_off>:"
check "gdb: info symbol at the outer record" "$g" "handjit_outer + $outer_off in section .text"
check "gdb: x/i at the outer record" "$g" "<handjit_outer+$outer_off>:"
echo "observed: gdb bt without the reader plugin:"
sed -n '/^==bt/,/^==frame1/p' "$g" | grep '^#' | sed 's/^/    /'

# -- 3. Negative control: unregistered code is gone from GDB --

# The same session twice at exit: still registered (the probe sees the entry), then after
# --unregister (the entry and its symbols must be gone).
cat >"$work/cmds" <<'EOF'
break exit
run
echo ==maint\n
maint info jit
echo ==sym\n
info symbol *(unsigned long *)&jitmap_handjit_truth_pc
echo ==end\n
kill
EOF
g2=$work/gdb-exit.txt
gdb_run "$g2"
if sed -n '/^==maint/,/^==sym/p' "$g2" | grep -qE '^0x[0-9a-f]+ +0x'; then
  pass "gdb control: at exit, the registered entry is listed"
else fail "gdb control: at exit, maint info jit lists nothing while registered"; fi
check "gdb control: at exit, the JIT function symbolizes" "$g2" "handjit_outer + "
g3=$work/gdb-unreg.txt
gdb_run "$g3" --unregister
check "gdb control: the program unregistered" "$g3" "jitmap-handjit: unregistered"
if sed -n '/^==maint/,/^==sym/p' "$g3" | grep -qE '^0x[0-9a-f]+ +0x'; then
  fail "gdb control: maint info jit still lists an entry after unregistering"
else pass "gdb control: no JIT entry after unregistering"; fi
check "gdb control: the JIT function no longer symbolizes" "$g3" "No symbol matches"

# -- 4. LLDB --

lldb=$(command -v lldb-16 || command -v lldb || true)
if [ -n "$lldb" ]; then
  l=$work/lldb.txt
  timeout 180 "$lldb" -b -o 'breakpoint set -n jitmap_handjit_safepoint' -o run \
    -o 'image list' -o 'bt' -o 'kill' -- "$bin" >"$l" 2>&1
  limage=$(sed -n 's/^jitmap-handjit: registered image=\(0x[0-9a-f]*\) .*/\1/p' "$l")
  linner=$(( $(field "$l" 1002 pc) - $(fn "$l" handjit_inner address) ))
  louter=$(( $(field "$l" 1001 pc) - $(fn "$l" handjit_outer address) ))
  if [ -n "$limage" ] && grep -qiE "JIT\(0x0*${limage#0x}\)" "$l"; then
    pass "lldb: image list shows JIT($limage)"
  else fail "lldb: no JIT(0x...) module for image $limage"; fi
  check "lldb: frame 1 symbolizes" "$l" "\`handjit_inner + $linner"
  check "lldb: frame 2 symbolizes (LLDB unwinds the frameless function)" "$l" "\`handjit_outer + $louter"
  echo "observed: lldb bt without any extension:"
  sed -n '/^(lldb) bt/,$p' "$l" | grep -E '^ +\*? *frame #[0-9]' | head -n 4 | sed 's/^ */    /'
else
  echo "note: lldb not installed; LLDB checks skipped"
fi

finish

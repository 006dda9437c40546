#!/usr/bin/env bash
# test_llvm_jit.sh: end-to-end test of examples/llvm-jit (jitmap-demo-jit), the LLVM 14 JIT
# that the debugger tests run against.
#
#   tests/jit/test_llvm_jit.sh BUILD_DIR
#
# 1. Runs every program under both engines (ORC, MCJIT) and checks the truth lines against
#    the values the IR computes, that every safepoint's return address falls on its stackmap
#    record, and where the stackmap section was found.
# 2. Under GDB (batch): the JIT objects are registered (maint info jit) and `bt` names the
#    JIT frames and reaches main, with each JIT frame's PC on a stackmap record.
# 3. --abort ends in SIGABRT (status 134), after the truth lines are out.
#
# Prints failures on stderr and one summary line "llvm-jit: N passed, M failed"; exits 1 if
# anything failed, 77 (skip) if jitmap-demo-jit was not built (no llvm-config-14).
set -u

BUILD_DIR=${1:?usage: test_llvm_jit.sh BUILD_DIR}
BIN=$BUILD_DIR/examples/llvm-jit/jitmap-demo-jit
if [[ ! -x $BIN ]]; then
    echo "llvm-jit: skipped: $BIN not built (needs llvm-config-14)"
    exit 77
fi

pass=0
fail=0
HEX='0x[0-9a-f]+'

ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "llvm-jit: FAIL: $*" >&2
}
# expect WHAT COMMAND...: one check.
expect() {
    local what=$1
    shift
    if "$@"; then ok; else bad "$what"; return 1; fi
}
# has OUTPUT REGEX: OUTPUT has a line matching REGEX entirely.
has() { grep -Eqx -- "$2" <<<"$1"; }
count() { grep -Ecx -- "$2" <<<"$1"; }
# field OUTPUT LINE-REGEX KEY: the value of KEY= on the first line matching LINE-REGEX.
field() { grep -Ex -- "$2" <<<"$1" | head -n 1 | grep -Eo "(^| )$3=[^ ]+" | head -n 1 | cut -d= -f2; }

# -- 1. The programs, under both engines --

# check_common OUTPUT STATUS ENGINE PROGRAM: what every normal run must show.
check_common() {
    local out=$1 status=$2 engine=$3 program=$4 tag="$3 $4"
    expect "$tag: exit status $status" test "$status" -eq 0
    expect "$tag: last line is 'done'" test "$(tail -n 1 <<<"$out")" = "jitmap-demo: done"
    expect "$tag: result ok" has "$out" "jitmap-demo: result program=$program got=-?[0-9]+ want=-?[0-9]+ ok"
    local via=gdb-jit
    [[ $engine == mcjit ]] && via=memory-manager,gdb-jit
    expect "$tag: stackmap section found (via=$via), version 3" \
        has "$out" "jitmap-demo: stackmaps addr=$HEX size=[0-9]+ via=$via version=3 .*"
    expect "$tag: objects registered with GDB" \
        has "$out" "jitmap-demo: gdb-jit descriptor=$HEX entries=[1-9][0-9]*"
    expect "$tag: every stackmap function is a JIT function" \
        test "$(count "$out" 'jitmap-demo: stackmap-function .* name=\? .*')" -eq 0
    expect "$tag: every safepoint has a record" \
        test "$(count "$out" 'jitmap-demo: safepoint .* record=none')" -eq 0
}

# safepoint OUTPUT ID CALL DELTA FUNCTION: the safepoint line of that call.
safepoint_re() {
    echo "jitmap-demo: safepoint id=$1 call=$2 ret=$HEX record-pc=$HEX delta=$3 function=$4"
}

check_stackmaps() {
    local out=$1 tag="$2 stackmaps"
    expect "$tag: truth 100" has "$out" \
        "jitmap-demo: stackmap id=100 a=15 b=-3 k42=42 kminus1=-1 kpool=4294967296 slot=$HEX slotval=105"
    expect "$tag: truth 102" has "$out" \
        "jitmap-demo: stackmap id=102 sum=12 prod=3000000000000 slot=$HEX a=15"
    expect "$tag: truth 101" has "$out" \
        "jitmap-demo: stackmap id=101 s=12 neg=3 flag=1 w=-1200 kneg=-4294967296 kzero=0"
    expect "$tag: same alloca in records 100 and 102" test \
        "$(field "$out" 'jitmap-demo: stackmap id=100 .*' slot)" = \
        "$(field "$out" 'jitmap-demo: stackmap id=102 .*' slot)"
    expect "$tag: safepoint 100" has "$out" "$(safepoint_re 100 1 0 stackmaps_main)"
    expect "$tag: safepoint 101" has "$out" "$(safepoint_re 101 2 0 stackmaps_inner)"
    expect "$tag: records" test "$(count "$out" \
        'jitmap-demo: stackmap-record id=(100 .*function=stackmaps_main locations=6|102 .*function=stackmaps_main locations=4|101 .*function=stackmaps_inner locations=6) liveouts=0')" -eq 3
}

check_patchpoint() {
    local out=$1 tag="$2 patchpoint"
    expect "$tag: truth 200" has "$out" "jitmap-demo: patchpoint id=200 cc=c x=1000 y=-22 z=7 kminus7=-7"
    expect "$tag: truth 201" has "$out" \
        "jitmap-demo: patchpoint id=201 cc=anyreg x=1000 s=978 y=-22 z=7 t=1179 u=201000 v=-221"
    # The call is the first 13 bytes of the patchable region that the record points at.
    expect "$tag: safepoint 200" has "$out" "$(safepoint_re 200 1 13 patchpoint_c)"
    expect "$tag: safepoint 201 (through the anyreg trampoline)" has "$out" \
        "$(safepoint_re 201 2 13 patchpoint_anyreg)"
    expect "$tag: records" test "$(count "$out" \
        'jitmap-demo: stackmap-record id=(200 .*function=patchpoint_c locations=4|201 .*function=patchpoint_anyreg locations=7) liveouts=[0-9]+')" -eq 2
}

check_statepoint() {
    local out=$1 tag="$2 statepoint"
    local p300="jitmap-demo: statepoint id=300 cc=0 flags=0 ndeopt=3 d0=-77 d1=7 d2=9000000000 obj.base=$HEX obj.derived=$HEX derived.base=$HEX derived.derived=$HEX obj2.base=$HEX obj2.derived=$HEX"
    local p301="jitmap-demo: statepoint id=301 cc=0 flags=0 ndeopt=0 obj2.base=$HEX obj2.derived=$HEX derived2.base=$HEX derived2.derived=$HEX nullp.base=0x0 nullp.derived=0x0 derived.base=$HEX derived.derived=$HEX"
    expect "$tag: truth 300" has "$out" "$p300"
    expect "$tag: truth 301" has "$out" "$p301"
    local obj obj2
    obj=$(field "$out" 'jitmap-demo: heap-object name=obj .*' addr)
    obj2=$(field "$out" 'jitmap-demo: heap-object name=obj2 .*' addr)
    expect "$tag: roots are the runtime's heap objects" test -n "$obj" -a -n "$obj2" -a \
        "$(field "$out" "$p300" obj.base)" = "$obj" -a "$(field "$out" "$p300" obj2.base)" = "$obj2"
    expect "$tag: derived = base + 16 (300)" test \
        $(($(field "$out" "$p300" derived.derived) - obj)) -eq 16
    expect "$tag: derived2 = base + 16 (301)" test \
        $(($(field "$out" "$p301" derived2.derived) - obj2)) -eq 16
    expect "$tag: safepoint 300" has "$out" "$(safepoint_re 300 1 0 statepoint_main)"
    expect "$tag: safepoint 301" has "$out" "$(safepoint_re 301 2 0 statepoint_main)"
}

# check_recursion OUTPUT ENGINE DEPTH
check_recursion() {
    local out=$1 tag="$2 recursion depth $3" depth=$3 n acc=0 missing=0
    for ((n = depth; n > 0; n--)); do
        has "$out" "jitmap-demo: recursion id=400 n=$n acc=$acc tag=$((n ^ 23130)) slot=$HEX" ||
            missing=$((missing + 1))
        acc=$((acc + n))
    done
    expect "$tag: one truth line per frame ($missing missing)" test "$missing" -eq 0 -a \
        "$(count "$out" 'jitmap-demo: recursion id=400 .*')" -eq "$depth"
    expect "$tag: truth 401" has "$out" "jitmap-demo: recursion id=401 n=0 acc=$acc slot=$HEX"
    expect "$tag: safepoint 401" has "$out" "$(safepoint_re 401 1 0 recurse)"
    expect "$tag: records" test "$(count "$out" \
        'jitmap-demo: stackmap-record id=(400 .* locations=4|401 .* locations=3) liveouts=0')" -eq 2
}

for engine in orc mcjit; do
    for program in stackmaps patchpoint statepoint recursion; do
        out=$("$BIN" "--$engine" --program "$program" 2>&1)
        status=$?
        check_common "$out" "$status" "$engine" "$program"
        case $program in
        recursion) check_recursion "$out" "$engine" 40 ;;
        *) "check_$program" "$out" "$engine" ;;
        esac
    done
    for depth in 0 3; do
        out=$("$BIN" "--$engine" --program recursion --depth "$depth" 2>&1)
        status=$?
        check_common "$out" "$status" "$engine" recursion
        check_recursion "$out" "$engine" "$depth"
    done
done

# --objects N (ORC): N modules, each its own object and GDB entry
out=$("$BIN" --objects 5 2>&1)
status=$?
tag="orc --objects 5"
expect "$tag: exit status 0" test "$status" -eq 0
expect "$tag: last line is 'done'" test "$(tail -n 1 <<<"$out")" = "jitmap-demo: done"
expect "$tag: result ok" has "$out" "jitmap-demo: result program=objects got=25 want=25 ok"
expect "$tag: 5 objects registered with GDB" has "$out" "jitmap-demo: gdb-jit descriptor=$HEX entries=5"
expect "$tag: 5 stackmap sections, one record each" test \
    "$(count "$out" "jitmap-demo: stackmaps addr=$HEX size=[0-9]+ via=gdb-jit version=3 functions=1 constants=0 records=1")" -eq 5
expect "$tag: the last function stops in the safepoint on its record" has "$out" \
    "jitmap-demo: safepoint id=600004 call=1 ret=$HEX record-pc=$HEX delta=0 function=obj_4"
out=$("$BIN" --mcjit --objects 5 2>&1)
expect "--mcjit --objects: refused (ORC only), status 2" test "$?" -eq 2

# -- 3. --abort: SIGABRT, with everything before it already printed --

for engine in orc mcjit; do
    out=$( (ulimit -c 0; exec "$BIN" "--$engine" --abort) 2>/dev/null)
    status=$?
    expect "$engine --abort: status 134 (SIGABRT), got $status" test "$status" -eq 134
    expect "$engine --abort: aborts in the first safepoint" has "$out" \
        "jitmap-demo: aborting at safepoint id=100 call=1"
    expect "$engine --abort: truth line printed before the abort" has "$out" \
        "jitmap-demo: stackmap id=100 .*"
    out=$( (ulimit -c 0; exec "$BIN" "--$engine" --abort-at 2) 2>/dev/null)
    status=$?
    expect "$engine --abort-at 2: status 134, got $status" test "$status" -eq 134
    expect "$engine --abort-at 2: aborts in the second safepoint" has "$out" \
        "jitmap-demo: aborting at safepoint id=101 call=2"
done

# -- 2. Under GDB --

# gdb_run ARGS...: runs jitmap-demo-jit ARGS under GDB with the commands in $GDB_CMDS.
gdb_run() {
    local cmds=(-iex 'set debuginfod enabled off' -ex 'set pagination off' -ex 'set width 0')
    local c
    for c in "${GDB_CMDS[@]}"; do cmds+=(-ex "$c"); done
    timeout 300 gdb -batch -nx "${cmds[@]}" --args "$BIN" "$@" 2>&1
}

# frame_pc OUTPUT N FUNCTION: the PC that `bt` shows for frame #N in FUNCTION, as a number.
frame_pc() {
    local pc
    pc=$(grep -Eo "^#$2 +$HEX in $3 " <<<"$1" | head -n 1 | grep -Eo "$HEX")
    echo $((${pc:--1}))
}
# record_pc OUTPUT ID: the PC of stackmap record ID, as printed by the program.
record_pc() { echo $(($(field "$1" "jitmap-demo: stackmap-record id=$2 .*" pc))); }

if ! command -v gdb >/dev/null; then
    bad "gdb not found: the GDB checks cannot run"
else
    for engine in orc mcjit; do
        tag="gdb $engine"
        GDB_CMDS=('break jitmap_demo_safepoint' run 'maint info jit' bt continue bt)
        out=$(gdb_run "--$engine" --program stackmaps)
        if grep -q "ptrace: Operation not permitted" <<<"$out"; then
            bad "$tag: GDB may not trace here (ptrace not permitted)"
            continue
        fi
        expect "$tag: stops in jitmap_demo_safepoint" has "$out" \
            "Breakpoint 1, jitmap_demo_safepoint \(id=100\) at .*"
        expect "$tag: maint info jit lists the JIT objects" has "$out" "$HEX +$HEX +[0-9]+ *"
        expect "$tag: bt at 100 names the JIT frame" has "$out" "#1 +$HEX in stackmaps_main \(\)"
        expect "$tag: bt at 100: frame 1 is on record 100" test \
            "$(frame_pc "$out" 1 stackmaps_main)" -eq "$(record_pc "$out" 100)"
        expect "$tag: bt at 101 names both JIT frames" has "$out" "#2 +$HEX in stackmaps_main \(\)"
        expect "$tag: bt at 101: frame 1 on record 101, frame 2 on record 102" test \
            "$(frame_pc "$out" 1 stackmaps_inner)" -eq "$(record_pc "$out" 101)" -a \
            "$(frame_pc "$out" 2 stackmaps_main)" -eq "$(record_pc "$out" 102)"
        if ! expect "$tag: bt reaches main (twice)" test \
            "$(count "$out" "#[0-9]+ +$HEX in main \(.*")" -eq 2; then
            # Seen once under heavy load and never reproduced: keep the session for the record.
            echo "--- $tag: the GDB session ---" >&2
            echo "$out" >&2
        fi

        GDB_CMDS=('break jitmap_demo_safepoint' run bt)
        out=$(gdb_run "--$engine" --program recursion)
        expect "$tag: recursion bt has 41 recurse frames" test \
            "$(count "$out" "#[0-9]+ +$HEX in recurse \(\)")" -eq 41
        expect "$tag: recursion bt reaches main" has "$out" "#[0-9]+ +$HEX in main \(.*"

        GDB_CMDS=('break jitmap_demo_safepoint if id == 201' run bt)
        out=$(gdb_run "--$engine" --program patchpoint)
        expect "$tag: anyreg bt goes through the trampoline to main" test \
            "$(count "$out" "#(1 +$HEX in jitmap_demo_safepoint_anyreg|2 +$HEX in patchpoint_anyreg|3 +$HEX in patchpoint_main|[0-9]+ +$HEX in main) .*")" -eq 4
    done
fi

echo "llvm-jit: $pass passed, $fail failed"
[[ $fail -eq 0 ]]

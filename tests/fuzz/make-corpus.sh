#!/usr/bin/env bash
# make-corpus.sh OUTDIR: build the seed corpora of the fuzz targets from the project's own IR.
#
#   OUTDIR/elf/    ELF objects compiled by llc-14 from seeds/*.ll (x86-64, AArch64 little and
#                  big endian, ppc64 and s390x big endian), a two-blob `ld -r` object and a
#                  linked executable: inputs of fuzz_elf.
#   OUTDIR/parse/  the raw .llvm_stackmaps bytes of those objects, plus hand-made version 1
#                  and 2 blobs and a two-blob section, each prefixed with the control byte
#                  that fuzz_parse reads first (fuzz_common.h: bits 0-1 byte order, bits 2-4
#                  architecture).
#   OUTDIR/cfi/    the .eh_frame of those objects (unrelocated: pc-relative FDE addresses come
#                  out near the section), each prefixed with the control byte of fuzz_cfi
#                  (bits 0-1 0: .eh_frame, bits 2-4 architecture), plus one given as
#                  .debug_frame (control bits 0-1 1) to exercise that reader too.
#   OUTDIR/core/   synthetic core files (core_seeds.c): inputs of fuzz_core.
#   OUTDIR/unwind/ AArch64, s390x and x86-64 functions with a stack, stopped at a record
#                  (unwind_seeds.py): inputs of fuzz_unwind.
#   OUTDIR/live/  fake processes' memory maps and reads of them (fuzz_live's format): a stopped
#                 process, one that exits mid-read, short reads, colliding page slots, INT64_MAX
#                 and the end of the address space inside the map.
#   OUTDIR/process/ the relocatable ELF seeds laid out in a fake process's memory as LLVM's
#                  JIT registers them, behind a JIT descriptor (process_seeds.py): inputs of
#                  fuzz_process and fuzz_plugin.
#   OUTDIR/insn/   code of x86-64, AArch64 and s390x (patchpoint call sequences, prologues,
#                  epilogues, a function that breaks the ABI), each after the control byte of
#                  fuzz_insn (the architecture), plus the .text of the x86-64 seed objects.
#
# Environment: LLC (default llc-14), OBJCOPY (default llvm-objcopy-14, else objcopy), LD
# (default ld; the linked seeds are skipped without it).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
out=$1
llc=${LLC:-llc-14}
objcopy=${OBJCOPY:-$(command -v llvm-objcopy-14 || command -v objcopy || true)}
ld=${LD:-ld}
[ -n "$objcopy" ] || { echo "make-corpus.sh: no objcopy found" >&2; exit 1; }
command -v "$llc" >/dev/null || { echo "make-corpus.sh: $llc not found" >&2; exit 1; }

mkdir -p "$out/elf" "$out/parse" "$out/cfi" "$out/obj"
work="$out/obj"

# Control bytes: (arch << 2) | order, order 0 auto, 1 little, 2 big; arch as jitmap_arch.
ctl() { printf "\\$(printf %03o "$1")"; }
AUTO=0 LITTLE=1 BIG=2
X86_64=1 AARCH64=2 PPC64=3 S390X=4

# TRIPLE ARCH ORDER SEEDS...: compile, keep the object, extract the section.
compile() {
  local triple=$1 arch=$2 order=$3; shift 3
  local name
  for name in "$@"; do
    local o="$work/${name}_${triple%%-*}.o"
    "$llc" -O2 -filetype=obj -mtriple="$triple" "$here/seeds/$name.ll" -o "$o"
    cp "$o" "$out/elf/"
    "$objcopy" -O binary --only-section=.llvm_stackmaps "$o" "$work/${name}_${triple%%-*}.bin"
    { ctl $(((arch << 2) | order)); cat "$work/${name}_${triple%%-*}.bin"; } \
      >"$out/parse/${name}_${triple%%-*}"
    "$objcopy" -O binary --only-section=.eh_frame "$o" "$work/${name}_${triple%%-*}.eh"
    if [ -s "$work/${name}_${triple%%-*}.eh" ]; then
      { ctl $((arch << 2)); cat "$work/${name}_${triple%%-*}.eh"; } \
        >"$out/cfi/${name}_${triple%%-*}"
    fi
  done
}

compile x86_64-unknown-linux-gnu $X86_64 $AUTO stackmaps patchpoints statepoints
compile aarch64-unknown-linux-gnu $AARCH64 $LITTLE stackmaps statepoints
compile aarch64_be-unknown-linux-gnu $AARCH64 $BIG stackmaps patchpoints statepoints
# Statepoints crash llc-14 on ppc64 and s390x.
compile powerpc64-unknown-linux-gnu $PPC64 $AUTO stackmaps
compile s390x-unknown-linux-gnu $S390X $BIG patchpoints
# The unit tests' cross-architecture code (tests/fixtures/cross/cross.ll): AArch64 frame
# records in both prologue forms, s390x register save areas and a frame pointer (r11).
for t in aarch64:$AARCH64 s390x:$S390X; do
  a=${t%%:*}
  "$llc" -O2 -filetype=obj -mtriple="$a-linux-gnu" "$here/../fixtures/cross/cross.ll" \
    -o "$work/cross_$a.o"
  "$objcopy" -O binary --only-section=.eh_frame "$work/cross_$a.o" "$work/cross_$a.eh"
  { ctl $((${t##*:} << 2)); cat "$work/cross_$a.eh"; } >"$out/cfi/cross_$a"
done

# Two blobs in one section, 8 zero bytes between them (as a linker may pad).
{ ctl $(((X86_64 << 2) | AUTO)); cat "$work/stackmaps_x86_64.bin"; printf '\0\0\0\0\0\0\0\0'
  cat "$work/patchpoints_x86_64.bin"; } >"$out/parse/two_blobs_x86_64"

# Hand-made version 1 and 2 blobs (little endian; 8-byte locations, no RecordCount in v1):
# one function at 0x1000, one pool constant, one record with a Register and a
# ConstantIndex location and one live-out.
le() { # VALUE BYTES: VALUE little-endian in BYTES bytes
  local v=$1 n=$2 i
  for ((i = 0; i < n; i++)); do ctl $(((v >> (8 * i)) & 255)); done
}
old_blob() { # VERSION
  local v=$1
  le "$v" 1; le 0 1; le 0 2; le 1 4; le 1 4; le 1 4       # header: 1 function/constant/record
  le 4096 8; le 16 8; [ "$v" -ge 2 ] && le 1 8            # function
  le 4886718345 8                                          # constant
  le 5 8; le 8 4; le 0 2; le 2 2                           # record 5 at +8, 2 locations
  le 1 1; le 8 1; le 3 2; le 0 4                           #   Register R#3, size 8
  le 5 1; le 8 1; le 0 2; le 0 4                           #   ConstantIndex #0
  le 0 2; le 1 2; le 7 2; le 0 1; le 8 1                   #   1 live-out: R#7, 8 bytes
}
{ ctl $(((X86_64 << 2) | LITTLE)); old_blob 1; } >"$out/parse/v1_x86_64"
{ ctl $(((X86_64 << 2) | AUTO)); old_blob 2; } >"$out/parse/v2_x86_64"
{ ctl $(((X86_64 << 2) | AUTO)); old_blob 2; old_blob 1; } >"$out/parse/v2_v1_x86_64"

# ykllvm's layouts (docs/stackmap-format.md, "ykllvm"): one function at 0x401000, one record
# of two live variables ([rbp-8]; rbx and r12); with extras (rbx also at [rbp-16] and r14)
# and the spill table (a frame pointer; rbx at frame index -2, r14 at -3), and without.
yk_blob() { # EXTRAS (0 or 1)
  local x=$1
  le 3 1; le 0 1; le 0 2; le 1 4; le 0 4; le 1 4           # header
  le 4198400 8; le 40 8; le 1 8                            # function
  le 0 8; le 28 4; le 0 2; le 2 2                          # record 0 at +0x1c, 2 variables
  le 1 1                                                   #   variable 0: 1 location
  le 3 1; le 0 1; le 8 2; le 6 2; le 0 2                   #     Indirect [rbp-8]
  [ "$x" = 1 ] && le 0 2
  le $((0xfffffff8)) 4
  le 2 1                                                   #   variable 1: 2 locations
  le 1 1; le 0 1; le 8 2; le 3 2; le 0 2                   #     Register rbx
  [ "$x" = 1 ] && { le 2 2; le $((0xfff0)) 2; le 14 2; }   #     also [rbp-16], r14
  le 0 4
  le 1 1; le 0 1; le 8 2; le 12 2; le 0 2                  #     Register r12
  [ "$x" = 1 ] && le 0 2
  le 0 4
  if [ "$x" = 1 ]; then le 0 2; le 0 2; le 0 4             # live-out header, padding
    le 1 1; le 0 1; le 2 4; le 3 2; le 0 2; le $((0xfffffffe)) 4; le 14 2; le 0 2; le $((0xfffffffd)) 4
  else le 0 2; le 0 2; le 0 2; le 0 4; fi                 # padding, live-out header, padding
}
{ ctl $(((X86_64 << 2) | LITTLE)); yk_blob 1; } >"$out/parse/ykllvm_extras_x86_64"
{ ctl $(((X86_64 << 2) | LITTLE)); yk_blob 0; } >"$out/parse/ykllvm_x86_64"

# Linked seeds: two blobs with relocations (ld -r) and an executable with linked addresses.
if command -v "$ld" >/dev/null; then
  "$ld" -r "$work/stackmaps_x86_64.o" "$work/patchpoints_x86_64.o" -o "$out/elf/ld_r_x86_64.o"
  "$ld" -N -e 0 --unresolved-symbols=ignore-all "$work/stackmaps_x86_64.o" \
    "$work/statepoints_x86_64.o" -o "$out/elf/exe_x86_64" 2>/dev/null ||
    echo "make-corpus.sh: skipped the linked executable seed" >&2
fi
# Core files (fuzz_core): synthetic cores written by core_seeds.c through libelf.
mkdir -p "$out/core"
${CC:-cc} -O1 -Wl,--build-id -I"$here/../unit" -I"$here/../../include" -o "$work/core_seeds" \
  "$here/core_seeds.c" "$here/../unit/core_builder.c" -lelf
"$work/core_seeds" "$out/core" >/dev/null
# Processes (fuzz_process, fuzz_plugin): the relocatable seeds behind a JIT descriptor.
python3 "$here/process_seeds.py" "$out/process" "$out/plugin" "$out"/elf/*.o
# Code and stacks (fuzz_unwind): the unit tests' hand-laid functions at their records.
python3 "$here/unwind_seeds.py" "$out/unwind"
# Code (fuzz_insn): the unit tests' encodings (tests/unit/test_insn.c) and llc's x86-64 code.
mkdir -p "$out/insn"
hex() { printf '%b' "$(sed 's/\([0-9a-f][0-9a-f]\)/\\x\1/g' <<<"$1")"; } # "55c3" -> bytes
insn_seed() { { ctl "$2"; hex "$3"; } >"$out/insn/$1"; } # NAME ARCH HEX
insn_seed x86_patchpoint $X86_64 49bbefbeaddeffffffff41ffd3
insn_seed x86_llvm_fn $X86_64 554889e54157415653504189d74989f64889fb49bbefbeaddeffffffff41ffd34c01f04883c4085b415e415f5dc3cccc
insn_seed x86_abi_break $X86_64 554889e541554989fdbb2a0000004531e448b8efbeaddeffffffffffd0415d5dc3
insn_seed x86_calls $X86_64 e800000000ff1500000000ffd064ff142510000000c3
insn_seed a64_patchpoint $AARCH64 904682d210cfaaf29057d3f200023fd6
insn_seed a64_frame $AARCH64 fd7bbda9fd030091f35301a9539a80d2d4c582d2000080d2f35341a9fd7bc3a8c0035fd6
insn_seed s390x_patchpoint $S390X c019123456780de1
insn_seed s390x_frame $S390X eb6ff0300024c0e500000010a7e500040de1b904006207fe
for o in "$work"/*_x86_64.o; do
  "$objcopy" -O binary --only-section=.text "$o" "$work/text.bin" 2>/dev/null || continue
  [ -s "$work/text.bin" ] && { ctl $X86_64; cat "$work/text.bin"; } >"$out/insn/text_$(basename "$o" .o)"
done
# Live memory (fuzz_live): [flags][exit after][short every][ranges], ranges as [start/32 u16]
# [len/2 u16], reads as [op][offset u24][len u16] (tests/fuzz/fuzz_live.c).
mkdir -p "$out/live"
live_reads() { # the same reads for each map: small, across a page edge, long, twice, empty
  le 0 1; le $((0x1000)) 3; le 8 2
  le 4 1; le $((0x1ffd)) 3; le 7 2
  le 0 1; le $((0x1800)) 3; le $((0x1ff0)) 2
  le 2 1; le $((0x1000)) 3; le $((0x1000)) 2
  le 4 1; le $((0x10ff8)) 3; le 16 2
  le 3 1; le $((0x4000)) 3; le 1 2
  le 12 1; le $((0x2000)) 3; le 64 2
}
live_seed() { # NAME FLAGS EXIT-AFTER SHORT-EVERY RANGE... (START:LEN in bytes)
  local name=$1 flags=$2 exit_after=$3 short_every=$4 r; shift 4
  { le "$flags" 1; le "$exit_after" 1; le "$short_every" 1; le $# 1
    for r in "$@"; do le $((${r%%:*} / 32)) 2; le $((${r##*:} / 2)) 2; done
    live_reads; } >"$out/live/$name"
}
live_seed stopped $((1 | 3 << 5)) 0 0 $((0x1000)):$((0x6000)) $((0x10000)):$((0x2000))
live_seed running $((3 << 5)) 0 0 $((0x1000)):$((0x6000))
live_seed exits $((1 | 2 | 3 << 5)) 4 0 $((0x1000)):$((0x6000))
live_seed short $((1 | 16 | 3 << 5)) 0 2 $((0x1000)):$((0x8000)) $((0x9010)):$((0x100))
live_seed collide $((1 | 3 << 5)) 0 0 $((0x1000)):$((0x2000)) $((0x101000)):$((0x2000))
live_seed int64_max $((1 | 2 << 2 | 3 << 5)) 0 0 $((0x1ff000)):$((0x2000)) $((0x1000)):$((0x6000))
live_seed wrap $((1 | 3 << 2 | 2 << 5)) 0 0 $((0x1ff000)):$((0x2000)) $((0x1000)):$((0x6000))
# Perf maps (control byte 0, 2: read twice) and jitdump files (1, 3) for fuzz_perfmap.
mkdir -p "$out/perfmap"
{ ctl 0; printf '7f0000001000 40 JS:*fib /x/app.js:3:13\n0x7f0000002000 0x20 py::f:/y.py\r\n'
  printf '1000 100 old\n1040 20 inside\n10f0 20 across\ngarbage\n0 ffffffffffffffff all\n'; } \
  >"$out/perfmap/map"
{ ctl 2; printf '2000 10 first\n2000 10 second\n3000 10 small\n2ff0 40 over\n'; } \
  >"$out/perfmap/map_twice"
jd_str() { printf '%s' "$1"; ctl 0; }
jitdump_seed() { # NAME CONTROL
  { ctl "$2"
    le $((0x4A695444)) 4; le 1 4; le 40 4; le 62 4; le 0 4; le 4242 4; le 1 8; le 0 8
    # debug info for 0x5000: two lines, the second file "same as before" (0xff)
    le 2 4; le $((16 + 16 + 16 + 10 + 16 + 2)) 4; le 2 8
    le $((0x5000)) 8; le 2 8
    le $((0x5000)) 8; le 10 4; le 0 4; jd_str "/x/app.js"
    le $((0x5010)) 8; le 12 4; le 0 4; ctl 255; ctl 0
    # two loads (name, 4 code bytes)
    le 0 4; le $((16 + 40 + 6 + 4)) 4; le 2 8
    le 4242 4; le 4243 4; le $((0x5000)) 8; le $((0x5000)) 8; le 64 8; le 1 8; jd_str "JS:*f"
    le $((0x90909090)) 4
    le 0 4; le $((16 + 40 + 6 + 4)) 4; le 3 8
    le 4242 4; le 4243 4; le $((0x6000)) 8; le $((0x6000)) 8; le 32 8; le 2 8; jd_str "JS:*g"
    le $((0x90909090)) 4
    # a move of the second, then close
    le 1 4; le $((16 + 48)) 4; le 4 8
    le 4242 4; le 4243 4; le $((0x7000)) 8; le $((0x6000)) 8; le $((0x7000)) 8; le 32 8; le 2 8
    le 3 4; le 16 4; le 5 8; } >"$out/perfmap/$1"
}
jitdump_seed jitdump 1
jitdump_seed jitdump_twice 3
# Inputs that once stopped a fuzzer (tests/fuzz/regressions/TARGET/): seeds for ever after.
for d in "$here"/regressions/*/; do
  [ -d "$d" ] && mkdir -p "$out/$(basename "$d")" && cp "$d"* "$out/$(basename "$d")/"
done
# The same CIE/FDE bytes read as .debug_frame (CIE id 0 there is an FDE: most are rejected,
# which is the point).
{ ctl $(((X86_64 << 2) | 1)); cat "$work/stackmaps_x86_64.eh"; } >"$out/cfi/as_debug_frame_x86_64"
rm -rf "$work"
echo "make-corpus.sh: $(ls "$out/parse" | wc -l) parse seeds, $(ls "$out/elf" | wc -l) ELF seeds," \
  "$(ls "$out/cfi" | wc -l) CFI seeds, $(ls "$out/core" | wc -l) core seeds," \
  "$(ls "$out/process" | wc -l) process seeds, $(ls "$out/plugin" | wc -l) plugin seeds," \
  "$(ls "$out/insn" | wc -l) code seeds, $(ls "$out/live" | wc -l) live seeds," \
  "$(ls "$out/perfmap" | wc -l) perf map seeds in $out"

#!/usr/bin/env bash
# tests/tools/messages.sh BUILD_DIR: what jitmap-dump and jitmap-stack say when given what they
# cannot read: one plain line naming the input and why, the documented exit status, and
# nothing else (no libc or libelf text that does not apply: "no error", "Input/output
# error"; no "offset 0x0" for a file that is not what it should be). Also -h/-V alike in both.
set -uo pipefail
build=$1
dump=$build/jitmap-dump
stack=$build/jitmap-stack
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0

# expect STATUS 'STDERR' CMD...: the command exits STATUS and prints exactly STDERR.
expect() {
  local want_rc=$1 want_err=$2; shift 2
  local err rc=0
  err=$("$@" 2>&1 >/dev/null) || rc=$?
  if [[ $rc -eq $want_rc && $err == "$want_err" ]]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    printf 'FAIL: %s\n  want exit %d: %s\n  got  exit %d: %s\n' "$*" "$want_rc" "$want_err" "$rc" "$err"
  fi
}

: >"$work/empty"
mkfifo "$work/fifo"
printf 'hello, not a section' >"$work/text"
printf '\003\001\000\000\000\000\000\000\000\000\000\000\000\000\000\000' >"$work/reserved"
printf '\011\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000' >"$work/version9"
printf '\000\000\000\000\000\000\000\000' >"$work/zeros"

expect 1 "jitmap-dump: $work/empty: an empty file, not an object file or a section" "$dump" "$work/empty"
expect 1 "jitmap-dump: $work: a directory, not an object file or a section" "$dump" "$work"
expect 1 "jitmap-dump: $work/fifo: not a regular file (a device, pipe or socket)" "$dump" "$work/fifo"
expect 1 "jitmap-dump: $work/none: No such file or directory" "$dump" "$work/none"
# A raw section is a file whose first byte is a version jitmap reads (1 to 3), or that starts
# as a header of another version would (its reserved bytes zero); anything else (text,
# zeros) is no stackmap of "version 104".
expect 1 "jitmap-dump: $work/text: not an object file, a core file or a stackmap section" "$dump" "$work/text"
expect 1 "jitmap-dump: $work/zeros: not an object file, a core file or a stackmap section" "$dump" "$work/zeros"
expect 1 "jitmap-dump: $work/version9: unknown stackmap version 9 (jitmap reads versions 1, 2 and 3)" "$dump" "$work/version9"
expect 1 "jitmap-dump: $work/reserved: offset 0x1: non-zero reserved byte in the stackmap header" "$dump" "$work/reserved"

# A full disk, in every format: "write error" and status 1, not a silent 0 (the readobj
# printer writes past stdio).
if command -v llc-14 >/dev/null 2>&1; then
  llc-14 -filetype=obj -mtriple=x86_64-unknown-linux-gnu \
    "$(dirname "${BASH_SOURCE[0]}")/../fixtures/ir/stackmap_frames.ll" -o "$work/e.o"
  many=(); for _ in $(seq 100); do many+=("$work/e.o"); done # past stdio's 64 KiB buffer
  for fmt in text json llvm-readobj; do
    err=$("$dump" --format=$fmt "${many[@]}" 2>&1 >/dev/full); rc=$?
    if [[ $rc -eq 1 && $err == "jitmap-dump: write error: No space left on device" ]]; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1))
      printf 'FAIL: jitmap-dump --format=%s > /dev/full\n  got exit %d: %s\n' "$fmt" "$rc" "$err"
    fi
  done
fi

# Mach-O and COFF files, read through libLLVM: a damaged one is named with LLVM's reason, and
# one LLVM gives up on mid-way (report_fatal_error) ends jitmap-dump with status 1, no abort.
# expect_like STATUS 'GLOB' CMD...: as expect, stderr matched against a glob.
expect_like() {
  local want_rc=$1 want_err=$2; shift 2
  local err rc=0
  err=$("$@" 2>&1 >/dev/null) || rc=$?
  # shellcheck disable=SC2053
  if [[ $rc -eq $want_rc && $err == $want_err ]]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    printf 'FAIL: %s\n  want exit %d: %s\n  got  exit %d: %s\n' "$*" "$want_rc" "$want_err" "$rc" "$err"
  fi
}
ir=$(dirname "${BASH_SOURCE[0]}")/../fixtures/ir/stackmap_frames.ll
if command -v llc-14 >/dev/null 2>&1 && [[ $("$dump" --version) != *"COFF: not built in"* ]]; then
  llc-14 -filetype=obj -mtriple=x86_64-apple-macosx "$ir" -o "$work/m.o"
  llc-14 -filetype=obj -mtriple=x86_64-pc-windows-msvc "$ir" -o "$work/c.o"
  head -c 300 "$work/m.o" >"$work/macho-cut"
  expect_like 1 "jitmap-dump: $work/macho-cut: LLVM cannot read it: truncated or malformed object (*)" "$dump" "$work/macho-cut"
  printf '\312\376\272\276\000\000\000\002' >"$work/fat"
  expect_like 1 "jitmap-dump: $work/fat: LLVM cannot read it: truncated or malformed fat file (*)" "$dump" "$work/fat"
  # The first section's name: "/N" points N bytes into the string table, here far past it.
  cp "$work/c.o" "$work/coff-name"
  printf '/9999999' | dd of="$work/coff-name" bs=1 seek=20 conv=notrunc status=none
  expect_like 1 "jitmap-dump: $work/coff-name: LLVM could not read it: * (the files after it are not read)" "$dump" "$work/coff-name" "$work/m.o"
  out=$("$dump" "$work/m.o" "$work/c.o" 2>&1); rc=$?
  if [[ $rc -eq 0 && $out == *"m.o: Mach-O relocatable object, x86-64, little-endian, 1 blob"* &&
        $out == *"c.o: COFF relocatable object, x86-64, little-endian, 1 blob"* ]]; then pass=$((pass + 1))
  else fail=$((fail + 1)); echo "FAIL: jitmap-dump on a Mach-O and a COFF object: exit $rc: ${out:0:200}"; fi
fi

expect 1 "jitmap-stack: 0: not a process ID (1 to 2147483647), and no file of that name" "$stack" 0
expect 1 "jitmap-stack: 99999999999: not a process ID (1 to 2147483647), and no file of that name" "$stack" 99999999999
expect 1 "jitmap-stack: $work: a directory, not a core file" "$stack" "$work"
expect 1 "jitmap-stack: $work/fifo: not a regular file (a device, pipe or socket), not a core file" "$stack" "$work/fifo"
expect 1 "jitmap-stack: $work/empty: not an ELF file (0 bytes)" "$stack" "$work/empty"
expect 1 "jitmap-stack: $work/none: cannot open: No such file or directory" "$stack" "$work/none"

# --exe naming no file: the user's mistake, said as such (not "the core maps no file named
# ..." and exit 0). On a real core, where the kernel writes cores into the working directory.
if [[ $(cat /proc/sys/kernel/core_pattern) != \|* ]]; then
  (cd "$work" && ulimit -c unlimited && exec sleep 60) & sleeper=$!
  sleep 0.2; kill -ABRT $sleeper; wait $sleeper 2>/dev/null
fi
core=$(find "$work" -maxdepth 1 -name 'core*' -type f | head -1)
if [[ -n $core ]]; then
  expect 1 "jitmap-stack: --exe $work/none: No such file or directory" "$stack" --exe="$work/none" "$core"
  expect 1 "jitmap-dump: --exe $work/none: No such file or directory" "$dump" --exe="$work/none" "$core"
else
  echo "messages: no core of sleep in $work (core_pattern): --exe checks skipped"
fi

# -h and -V, long and short, alike in both tools.
for tool in "$dump" "$stack"; do
  name=$(basename "$tool")
  for opt in -V --version; do
    out=$("$tool" "$opt" 2>&1); rc=$?
    if [[ $rc -eq 0 && $out =~ ^$name\ [0-9][^\ ]*\ \(libjitmap\ [0-9] ]]; then pass=$((pass + 1))
    else fail=$((fail + 1)); echo "FAIL: $name $opt: exit $rc: $out"; fi
  done
  for opt in -h --help; do
    out=$("$tool" "$opt" 2>&1); rc=$?
    if [[ $rc -eq 0 && $out == Usage:\ $name* && $out == *--version* ]]; then pass=$((pass + 1))
    else fail=$((fail + 1)); echo "FAIL: $name $opt: exit $rc: ${out:0:80}"; fi
  done
done

# Bash completion (completions/) offers every long option --help lists, so that the two
# cannot drift apart: bash-completion's own functions, the word "--" completed.
bc=/usr/share/bash-completion/bash_completion
if [[ -f $bc ]]; then
  for tool in "$dump" "$stack"; do
    name=$(basename "$tool")
    # The options' column of --help's option lines ("  -h, --help   show ...").
    want=$("$tool" --help | grep -E '^ +-' | sed -E 's/^ +//; s/  .*//' |
           grep -oE -- '--[a-z][a-z-]*=?' | sort -u)
    # (compopt works only under a real completion: here it does nothing)
    got=$(bash -c 'source "$1" && source "$2" && compopt() { :; } && COMP_WORDS=("$3" --) &&
                   COMP_CWORD=1 && COMP_LINE="$3 --" && COMP_POINT=${#COMP_LINE} &&
                   { "_${3//-/_}"; printf "%s\n" "${COMPREPLY[@]}"; }' _ "$bc" \
            "$(dirname "${BASH_SOURCE[0]}")/../../completions/$name" "$name" 2>&1 | sort -u)
    if [[ -n $want && $got == "$want" ]]; then pass=$((pass + 1))
    else
      fail=$((fail + 1))
      printf 'FAIL: bash completion of %s "--"\n  --help: %s\n  completed: %s\n' "$name" \
        "$(echo $want)" "$(echo $got)"
    fi
  done
else
  fail=$((fail + 1))
  echo "FAIL: $bc is missing (bash-completion: scripts/setup.sh installs it)"
fi

# Usage errors: exit 2, what was wrong, and where help is.
expect 2 "jitmap-stack: unknown option '--bogus'
Try 'jitmap-stack --help' for more information." "$stack" --bogus 1
expect 2 "jitmap-stack: option '--exe' needs a value
Try 'jitmap-stack --help' for more information." "$stack" 1 --exe
expect 2 "jitmap-stack: a PID or a core file is needed
Try 'jitmap-stack --help' for more information." "$stack"
expect 2 "jitmap-stack: --max-frames '0': not a whole number from 1 to 4294967295
Try 'jitmap-stack --help' for more information." "$stack" --json --max-frames 0 1
expect 2 "jitmap-stack: --max-threads 'two': not a whole number from 1 to 4294967295
Try 'jitmap-stack --help' for more information." "$stack" --max-threads=two 1

# The same usage errors in the same shape in all three tools, as GNU tools say them: the
# program's name (not the path it was run by), what was wrong, where help is; exit 2.
handler=$build/jitmap-core-handler
for tool in "$dump" "$stack" "$handler"; do
  name=$(basename "$tool")
  try="Try '$name --help' for more information."
  expect 2 "$name: unknown option '--bogus'
$try" "$tool" --bogus 1
  expect 2 "$name: unknown option '-x'
$try" "$tool" -x 1
  expect 2 "$name: option '--exe' needs a value
$try" "$tool" --exe
done
expect 2 "jitmap-dump: no input files
Try 'jitmap-dump --help' for more information." "$dump"
expect 2 "jitmap-core-handler: the crashed process's ID is needed (%P in core_pattern)
Try 'jitmap-core-handler --help' for more information." "$handler"
expect 2 "jitmap-core-handler: 'x1': not a process ID
Try 'jitmap-core-handler --help' for more information." "$handler" x1
expect 2 "jitmap-core-handler: --max-bytes 'lots': not a number of bytes
Try 'jitmap-core-handler --help' for more information." "$handler" --max-bytes=lots 1
expect 2 "jitmap-core-handler: 'cat': after PID, '--' and a command are expected
Try 'jitmap-core-handler --help' for more information." "$handler" 1 cat
for opt in -V --version; do
  out=$("$handler" "$opt" 2>&1); rc=$?
  if [[ $rc -eq 0 && $out =~ ^jitmap-core-handler\ [0-9][^\ ]*\ \(libjitmap\ [0-9] ]]; then pass=$((pass + 1))
  else fail=$((fail + 1)); echo "FAIL: jitmap-core-handler $opt: exit $rc: $out"; fi
done
for opt in -h --help; do
  out=$("$handler" "$opt" 2>&1); rc=$?
  if [[ $rc -eq 0 && $out == Usage:\ jitmap-core-handler* && $out == *--version* ]]; then pass=$((pass + 1))
  else fail=$((fail + 1)); echo "FAIL: jitmap-core-handler $opt: exit $rc: ${out:0:80}"; fi
done

# jitmap-core-handler --from: a file that is no core is the user's mistake (exit 1, the file
# named, nothing written), not a core "passed on unchanged" as one from the kernel is.
expect 1 "jitmap-core-handler: $work/text: not an ELF core" "$handler" --small --from="$work/text"
expect 1 "jitmap-core-handler: $work/empty: not an ELF core (an empty file)" "$handler" --from="$work/empty"
if [[ -n $("$handler" --small --from="$work/text" 2>/dev/null) ]]; then
  fail=$((fail + 1)); echo "FAIL: jitmap-core-handler --from=text wrote to standard output"
else pass=$((pass + 1)); fi

# A zstd stream cut inside its frame header (or before its first block ends): no byte of the
# core came out, and that is what is said, not "not an ELF file (0 bytes)".
if command -v zstd >/dev/null 2>&1; then
  # (the core's first block, whole, before any of it comes out: not one "raw" block of text)
  yes 'not a core' | head -c 65536 | zstd -q -c >"$work/text.zst"
  for n in 4 6 10; do
    head -c $n "$work/text.zst" >"$work/cut$n.zst"
    why="the zstd stream ends after $n bytes, before the first byte of the core (a truncated file?)"
    expect 1 "jitmap-stack: $work/cut$n.zst: $why" "$stack" "$work/cut$n.zst"
    expect 1 "jitmap-dump: $work/cut$n.zst: $why" "$dump" "$work/cut$n.zst"
    expect 1 "jitmap-core-handler: $work/cut$n.zst: $why" "$handler" --small --from="$work/cut$n.zst"
  done
  expect 1 "jitmap-core-handler: $work/text.zst: not an ELF core" "$handler" --small --from="$work/text.zst"
  # The same of the other two formats systemd-coredump writes.
  for codec in xz lz4; do
    command -v $codec >/dev/null 2>&1 || continue
    yes 'not a core' | head -c 65536 | $codec -c | head -c 8 >"$work/cut.$codec"
    expect 1 "jitmap-stack: $work/cut.$codec: the $codec stream ends after 8 bytes, before the first byte of the core (a truncated file?)" \
      "$stack" "$work/cut.$codec"
  done
else
  echo "messages: no zstd: the cut-stream checks skipped"
fi

if [[ -n $core ]]; then
  # A binary core is not written to a terminal (as gzip refuses to): a usage error.
  if command -v script >/dev/null 2>&1; then
    out=$(script -qec "$(printf '%q ' "$handler" --small --from="$core")" /dev/null </dev/null); rc=$?
    if [[ $rc -eq 2 && $out == *"jitmap-core-handler: refusing to write a core to a terminal; redirect stdout or give -- COMMAND"* &&
          $out != *ELF* ]]; then pass=$((pass + 1))
    else fail=$((fail + 1)); printf 'FAIL: jitmap-core-handler to a terminal: exit %d: %q\n' $rc "${out:0:200}"; fi
  fi
  # The process's name, from the core's NT_PRPSINFO (pr_fname), as a live process's comm.
  out=$("$stack" --json "$core" 2>/dev/null)
  if [[ $out == *'"core": "'"$core"'", "name": "sleep"'* ]]; then pass=$((pass + 1))
  else fail=$((fail + 1)); echo "FAIL: jitmap-stack --json CORE: process name: ${out:0:200}"; fi
  out=$("$stack" "$core" 2>/dev/null)
  if [[ $out == "core of process "[0-9]*" (sleep), "* ]]; then pass=$((pass + 1))
  else fail=$((fail + 1)); echo "FAIL: jitmap-stack CORE: process name: ${out:0:200}"; fi
  # Counts agree with their nouns: a core carrying a perf map of one line.
  printf '0x1000 10 one\n' >"$work/one.map"
  "$handler" -q --file="$work/one.map" 0 <"$core" >"$work/core-one" 2>/dev/null
  out=$("$dump" "$work/core-one" 2>&1)
  if [[ $out == *"one.map (perf map, 14 bytes, 1 code object) at"* ]]; then pass=$((pass + 1))
  else fail=$((fail + 1)); echo "FAIL: jitmap-dump, a JIT file of one code object: $out"; fi
  # --no-perf-maps leaves out a core's carried files too (as --help and the man page say).
  with=$("$stack" --json "$work/core-one" 2>/dev/null)
  without=$("$stack" --json --no-perf-maps "$work/core-one" 2>/dev/null)
  if [[ $with == *'"perf_maps": [{"path": "'"$work"'/one.map"'* && $without == *'"perf_maps": []'* ]]; then
    pass=$((pass + 1))
  else fail=$((fail + 1)); echo "FAIL: --no-perf-maps and a core's carried map: ${with:0:300} / ${without:0:300}"; fi
fi

echo "messages: $pass passed, $fail failed"
[[ $fail -eq 0 ]]

#!/usr/bin/env bash
# compare-behaviour.sh: what jitmap's tools and debugger front ends say, from two builds, on the
# same inputs: for a change that must not change behaviour (a restructuring), before and after.
#
#   scripts/compare-behaviour.sh BEFORE_BUILD AFTER_BUILD [OUTDIR]
#
# BEFORE_BUILD, AFTER_BUILD: build trees of jitmap with the examples and tests built (the
# default configuration), e.g.
#   git worktree add /tmp/jitmap-before COMMIT
#   cmake -S /tmp/jitmap-before -B /tmp/jitmap-before/build -DCMAKE_BUILD_TYPE=RelWithDebInfo
#   cmake --build /tmp/jitmap-before/build -j2
#   scripts/compare-behaviour.sh /tmp/jitmap-before/build build
# With BEFORE_BUILD = AFTER_BUILD it must find no difference: that shows the masks (below) are
# enough and that the run repeats.
#
# Every input is made once, with the BEFORE build's programs, and then read by both builds:
#   a. dump: jitmap-dump (--format=text, json and llvm-readobj, the formats docs/jitmap-dump.md
#      lists; --statepoints=all and none; each ELF object's raw stackmap section) over the
#      differential corpus: every case of tests/fixtures/manifest.txt compiled by its llc, the
#      two-blob executable and the linked Mach-O images of tests/differential/run.sh, the cross
#      fixtures, every object in one call; and the cores of tests/differential/core.sh (the
#      executable in place, through a link, moved, the NT_FILE note removed, another program's
#      --exe, a library under --sysroot, lli-14);
#   b. cores: the demo JIT (examples/llvm-jit) held in its statepoint in two threads, gcore's
#      core of it, that core through jitmap-core-handler (as the kernel pipes it, the process at
#      hand, a perf map added), made small (--small, and a small core bounded by
#      --stack-bytes), compressed (zstd, lz4); kernel cores (abort) of the statepoint and
#      recursion programs and of the bytecode VM; a truncated core and a damaged zstd one:
#      jitmap-stack (text, --json, and the options tests/stack uses) and jitmap-dump on each;
#   c. live: the demo's recursion program held in three threads and stopped (SIGSTOP), so that
#      each thread stands at one instruction for both builds (held, its threads poll every
#      10 ms: what is above the first JIT frame would move between two attaches); jitmap-stack
#      attached with the BEFORE build, then the AFTER build, command by command;
#   d. consistency: tests/consistency/test_frames.py (GDB, LLDB, jitmap-stack, jitmap-dump on
#      the same stops) run once per build with JITMAP_CONSISTENCY_SAVE, ASLR off, and its saved
#      outputs compared by tests/consistency/compare_runs.py. The programs it stops are the
#      BEFORE build's in both runs (a farm of links: the AFTER build with the BEFORE build's
#      example programs and test inferiors), so that only what reads them differs.
#      Four cases by default (consistency_default below); JITMAP_COMPARE_CONSISTENCY=all runs
#      every case (some eight minutes more), ="CASE..." those cases (test_frames.py's names),
#      =none leaves the part out.
#
# Each tool's standard output is written to OUTDIR/before/PART/NAME.txt and
# OUTDIR/after/PART/NAME.txt, its standard error and exit status to NAME.txt.err beside it,
# and the two compared (parts a-c: byte for byte; part d: with compare_runs.py's masks; see
# "Masks" below). Prints per part the runs compared, identical and differing, with the diff of
# each that differs (also in OUTDIR/summary.txt). Exits 0 when nothing differs, 1 when
# something does (or an input could not be made), 2 on usage errors.
# `--compare OUTDIR` compares a finished run's outputs again (after editing one by hand, to
# see that a difference is reported).
# The test files and the corpus are this tree's (the script's), for both builds.
set -uo pipefail

usage() {
	echo "usage: $0 BEFORE_BUILD AFTER_BUILD [OUTDIR]" >&2
	echo "   or: $0 --compare OUTDIR   (compare a run's outputs again)" >&2
	exit 2
}
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
start=$SECONDS
compare_only=no
if [ "${1:-}" = --compare ]; then
	[ $# -eq 2 ] && [ -f "$2/builds.txt" ] || usage
	compare_only=yes
	out=$(cd "$2" && pwd -P)
	{ read -r before; read -r after; } <"$out/builds.txt"
else
	[ $# -ge 2 ] && [ $# -le 3 ] || usage
	before=$(cd "$1" 2>/dev/null && pwd -P) || usage
	after=$(cd "$2" 2>/dev/null && pwd -P) || usage
	for b in "$before" "$after"; do
		for t in jitmap-dump jitmap-stack; do
			[ -x "$b/$t" ] || { echo "$0: $b/$t is not built" >&2; exit 2; }
		done
	done
	out=${3:-$(mktemp -d "${TMPDIR:-/tmp}/jitmap-compare.XXXXXX")}
	mkdir -p "$out" || usage
	out=$(cd "$out" && pwd -P)
	# Only what this script writes, so that an OUTDIR given twice starts afresh.
	rm -rf "$out/before" "$out/after" "$out/inputs" "$out/b" "$out/summary.txt"
	mkdir -p "$out/before" "$out/after" "$out/inputs" "$out/b"
	printf '%s\n%s\n' "$before" "$after" >"$out/builds.txt"
fi

# The two builds under names of one length (OUTDIR/b/A and OUTDIR/b/B): the consistency test's
# programs run under these names (their arguments and environment lie on their stacks, and
# their cores name them), so that their stacks are laid out alike.
A=$out/b/A
B=$out/b/B
demo=$before/examples/llvm-jit/jitmap-demo-jit
vm=$before/examples/bytecode-vm/jitmap-vm
handler=$before/jitmap-core-handler

# What the tools read from their environment, fixed for both builds:
#  - DEBUGINFOD_URLS empty: no debug file is fetched from a server (what a server answers, or
#    whether it answers in time, is not the build's behaviour);
#  - JITMAP_CACHE_DIR empty: no debug-file cache (tools/debuginfo_cache.c), so that the first
#    build's run does not fill a cache the second one reads (tests/stack checks the output is
#    the same with and without it);
#  - LC_ALL=C, TZ=UTC: messages and any date in one language and zone.
export DEBUGINFOD_URLS='' JITMAP_CACHE_DIR='' LC_ALL=C TZ=UTC

say() { printf '%s\n' "$*" >&2; }
problem() {
	say "compare-behaviour: $*"
	echo "$*" >>"$out/inputs/problems.txt"
}

# record FILE CMD...: CMD's standard output in FILE, its standard error and exit status in
# FILE.err. No tool may take two minutes here (a hang is a difference too: exit 124).
record() {
	local f=$1 rc=0
	shift
	timeout 120 "$@" >"$f" 2>"$f.err" </dev/null || rc=$?
	echo "--- exit $rc" >>"$f.err"
}

# both PART NAME TOOL ARG...: the BEFORE build's TOOL and the AFTER build's, with ARGs; at once
# (they only read their inputs) but in part c, where they attach to one process in turn.
both() {
	local part=$1 name=$2 tool=$3
	shift 3
	mkdir -p "$out/before/$part" "$out/after/$part"
	if [ "$part" = live ]; then
		record "$out/before/$part/$name.txt" "$A/$tool" "$@"
		record "$out/after/$part/$name.txt" "$B/$tool" "$@"
		return
	fi
	record "$out/before/$part/$name.txt" "$A/$tool" "$@" &
	record "$out/after/$part/$name.txt" "$B/$tool" "$@"
	wait
}

# make_core DIR CMD...: CMD run in DIR with cores enabled (the kernel writes them there: see
# kernel_cores below); prints the core's path, nothing when none was written.
make_core() {
	local dir=$1
	shift
	mkdir -p "$dir"
	{ (cd "$dir" && ulimit -c unlimited && exec "$@" >"$dir/out.txt" 2>&1); } 2>/dev/null
	find "$dir" -maxdepth 1 -type f \( -name core -o -name 'core.*' \) | head -n 1
}
case $(cat /proc/sys/kernel/core_pattern 2>/dev/null) in
'|'* | */*) kernel_cores=no ;;   # piped elsewhere, or written to another directory
*) kernel_cores=yes ;;
esac

# hold DIR NAME CMD...: start CMD (the demo with --pause) in DIR and wait until its output
# says it holds; prints its PID. The caller kills it.
hold() {
	local dir=$1 name=$2 pid
	shift 2
	mkdir -p "$dir"
	"$@" >"$dir/$name.out" 2>&1 &
	pid=$!
	disown
	for _ in $(seq 600); do
		grep -q 'holding threads=' "$dir/$name.out" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q 'holding threads=' "$dir/$name.out" || { kill -9 "$pid" 2>/dev/null; return 1; }
	echo "$pid"
}

# -- The AFTER build's name: a link, or a farm for part d --
#
# For parts a-c B is a link to the AFTER build. Part d's test runs the programs of the build
# it is given; B is then a directory of links to the AFTER build's files but for those
# programs, which link to the BEFORE build's (the same bytes stopped at the same places).
inferiors="examples/llvm-jit/jitmap-demo-jit
examples/bytecode-vm/jitmap-vm
examples/handjit/jitmap-handjit
examples/handjit-arm64/jitmap-handjit-arm64
examples/handjit-s390x/jitmap-handjit-s390x
tests/jitmap-hostile
tests/jitmap-consistency-pause.so
tests/gdb-commands-aot"

# farm DST REL: DST (AFTER/REL's mirror) holds links to AFTER/REL's entries, but for the
# inferiors under it, which link to BEFORE's; directories on the way to one are mirrored.
farm() {
	local dst=$1 rel=$2 e name sub
	mkdir -p "$dst"
	for e in "$after/$rel"* "$after/$rel".[!.]*; do
		[ -e "$e" ] || continue
		name=${e##*/}
		sub=$rel$name
		if grep -qx -- "$sub" <<<"$inferiors"; then
			[ -e "$before/$sub" ] && ln -s "$before/$sub" "$dst/$name"
		elif grep -q -- "^$sub/" <<<"$inferiors" && [ -d "$e" ]; then
			farm "$dst/$name" "$sub/"
		else
			ln -s "$e" "$dst/$name"
		fi
	done
}

# -- a. jitmap-dump over the differential corpus --

part_dump() {
	local in=$out/inputs/dump fx=$top/tests/fixtures name llc triple irfile flags
	mkdir -p "$in"
	local objs=()
	while read -r name llc triple irfile flags; do
		[[ -z ${name:-} || $name == \#* ]] && continue
		if ! command -v "llc-$llc" >/dev/null; then
			problem "dump: $name left out: llc-$llc is not installed"
			continue
		fi
		# shellcheck disable=SC2086  # the manifest's flags: a list by design
		if "llc-$llc" -filetype=obj -mtriple="$triple" ${flags:-} "$fx/$irfile" \
			-o "$in/$name.o" 2>"$in/$name.llc.err"; then
			objs+=("$in/$name.o")
		else
			problem "dump: llc-$llc failed on $name"
		fi
	done <"$fx/manifest.txt"
	# run.sh's two blobs in one executable (gcc -no-pie), and its linked Mach-O images.
	if llc-19 -O2 -filetype=obj -mtriple=x86_64-unknown-linux-gnu "$fx/ir/stackmap_consts.ll" \
		-o "$in/two_blobs_a.o" && llc-19 -O2 -filetype=obj -mtriple=x86_64-unknown-linux-gnu \
		"$fx/ir/patchpoint.ll" -o "$in/two_blobs_b.o" &&
		gcc -no-pie -o "$in/two_blobs.exe" "$fx/c/two_blobs_main.c" "$in/two_blobs_a.o" \
			"$in/two_blobs_b.o"; then
		objs+=("$in/two_blobs.exe")
	else
		problem "dump: the two-blob executable could not be made"
	fi
	local ld=ld64.lld-14 o arch
	command -v "$ld" >/dev/null || ld=ld64.lld
	for o in "$in"/sm_frames_macho_*_19.o; do
		[ -f "$o" ] && command -v "$ld" >/dev/null || continue
		arch=x86_64
		[[ $o == *aarch64* ]] && arch=arm64
		if "$ld" -arch "$arch" -platform_version macos 11.0 11.0 -dylib -undefined dynamic_lookup \
			"$o" -o "${o%.o}.dylib" 2>/dev/null; then
			objs+=("${o%.o}.dylib")
		else
			problem "dump: $ld failed on $o"
		fi
	done
	objs+=("$fx"/cross/*.elf)
	# The raw section of each ELF object (as objcopy -O binary writes it), read with the byte
	# order and architecture guessed.
	local raws=()
	for o in "$in"/*.o; do
		[[ $o == *_macho_* || $o == *_coff_* || $o == */two_blobs_?.o ]] && continue
		llvm-objcopy-19 -O binary --only-section=.llvm_stackmaps "$o" "${o%.o}.raw" 2>/dev/null &&
			[ -s "${o%.o}.raw" ] && raws+=("${o%.o}.raw")
	done
	# ELF files one at a time, in every format; Mach-O and COFF files (each call of
	# jitmap-dump loads libLLVM for them, a third of a second) all in one call per format,
	# as the statepoint modes and the raw sections: each file's output begins with its name.
	local f n llvm=()
	for f in "${objs[@]}"; do
		n=${f##*/}
		case $n in
		*_macho_* | *_coff_*) llvm+=("$f"); continue ;;
		esac
		both dump "$n.text" jitmap-dump "$f"
		both dump "$n.json" jitmap-dump --format=json "$f"
		both dump "$n.llvm-readobj" jitmap-dump --format=llvm-readobj "$f"
	done
	if [ ${#llvm[@]} -gt 0 ]; then
		both dump "macho-coff.text" jitmap-dump "${llvm[@]}"
		both dump "macho-coff.json" jitmap-dump --format=json "${llvm[@]}"
		both dump "macho-coff.llvm-readobj" jitmap-dump --format=llvm-readobj "${llvm[@]}"
	fi
	both dump "all.statepoints-all" jitmap-dump --statepoints=all "${objs[@]}"
	both dump "all.statepoints-none" jitmap-dump --statepoints=none "${objs[@]}"
	both dump "all.json" jitmap-dump --format=json "${objs[@]}"
	both dump "raw.text" jitmap-dump "${raws[@]}"
	both dump "raw.json" jitmap-dump --format=json "${raws[@]}"
	echo "${#objs[@]} files (${#llvm[@]} Mach-O and COFF), ${#raws[@]} raw sections" \
		>"$out/inputs/dump-corpus.txt"

	# tests/differential/core.sh's cores, read at each of its steps.
	if [ $kernel_cores = no ]; then
		problem "dump: no cores (core_pattern: $(cat /proc/sys/kernel/core_pattern))"
		return
	fi
	local d=$in/dcore src=$top/tests/differential/core_prog.c core core2 fmt
	mkdir -p "$d/orig" "$d/link"
	dcore() {   # dcore NAME ARG...: jitmap-dump ARG... in the three formats
		local n=$1
		shift
		for fmt in text json llvm-readobj; do
			both dump "dcore-$n.$fmt" jitmap-dump --format=$fmt "$@"
		done
	}
	if ! cc -O1 -Wl,--build-id -o "$d/orig/jitmap-core-prog" "$src"; then
		problem "dump: core_prog.c could not be compiled"
		return
	fi
	ln -s ../orig/jitmap-core-prog "$d/link/prog-link"
	core=$(make_core "$d/run" "$d/link/prog-link")
	[ -n "$core" ] || { problem "dump: core_prog wrote no core"; return; }
	dcore plain "$core"
	dcore symlink --exe="$d/link/prog-link" "$core"
	mv "$d/orig" "$d/moved" && mv "$d/moved/jitmap-core-prog" "$d/moved/renamed"
	dcore moved-alone "$core"
	dcore moved --exe="$d/moved/renamed" "$core"
	dcore other --exe="$(type -P true)" "$core"
	no_nt_file "$core" "$d/run/core-nofile" && dcore nofile --exe="$d/moved/renamed" "$d/run/core-nofile"
	mkdir -p "$d/lib"
	if cc -O1 -shared -fPIC -DCORE_PROG_LIBRARY -o "$d/lib/libcoreprog.so" "$src" &&
		cc -O1 -DCORE_PROG_NO_DESCRIPTOR -o "$d/libprog" "$src" -L"$d/lib" -lcoreprog \
			-Wl,-rpath,"$d/lib" && core2=$(make_core "$d/run2" "$d/libprog") && [ -n "$core2" ]; then
		mkdir -p "$d/sysroot$d"
		mv "$d/lib" "$d/sysroot$d/lib"
		dcore sysroot-none "$core2"
		dcore sysroot --sysroot="$d/sysroot" "$core2"
		no_nt_file "$core2" "$d/run2/core-nofile" &&
			dcore sysroot-nofile --sysroot="$d/sysroot" --exe="$d/libprog" "$d/run2/core-nofile"
	else
		problem "dump: the shared-library core could not be made"
	fi
	if [ -L /usr/bin/lli-14 ]; then
		mkdir -p "$d/lli"
		printf 'declare void @abort()\ndefine i32 @main() {\n  call void @abort()\n  ret i32 0\n}\n' \
			>"$d/lli/abort.ll"
		core=$(make_core "$d/lli" /usr/bin/lli-14 -jit-kind=mcjit "$d/lli/abort.ll")
		if [ -n "$core" ]; then
			dcore lli --exe=/usr/bin/lli-14 "$core"
			rm -f "$core"   # lli's core is large, and read
		else
			problem "dump: lli-14 wrote no core"
		fi
	fi
}

# no_nt_file CORE NEW: CORE with its NT_FILE note's type changed (as qemu-user writes cores).
no_nt_file() {
	python3 "$top/tests/lib/no_nt_file.py" "$1" "$2"
}

# -- b. jitmap-stack on the demo's cores --

# stack_core NAME CORE [FULL]: jitmap-stack and jitmap-dump on CORE; FULL: every option set.
stack_core() {
	local n=$1 core=$2
	both cores "$n.stack.text" jitmap-stack "$core"
	both cores "$n.stack.json-values-gcroots" jitmap-stack --json --values --gc-roots "$core"
	both cores "$n.dump.json" jitmap-dump --format=json --exe="$demo" "$core"
	[ "${3:-}" = full ] || return 0
	both cores "$n.stack.json" jitmap-stack --json "$core"
	both cores "$n.stack.values" jitmap-stack --values "$core"
	both cores "$n.stack.gc-roots" jitmap-stack --gc-roots "$core"
	both cores "$n.stack.registers" jitmap-stack --registers --values "$core"
	both cores "$n.stack.json-registers" jitmap-stack --json --registers "$core"
	both cores "$n.stack.max-frames-3" jitmap-stack --json --values --gc-roots --max-frames 3 "$core"
	both cores "$n.stack.max-frames-1000" jitmap-stack --json --max-frames 1000 "$core"
	both cores "$n.stack.max-threads-1" jitmap-stack --json --max-threads 1 "$core"
	both cores "$n.stack.max-both" jitmap-stack --max-threads 1 --max-frames 3 "$core"
	both cores "$n.stack.bad-max" jitmap-stack --json --max-frames 0 "$core"
	both cores "$n.stack.exe" jitmap-stack --values --exe="$demo" "$core"
	both cores "$n.stack.exe-c" jitmap-stack --json "$demo" -c "$core"
	both cores "$n.stack.no-perf-maps" jitmap-stack --json --no-perf-maps "$core"
	both cores "$n.dump.text" jitmap-dump --exe="$demo" "$core"
}

part_cores() {
	local in=$out/inputs/cores pid core
	mkdir -p "$in"
	if ! command -v gcore >/dev/null; then
		problem "cores: no gcore"
	elif ! pid=$(hold "$in/held" demo "$demo" --program statepoint --threads 2 --pause); then
		problem "cores: the demo did not hold its threads"
	else
		# Stopped, so that gcore's core and what the handler reads of the process (its perf
		# map, its memory for --small) are of one moment.
		kill -STOP "$pid"
		gcore -o "$in/gcore" "$pid" >/dev/null 2>&1
		if [ -f "$in/gcore.$pid" ]; then
			mv "$in/gcore.$pid" "$in/gcore.core"
			# A perf map naming the first JIT frame's code (START SIZE NAME), handed to the
			# handler: its core then carries a JIT file as a note.
			"$before/jitmap-stack" --json "$pid" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
pc = [int(f["pc"], 16) for t in d["threads"] for f in t["frames"] if f["jit"]][0]
print("%x 40 perfmap_named_jit_code" % (pc - 0x10))' >"$in/demo.map" ||
				problem "cores: no JIT frame in the held demo"
			# As the kernel pipes a core to the handler while the process is there.
			"$handler" --file="$in/demo.map" "$pid" <"$in/gcore.core" >"$in/handled.core" \
				2>"$in/handled.err" || problem "cores: jitmap-core-handler failed"
			"$handler" --small "$pid" <"$in/gcore.core" >"$in/small.core" 2>"$in/small.err" ||
				problem "cores: jitmap-core-handler --small failed"
			"$handler" --small --stack-bytes=2048 "$pid" <"$in/gcore.core" \
				>"$in/small-2k.core" 2>>"$in/small.err" ||
				problem "cores: jitmap-core-handler --small --stack-bytes failed"
		else
			problem "cores: gcore wrote no core"
		fi
		kill -9 "$pid"
	fi
	if [ -f "$in/gcore.core" ]; then
		zstd -q -T1 -f "$in/gcore.core" -o "$in/gcore.core.zst" 2>/dev/null ||
			problem "cores: zstd failed"
		lz4 -q -f "$in/gcore.core" "$in/gcore.core.lz4" 2>/dev/null || problem "cores: lz4 failed"
		"$handler" --small --from="$in/gcore.core.zst" >"$in/small-from-zst.core" \
			2>>"$in/small.err" || problem "cores: jitmap-core-handler --small --from failed"
	fi
	if [ $kernel_cores = yes ]; then
		core=$(make_core "$in/k-statepoint" "$demo" --threads 2 --abort --program statepoint)
		if [ -n "$core" ]; then mv "$core" "$in/k-statepoint.core"; else problem "cores: no kernel core (statepoint)"; fi
		core=$(make_core "$in/k-recursion" "$demo" --threads 2 --abort --program recursion --depth 5)
		if [ -n "$core" ]; then mv "$core" "$in/k-recursion.core"; else problem "cores: no kernel core (recursion)"; fi
		core=$(make_core "$in/k-vm" "$vm" --n 6 --stop-at 4 --abort)
		if [ -n "$core" ]; then mv "$core" "$in/k-vm.core"; else problem "cores: no kernel core (vm)"; fi
		[ -f "$in/k-statepoint.core" ] &&
			{ zstd -q -T1 -f "$in/k-statepoint.core" -o "$in/k-statepoint.core.zst" 2>/dev/null ||
				problem "cores: zstd failed"; }
	else
		problem "cores: no kernel cores (core_pattern: $(cat /proc/sys/kernel/core_pattern))"
	fi
	(cd "$in" && ls -- *.core *.core.* 2>/dev/null | tr '\n' ' ') >"$out/inputs/cores.txt"
	local f
	for f in gcore.core k-statepoint.core; do
		[ -f "$in/$f" ] && stack_core "${f%.core}" "$in/$f" full
	done
	for f in handled.core small.core small-2k.core small-from-zst.core gcore.core.zst \
		gcore.core.lz4 k-recursion.core k-statepoint.core.zst; do
		[ -f "$in/$f" ] && stack_core "$f" "$in/$f"
	done
	[ -f "$in/handled.core" ] &&
		both cores "handled.core.no-perf-maps" jitmap-stack --json --no-perf-maps "$in/handled.core"
	[ -f "$in/gcore.core" ] && [ -s "$in/demo.map" ] &&
		both cores "gcore.stack.perf-map" jitmap-stack --json --perf-map="$in/demo.map" "$in/gcore.core"
	if [ -f "$in/k-vm.core" ]; then
		both cores "k-vm.stack.json-values" jitmap-stack --json --values "$in/k-vm.core"
		both cores "k-vm.stack.values" jitmap-stack --values "$in/k-vm.core"
		both cores "k-vm.dump.json" jitmap-dump --format=json "$in/k-vm.core"
	fi
	# Damaged input (tests/stack's): a core cut after 1 MiB and after 100 bytes, a zstd core
	# that is no zstd stream.
	if [ -f "$in/gcore.core" ]; then
		head -c 1048576 "$in/gcore.core" >"$in/cut-1m.core"
		head -c 100 "$in/gcore.core" >"$in/cut-100.core"
		both cores "cut-1m.stack.json" jitmap-stack --json --values "$in/cut-1m.core"
		both cores "cut-100.stack.text" jitmap-stack "$in/cut-100.core"
		both cores "cut-100.stack.json" jitmap-stack --json "$in/cut-100.core"
		both cores "cut-100.dump.text" jitmap-dump "$in/cut-100.core"
	fi
	{ printf '\x28\xb5\x2f\xfd'; for _ in 1 2 3 4 5 6 7 8; do printf '\0\0 not a zstd frame '; done; } \
		>"$in/damaged.core.zst"
	both cores "damaged-zst.stack.json" jitmap-stack --json "$in/damaged.core.zst"
	both cores "not-a-core.stack.json" jitmap-stack --json "$demo"
	both cores "not-a-core.stack.text" jitmap-stack "$demo"
	# The cores are large: only the outputs are kept.
	rm -f "$in"/*.core "$in"/*.core.* "$in"/*/core*
}

# -- c. jitmap-stack live --

part_live() {
	local in=$out/inputs/live pid
	mkdir -p "$in"
	if ! pid=$(hold "$in" demo "$demo" --program recursion --depth 8 --threads 3 --pause); then
		problem "live: the demo did not hold its threads"
		return
	fi
	# Stopped (SIGSTOP), every thread at one instruction for both builds: jitmap-stack
	# attaches and lets go without resuming a stopped process (checked below).
	kill -STOP "$pid"
	for _ in $(seq 50); do
		grep -q '^State:.*stopped' "/proc/$pid/status" && break
		sleep 0.05
	done
	both live "stack.text" jitmap-stack "$pid"
	both live "stack.json" jitmap-stack --json "$pid"
	both live "stack.values" jitmap-stack --values "$pid"
	both live "stack.gc-roots" jitmap-stack --gc-roots "$pid"
	both live "stack.json-values-gcroots" jitmap-stack --json --values --gc-roots "$pid"
	both live "stack.freeze-all" jitmap-stack --json --values --gc-roots --freeze=all "$pid"
	both live "stack.registers" jitmap-stack --json --registers "$pid"
	both live "stack.stack-bytes-400" jitmap-stack --json --stack-bytes=400 "$pid"
	both live "stack.stack-bytes-400.text" jitmap-stack --stack-bytes=400 "$pid"
	both live "stack.max" jitmap-stack --max-threads 2 --max-frames 5 "$pid"
	both live "stack.no-perf-maps" jitmap-stack --json --no-perf-maps "$pid"
	both live "stack.freeze-some" jitmap-stack --freeze=some "$pid"
	local t moved=""
	for t in /proc/"$pid"/task/*; do
		grep -q '^State:.*stopped' "$t/status" || moved="$moved ${t##*/}"
	done
	[ -z "$moved" ] || problem "live: threads$moved ran between the builds' attaches"
	kill -9 "$pid"
}

# -- d. the consistency test's saved outputs --

consistency_default="demo-orc-stackmaps demo-abort-stackmaps vm handjit-x86-64"

part_consistency() {
	# By default four cases, two rounds of the test's two jobs (a case costs half a minute or
	# more): a held demo (GDB attached and on its core, jitmap-stack live and on the core,
	# LLDB, jitmap-dump), a kernel core of abort() two JIT frames deep, the bytecode VM (its
	# interpreter frames, LLDB attached too), the hand-written JIT that links libjitmap.
	local which=${JITMAP_COMPARE_CONSISTENCY:-$consistency_default}
	[ "$which" = none ] && return
	[ "$which" = all ] && which=
	rm -rf "$B"   # a link, or the farm of links: nothing it points to
	farm "$B" ""
	{
		echo "consistency B: jitmap-stack $(readlink -f "$B/jitmap-stack"), jitmap.gdb $(readlink -f "$B/share")/jitmap/jitmap.gdb,"
		echo "  the demo $(readlink -f "$B/examples/llvm-jit/jitmap-demo-jit")"
	} >"$out/inputs/consistency-farm.txt"
	local x rc cases=()
	read -ra cases <<<"${which//$'\n'/ }"
	for x in A B; do
		# ASLR off, so that addresses repeat from run to run (the test's docstring). The
		# outputs are saved under names of one length (OUTDIR/inputs/saved-A, saved-B), moved
		# afterwards: the programs inherit JITMAP_CONSISTENCY_SAVE, and a longer environment
		# moves their stacks (argv 16 bytes lower: GDB's and LLDB's backtraces show it).
		rc=0
		JITMAP_CONSISTENCY_SAVE=$out/inputs/saved-$x \
			timeout 900 setarch -R python3 "$top/tests/consistency/test_frames.py" "$out/b/$x" \
			"${cases[@]}" >"$out/inputs/consistency-$x.log" 2>&1 || rc=$?
		[ -d "$out/inputs/saved-$x" ] &&
			mv "$out/inputs/saved-$x" "$out/$([ $x = A ] && echo before || echo after)/consistency"
		echo "consistency: run $x exited $rc" >>"$out/inputs/consistency-$x.log"
		case $rc in 0 | 1) ;; *) problem "consistency: test_frames.py on $x exited $rc" ;; esac
	done
	rm -rf "$B"   # a link, or the farm of links: nothing it points to
	ln -s "$after" "$B"
}

# -- Masks --
#
# Parts a-c: none. Both builds read the same input files at the same paths, and the same
# stopped process (part c) one after the other, with the environment fixed above: every
# byte of their output, errors and exit status is compared.
# Part d: compare_runs.py's own masks, each of something that differs from run to run of the
# test whatever the build (its docstring): the run's work directory (tempfile's
# jitmap-consistency-XXXXXXXX), the PIDs and thread IDs of each case's processes (a new
# process each run), qemu's name for a guest core (its date and PID) and lli's jitdump
# directory (its date and a random part); and one path pair, OUTDIR/b/A against OUTDIR/b/B:
# the name the programs were started under, which GDB prints from the core ("Core was
# generated by `.../b/A/examples/...'"). Nothing else: the programs are the BEFORE build's in
# both runs (their paths and source paths are the same), and with ASLR off their addresses
# repeat.

# compare PART: each run's output (NAME.txt, NAME.txt.err) from both builds compared; prints
# the diffs and the part's line of the summary.
compare_part() {
	local part=$1 rel x n=0 same=0 differ=0 only=0
	local da=$out/before/$part db=$out/after/$part
	[ -d "$da" ] || [ -d "$db" ] || { echo "$part: NOTHING COMPARED (no input could be made)"; return 1; }
	while IFS= read -r rel; do
		if [ ! -f "$da/$rel" ] || [ ! -f "$db/$rel" ]; then
			only=$((only + 1))
			echo "  only in one build: $part/$rel"
			continue
		fi
		n=$((n + 1))
		x=0
		for e in "" .err; do
			cmp -s "$da/$rel$e" "$db/$rel$e" ||
				diff -u "$da/$rel$e" "$db/$rel$e" | head -n 200 || x=1
		done
		if [ $x = 0 ]; then same=$((same + 1)); else differ=$((differ + 1)); fi
	done < <({ (cd "$da" 2>/dev/null && find . -type f -name '*.txt')
		(cd "$db" 2>/dev/null && find . -type f -name '*.txt'); } | sed 's|^\./||' | sort -u)
	echo "$part: $n runs compared (output, errors and exit status), $same identical, $differ differ, $only only in one build"
	[ $differ -eq 0 ] && [ $only -eq 0 ]
}

if [ $compare_only = no ]; then
ln -s "$before" "$A"
ln -s "$after" "$B"
say "compare-behaviour: before $before, after $after, outputs in $out"
part_dump
say "compare-behaviour: a. dump done ($((SECONDS - start)) s)"
part_cores
say "compare-behaviour: b. cores done ($((SECONDS - start)) s)"
part_live
say "compare-behaviour: c. live done ($((SECONDS - start)) s)"
part_consistency
say "compare-behaviour: d. consistency done ($((SECONDS - start)) s)"
fi

# summary: the parts' lines and diffs; its status is the script's.
summary() {
	local status=0
	echo "== compare-behaviour: before $before"
	echo "==                    after  $after"
	[ -f "$out/inputs/dump-corpus.txt" ] &&
		echo "dump corpus: $(cat "$out/inputs/dump-corpus.txt"); cores of tests/differential/core.sh"
	[ -f "$out/inputs/cores.txt" ] && echo "cores read: $(cat "$out/inputs/cores.txt")"
	for p in dump cores live; do
		compare_part "$p" || status=1
	done
	if [ -d "$out/before/consistency" ] || [ -d "$out/after/consistency" ]; then
		# The masks: see "Masks" above.
		python3 "$top/tests/consistency/compare_runs.py" --path "$A" "$B" \
			"$out/before/consistency" "$out/after/consistency" >"$out/consistency-diff.txt" 2>&1 ||
			status=1
		grep -v '^compare_runs:' "$out/consistency-diff.txt" | head -n 400
		echo "consistency: $(grep '^compare_runs:' "$out/consistency-diff.txt" | sed 's/^compare_runs: //')"
		[ -f "$out/inputs/consistency-farm.txt" ] && sed 's/^/  /' "$out/inputs/consistency-farm.txt"
		for x in A B; do tail -n 2 "$out/inputs/consistency-$x.log" | sed 's/^/  /'; done
	elif [ "${JITMAP_COMPARE_CONSISTENCY:-}" = none ]; then
		echo "consistency: left out (JITMAP_COMPARE_CONSISTENCY=none)"
	else
		echo "consistency: NOTHING COMPARED (see $out/inputs/consistency-A.log)"
		status=1
	fi
	if [ -s "$out/inputs/problems.txt" ]; then
		echo "inputs: $(wc -l <"$out/inputs/problems.txt") problem(s) making them:"
		sed 's/^/  /' "$out/inputs/problems.txt"
		status=1
	fi
	echo "== $((SECONDS - start)) s; $([ $status = 0 ] && echo 'no difference' || echo 'DIFFERENCES (above)')"
	return $status
}
summary >"$out/summary.txt"
status=$?
cat "$out/summary.txt"
exit $status

#!/usr/bin/env bash
# core.sh JITMAP_DUMP OUTDIR: jitmap-dump on core files, and --exe (issue 10, defect 3).
#
# core_prog.c (an empty JIT descriptor in its own executable, then abort) is compiled, run
# through a symbolic link with cores enabled, and its core read:
#   plain:   the descriptor is found in the executable the core names, with no warning;
#   symlink: --exe naming the link finds the same (no "the core maps no file named" warning);
#   moved:   with the executable moved and renamed, jitmap-dump alone finds nothing, and --exe
#            naming the new place matches by build ID (read from the core's copy of the first
#            page: the file the core names is gone);
#   nofile:  the core with its NT_FILE note renamed (as qemu-user writes cores): --exe naming
#            the moved executable is placed by the auxiliary vector;
#   other:   --exe naming another program warns that the core maps no such file;
#   sysroot: the descriptor in a shared library moved under a directory since the dump: found
#            with --sysroot only, from NT_FILE or (NT_FILE renamed) the dynamic linker's list.
# When lli-14 is installed, a core of lli-14 (a symbolic link to llvm-14's lli) running an IR
# program that aborts is read with --exe=/usr/bin/lli-14 (the case the issue reports).
# Prints one line per case and "differential-core: N passed, M failed, K skipped"; exits 77
# when no core can be made (core_pattern pipes cores elsewhere, no C compiler).
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 JITMAP_DUMP OUTDIR" >&2; exit 2; }
dump=$1
out=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cc=${CC:-cc}
passed=0 failed=0 skipped=0
pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/    /' "$2" | head -n 20; }
skip() { skipped=$((skipped + 1)); echo "SKIP $1 ($2)"; }

case $(cat /proc/sys/kernel/core_pattern 2>/dev/null) in
'|'*) echo "differential-core: skipped (core_pattern pipes cores elsewhere)"; exit 77 ;;
esac
command -v "$cc" >/dev/null || { echo "differential-core: skipped (no $cc)"; exit 77; }

rm -rf "$out"
mkdir -p "$out/orig" "$out/link" "$out/run"
out=$(cd "$out" && pwd -P)

# make_core DIR CMD...: run CMD in DIR with cores enabled; prints the core's path.
make_core() {
	local dir=$1
	shift
	{ (cd "$dir" && ulimit -c unlimited && exec "$@" >"$dir/out.txt" 2>&1); } 2>/dev/null
	find "$dir" -maxdepth 1 -type f \( -name core -o -name 'core.*' \) | head -n 1
}

"$cc" -O1 -Wl,--build-id -o "$out/orig/jitmap-core-prog" "$here/core_prog.c" || {
	echo "differential-core: skipped ($cc failed)"; exit 77; }
ln -s ../orig/jitmap-core-prog "$out/link/prog-link"
core=$(make_core "$out/run" "$out/link/prog-link")
[ -n "$core" ] || { echo "differential-core: skipped (no core written in $out/run)"; exit 77; }

# run NAME ARGS...: jitmap-dump ARGS "$core" into $out/NAME.{txt,err,rc}.
run() {
	local name=$1
	shift
	"$dump" "$@" "$core" >"$out/$name.txt" 2>"$out/$name.err"
	echo $? >"$out/$name.rc"
}

desc_in() { grep -Eq "^JIT descriptor at 0x[0-9a-f]+ in $1: 0 entries$" "$2"; }

run plain
if [ "$(cat "$out/plain.rc")" = 0 ] && ! grep -q warning "$out/plain.err" &&
	desc_in "$out/orig/jitmap-core-prog" "$out/plain.txt"; then
	pass "plain: the descriptor in the executable the core names"
else fail "plain: exit $(cat "$out/plain.rc")" "$out/plain.err"; fi

run symlink --exe="$out/link/prog-link"
if [ "$(cat "$out/symlink.rc")" = 0 ] && ! grep -q warning "$out/symlink.err" &&
	desc_in "$out/link/prog-link" "$out/symlink.txt"; then
	pass "symlink: --exe naming a link to the executable, no warning"
else fail "symlink: exit $(cat "$out/symlink.rc")" "$out/symlink.err"; fi

mv "$out/orig" "$out/moved"
mv "$out/moved/jitmap-core-prog" "$out/moved/renamed"
run moved-alone
if [ "$(cat "$out/moved-alone.rc")" = 1 ] && grep -q "no __jit_debug_descriptor" "$out/moved-alone.err"; then
	pass "moved: without --exe, no descriptor (control)"
else fail "moved: without --exe: exit $(cat "$out/moved-alone.rc")" "$out/moved-alone.err"; fi
run moved --exe="$out/moved/renamed"
if [ "$(cat "$out/moved.rc")" = 0 ] && ! grep -q "no file named\|build ID differs" "$out/moved.err" &&
	desc_in "$out/moved/renamed" "$out/moved.txt"; then
	pass "moved: --exe naming a moved, renamed executable matches by build ID"
else fail "moved: exit $(cat "$out/moved.rc")" "$out/moved.err"; fi

# nofile: the same core without its NT_FILE note (as qemu-user writes cores): --exe is placed
# by the auxiliary vector.
if command -v python3 >/dev/null; then
	python3 "$here/../lib/no_nt_file.py" "$core" "$out/run/core-nofile"
	saved=$core
	core=$out/run/core-nofile
	run nofile --exe="$out/moved/renamed"
	if [ "$(cat "$out/nofile.rc")" = 0 ] && grep -q "no NT_FILE note: .* placed by AT_PHDR" "$out/nofile.err" &&
		desc_in "$out/moved/renamed" "$out/nofile.txt"; then
		pass "nofile: a core without NT_FILE, --exe placed by the auxiliary vector"
	else fail "nofile: exit $(cat "$out/nofile.rc")" "$out/nofile.err"; fi
	core=$saved
else
	skip "nofile" "no python3"
fi

other=$(type -P true)  # the program, not bash's builtin
run other --exe="$other"
if grep -q "the core maps no file named true" "$out/other.err"; then
	pass "other: --exe naming another program warns"
else fail "other: exit $(cat "$out/other.rc")" "$out/other.err"; fi

# sysroot: the descriptor in a shared library that has moved under a sysroot since the dump;
# with and without NT_FILE (then --exe and the dynamic linker's list find the library).
mkdir -p "$out/lib" "$out/run2"
if "$cc" -O1 -shared -fPIC -DCORE_PROG_LIBRARY -o "$out/lib/libcoreprog.so" "$here/core_prog.c" &&
	"$cc" -O1 -DCORE_PROG_NO_DESCRIPTOR -o "$out/libprog" "$here/core_prog.c" -L"$out/lib" \
		-lcoreprog -Wl,-rpath,"$out/lib" &&
	core2=$(make_core "$out/run2" "$out/libprog") && [ -n "$core2" ]; then
	mkdir -p "$out/sysroot$out"
	mv "$out/lib" "$out/sysroot$out/lib"
	saved=$core
	core=$core2
	run sysroot-none
	if [ "$(cat "$out/sysroot-none.rc")" = 1 ] && grep -q "libcoreprog.so (mapped by the core) cannot be opened" "$out/sysroot-none.err"; then
		pass "sysroot: without --sysroot, the moved library is not found (control)"
	else fail "sysroot: without --sysroot: exit $(cat "$out/sysroot-none.rc")" "$out/sysroot-none.err"; fi
	run sysroot --sysroot="$out/sysroot"
	if [ "$(cat "$out/sysroot.rc")" = 0 ] && desc_in "$out/sysroot$out/lib/libcoreprog.so" "$out/sysroot.txt"; then
		pass "sysroot: --sysroot finds the library the core maps"
	else fail "sysroot: exit $(cat "$out/sysroot.rc")" "$out/sysroot.err"; fi
	if command -v python3 >/dev/null; then
		python3 - "$core2" "$out/run2/core-nofile" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.find(bytes([0x45, 0x4c, 0x49, 0x46]) + b"CORE\0")
assert i > 0
b[i] = 0x46
open(sys.argv[2], "wb").write(b)
PY
		core=$out/run2/core-nofile
		run sysroot-nofile --sysroot="$out/sysroot" --exe="$out/libprog"
		if [ "$(cat "$out/sysroot-nofile.rc")" = 0 ] && grep -q "and [1-9][0-9]* librar" "$out/sysroot-nofile.err" &&
			desc_in "$out/sysroot$out/lib/libcoreprog.so" "$out/sysroot-nofile.txt"; then
			pass "sysroot: without NT_FILE, the library from the dynamic linker's list, under --sysroot"
		else fail "sysroot: without NT_FILE: exit $(cat "$out/sysroot-nofile.rc")" "$out/sysroot-nofile.err"; fi
	fi
	core=$saved
else
	skip "sysroot" "no shared library or no core"
fi

# lli-14 through its link in /usr/bin.
lli=/usr/bin/lli-14
if [ -L "$lli" ] && [ -x "$lli" ]; then
	mkdir -p "$out/lli"
	printf 'declare void @abort()\ndefine i32 @main() {\n  call void @abort()\n  ret i32 0\n}\n' \
		>"$out/lli/abort.ll"
	core=$(make_core "$out/lli" "$lli" -jit-kind=mcjit "$out/lli/abort.ll")
	if [ -z "$core" ]; then
		skip "lli-14" "no core written"
	else
		run lli --exe="$lli"
		if grep -q "JIT descriptor at 0x" "$out/lli.txt" && ! grep -q "no file named" "$out/lli.err"; then
			pass "lli-14: --exe=$lli (a link to $(readlink -f "$lli")), no warning"
		else fail "lli-14: exit $(cat "$out/lli.rc")" "$out/lli.err"; fi
		rm -f "$core"
	fi
else
	skip "lli-14" "$lli is not installed as a link"
fi

echo "differential-core: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]

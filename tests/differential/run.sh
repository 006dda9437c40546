#!/usr/bin/env bash
# Differential test: jitmap-dump --format=llvm-readobj against llvm-readobj --stackmap.
#
# Usage: run.sh JITMAP_DUMP OUTDIR
#
# For every case in tests/fixtures/manifest.txt (NAME LLC TRIPLE IRFILE [llc flags]) whose
# llc-LLC and llvm-readobj-LLC are installed, compile the IR to OUTDIR/NAME.o and require
# jitmap-dump's output to equal llvm-readobj's text from "LLVM StackMap Version:" on, byte
# for byte. Cases whose LLVM version is missing are skipped, not failed.
#
# Then the two-blob case: two x86-64 objects linked by gcc -no-pie into one executable
# hold two concatenated stackmap blobs. llvm-readobj prints only the first one, so we
# check that jitmap-dump prints exactly two blobs and that its first equals llvm-readobj's.
#
# Prints one line per case, then exactly one summary line
#   differential: N passed, M failed, K skipped
# and exits 1 if any case failed, 2 on usage errors.
set -euo pipefail

if [[ $# -ne 2 ]]; then
	echo "usage: $0 JITMAP_DUMP OUTDIR" >&2
	exit 2
fi

dump=$1
outdir=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fixtures=$(cd "$here/../fixtures" && pwd)
manifest=$fixtures/manifest.txt

# A JITMAP_DUMP given as a path must be an executable file; a bare name is looked up on PATH.
if [[ $dump == */* ]]; then
	if [[ ! -f $dump || ! -x $dump ]]; then
		echo "$0: JITMAP_DUMP '$dump' is not an executable file" >&2
		exit 2
	fi
	dump=$(cd "$(dirname "$dump")" && pwd -P)/$(basename "$dump")
elif ! command -v "$dump" >/dev/null 2>&1; then
	echo "$0: JITMAP_DUMP '$dump' not found on PATH" >&2
	exit 2
fi
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

passed=0
failed=0
skipped=0

pass() { passed=$((passed + 1)); echo "PASS $1"; }
skip() { skipped=$((skipped + 1)); echo "SKIP $1 ($2)"; }
fail() {
	failed=$((failed + 1))
	echo "FAIL $1 ($2)"
	if [[ -n ${3:-} && -s $3 ]]; then
		sed -e 's/^/    /' "$3" | head -n 40
	fi
}

# py_check NAME FILE...: the Python check on standard input, over FILE...: PASS NAME, or FAIL
# NAME with what it printed (its sys.exit message).
py_check() {
	local name=$1 why
	shift
	if why=$(python3 - "$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "$why"
	fi
}

# readobj_body LLC OBJ OUT: llvm-readobj's text from the version line on. Fails if
# llvm-readobj fails or prints no stackmap.
readobj_body() {
	local raw=$3.raw
	"llvm-readobj-$1" --stackmap "$2" >"$raw" 2>"$3.err" || return 1
	sed -n '/^LLVM StackMap Version:/,$p' "$raw" >"$3"
	[[ -s $3 ]]
}

# compare NAME EXPECTED ACTUAL LLC: diff -u on mismatch.
compare() {
	if cmp -s "$2" "$3"; then
		pass "$1"
	else
		failed=$((failed + 1))
		echo "FAIL $1 (jitmap-dump differs from llvm-readobj-$4)"
		diff -u --label "llvm-readobj-$4 --stackmap" --label "jitmap-dump --format=llvm-readobj" \
			"$2" "$3" || true
	fi
}

# -- Single objects from the manifest --

while read -r name llc triple irfile flags; do
	[[ -z ${name:-} || $name == \#* ]] && continue
	if ! command -v "llc-$llc" >/dev/null 2>&1; then
		skip "$name" "llc-$llc not found"
		continue
	fi
	if ! command -v "llvm-readobj-$llc" >/dev/null 2>&1; then
		skip "$name" "llvm-readobj-$llc not found"
		continue
	fi
	obj=$outdir/$name.o
	# $flags is a space-separated list of llc options by design.
	# shellcheck disable=SC2086
	if ! "llc-$llc" -filetype=obj -mtriple="$triple" ${flags:-} "$fixtures/$irfile" \
		-o "$obj" 2>"$outdir/$name.llc.err"; then
		fail "$name" "llc-$llc failed" "$outdir/$name.llc.err"
		continue
	fi
	if ! readobj_body "$llc" "$obj" "$outdir/$name.readobj.txt"; then
		fail "$name" "llvm-readobj-$llc printed no stackmap" "$outdir/$name.readobj.txt.err"
		continue
	fi
	rc=0
	"$dump" --format=llvm-readobj "$obj" >"$outdir/$name.dump.txt" 2>"$outdir/$name.dump.err" || rc=$?
	if [[ $rc -ne 0 ]]; then
		fail "$name" "jitmap-dump exited with status $rc" "$outdir/$name.dump.err"
		continue
	fi
	compare "$name" "$outdir/$name.readobj.txt" "$outdir/$name.dump.txt" "$llc"
done <"$manifest"

# -- Two blobs in one linked executable --

two_blobs() {
	local name=two_blobs llc=""
	local v
	for v in 14 19; do
		if command -v "llc-$v" >/dev/null 2>&1 && command -v "llvm-readobj-$v" >/dev/null 2>&1; then
			llc=$v
			break
		fi
	done
	if [[ -z $llc ]]; then
		skip "$name" "no llc-14 or llc-19"
		return
	fi
	if ! command -v gcc >/dev/null 2>&1; then
		skip "$name" "gcc not found"
		return
	fi
	local a=$outdir/two_blobs_a.o b=$outdir/two_blobs_b.o exe=$outdir/two_blobs.exe
	local ir
	for ir in stackmap_consts:"$a" patchpoint:"$b"; do
		if ! "llc-$llc" -O2 -filetype=obj -mtriple=x86_64-unknown-linux-gnu \
			"$fixtures/ir/${ir%%:*}.ll" -o "${ir#*:}" 2>"$outdir/$name.llc.err"; then
			fail "$name" "llc-$llc failed on ${ir%%:*}.ll" "$outdir/$name.llc.err"
			return
		fi
	done
	if ! gcc -no-pie -o "$exe" "$fixtures/c/two_blobs_main.c" "$a" "$b" 2>"$outdir/$name.gcc.err"; then
		fail "$name" "gcc -no-pie failed" "$outdir/$name.gcc.err"
		return
	fi
	if ! readobj_body "$llc" "$exe" "$outdir/$name.readobj.txt"; then
		fail "$name" "llvm-readobj-$llc printed no stackmap" "$outdir/$name.readobj.txt.err"
		return
	fi
	local out=$outdir/$name.dump.txt rc=0
	"$dump" --format=llvm-readobj "$exe" >"$out" 2>"$outdir/$name.dump.err" || rc=$?
	if [[ $rc -ne 0 ]]; then
		fail "$name" "jitmap-dump exited with status $rc" "$outdir/$name.dump.err"
		return
	fi
	local n
	n=$(grep -c -x 'LLVM StackMap Version: 3' "$out" || true)
	if [[ $n != 2 ]]; then
		fail "$name" "jitmap-dump printed $n 'LLVM StackMap Version: 3' lines, want 2" "$out"
		return
	fi
	# First blob: from the first version line up to (not including) the second.
	awk '/^LLVM StackMap Version:/ { n++ } n == 1' "$out" >"$outdir/$name.dump.blob1.txt"
	compare "$name" "$outdir/$name.readobj.txt" "$outdir/$name.dump.blob1.txt" "$llc"
}
two_blobs

# -- Relocated Instruction Offsets (RISC-V ADD32/SUB32 pairs) --
#
# llvm-readobj prints the stored 0 (checked above with the rest); jitmap-dump's JSON must give
# each record the offset the pair resolves to: the ADD32 symbol's value minus the SUB32 one's
# (plus addends), from llvm-readelf's own reading of the relocations.
resolved_offsets() {
	local obj name seen=0
	for obj in "$outdir"/sm_branch*_riscv64_19.o; do
		[[ -f $obj ]] || continue
		name=resolved_$(basename "$obj" .o)
		seen=1
		if ! llvm-readelf-19 -r "$obj" >"$outdir/$name.relocs" 2>&1 ||
			! "$dump" --format=json "$obj" >"$outdir/$name.json" 2>"$outdir/$name.err"; then
			fail "$name" "llvm-readelf-19 or jitmap-dump failed" "$outdir/$name.err"
			continue
		fi
		if ! python3 "$here/../lib/jsoncontract.py" jitmap-dump "$outdir/$name.json" 2>"$outdir/$name.err"; then
			fail "$name" "jitmap-dump --format=json breaks its schema" "$outdir/$name.err"
			continue
		fi
		py_check "$name" "$outdir/$name.relocs" "$outdir/$name.json" <<'PY'
import json, re, sys
relocs, dump = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
section = relocs.split(".rela.llvm_stackmaps", 1)[1].split("Relocation section", 1)[0]
want = {}
for off, kind, value, addend in re.findall(
        r"^([0-9a-f]+) +[0-9a-f]+ +R_RISCV_(ADD32|SUB32) +([0-9a-f]+) +\S+ *\+ *(-?\w+)", section, re.M):
    v = int(value, 16) + int(addend, 0)
    want[int(off, 16)] = want.get(int(off, 16), 0) + (v if kind == "ADD32" else -v)
if not want:
    sys.exit("no ADD32/SUB32 pair in .rela.llvm_stackmaps")
got = {r["section_offset"] + 8: r["offset"] for b in dump["blobs"] for r in b["records"]}
for field, off in want.items():
    if got.get(field) != off % (1 << 32):
        sys.exit("the record at .llvm_stackmaps+0x%x has offset %s, want %d" % (field - 8, got.get(field), off))
PY
	done
	[[ $seen == 1 ]] || skip resolved_offsets "llc-19 not found"
}
resolved_offsets

# -- Mach-O and COFF: relocated addresses and names --
#
# llvm-readobj prints the stored addresses (0 in objects; checked above with the rest);
# jitmap-dump's JSON must give each function the symbol its relocation names (Mach-O's leading
# underscore dropped) at that symbol's address, as llvm-objdump -r and llvm-nm read them.
object_symbols() {
	local obj name llc seen=0
	for obj in "$outdir"/*_macho_*.o "$outdir"/*_coff_*.o; do
		[[ -f $obj ]] || continue
		name=symbols_$(basename "$obj" .o)
		llc=${name##*_}
		seen=1
		if ! "llvm-objdump-$llc" -r "$obj" >"$outdir/$name.relocs" 2>&1 ||
			! "llvm-nm-$llc" "$obj" >"$outdir/$name.nm" 2>&1 ||
			! "$dump" --format=json "$obj" >"$outdir/$name.json" 2>"$outdir/$name.err"; then
			fail "$name" "llvm-objdump, llvm-nm or jitmap-dump failed" "$outdir/$name.err"
			continue
		fi
		if ! python3 "$here/../lib/jsoncontract.py" jitmap-dump "$outdir/$name.json" 2>"$outdir/$name.err"; then
			fail "$name" "jitmap-dump --format=json breaks its schema" "$outdir/$name.err"
			continue
		fi
		py_check "$name" "$outdir/$name.relocs" "$outdir/$name.nm" "$outdir/$name.json" <<'PY'
import json, re, sys
relocs, nm, dump = open(sys.argv[1]).read(), open(sys.argv[2]).read(), json.load(open(sys.argv[3]))
section = re.split(r"RELOCATION RECORDS FOR \[(?:__llvm_stackmaps|\.llvm_stackmaps)\]:", relocs)
if len(section) < 2:
    sys.exit("no relocations of the stackmap section")
fields = re.findall(r"^([0-9a-f]+) +\S+ +(\S+)$", section[1].split("RELOCATION RECORDS", 1)[0], re.M)
address = {n: int(a, 16) for a, n in re.findall(r"^([0-9a-f]+) +[A-Za-z] +(\S+)$", nm, re.M)}
functions = dump["blobs"][0]["functions"]
macho = "Mach-O" in dump["kind"]
if len(fields) != len(functions):
    sys.exit("%d relocations for %d functions" % (len(fields), len(functions)))
for off, sym in fields:
    i = (int(off, 16) - 16) // 24  # version 3: a 16-byte header, 24 bytes a function
    want = sym[1:] if macho and sym.startswith("_") else sym
    f = functions[i]
    if f["name"] != want or int(f["address"], 16) != address[sym]:
        sys.exit("function %d is %s at %s, want %s at 0x%x" % (i, f["name"], f["address"], want, address[sym]))
PY
	done
	[[ $seen == 1 ]] || skip object_symbols "no Mach-O or COFF object was compiled"
}
object_symbols

# -- A linked Mach-O image (ld64.lld): no relocations, names by address from the symbol table --
linked_macho() {
	local obj name ld=ld64.lld-14 seen=0
	command -v "$ld" >/dev/null 2>&1 || ld=ld64.lld
	if ! command -v "$ld" >/dev/null 2>&1 || ! command -v llvm-nm-19 >/dev/null 2>&1; then
		skip linked_macho "ld64.lld or llvm-nm-19 not found"
		return
	fi
	for obj in "$outdir"/sm_frames_macho_*_19.o; do
		[[ -f $obj ]] || continue
		name=linked_$(basename "$obj" .o)
		seen=1
		local arch=x86_64 img=$outdir/$name.dylib
		[[ $obj == *aarch64* ]] && arch=arm64
		if ! "$ld" -arch "$arch" -platform_version macos 11.0 11.0 -dylib -undefined dynamic_lookup \
			"$obj" -o "$img" 2>"$outdir/$name.err" ||
			! readobj_body 19 "$img" "$outdir/$name.readobj.txt" ||
			! "$dump" --format=llvm-readobj "$img" >"$outdir/$name.dump.txt" 2>>"$outdir/$name.err" ||
			! "$dump" --format=json "$img" >"$outdir/$name.json" 2>>"$outdir/$name.err" ||
			! llvm-nm-19 "$img" >"$outdir/$name.nm" 2>>"$outdir/$name.err"; then
			fail "$name" "ld64.lld, llvm-readobj, jitmap-dump or llvm-nm failed" "$outdir/$name.err"
			continue
		fi
		if ! cmp -s "$outdir/$name.readobj.txt" "$outdir/$name.dump.txt"; then
			fail "$name" "jitmap-dump differs from llvm-readobj-19"
			continue
		fi
		py_check "$name" "$outdir/$name.nm" "$outdir/$name.json" <<'PY'
import json, re, sys
nm, dump = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
text = {int(a, 16): n[1:] for a, n in re.findall(r"^([0-9a-f]+) +[Tt] +(_\S+)$", nm, re.M)}
functions = dump["blobs"][0]["functions"]
if not functions:
    sys.exit("no functions")
for f in functions:
    a = int(f["address"], 16)
    if a == 0 or f["name"] != text.get(a):
        sys.exit("function at %s is named %s, llvm-nm says %s" % (f["address"], f["name"], text.get(a)))
PY
	done
	[[ $seen == 1 ]] || skip linked_macho "no Mach-O object from llc-19"
}
linked_macho

echo "differential: $passed passed, $failed failed, $skipped skipped"
[[ $failed -eq 0 ]]

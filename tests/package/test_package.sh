#!/usr/bin/env bash
# tests/package/test_package.sh: the Debian packages as a user gets them. Builds them
# (scripts/package.sh), installs them with apt-get, builds the producer example against the
# installed libjitmap-producer (pkg-config), and runs it under GDB with no `source` line: GDB's
# auto-load must bring jitmap (`info stackmap` answers with the record's value), and with
# auto-load off it must not (the negative control); GDB's paths after a crash (run, core,
# attach, compressed core) with both installed scripts print only GDB's and jitmap's own lines
# (test_installed_gdb.py). Then purges the packages and checks that
# every file they installed is gone. It changes the machine (it installs into /usr): scripts/test.sh
# runs it as a phase of its own, on CI's fresh machine; it needs root or sudo, and exits 77
# (skipped) without them.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
SUDO=
if [ "$(id -u)" -ne 0 ]; then
  sudo -n true 2>/dev/null || { echo "package: skipped (needs root or sudo)"; exit 77; }
  SUDO="sudo -n"
fi
work=$(mktemp -d)
pkgs=(jitmap libjitmap-dev libjitmap1 libjitmap-producer0)
cleanup() {
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${pkgs[@]}" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL: $1"; }
for p in "${pkgs[@]}"; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    echo "package: skipped ($p is installed already: this test would remove it)"
    exit 77
  fi
done

"$top/scripts/package.sh" "$work/debs" >"$work/package.out" 2>&1 ||
  { cat "$work/package.out"; echo "package: FAIL: scripts/package.sh"; exit 1; }
n=$(ls "$work"/debs/*.deb 2>/dev/null | wc -l)
[ "$n" -eq 4 ] && ok "four packages built" || bad "four packages built (found $n)"
# Where nothing is wrong, package.sh lists the packages and nothing else (no CPack progress,
# no developer warning about the GDB plugin, which has no soname).
extra=$(grep -v "^$work/debs/[^/]*\.deb\$" "$work/package.out")
[ -z "$extra" ] && ok "scripts/package.sh prints the packages only" ||
  bad "scripts/package.sh prints the packages only; also:
$extra"
# The public libraries' shlibs (dpkg-shlibdeps names their packages from them), and no other.
for want in "libjitmap1:libjitmap 1 libjitmap1" "libjitmap-producer0:libjitmap-producer 0 libjitmap-producer0" \
    "jitmap:" "libjitmap-dev:"; do
  p=${want%%:*} line=${want#*:}
  got=$(dpkg-deb -I "$work"/debs/"${p}"_*.deb shlibs 2>/dev/null)
  if [[ -z $line && -z $got || -n $line && $got =~ ^"$line (= "[0-9.]+")"$ ]]; then
    ok "$p's shlibs: ${got:-none}"
  else
    bad "$p's shlibs: '${got}', not '${line:-none}'"
  fi
done
if $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "$work"/debs/*.deb >"$work/apt.log" 2>&1; then
  ok "apt-get install ./*.deb"
else
  bad "apt-get install ./*.deb: $(tail -5 "$work/apt.log")"
  exit 1
fi
dpkg -L "${pkgs[@]}" | sort -u >"$work/files"

# The producer example against the installed library, as a JIT author builds it.
cc -O1 -g -rdynamic -o "$work/minimal" "$top/examples/producer-minimal/minimal.c" \
  $(pkg-config --cflags --libs jitmap-producer) && ok "minimal.c built with pkg-config jitmap-producer" ||
  bad "minimal.c built with pkg-config jitmap-producer"
run_gdb() { # EXTRA-ARGS...
  gdb -q -batch -nx -iex 'set debuginfod enabled off' "$@" -ex 'break runtime_safepoint' -ex run \
    -ex bt -ex 'frame 1' -ex 'info stackmap' --args "$work/minimal" 2>&1
}
out=$(run_gdb)
echo "$out" >"$work/gdb.out"
if grep -q '^record 1 at 0x[0-9a-f]* (jit_answer+' <<<"$out" &&
  grep -qE '^ +#0 +register +rbx +size 8 +42$' <<<"$out"; then
  ok "GDB with no source line: info stackmap shows rbx = 42 (auto-loaded)"
else
  bad "GDB with no source line: info stackmap shows rbx = 42:
$out"
fi
# jitmap unwinds the JIT frame (push %rbx, no CFI; its record is at the call's return
# address, before the pop and ret of its epilogue) back to main; GDB alone cannot.
if grep -qE '^#2 +0x[0-9a-f]+ in main \(\)' <<<"$out" && ! grep -q '?? ()' <<<"$out"; then
  ok "GDB with jitmap auto-loaded: bt goes from jit_answer to main"
else
  bad "GDB with jitmap auto-loaded: bt goes from jit_answer to main:
$out"
fi
# The installed schema holds the installed GDB's JSON (docs/json.md, "Schemas").
gdb -q -batch -nx -iex 'set debuginfod enabled off' -ex 'break runtime_safepoint' -ex run \
  -ex 'info stackmap -json 1' --args "$work/minimal" 2>&1 | grep '^{' >"$work/frame.json"
schemas=/usr/share/jitmap/schema
if [ -s "$work/frame.json" ] && /usr/bin/python3 -m jsonschema --base-uri "file://$schemas/" \
  -i "$work/frame.json" "$schemas/frame.schema.json"; then
  ok "info stackmap -json keeps $schemas/frame.schema.json"
else
  bad "info stackmap -json keeps $schemas/frame.schema.json: $(cat "$work/frame.json")"
fi
out=$(run_gdb -iex 'set auto-load python-scripts off')
grep -q '?? ()' <<<"$out" && ok "negative control: GDB alone shows a '??' frame above jit_answer" ||
  bad "negative control: GDB alone shows a '??' frame above jit_answer:
$out"
if grep -q 'Undefined info command: "stackmap' <<<"$out"; then
  ok "negative control: with auto-load off, GDB has no info stackmap"
else
  bad "negative control: with auto-load off, GDB has no info stackmap:
$out"
fi
# The paths a user takes after a crash, with both scripts the packages install (GDB's system
# gdbinit directory, so -nh, and libjitmap-producer's auto-load script): a run, a core, an
# attach, a compressed core opened with `jitmap core`; each prints nothing but GDB's and
# jitmap's own lines, and shows the record (test_installed_gdb.py says how).
out=$(/usr/bin/python3 "$top/tests/package/test_installed_gdb.py" "$work" "$work/minimal" 2>&1)
rc=$?
echo "$out"
pass=$((pass + $(grep -c '^ok: ' <<<"$out")))
fail=$((fail + $(grep -c '^FAIL: ' <<<"$out")))
[ $rc -eq 0 ] || grep -q '^FAIL: ' <<<"$out" || bad "tests/package/test_installed_gdb.py exits $rc"
# Any program with JIT code, with no source line (GDB's system gdbinit directory; -nh skips
# only ~/.gdbinit): LLVM's lli-14 stopped in usleep under its JIT code.
[ -f /etc/gdb/gdbinit.d/jitmap.py ] && ok "/etc/gdb/gdbinit.d/jitmap.py installed" ||
  bad "/etc/gdb/gdbinit.d/jitmap.py installed"
if command -v lli-14 >/dev/null; then
  out=$(gdb -q -batch -nh -iex 'set debuginfod enabled off' -iex 'set breakpoint pending on' \
    -ex 'break usleep' -ex run -ex 'jitmap status' -ex kill \
    --args lli-14 -jit-kind=mcjit "$top/tests/gdb/lli_registers.ll" 2>&1)
  grep -q '^libjitmap: /usr/lib/' <<<"$out" && grep -q '^JIT descriptor at' <<<"$out" &&
    ok "GDB on lli-14 with no source line: jitmap on by itself" ||
    bad "GDB on lli-14 with no source line: jitmap on by itself:
$out"
fi
# A program with no JIT code debugs as with GDB alone, line by line (but for its PID).
printf '#include <stdio.h>\nstatic int twice(int x) { return 2 * x; }\nint main(int c, char **v) { int n = twice(c + 20); printf("n=%%d\\n", n); return n != 42; }\n' \
  >"$work/plain.c"
cc -g -O0 -o "$work/plain" "$work/plain.c"
plain_session() { # -nh (the system gdbinit files) or -nx (none)
  gdb -q -batch "$1" -iex 'set debuginfod enabled off' -ex 'break twice' -ex run -ex bt \
    -ex finish -ex 'info locals' -ex 'info sharedlibrary' -ex continue "$work/plain" 2>&1 |
    sed -E 's/process [0-9]+/process PID/'
}
if diff <(plain_session -nx) <(plain_session -nh) >"$work/plain.diff" &&
  grep -q 'exited normally' <(plain_session -nh); then
  ok "a program with no JIT code: the same GDB session with the packages as without"
else
  bad "a program with no JIT code: the same GDB session with the packages as without:
$(cat "$work/plain.diff")"
fi
man -w jitmap-stack >/dev/null 2>&1 && man -w 7 jitmap >/dev/null 2>&1 && ok "man pages found by man" ||
  bad "man pages found by man"

$SUDO env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${pkgs[@]}" >/dev/null 2>&1
left=()
while read -r f; do
  [ -d "$f" ] && continue
  [ -e "$f" ] || [ -L "$f" ] && left+=("$f")
done <"$work/files"
[ ${#left[@]} -eq 0 ] && ok "apt-get purge removes every file" || bad "files left after purge: ${left[*]}"

echo "package: $pass passed, $fail failed"
[ $fail -eq 0 ]

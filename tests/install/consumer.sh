#!/usr/bin/env bash
# consumer.sh BUILD_DIR: install the build into a temporary prefix, then build and run a tiny
# program against it three ways: find_package(jitmap) with jitmap::jitmap and
# jitmap::jitmap_static, and pkg-config; and a tiny JIT against libjitmap-producer alone
# (jitmap::producer, jitmap::producer_static, pkg-config jitmap-producer), which must need
# neither libjitmap nor libelf. The installed package must hold no path of the build host (it
# is copied to other machines) and find its own dependencies.
set -euo pipefail
build=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/p" >/dev/null
if grep -rn "$build\|$(cd "$(dirname "$0")/../.." && pwd)\|/usr/lib/" "$tmp/p/lib/cmake/jitmap" \
	"$tmp/p/lib/pkgconfig"; then
	echo "install: FAIL: the installed package names paths of the build host" >&2
	exit 1
fi
mkdir -p "$tmp/src"
cat >"$tmp/src/c.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <jitmap/jitmap.h>
#include <jitmap/process.h>
int main(void)
{
	/* A call into the library, and one of the checks bindings make. */
	printf("%s\n", jitmap_version());
	return jitmap_sizeof("jitmap_record") == sizeof(jitmap_record) &&
	       !strcmp(jitmap_arch_name(JITMAP_ARCH_S390X), "s390x") ? 0 : 1;
}
C
cat >"$tmp/src/CMakeLists.txt" <<'C'
cmake_minimum_required(VERSION 3.18)
project(consumer C)
find_package(jitmap REQUIRED)
add_executable(shared c.c)
target_link_libraries(shared jitmap::jitmap)
add_executable(static c.c)
target_link_libraries(static jitmap::jitmap_static)
C
cmake -S "$tmp/src" -B "$tmp/b" -DCMAKE_PREFIX_PATH="$tmp/p" >/dev/null
cmake --build "$tmp/b" >/dev/null
LD_LIBRARY_PATH="$tmp/p/lib" "$tmp/b/shared" >/dev/null
"$tmp/b/static" >/dev/null
PKG_CONFIG_PATH="$tmp/p/lib/pkgconfig" cc -o "$tmp/pc" "$tmp/src/c.c" \
	$(PKG_CONFIG_PATH="$tmp/p/lib/pkgconfig" pkg-config --cflags --libs jitmap)
LD_LIBRARY_PATH="$tmp/p/lib" "$tmp/pc" >/dev/null

# A JIT: the producer alone.
cat >"$tmp/src/jit.c" <<'C'
#include <jitmap/producer.h>
int main(void)
{
	static const unsigned char code[16];
	const jitmap_jit_function f = {"f", (uint64_t)(uintptr_t)code, sizeof(code)};
	const jitmap_jit_region r = {(uint64_t)(uintptr_t)code, sizeof(code), &f, 1, NULL, 0,
				     NULL, 0};
	jitmap_jit_entry *e = jitmap_jit_register(&r, NULL);
	jitmap_jit_unregister(e);
	return e ? 0 : 1;
}
C
cat >"$tmp/src/CMakeLists.txt" <<'C'
cmake_minimum_required(VERSION 3.18)
project(jit C)
find_package(jitmap REQUIRED)
add_executable(jit jit.c)
target_link_libraries(jit jitmap::producer)
add_executable(jit_static jit.c)
target_link_libraries(jit_static jitmap::producer_static)
C
cmake -S "$tmp/src" -B "$tmp/j" -DCMAKE_PREFIX_PATH="$tmp/p" >/dev/null
cmake --build "$tmp/j" >/dev/null
LD_LIBRARY_PATH="$tmp/p/lib" "$tmp/j/jit"
"$tmp/j/jit_static"
cc -o "$tmp/pj" "$tmp/src/jit.c" \
	$(PKG_CONFIG_PATH="$tmp/p/lib/pkgconfig" pkg-config --cflags --libs jitmap-producer)
LD_LIBRARY_PATH="$tmp/p/lib" "$tmp/pj"
if LD_LIBRARY_PATH="$tmp/p/lib" ldd "$tmp/pj" | grep -E "libjitmap\.so|libelf|libdwarf"; then
	echo "install: FAIL: a JIT linked with jitmap-producer needs the reader's libraries" >&2
	exit 1
fi
# The manuals: man pages that man renders without a warning, the docs, bash completions
# that load, and no installed text that sends the reader to a file outside the package.
tools=(jitmap-dump)
[[ -x $tmp/p/bin/jitmap-stack ]] && tools+=(jitmap-stack)  # built where libdw is
pages=(man7/jitmap.7)
for t in "${tools[@]}"; do pages+=("man1/$t.1"); done
for page in "${pages[@]}"; do
	f=$tmp/p/share/man/$page
	[[ -f $f ]] || { echo "install: FAIL: $page is not installed" >&2; exit 1; }
	if command -v man >/dev/null; then
		warn=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null || true)
		[[ -z $warn ]] || { echo "install: FAIL: man warns on $page: $warn" >&2; exit 1; }
	fi
done
for doc in README.md LICENSE json.md commands.md jitmap-stack.md jitmap-dump.md stackmap-format.md; do
	[[ -f $tmp/p/share/doc/jitmap/$doc ]] ||
		{ echo "install: FAIL: share/doc/jitmap/$doc is not installed" >&2; exit 1; }
done
for c in "${tools[@]}"; do
	f=$tmp/p/share/bash-completion/completions/$c
	[[ -f $f ]] && bash -c "complete() { :; }; source '$f'" ||
		{ echo "install: FAIL: bash completion for $c missing or broken" >&2; exit 1; }
done
# The JSON Schemas, installed, hold a real output by themselves (their references resolve
# in the installed directory) and refuse a damaged one, with Debian's jsonschema command.
schemas=$tmp/p/share/jitmap/schema
for s in common frame stackmaps gc-roots verify bt jitmap-stack jitmap-dump; do
	[[ -f $schemas/$s.schema.json ]] ||
		{ echo "install: FAIL: share/jitmap/schema/$s.schema.json is not installed" >&2; exit 1; }
done
if [[ -f $build/demo.o ]]; then
	/usr/bin/python3 -c 'import jsonschema' 2>/dev/null ||
		{ echo "install: FAIL: python3-jsonschema is missing (scripts/setup.sh installs it)" >&2; exit 1; }
	LD_LIBRARY_PATH="$tmp/p/lib" "$tmp/p/bin/jitmap-dump" --format=json "$build/demo.o" >"$tmp/dump.json"
	validate() {
		/usr/bin/python3 -m jsonschema --base-uri "file://$schemas/" -i "$1" \
			"$schemas/jitmap-dump.schema.json" >/dev/null 2>&1
	}
	validate "$tmp/dump.json" ||
		{ echo "install: FAIL: jitmap-dump's JSON breaks the installed schema" >&2; exit 1; }
	sed 's/"byte_order": "little"/"byte_order": "middle"/' "$tmp/dump.json" >"$tmp/bad.json"
	if cmp -s "$tmp/dump.json" "$tmp/bad.json" || validate "$tmp/bad.json"; then
		echo "install: FAIL: the installed schema accepts a byte order of \"middle\"" >&2
		exit 1
	fi
fi
if grep -rnE 'DESIGN\.md|shared/reference|\.\./shared' "$tmp/p/share"; then
	echo "install: FAIL: installed text points outside the package" >&2
	exit 1
fi
echo "install: find_package (shared, static) and pkg-config consumers of jitmap and of" \
	"jitmap-producer built and ran; man pages, docs and completions installed"

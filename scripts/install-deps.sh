#!/usr/bin/env bash
# Installs what FocusGate needs from the system and is not there yet.
# As root on Debian/Ubuntu it uses apt-get; otherwise it says exactly what to install.
# With --test it also installs what only the tests use: promtool (Debian's prometheus package)
# checks the alert rules, docker-compose validates deploy/compose.yaml, and schemathesis (PyPI,
# installed with pip) sends generated requests to a real `focusgate serve`.
set -euo pipefail

missing=()
command -v swift >/dev/null 2>&1 || {
    echo "error: Swift 6.1 or newer is required (https://www.swift.org/install/linux/)." >&2
    exit 1
}
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
pkg-config --exists rdkafka 2>/dev/null || missing+=(librdkafka-dev)
command -v kcat >/dev/null 2>&1 || missing+=(kcat)
# PostgreSQL server binaries: the store tests start a real server.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
if [ "${1:-}" = "--test" ]; then
    command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
    { docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null 2>&1; } || missing+=(docker-compose)
fi

if [ "${1:-}" = "--test" ] && ! command -v schemathesis >/dev/null 2>&1; then
    command -v python3 >/dev/null 2>&1 || missing+=(python3-pip)
    if command -v python3 >/dev/null 2>&1; then
        echo "installing: schemathesis (PyPI)"
        python3 -m pip install --quiet --disable-pip-version-check 'schemathesis==4.32.5' \
            || { echo "error: pip could not install schemathesis: python3 -m pip install 'schemathesis==4.32.5'" >&2; exit 1; }
        command -v schemathesis >/dev/null 2>&1 \
            || { echo "error: schemathesis is installed but not on the PATH (pip's scripts folder)" >&2; exit 1; }
    fi
fi

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    echo "error: missing system packages: ${missing[*]}" >&2
    echo "  Debian/Ubuntu: sudo apt-get install -y ${missing[*]}" >&2
    echo "  (librdkafka-dev: librdkafka 2.x headers and pkg-config 'rdkafka'; kcat: the walkthrough;" >&2
    echo "   postgresql: the store tests start a throwaway server on 127.0.0.1;" >&2
    echo "   prometheus: promtool checks the alert rules; docker-compose: validates deploy/compose.yaml)" >&2
    exit 1
fi

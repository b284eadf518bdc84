#!/usr/bin/env bash
# make test-compat: the whole suite again, built against librdkafka 2.8 (from Debian 13's source
# package) and run with its mock cluster, and with Tansu, an independent Kafka broker, for the
# gateway's end-to-end scenarios and its exactly-once audits (those only run where Tansu is
# given). Builds in .build-compat; the output is kept in .build-compat/test-output.log.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
scripts/install-deps.sh --compat
{ read -r librdkafka; read -r tansu; } < <(scripts/compat-deps.sh)

export PKG_CONFIG_PATH="$librdkafka/lib/pkgconfig"
"${SWIFT:-swift}" build --build-tests --scratch-path .build-compat
# Both librdkafkas are librdkafka.so.1: the loader must find 2.8 first, in every child process too.
export LD_LIBRARY_PATH="$librdkafka/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FOCUSGATE_TEST_TANSU="$tansu"
TEST_LOG="$root/.build-compat/test-output.log" scripts/test.sh --scratch-path .build-compat

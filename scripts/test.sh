#!/usr/bin/env bash
# Runs every test (already built) and keeps the whole output in .build/test-output.log.
#   scripts/test.sh [swift test arguments]      (make test; TEST_LOG names another log file)
# FOCUSGATE_TEST_LIBRDKAFKA tells the suite which librdkafka it must find loaded: the version
# pkg-config gives (the one it was built against), since any librdkafka.so.1 would load.
# A run that fails ends with its failures repeated, so the last lines of a long CI log name them.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
log="${TEST_LOG:-$root/.build/test-output.log}"
mkdir -p "$(dirname "$log")"
FOCUSGATE_TEST_LIBRDKAFKA="${FOCUSGATE_TEST_LIBRDKAFKA:-$(pkg-config --modversion rdkafka)}"
export FOCUSGATE_TEST_LIBRDKAFKA
# What the tests write goes in their processes' scratch directories, removed at exit: anything
# named focusgate-* that the run adds to the temporary directory is a leak, and fails the run.
tmp="${TMPDIR:-/tmp}"
leftovers() { find "$tmp" -maxdepth 1 -name 'focusgate-*' 2>/dev/null | sort; }
before="$(leftovers)"
"${SWIFT:-swift}" test --package-path "$root" --skip-build "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# Tests that block every thread of Swift's cooperative pool (named `…WhilePoolBlocked`, skipped
# above) run in a process of their own: beside the others they hold up every test's `await` for
# as long as they block. Not when the arguments choose tests themselves.
case " $* " in
*" --filter "* | *" --skip "*) ;;
*)
    FOCUSGATE_TEST_POOL_BLOCKING=1 "${SWIFT:-swift}" test --package-path "$root" --skip-build "$@" \
        --filter 'WhilePoolBlocked' 2>&1 | tee -a "$log"
    blocking=${PIPESTATUS[0]}
    [ "$status" -ne 0 ] || status=$blocking
    ;;
esac
# A process's scratch directory (focusgate-run-<pid>-…) goes at its exit, but another thread of
# the process may still be closing a file in it then (ScratchDirectory.remove()): those of
# processes that are gone are removed here; anything else is reported.
for directory in "$tmp"/focusgate-run-*; do
    [ -d "$directory" ] || continue
    pid="${directory##*/focusgate-run-}"
    kill -0 "${pid%%-*}" 2>/dev/null || rm -rf "$directory"
done
left="$(comm -13 <(echo "$before") <(leftovers) | grep -v '^$')"
if [ -n "$left" ]; then
    echo "error: the tests left these in $tmp (a test or helper that does not use ScratchDirectory):" | tee -a "$log"
    echo "$left" | tee -a "$log"
    [ "$status" -ne 0 ] || status=1
fi
if [ "$status" -ne 0 ]; then
    echo
    echo "== failed tests and issues (whole output: $log) =="
    grep -E '✘ Test |recorded an issue|^error:|Fatal error|Signal|crashed' "$log" | grep -v 'known issue' | cut -c1-600
fi
exit "$status"

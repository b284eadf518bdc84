#!/usr/bin/env bash
# Builds one libFuzzer binary (Fuzz/*.swift compiled with the FocusGateCore sources, with
# -sanitize=fuzzer,address: one optimised compile of the core instead of one per target) and runs
# each of its targets (FOCUSGATE_FUZZ_TARGET) on its corpus in Tests/FuzzCorpus.
#   scripts/fuzz.sh [seconds per target]   open-ended fuzzing (make fuzz: 60 s), new inputs kept in
#                                          .build-fuzz/corpus-<target>
#   scripts/fuzz.sh --replay               deterministic (make test): every committed input once,
#                                          then a fixed number of mutations from a fixed seed, so
#                                          that a run fails only for what the change under test did
# A crash stops the run with the crashing input saved in .build-fuzz/; fix the bug, then add the
# input to the target's corpus so that every later run replays it.
set -euo pipefail
replay=false
seconds=60
if [ "${1:-}" = "--replay" ]; then replay=true; elif [ -n "${1:-}" ]; then seconds="$1"; fi
# The fixed-seed run of --replay: mutations per target.
REPLAY_RUNS="${REPLAY_RUNS:-20000}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/.build-fuzz"
mkdir -p "$out"
core_sources=$(find "$root/Sources/FocusGateCore" -name '*.swift' | sort)
flags=(-O -swift-version 6 -parse-as-library -sanitize=fuzzer,address -module-name FocusGateCore
       -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault)

binary="$out/FocusGateFuzzer"
fuzz_sources=$(find "$root/Fuzz" -name '*.swift' | sort)
# Rebuilt when a source is newer than the binary. No reader that stops early (`| head`): under
# pipefail the writer it leaves behind dies of SIGPIPE whenever its output is longer than one
# write, and the script with it (exit 141; a clean clone at a long path failed so).
stale() { [ ! -x "$binary" ] || [ -n "$(find "$root/Sources/FocusGateCore" "$root/Fuzz" -name '*.swift' -newer "$binary")" ]; }
if stale; then
    echo "building $(basename "$binary")"
    # shellcheck disable=SC2086
    swiftc "${flags[@]}" -num-threads "$(nproc)" $core_sources $fuzz_sources -o "$binary" \
        2> >(grep -v "Cannot export local symbol" >&2)
fi

for name in event predicate context; do
    corpus="$root/Tests/FuzzCorpus/$name"
    seeds=("$corpus")
    # The event decoder also starts from the bad-input corpus run end to end by the tests.
    if [ "$name" = event ]; then seeds+=("$root/Tests/BadInputCorpus/events"); fi
    if $replay; then
        # A new, empty folder takes the inputs the run finds, so that each run starts alike.
        work="$out/replay-$name"
        rm -rf "$work"
        mkdir -p "$work"
        budget=(-seed=1 -runs="$REPLAY_RUNS")
        # Swift seeds its hashes per process, which moves the paths a run covers: fixed here.
        export SWIFT_DETERMINISTIC_HASHING=1
        echo "fuzzing $name: the committed inputs ($(find "${seeds[@]}" -type f | wc -l)), then $REPLAY_RUNS mutations of seed 1"
    else
        # New inputs go to the scratch corpus; the committed ones are read only.
        work="$out/corpus-$name"
        mkdir -p "$work"
        budget=(-max_total_time="$seconds")
        echo "fuzzing $name for ${seconds}s (seed corpus: $(find "${seeds[@]}" -type f | wc -l) inputs)"
    fi
    (cd "$out" && FOCUSGATE_FUZZ_TARGET="$name" "$binary" "${budget[@]}" -max_len=8192 -timeout=10 -rss_limit_mb=4096 \
        -print_final_stats=1 "$work" "${seeds[@]}" 2>&1 | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY|Fatal error|artifact_prefix|Test unit written)" || true)
    failures=$(find "$out" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \))
    if [ -n "$failures" ]; then
        echo "error: $name found a failing input: $failures" >&2
        exit 1
    fi
done

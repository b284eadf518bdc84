#!/usr/bin/env bash
# Builds one libFuzzer binary (Fuzz/*.swift compiled with the FocusGateCore sources, with
# -sanitize=fuzzer,address: one optimised compile of the core instead of one per target) and runs
# each of its targets (FOCUSGATE_FUZZ_TARGET) for a bounded time on its corpus in Tests/FuzzCorpus.
#   scripts/fuzz.sh [seconds per target]      (make fuzz: 60 s; make test: 10 s)
# A crash stops the run with the crashing input saved in .build-fuzz/; fix the bug, then add the
# input to the target's corpus so that every later run replays it.
set -euo pipefail
seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/.build-fuzz"
mkdir -p "$out"
core_sources=$(find "$root/Sources/FocusGateCore" -name '*.swift' | sort)
flags=(-O -swift-version 6 -parse-as-library -sanitize=fuzzer,address -module-name FocusGateCore
       -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault)

binary="$out/FocusGateFuzzer"
fuzz_sources=$(find "$root/Fuzz" -name '*.swift' | sort)
# shellcheck disable=SC2086
newest=$(ls -t $core_sources $fuzz_sources | head -1)
if [ ! -x "$binary" ] || [ "$newest" -nt "$binary" ]; then
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
    work="$out/corpus-$name"
    mkdir -p "$work"
    echo "fuzzing $name for ${seconds}s (seed corpus: $(find "${seeds[@]}" -type f | wc -l) inputs)"
    # New inputs go to the scratch corpus; the committed ones are read only.
    (cd "$out" && FOCUSGATE_FUZZ_TARGET="$name" "$binary" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=4096 \
        -print_final_stats=1 "$work" "${seeds[@]}" 2>&1 | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY|Fatal error|artifact_prefix|Test unit written)" || true)
    failures=$(find "$out" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | head -3)
    if [ -n "$failures" ]; then
        echo "error: $name found a failing input: $failures" >&2
        exit 1
    fi
done

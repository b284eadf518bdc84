#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/*.swift compiled with the FocusGateCore sources, with
# -sanitize=fuzzer,address) and runs each for a bounded time on its corpus in Tests/FuzzCorpus.
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

for target in event:EventDecoderFuzzer predicate:PredicateFuzzer context:ContextFuzzer; do
    name="${target%%:*}"
    file="${target#*:}"
    binary="$out/$file"
    newest=$(ls -t $core_sources "$root/Fuzz/$file.swift" | head -1)
    if [ ! -x "$binary" ] || [ "$newest" -nt "$binary" ]; then
        echo "building $file"
        # shellcheck disable=SC2086
        swiftc "${flags[@]}" $core_sources "$root/Fuzz/$file.swift" -o "$binary" 2> >(grep -v "Cannot export local symbol" >&2)
    fi
    corpus="$root/Tests/FuzzCorpus/$name"
    seeds=("$corpus")
    # The event decoder also starts from the bad-input corpus run end to end by the tests.
    if [ "$name" = event ]; then seeds+=("$root/Tests/BadInputCorpus/events"); fi
    work="$out/corpus-$name"
    mkdir -p "$work"
    echo "fuzzing $name for ${seconds}s (seed corpus: $(find "${seeds[@]}" -type f | wc -l) inputs)"
    # New inputs go to the scratch corpus; the committed ones are read only.
    (cd "$out" && "$binary" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=4096 \
        -print_final_stats=1 "$work" "${seeds[@]}" 2>&1 | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY|Fatal error|artifact_prefix|Test unit written)" || true)
    failures=$(find "$out" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | head -3)
    if [ -n "$failures" ]; then
        echo "error: $name found a failing input: $failures" >&2
        exit 1
    fi
done

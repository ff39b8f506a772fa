#!/usr/bin/env bash
# Run every fuzz target for a bounded time, minimise its corpus and print one line per target:
#   TARGET execs=N time=Ss crashes=N corpus=FILES/BYTES
#
# Usage: fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]   (default: 60 s, all targets)
# Set NO_BUILD=1 to run the binaries already built (e.g. while editing the crate).
# Share the machine: `nice -n 10 fuzz/run.sh 300`.
# Stable toolchain with `--sanitizer none` (Rust panics, overflows with debug assertions,
# timeouts and OOMs are what we hunt; there is no unsafe code of ours for ASan to check).
# A crash stops libFuzzer; the script saves it under fuzz/artifacts/TARGET/ and restarts the
# target for the remaining time (at most MAX_RESTARTS times), so one bug does not end a round.
set -euo pipefail

cd "$(dirname "$0")"
SECS=${1:-60}
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
    TARGETS=(yaml_load gotmpl kustomize_build patch lint_repo)
fi
SHARED=${GITOPS_LINT_SHARED:-../../shared}
MAX_RESTARTS=${MAX_RESTARTS:-5}
LIBFUZZER_FLAGS=(-timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1)

python3 seed_corpus.py .. "$SHARED"
# Build once; the rounds run the binaries themselves, so build time is not fuzzing time.
[ -n "${NO_BUILD:-}" ] || cargo fuzz build --sanitizer none >/dev/null
BIN=target/$(rustc -vV | sed -n 's/^host: //p')/release

# Sum a libFuzzer final-stats field over all logs given.
stat_sum() {
    local field=$1
    shift
    cat "$@" | sed -n "s/^stat::$field: *\([0-9]*\).*/\1/p" | awk '{s += $1} END {print s + 0}'
}

summary=()
for t in "${TARGETS[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t" logs
    rm -f "logs/$t".*.log
    start=$(date +%s)
    runs=0
    while :; do
        left=$((SECS - ($(date +%s) - start)))
        [ "$left" -ge 5 ] || break
        log="logs/$t.$runs.log"
        if "$BIN/$t" "corpus/$t" \
            -max_total_time="$left" -artifact_prefix="artifacts/$t/" "${LIBFUZZER_FLAGS[@]}" \
            >"$log" 2>&1; then
            runs=$((runs + 1))
            break
        fi
        runs=$((runs + 1))
        grep -h "Test unit written to\|^SUMMARY\|panicked at\|ERROR: libFuzzer" "$log" | head -n 4 >&2 || true
        [ "$runs" -le "$MAX_RESTARTS" ] || break
    done
    elapsed=$(($(date +%s) - start))
    logs=(logs/"$t".*.log)
    execs=$(stat_sum number_of_executed_units "${logs[@]}")
    crashes=$(cat "${logs[@]}" | grep -c "Test unit written to" || true)
    # `cargo fuzz cmin`'s merge, on the binary built above.
    rm -rf "corpus/$t.cmin" && mkdir "corpus/$t.cmin"
    if "$BIN/$t" -merge=1 -artifact_prefix="artifacts/$t/" "corpus/$t.cmin" "corpus/$t" "${LIBFUZZER_FLAGS[@]}" >"logs/$t.cmin" 2>&1; then
        rm -rf "corpus/$t" && mv "corpus/$t.cmin" "corpus/$t"
    else
        rm -rf "corpus/$t.cmin"
        echo "$t: corpus minimisation failed, see fuzz/logs/$t.cmin" >&2
    fi
    files=$(find "corpus/$t" -type f | wc -l)
    bytes=$(du -sb "corpus/$t" | cut -f1)
    line="$t execs=$execs time=${elapsed}s crashes=$crashes corpus=$files/${bytes}B"
    echo "$line"
    summary+=("$line")
done

echo "--- summary (${SECS}s per target)"
printf '%s\n' "${summary[@]}"
ls artifacts/*/ 2>/dev/null | grep -E "crash-|timeout-|oom-|slow-unit-" || true

#!/usr/bin/env bash
# Native `helm template` vs the real helm v3.18.0 over every chart case of the corpus
# (charts-expected/INDEX.tsv: 26 charts, 77 chart x values cases), in the same run.
#
#   bench/helm.sh            # needs helm on PATH: ../shared/tools/install-oracles.sh /usr/local/bin
#   HELM=/path/to/helm ROUNDS=3 bench/helm.sh
#   GITOPS_LINT_BIN=/path/to/gitops-lint bench/helm.sh   # that build, one process per case
#   GITOPS_LINT_HELM_BENCH=/path/to/helm_bench-...          # with it: that build in-process too
#
# helm runs once per case (a process each, as Argo CD's repo-server runs it). The native side
# runs `gitops-lint helm template` once per case too (the like-for-like figure), then all
# cases in one test process with a fresh filesystem per case (nothing cached between cases),
# and then the same in-process run as `lint` renders charts (stand-in keys, objects built).
# Both wall time and CPU time (user+sys, children included) are printed: on a shared machine
# the CPU-time ratio is the steadier figure.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/measure.sh
CORPUS="${GITOPS_LINT_CORPUS:-$PWD/../shared/corpus}/helm"
HELM="${HELM:-helm}"
ROUNDS="${ROUNDS:-1}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
[ -f "$CORPUS/charts-expected/INDEX.tsv" ] || { echo "no helm corpus at $CORPUS" >&2; exit 2; }
command -v "$HELM" >/dev/null || { echo "helm not found: ../shared/tools/install-oracles.sh /usr/local/bin" >&2; exit 2; }

# GITOPS_LINT_BIN=path times that binary one process per case (an earlier build, for
# before/after figures); the in-process figures only with GITOPS_LINT_HELM_BENCH.
if [ -n "${GITOPS_LINT_BIN:-}" ]; then
  BIN=$GITOPS_LINT_BIN
  # GITOPS_LINT_HELM_BENCH=path: that build's tests/helm_bench.rs binary, for its in-process
  # figures (`cargo test --release --no-run --test helm_bench` in its checkout).
  BENCH=${GITOPS_LINT_HELM_BENCH:-}
else
  build_lint --bin gitops-lint
  BIN=$(lint_bin)
  BENCH=$(cargo test --profile "$BENCH_PROFILE" --no-run --test helm_bench 2>&1 | sed -n -E 's/.*Executable .*\((.*)\).*/\1/p' | tail -1)
fi
mapfile -t CMDS < <(tail -n +2 "$CORPUS/charts-expected/INDEX.tsv" | cut -f3)

# Prints "wall user+sys" seconds of a command (children included).
measure() {
  local TIMEFORMAT='%R %U %S'
  { time "$@" >/dev/null 2>&1; } 2>&1 | awk '{printf "%.3f %.3f\n", $1, $2 + $3}'
}

helm_all() {
  for _ in $(seq "$ROUNDS"); do
    for cmd in "${CMDS[@]}"; do
      (cd "$CORPUS" && eval "\"$HELM\" ${cmd#helm }") || true
    done
  done
}

native_cli_all() {
  for _ in $(seq "$ROUNDS"); do
    for cmd in "${CMDS[@]}"; do
      (cd "$CORPUS" && eval "\"$BIN\" helm ${cmd#helm }") || true
    done
  done
}

native_inprocess_all() {
  HELM_BENCH_ROUNDS="$ROUNDS" "$BENCH" --ignored --nocapture bench_native_corpus
}

# As `lint` renders each app's chart: lint's fixed clock and seed (stand-in keys: the output
# is never printed) and the objects built with their provenance.
native_inprocess_as_lint_all() {
  HELM_BENCH_AS_LINT=1 HELM_BENCH_ROUNDS="$ROUNDS" "$BENCH" --ignored --nocapture bench_native_corpus
}

read -r helm_wall helm_cpu < <(measure helm_all)
per() { echo "$1 / $ROUNDS" | bc -l; }
printf 'cases: %d, rounds: %d (times per round)\n' "${#CMDS[@]}" "$ROUNDS"
printf 'helm template v3.18.0, one process per case: wall %.3f s, cpu %.3f s\n' "$(per "$helm_wall")" "$(per "$helm_cpu")"
report() { # label wall cpu
  printf 'native (%s): wall %.3f s, cpu %.3f s\n' "$1" "$(per "$2")" "$(per "$3")"
  printf '  ratio helm/native: wall %.1fx, cpu %.1fx\n' "$(echo "$helm_wall / $2" | bc -l)" "$(echo "$helm_cpu / $3" | bc -l)"
}
# `helm template --help` is refused by the CLI (helm's own flags only): ask clap instead.
if "$BIN" help helm >/dev/null 2>&1; then
  read -r nat_wall nat_cpu < <(measure native_cli_all)
  report "gitops-lint helm template, one process per case" "$nat_wall" "$nat_cpu"
fi
# The same renders in one process: the engine's cost without process start-up. Templates
# are parsed once per process (`render/helm/parse_cache.rs`), so later rounds reuse them.
if [ -n "$BENCH" ]; then
  read -r in_wall in_cpu < <(measure native_inprocess_all)
  report "in-process, tests/helm_bench.rs, fresh filesystem per case" "$in_wall" "$in_cpu"
  read -r lint_wall lint_cpu < <(measure native_inprocess_as_lint_all)
  report "in-process as lint renders: stand-in keys, objects and provenance built" "$lint_wall" "$lint_cpu"
fi

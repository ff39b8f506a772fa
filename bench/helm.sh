#!/usr/bin/env bash
# Native `helm template` vs the real helm v3.18.0 over every chart case of the corpus
# (charts-expected/INDEX.tsv: 26 charts, 77 chart x values cases), in the same run.
#
#   bench/helm.sh            # needs helm on PATH: ../shared/tools/install-oracles.sh /usr/local/bin
#   HELM=/path/to/helm ROUNDS=3 bench/helm.sh
#
# helm is run once per case (a process each, as Argo CD's repo-server does). The native side
# uses `gitops-lint helm template` per case when the CLI has it, else renders every case in one
# test process with a fresh filesystem per case (no caching between cases).
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS="${GITOPS_LINT_CORPUS:-$PWD/../shared/corpus}/helm"
HELM="${HELM:-helm}"
ROUNDS="${ROUNDS:-1}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
[ -f "$CORPUS/charts-expected/INDEX.tsv" ] || { echo "no helm corpus at $CORPUS" >&2; exit 2; }
command -v "$HELM" >/dev/null || { echo "helm not found: ../shared/tools/install-oracles.sh /usr/local/bin" >&2; exit 2; }

cargo build --release --quiet --bin gitops-lint
BIN="$CARGO_TARGET_DIR/release/gitops-lint"
mapfile -t CMDS < <(tail -n +2 "$CORPUS/charts-expected/INDEX.tsv" | cut -f3)

now() { date +%s.%N; }

# helm: one process per case
t0=$(now)
for _ in $(seq "$ROUNDS"); do
  for cmd in "${CMDS[@]}"; do
    (cd "$CORPUS" && eval "\"$HELM\" ${cmd#helm }" >/dev/null 2>&1) || true
  done
done
t1=$(now)
helm_s=$(echo "($t1 - $t0) / $ROUNDS" | bc -l)

# native
if "$BIN" helm template --help >/dev/null 2>&1; then
  mode="gitops-lint helm template, one process per case"
  t0=$(now)
  for _ in $(seq "$ROUNDS"); do
    for cmd in "${CMDS[@]}"; do
      (cd "$CORPUS" && eval "\"$BIN\" helm ${cmd#helm }" >/dev/null 2>&1) || true
    done
  done
  t1=$(now)
  native_s=$(echo "($t1 - $t0) / $ROUNDS" | bc -l)
else
  mode="in-process (tests/helm_bench.rs; the CLI has no 'helm template' yet)"
  out=$(HELM_BENCH_ROUNDS="$ROUNDS" cargo test --release --quiet --test helm_bench -- --ignored --nocapture 2>/dev/null | grep '^native:')
  echo "$out"
  native_s=$(echo "$out" | sed -E 's/.* in ([0-9.]+) s per round.*/\1/')
fi

printf 'cases: %d, rounds: %d\n' "${#CMDS[@]}" "$ROUNDS"
printf 'helm template (v3.18.0): %.3f s\n' "$helm_s"
printf 'native (%s): %.3f s\n' "$mode" "$native_s"
printf 'ratio helm/native: %.1fx\n' "$(echo "$helm_s / $native_s" | bc -l)"

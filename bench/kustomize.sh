#!/usr/bin/env bash
# Benchmark: render every tree in real/ and every case in vectors/ of the kustomize corpus,
# natively (examples/kbuild, release build) and with `kubectl kustomize` (the oracle), in the
# same run; print both wall-clock times and the ratio.
#
# usage: bench/kustomize.sh [CORPUS_DIR]   (default: $GITOPS_LINT_CORPUS or ../shared/corpus)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
corpus="${1:-${GITOPS_LINT_CORPUS:-$here/../shared/corpus}}/kustomize"
oracle="$here/../shared/tools/kustomize-oracle.sh"
[ -d "$corpus/vectors" ] || { echo "corpus not found at $corpus" >&2; exit 2; }
[ -x "$oracle" ] || oracle="kubectl kustomize"

target="${CARGO_TARGET_DIR:-$here/target}"
(cd "$here" && cargo build --release --example kbuild -q)
kbuild="$target/release/examples/kbuild"

# (fs root, dir) pairs: each vector case is its own root; real trees share their repo root.
jobs=()
for d in "$corpus"/vectors/*/; do
  root=$(sed -n 's/.*"root": *"\([^"]*\)".*/\1/p' "$d/case.json" | head -1)
  jobs+=("$d|${root:-.}")
done
while IFS=$'\t' read -r repo path status _; do
  [ "$status" = rendered ] && jobs+=("$corpus/real/$repo/|$path")
done < <(tail -n +2 "$corpus/real/INDEX.tsv")
echo "builds: ${#jobs[@]}"

now() { date +%s.%N; }

list=$(mktemp)
trap 'rm -f "$list"' EXIT
printf '%s\n' "${jobs[@]}" > "$list"

# Native: one process for all builds (as gitops-lint renders a repository's apps), and for
# reference one process per build.
t0=$(now)
"$kbuild" -q --batch "$list" 2>/dev/null || true
t1=$(now)
for j in "${jobs[@]}"; do
  "$kbuild" -q "${j%%|*}" "${j#*|}" >/dev/null 2>&1 || true
done
tp=$(now)
t1b=$(now)
for j in "${jobs[@]}"; do
  $oracle "${j%%|*}${j#*|}" >/dev/null 2>&1 || true
done
t2=$(now)

native=$(echo "$t1 - $t0" | bc -l)
perproc=$(echo "$tp - $t1" | bc -l)
kubectl=$(echo "$t2 - $t1b" | bc -l)
printf 'native, one process (gitops-lint):  %.2fs\n' "$native"
printf 'native, one process per build:      %.2fs\n' "$perproc"
printf 'kubectl kustomize, one per build:   %.2fs\n' "$kubectl"
printf 'ratio: %.1fx faster (one process), %.1fx (process per build)\n' \
  "$(echo "$kubectl / $native" | bc -l)" "$(echo "$kubectl / $perproc" | bc -l)"

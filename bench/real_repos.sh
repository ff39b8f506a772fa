#!/usr/bin/env bash
# gitops-lint on each real repository of the shared corpus (../shared/corpus/real-repos):
# wall time, CPU time (user+sys), cores used (CPU/wall) and peak memory, best of 5 runs.
# Exit code 1 (findings) is normal there.
#
#   bench/real_repos.sh        (GITOPS_LINT_BIN=path: time that binary)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/measure.sh
corpus="${GITOPS_LINT_SHARED:-$PWD/../shared}/corpus/real-repos"
[ -d "$corpus" ] || { echo "no corpus at $corpus" >&2; exit 2; }
if [ -z "${GITOPS_LINT_BIN:-}" ]; then build_lint; fi
bin=${GITOPS_LINT_BIN:-$(lint_bin)}
for dir in "$corpus"/*/; do
  name=$(basename "$dir")
  files=$(find "$dir" -type f | wc -l)
  best_of 5 "$bin" "$dir"
  figures "$(printf '%-64s %4d files' "$name" "$files")"
done

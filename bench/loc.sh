#!/usr/bin/env bash
# Lines of Rust per top-level folder of src/ (files directly in src/ count as "src/*.rs").
#   bench/loc.sh
set -euo pipefail
cd "$(dirname "$0")/.."
count() { find "$@" -name '*.rs' -print0 | xargs -0 cat | wc -l; }
for dir in src/*/ crates/*/src/; do
  printf '%-16s %7d\n' "${dir#src/}" "$(count "$dir")"
done
printf '%-16s %7d\n' "*.rs" "$(find src -maxdepth 1 -name '*.rs' -print0 | xargs -0 cat | wc -l)"
printf '%-16s %7d\n' "total" "$(count src)"

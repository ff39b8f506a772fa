#!/usr/bin/env bash
# Render the Homebrew formula template for one release: the tag's version and each archive's
# sha256 from the release's SHA256SUMS. Fails when an archive the formula names is not listed.
# Usage: render.sh TAG SHA256SUMS > gitops-lint.rb
set -euo pipefail
tag="$1"
sums="$2"
template="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/gitops-lint.rb"
case "$tag" in
  v[0-9]*.[0-9]*.[0-9]*) ;;
  *) echo "render.sh: $tag is not a release tag (v1.2.3)" >&2; exit 1 ;;
esac
formula="$(sed "s/^  version \".*\"$/  version \"${tag#v}\"/" "$template")"
while [[ "$formula" =~ @SHA256\ ([a-z0-9_-]+)@ ]]; do
  target="${BASH_REMATCH[1]}"
  asset="gitops-lint-$tag-$target.tar.gz"
  sum="$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1 }' "$sums")"
  if ! [[ "$sum" =~ ^[0-9a-f]{64}$ ]]; then
    echo "render.sh: $sums lists no sha256 for $asset" >&2
    exit 1
  fi
  formula="${formula//"@SHA256 $target@"/$sum}"
done
printf '%s\n' "$formula"

#!/usr/bin/env bash
# Package the release: one archive per target (binary, shell completions, man page, README)
# and SHA256SUMS over them, as the Action's install step (.github/action/install.sh) reads.
# Usage: package.sh VERSION DIST HOST_BINARY
#   DIST holds <target>/gitops-lint for each target; HOST_BINARY is one of them that runs
#   here (it prints the completions and the man page). Output: DIST/release/.
set -euo pipefail
version="$1"
dist="$2"
host="$3"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$dist/release"
extras="$(mktemp -d)"
trap 'rm -rf "$extras"' EXIT
mkdir -p "$out" "$extras/completions"
"$host" completions bash > "$extras/completions/gitops-lint.bash"
"$host" completions zsh > "$extras/completions/_gitops-lint"
"$host" completions fish > "$extras/completions/gitops-lint.fish"
"$host" completions powershell > "$extras/completions/_gitops-lint.ps1"
"$host" man > "$extras/gitops-lint.1"
for bin in "$dist"/*/gitops-lint; do
  target="$(basename "$(dirname "$bin")")"
  name="gitops-lint-$version-$target"
  stage="$extras/$name"
  mkdir -p "$stage"
  install -m 0755 "$bin" "$stage/gitops-lint"
  cp -R "$extras/completions" "$extras/gitops-lint.1" "$root/README.md" "$stage/"
  tar -czf "$out/$name.tar.gz" -C "$extras" "$name"
done
(
  cd "$out"
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum -- *.tar.gz > SHA256SUMS
  else
    shasum -a 256 -- *.tar.gz > SHA256SUMS
  fi
)
ls "$out"

#!/usr/bin/env bash
# The Action's install step: download the gitops-lint release archive for this runner's OS
# and architecture, verify it against the release's SHA256SUMS, and put the binary on PATH.
#
# Environment:
#   GITOPS_LINT_VERSION        release tag (v1.2.3); empty: the version in Cargo.toml next to
#                              this script (the action's own release)
#   GITOPS_LINT_REPO           the GitHub repository that publishes and attests the releases
#                              (default gitops-lint/gitops-lint)
#   GITOPS_LINT_DOWNLOAD_BASE  where releases are (default: the GitHub releases of the repo);
#                              files are at $BASE/$TAG/$ASSET
#   GITOPS_LINT_GH             the GitHub CLI to verify with (default: gh)
#   GH_TOKEN or GITHUB_TOKEN   with `gh` on PATH: the archive's build provenance attestation is
#                              verified (`gh attestation verify`); a failed verification fails
#                              the install, a missing `gh` or token is a notice, not an error
#   GITOPS_LINT_INSTALL_DIR    directory for the binary (default: $RUNNER_TEMP/gitops-lint)
#   GITOPS_LINT_ARCHIVE_CACHE  directory that keeps verified archives between runs (the Action
#                              restores and saves it with actions/cache per OS, arch and
#                              version); an archive found there is not downloaded again, but
#                              is still checked against the release's SHA256SUMS
#   RUNNER_OS, RUNNER_ARCH     GitHub's runner description (else from uname)
# Prints the installed binary's path; appends its directory to $GITHUB_PATH when set.
# `install.sh --resolve` only works out the release: it writes `version=` and `asset=` to
# $GITHUB_OUTPUT (or stdout), so the Action can key its cache before installing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="${GITOPS_LINT_REPO:-gitops-lint/gitops-lint}"
base="${GITOPS_LINT_DOWNLOAD_BASE:-https://github.com/$repo/releases/download}"
version="${GITOPS_LINT_VERSION:-}"
if [ -z "$version" ]; then
  version="v$(sed -n 's/^version = "\(.*\)"$/\1/p' "$here/../../Cargo.toml" | head -n 1)"
fi
case "$version" in
  v[0-9]*) ;;
  [0-9]*) version="v$version" ;;
  *) echo "::error title=gitops-lint::version must be a release tag such as v1.2.3 (or 'source'), not '$version'" >&2; exit 1 ;;
esac

os="${RUNNER_OS:-$(uname -s)}"
arch="${RUNNER_ARCH:-$(uname -m)}"
case "$os" in
  Linux|linux) os_part="unknown-linux-musl" ;;
  macOS|Darwin|darwin) os_part="apple-darwin" ;;
  *) echo "::error title=gitops-lint::no release binary for $os; use 'version: source'" >&2; exit 1 ;;
esac
case "$arch" in
  X64|x86_64|amd64) arch_part="x86_64" ;;
  ARM64|arm64|aarch64) arch_part="aarch64" ;;
  *) echo "::error title=gitops-lint::no release binary for $arch; use 'version: source'" >&2; exit 1 ;;
esac
target="$arch_part-$os_part"
asset="gitops-lint-$version-$target.tar.gz"
if [ "${1:-}" = --resolve ]; then
  printf 'version=%s\nasset=%s\n' "$version" "$asset" >> "${GITHUB_OUTPUT:-/dev/stdout}"
  exit 0
fi

dest="${GITOPS_LINT_INSTALL_DIR:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/gitops-lint}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

fetch() { # URL FILE
  curl --fail --silent --show-error --location --retry 3 --connect-timeout 10 --max-time 300 \
    --proto '=https,http' -o "$2" "$1"
}
# SHA256SUMS always comes from the release, so a cached archive is checked like a new one.
fetch "$base/$version/SHA256SUMS" "$work/SHA256SUMS"
cache="${GITOPS_LINT_ARCHIVE_CACHE:-}"
if [ -n "$cache" ] && [ -f "$cache/$asset" ]; then
  echo "gitops-lint: $asset from the cache (not downloaded)" >&2
  cp "$cache/$asset" "$work/$asset"
else
  fetch "$base/$version/$asset" "$work/$asset"
fi

want="$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1 }' "$work/SHA256SUMS")"
if [ -z "$want" ]; then
  echo "::error title=gitops-lint::SHA256SUMS of $version lists no $asset" >&2
  exit 1
fi
if command -v sha256sum >/dev/null 2>&1; then
  got="$(sha256sum "$work/$asset" | awk '{ print $1 }')"
else
  got="$(shasum -a 256 "$work/$asset" | awk '{ print $1 }')"
fi
if [ "$got" != "$want" ]; then
  echo "::error title=gitops-lint::checksum mismatch for $asset: expected $want, got $got; not installed" >&2
  exit 1
fi

# The release workflow attests each archive (actions/attest-build-provenance); `gh` checks
# that this archive was built by that workflow in $repo. Without `gh` or a token it cannot.
gh="${GITOPS_LINT_GH:-gh}"
if ! command -v "$gh" >/dev/null 2>&1; then
  echo "::notice title=gitops-lint::build provenance of $asset not verified: $gh is not on PATH (SHA256SUMS checked)"
elif [ -z "${GH_TOKEN:-${GITHUB_TOKEN:-}}" ]; then
  echo "::notice title=gitops-lint::build provenance of $asset not verified: no GH_TOKEN or GITHUB_TOKEN for gh (SHA256SUMS checked)"
elif "$gh" attestation verify "$work/$asset" --repo "$repo" >"$work/attestation.log" 2>&1; then
  echo "gitops-lint: build provenance of $asset verified (attested by $repo)" >&2
else
  reason="$(tr '\n' ' ' < "$work/attestation.log" | cut -c 1-500)"
  echo "::error title=gitops-lint::build provenance attestation of $asset failed verification against $repo; not installed: ${reason//%/%25}" >&2
  exit 1
fi

if [ -n "$cache" ] && [ ! -f "$cache/$asset" ]; then
  mkdir -p "$cache"
  cp "$work/$asset" "$cache/$asset"
fi

tar -xzf "$work/$asset" -C "$work"
mkdir -p "$dest"
install -m 0755 "$work/gitops-lint-$version-$target/gitops-lint" "$dest/gitops-lint"
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$dest" >> "$GITHUB_PATH"
fi
echo "$dest/gitops-lint"

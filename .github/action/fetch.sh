#!/usr/bin/env bash
# The Action's `fetch: true` step, reserved for a future `gitops-lint fetch` command (remote
# charts and sources into a local cache before the lint). Until the installed binary has that
# subcommand this is a no-op with a notice, so workflows can opt in ahead of the release.
set -euo pipefail
bin="${GITOPS_LINT_BIN:-gitops-lint}"
path="${GITOPS_LINT_PATH:-.}"
# `help fetch` fails for an unknown subcommand (`fetch --help` would read `fetch` as a path).
if "$bin" help fetch >/dev/null 2>&1; then
  exec "$bin" fetch -- "$path"
fi
echo "::notice title=gitops-lint::fetch: true has no effect yet: this gitops-lint ($("$bin" --version)) has no fetch command"

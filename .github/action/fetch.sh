#!/usr/bin/env bash
# The Action's fetch step: `gitops-lint fetch` downloads the remote charts and bases the
# repository's apps name (as `.gitops-lint.lock` pins them) into GITOPS_LINT_CACHE, which
# actions/cache restores and saves, and exports that variable so the lint step renders from
# it. An input that fails is an error annotation on the line that names it; the step still
# succeeds, so the lint runs and reports what stayed unrendered. Usage errors (exit 2) fail.
set -euo pipefail
# `&` in a ${var//pattern/replacement} is literal (bash 5.2 made it the match by default).
shopt -u patsub_replacement 2>/dev/null || true
bin="${GITOPS_LINT_BIN:-gitops-lint}"
path="${GITOPS_LINT_PATH:-.}"
cache="${GITOPS_LINT_CACHE:-}"
# `help fetch` fails for an unknown subcommand (`fetch --help` would read `fetch` as a path).
if ! "$bin" help fetch >/dev/null 2>&1; then
  echo "::notice title=gitops-lint::this gitops-lint ($("$bin" --version)) has no fetch command; remote charts and bases stay unrendered"
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    printf '### gitops-lint fetch\n\nNot run: this gitops-lint has no fetch command; remote charts and bases stay unrendered.\n\n' >> "$GITHUB_STEP_SUMMARY"
  fi
  exit 0
fi
if [ -n "$cache" ] && [ -n "${GITHUB_ENV:-}" ]; then
  echo "GITOPS_LINT_CACHE=$cache" >> "$GITHUB_ENV"
fi
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
"$bin" fetch -- "$path" 2>"$log" || status=$?
prefix=""
if [ "$path" != "." ]; then
  prefix="${path%/}/"
fi
# `file:line: message` lines are the failures: each becomes an error annotation on its line.
# Everything else is log. The binary writes the job summary itself (each input, what became
# of it, and what the lint still renders without).
while IFS= read -r line; do
  if [[ "$line" =~ ^([^:\ ]+):([0-9]+):\ (.*)$ ]]; then
    message="${BASH_REMATCH[3]//%/%25}"
    echo "::error file=${prefix}${BASH_REMATCH[1]},line=${BASH_REMATCH[2]},title=gitops-lint fetch::${message}"
  else
    echo "$line"
  fi
done < "$log"
if [ "$status" -ge 2 ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  printf '### gitops-lint fetch\n\n`gitops-lint fetch` stopped (exit %s) before it fetched anything; see the step'"'"'s log.\n\n' "$status" >> "$GITHUB_STEP_SUMMARY"
fi
if [ "$status" -ge 2 ]; then
  exit "$status"
fi

#!/usr/bin/env bash
# The Action's lint step: action.yml inputs (as GITOPS_LINT_* environment variables) → the
# gitops-lint command line. Diff mode when a base revision is given, else a full lint.
# Writes `sarif-file` to $GITHUB_OUTPUT (the binary itself writes `findings`).
set -euo pipefail
path="${GITOPS_LINT_PATH:-.}"
base="${GITOPS_LINT_BASE:-}"
flags=(--fail-on "${GITOPS_LINT_FAIL_ON:-error}" --format "${GITOPS_LINT_FORMAT:-github}")
if [ "${GITOPS_LINT_COMMENT:-true}" != "true" ]; then
  flags+=(--comment off)
fi
if [ -n "${GITOPS_LINT_CONFIG:-}" ]; then
  flags+=(--config "$GITOPS_LINT_CONFIG")
fi
if [ -n "${GITOPS_LINT_BASELINE:-}" ]; then
  flags+=(--baseline "$GITOPS_LINT_BASELINE")
fi
if [ -n "${GITOPS_LINT_SARIF_FILE:-}" ]; then
  flags+=(--sarif-file "$GITOPS_LINT_SARIF_FILE")
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    echo "sarif-file=$GITOPS_LINT_SARIF_FILE" >> "$GITHUB_OUTPUT"
  fi
fi
# `args`: extra flags, split on whitespace (no globbing), e.g. "--no-ignore --quiet".
if [ -n "${GITOPS_LINT_ARGS:-}" ]; then
  set -f
  # shellcheck disable=SC2206 # word splitting is the point
  extra=(${GITOPS_LINT_ARGS})
  set +f
  flags+=("${extra[@]}")
fi
bin="${GITOPS_LINT_BIN:-gitops-lint}"
if [ -n "$base" ]; then
  exec "$bin" diff --base "$base" "${flags[@]}" -- "$path"
fi
exec "$bin" "${flags[@]}" -- "$path"

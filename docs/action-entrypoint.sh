#!/bin/sh
# The container entrypoint of the GitHub Action: action.yml inputs (positional) → CLI flags.
# Usage: action-entrypoint PATH BASE FAIL_ON FORMAT COMMENT SARIF_FILE
set -eu
path="${1:-.}"
base="${2:-}"
fail_on="${3:-error}"
format="${4:-github}"
comment="${5:-true}"
sarif_file="${6:-}"

set -- --fail-on "$fail_on" --format "$format"
if [ "$comment" != "true" ]; then
  set -- "$@" --comment off
fi
if [ -n "$sarif_file" ]; then
  set -- "$@" --sarif-file "$sarif_file"
fi
if [ -n "$base" ]; then
  exec gitops-lint diff --base "$base" "$@" -- "$path"
fi
exec gitops-lint "$@" -- "$path"

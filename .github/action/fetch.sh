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
# `file:line: message` lines are the failures, `fetched N, cached N, failed N` the summary,
# `note: ...` notes; everything else is log. The job summary gets the same, as a table.
summary_line=""
failures=()
notes=()
while IFS= read -r line; do
  if [[ "$line" =~ ^([^:\ ]+):([0-9]+):\ (.*)$ ]]; then
    message="${BASH_REMATCH[3]//%/%25}"
    echo "::error file=${prefix}${BASH_REMATCH[1]},line=${BASH_REMATCH[2]},title=gitops-lint fetch::${message}"
    # The reason is the repository's text: no HTML and no table breaks in the summary.
    reason="${BASH_REMATCH[3]//&/&amp;}"
    reason="${reason//</&lt;}"
    reason="${reason//>/&gt;}"
    failures+=("| \`${prefix}${BASH_REMATCH[1]}:${BASH_REMATCH[2]}\` | ${reason//|/\\|} |")
  else
    echo "$line"
    if [[ "$line" =~ ^fetched\ [0-9]+,\ cached\ [0-9]+,\ failed\ [0-9]+ ]]; then
      summary_line="$line"
    elif [[ "$line" == "note: "* ]]; then
      notes+=("- ${line#note: }")
    fi
  fi
done < "$log"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  {
    echo "### gitops-lint fetch"
    echo
    if [[ "$summary_line" =~ ^fetched\ ([0-9]+),\ cached\ ([0-9]+),\ failed\ ([0-9]+)(.*)$ ]]; then
      echo "Remote charts and bases: **${BASH_REMATCH[1]} downloaded**, ${BASH_REMATCH[2]} already in the cache, **${BASH_REMATCH[3]} failed**${BASH_REMATCH[4]}."
    else
      echo "\`gitops-lint fetch\` stopped (exit $status) before it fetched anything; see the step's log."
    fi
    if [ "${#failures[@]}" -gt 0 ]; then
      echo
      echo "| Named at | Why it could not be fetched |"
      echo "| --- | --- |"
      printf '%s\n' "${failures[@]}"
      echo
      echo "The apps that use these inputs stay unrendered; the lint reports them as not fetched."
    fi
    if [ "${#notes[@]}" -gt 0 ]; then
      echo
      printf '%s\n' "${notes[@]}"
    fi
    echo
  } >> "$GITHUB_STEP_SUMMARY"
fi
if [ "$status" -ge 2 ]; then
  exit "$status"
fi

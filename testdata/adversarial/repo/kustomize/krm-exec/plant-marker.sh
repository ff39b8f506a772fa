#!/bin/sh
# Never run by gitops-lint: tests check this marker never appears.
touch "${TMPDIR:-/tmp}/gitops-lint-ran-repo-code"
cat

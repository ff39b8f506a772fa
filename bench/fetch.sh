#!/usr/bin/env bash
# `gitops-lint fetch` against local servers (a Helm repository served by the test, the
# distribution registry with charts pushed by helm, a git repository): the fixture set fetched
# cold (empty cache) and warm (from the lock, no connection), the command on the fixture
# repository, and `gitops-lint` with the cache versus without it. Release build.
# Needs docker-registry, helm (/usr/local/bin/helm) and git; the harness says which is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
nice -n 10 cargo test --release --test fetch bench_fetch_cold_and_warm -- --ignored --nocapture 2>&1 \
  | grep -E '^(fetch_all|gitops-lint|skipped)|panicked' || { echo "the benchmark did not run" >&2; exit 1; }

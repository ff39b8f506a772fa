#!/usr/bin/env bash
# `gitops-lint diff` on a one-file change in a 300-app monorepo (plain manifests until the
# kustomize/helm renderers land): prints how many apps diff rendered, and its time against a
# full lint of the same tree. Usage: bench/diff.sh [APPS]   (builds the `dist` binary first; bench/measure.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/measure.sh
build_lint
bin=$(lint_bin)
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
apps="${1:-300}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo="$work/monorepo"
mkdir -p "$repo/argocd"
for i in $(seq 1 "$apps"); do
  d="$repo/apps/svc-$i"
  mkdir -p "$d"
  cat > "$repo/argocd/svc-$i.yaml" <<APP
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: svc-$i
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://git.example.com/platform/gitops.git
    targetRevision: main
    path: apps/svc-$i
  destination:
    server: https://kubernetes.default.svc
    namespace: team-$((i % 40))
  syncPolicy:
    automated:
      selfHeal: true
APP
  cat > "$d/deployment.yaml" <<OBJ
apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc-$i
spec:
  selector:
    matchLabels: {app: svc-$i}
  template:
    metadata:
      labels: {app: svc-$i}
    spec:
      containers:
        - name: app
          image: registry.example.com/svc-$i:1.$i.0
          resources:
            requests: {cpu: 100m, memory: 128Mi}
OBJ
  cat > "$d/service.yaml" <<OBJ
apiVersion: v1
kind: Service
metadata:
  name: svc-$i
spec:
  selector: {app: svc-$i}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: svc-$i-config
data:
  LOG_LEVEL: info
OBJ
done
g() { git -C "$repo" -c user.name=bench -c user.email=bench@example.com -c commit.gpgsign=false "$@"; }
g init -q -b main
g add -A
g commit -qm base
# The one-file change: a new image for one service.
sed -i 's/svc-150:1.150.0/svc-150:1.151.0/' "$repo/apps/svc-150/deployment.yaml"

best() { # best wall time of 3 runs of "$@", in seconds
  local best=""
  for _ in 1 2 3; do
    local s e t
    s=$(date +%s.%N)
    "$@" > "$work/out" 2> "$work/err" || true
    e=$(date +%s.%N)
    t=$(awk "BEGIN{print $e - $s}")
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
  done
  echo "$best"
}
full=$(best "$bin" "$repo" --format json --comment off)
diff=$(best "$bin" diff --base HEAD "$repo" --format json --comment off)
stat=$(grep "gitops-lint diff:" "$work/err")
rendered=$(sed -n 's/.*rendered \([0-9]*\) of \([0-9]*\) apps.*/\1 of \2/p' <<<"$stat")
echo "monorepo: $apps Argo CD apps, $((apps * 3)) objects; change: 1 file"
echo "diff rendered $rendered apps"
echo "$stat"
printf 'full lint: %.3fs (best of 3)\ndiff --base HEAD: %.3fs (best of 3; lints base and head, renders the affected apps)\n' "$full" "$diff"

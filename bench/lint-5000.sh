#!/usr/bin/env bash
# Lints a generated repo of 5,000 objects (1,000 apps × Deployment, Service, HPA, ConfigMap,
# ServiceAccount, plus their Argo CD Applications) and prints objects/second and peak memory.
# Usage: bench/lint-5000.sh   (builds the `dist` binary first; bench/measure.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/measure.sh
build_lint
bin=$(lint_bin)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo="$work/repo"
mkdir -p "$repo/argocd"
apps=1000
for i in $(seq 1 $apps); do
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
  cat > "$d/all.yaml" <<OBJ
apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc-$i
spec:
  replicas: $((i % 2 + 1))
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
---
apiVersion: v1
kind: Service
metadata:
  name: svc-$i
spec:
  selector: {app: svc-$i}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: svc-$i
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: svc-$i}
  minReplicas: 1
  maxReplicas: 5
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: svc-$i-config
data:
  LOG_LEVEL: info
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: svc-$i
OBJ
done
objects=$((apps * 5))
runs=3
best=""
for r in $(seq 1 $runs); do
  out=$( { /usr/bin/time -f '%e %M' "$bin" "$repo" --format json > "$work/out.json" || true; } 2>&1 | tail -1)
  secs=${out% *}; kb=${out#* }
  if [ -z "$best" ] || awk "BEGIN{exit !($secs < ${best% *})}"; then best="$secs $kb"; fi
done
secs=${best% *}; kb=${best#* }
findings=$(python3 -c "import json;print(len(json.load(open('$work/out.json'))['findings']))")
echo "lint of $objects objects (+$apps Applications): best of $runs = ${secs}s, peak RSS $((kb / 1024)) MiB, $findings findings"
awk "BEGIN{printf \"objects/second: %.0f\n\", $objects / ($secs > 0 ? $secs : 0.001)}"

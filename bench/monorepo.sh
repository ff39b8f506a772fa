#!/usr/bin/env bash
# The app-model benchmark: a generated monorepo of 300 Argo CD apps over 20 shared
# kustomize bases and 30 charts, linted by gitops-lint, and the same apps rendered by the
# subprocess pipeline Argo CD runs (`kubectl kustomize` + `helm template`) in the same run.
# Prints wall time, peak memory, and the ratio.
#   bench/monorepo.sh [--keep DIR]   (needs kubectl; helm from ../shared/tools/install-oracles.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
keep=""
[ "${1:-}" = "--keep" ] && keep="${2:-}"
cargo build --release --quiet
bin=$PWD/target/release/gitops-lint
work=$(mktemp -d)
trap '[ -z "$keep" ] && rm -rf "$work"' EXIT
repo=${keep:-$work/repo}
rm -rf "$repo"; mkdir -p "$repo/argocd"

for b in $(seq 1 20); do
  d="$repo/bases/base-$b"; mkdir -p "$d"
  cat > "$d/kustomization.yaml" <<K
resources:
  - deployment.yaml
  - service.yaml
labels:
  - pairs:
      app.kubernetes.io/part-of: base-$b
K
  cat > "$d/deployment.yaml" <<K
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: registry.example.com/base-$b:1.0.0
          ports: [{containerPort: 8080}]
          resources:
            requests: {cpu: 100m, memory: 128Mi}
K
  cat > "$d/service.yaml" <<K
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
K
done

for c in $(seq 1 30); do
  d="$repo/charts/chart-$c"; mkdir -p "$d/templates"
  printf 'apiVersion: v2\nname: chart-%s\nversion: 1.%s.0\nappVersion: "2.%s"\n' "$c" "$c" "$c" > "$d/Chart.yaml"
  cat > "$d/values.yaml" <<V
replicaCount: 2
image:
  repository: registry.example.com/chart-$c
  tag: ""
autoscaling:
  enabled: false
  minReplicas: 2
  maxReplicas: 6
service:
  port: 80
V
  cat > "$d/templates/_helpers.tpl" <<'V'
{{- define "app.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- define "app.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}
V
  cat > "$d/templates/deployment.yaml" <<'V'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "app.fullname" . }}
  labels:
    {{- include "app.labels" . | nindent 4 }}
spec:
  {{- if not .Values.autoscaling.enabled }}
  replicas: {{ .Values.replicaCount }}
  {{- end }}
  selector:
    matchLabels:
      app.kubernetes.io/name: {{ .Chart.Name }}
  template:
    metadata:
      labels:
        {{- include "app.labels" . | nindent 8 }}
    spec:
      containers:
        - name: app
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
          ports:
            - containerPort: 8080
V
  cat > "$d/templates/service.yaml" <<'V'
apiVersion: v1
kind: Service
metadata:
  name: {{ include "app.fullname" . }}
  labels:
    {{- include "app.labels" . | nindent 4 }}
spec:
  ports:
    - port: {{ .Values.service.port }}
      targetPort: 8080
  selector:
    app.kubernetes.io/name: {{ .Chart.Name }}
V
  cat > "$d/templates/hpa.yaml" <<'V'
{{- if .Values.autoscaling.enabled }}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "app.fullname" . }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "app.fullname" . }}
  minReplicas: {{ .Values.autoscaling.minReplicas }}
  maxReplicas: {{ .Values.autoscaling.maxReplicas }}
{{- end }}
V
done

app() { # name path ns [helm-values-file]
  {
  cat <<A
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: $1
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://git.example.com/platform/monorepo.git
    targetRevision: main
    path: $2
A
  if [ -n "${4:-}" ]; then printf '    helm:\n      valueFiles:\n        - %s\n' "$4"; fi
  cat <<A
  destination:
    server: https://kubernetes.default.svc
    namespace: $3
  syncPolicy:
    automated:
      selfHeal: true
A
  } > "$repo/argocd/$1.yaml"
}

kust_apps=(); helm_apps=()
for i in $(seq 1 150); do
  b=$(( (i - 1) % 20 + 1 ))
  d="$repo/overlays/svc-$i"; mkdir -p "$d"
  cat > "$d/kustomization.yaml" <<K
resources:
  - ../../bases/base-$b
namePrefix: svc-$i-
namespace: team-$(( i % 10 ))
images:
  - name: registry.example.com/base-$b
    newTag: "1.$i.0"
patches:
  - path: replicas.yaml
K
  printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: %s\n' $(( i % 3 + 1 )) > "$d/replicas.yaml"
  app "svc-$i" "overlays/svc-$i" "team-$(( i % 10 ))"
  kust_apps+=("overlays/svc-$i")
done
for i in $(seq 1 150); do
  c=$(( (i - 1) % 30 + 1 ))
  vf="values-rel-$i.yaml"
  printf 'replicaCount: %s\nautoscaling:\n  enabled: %s\n' $(( i % 4 + 1 )) "$([ $((i % 5)) = 0 ] && echo true || echo false)" > "$repo/charts/chart-$c/$vf"
  app "rel-$i" "charts/chart-$c" "team-$(( i % 10 ))" "$vf"
  helm_apps+=("rel-$i charts/chart-$c $vf team-$(( i % 10 ))")
done
printf 'repo-urls:\n  - https://git.example.com/platform/monorepo.git\n' > "$repo/.gitops-lint.yaml"

objects=0
best=""
for r in 1 2 3; do
  out=$( { /usr/bin/time -f '%e %M' "$bin" "$repo" --format json > "$work/out.json" || true; } 2>&1 | tail -1)
  s=${out% *}
  if [ -z "$best" ] || awk "BEGIN{exit !($s < ${best% *})}"; then best="$out"; fi
done
secs=${best% *}; kb=${best#* }
read -r apps objects findings < <(python3 - "$work/out.json" <<'P'
import json,sys
d=json.load(open(sys.argv[1]))
apps=set(f.get("app") for f in d["findings"])
print(len(apps), 0, len(d["findings"]))
P
)
"$bin" apps "$repo" > "$work/apps.txt"
napps=$(( $(wc -l < "$work/apps.txt") - 1 ))
# Columns: APP KIND PARENT OBJECTS SOURCE...
nobj=$(awk 'NR>1 {s+=$4} END {print s}' "$work/apps.txt")
echo "gitops-lint: $napps apps, $nobj objects, $findings findings: best of 3 = ${secs}s, peak RSS $((kb / 1024)) MiB"

# The render-twice check (catalog §5) renders every chart a second time; with the rule off it
# is skipped, which is the single-render cost it is compared with.
printf 'repo-urls:\n  - https://git.example.com/platform/monorepo.git\nrules:\n  render-nondeterministic: off\n' > "$work/once.yaml"
once=""
for r in 1 2 3; do
  out=$( { /usr/bin/time -f '%e %M' "$bin" "$repo" --config "$work/once.yaml" --format json > /dev/null || true; } 2>&1 | tail -1)
  s=${out% *}
  if [ -z "$once" ] || awk "BEGIN{exit !($s < ${once% *})}"; then once="$out"; fi
done
osecs=${once% *}
awk "BEGIN{printf \"render-twice: single render %.2fs, with the second render %.2fs = %.2fx (target <= 2x)\n\", $osecs, $secs, $secs / ($osecs > 0 ? $osecs : 0.001)}"

start=$(date +%s.%N)
kn=0
for k in "${kust_apps[@]}"; do kubectl kustomize "$repo/$k" > /dev/null; kn=$((kn+1)); done
mid=$(date +%s.%N)
hn=0
if command -v helm >/dev/null; then
  for h in "${helm_apps[@]}"; do
    set -- $h
    helm template "$1" "$repo/$2" --namespace "$4" -f "$repo/$2/$3" --include-crds > /dev/null
    hn=$((hn+1))
  done
else
  echo "helm not installed (../shared/tools/install-oracles.sh): the helm side is skipped"
fi
end=$(date +%s.%N)
ksecs=$(awk "BEGIN{print $mid - $start}"); hsecs=$(awk "BEGIN{print $end - $mid}")
total=$(awk "BEGIN{print $end - $start}")
echo "subprocess pipeline: kubectl kustomize x$kn = ${ksecs}s, helm template x$hn = ${hsecs}s, total ${total}s"
awk "BEGIN{printf \"ratio: gitops-lint is %.1fx faster than the pipeline\n\", $total / ($secs > 0 ? $secs : 0.001)}"

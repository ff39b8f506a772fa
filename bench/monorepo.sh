#!/usr/bin/env bash
# The app-model benchmark: a generated monorepo of 300 Argo CD apps linted by gitops-lint,
# and the same apps rendered by the subprocess pipeline Argo CD runs (`kubectl kustomize` per
# kustomize app, `helm template` per chart app) in the same run. Prints wall time, CPU time
# (user+sys), cores used (CPU/wall), peak memory, the cost of the render-twice check and the
# ratio to the pipeline.
#
#   bench/monorepo.sh [--small] [--keep DIR]     (GITOPS_LINT_BIN=path: time that binary)
#
# The default repo has the object counts of real platform repos (about 6,000 objects:
# 20 shared kustomize bases with 150 overlay apps, 30 local charts with 150 per-app values
# files, team app-of-apps roots, policies, HPAs; bench/gen_platform.py). `--small` is the
# first version of this bench: 930 objects over the same 20 bases and 30 charts, 3 objects
# an app. Needs kubectl; helm from ../shared/tools/install-oracles.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/measure.sh
size=platform; keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --small) size=small; shift ;;
    --keep) keep="$2"; shift 2 ;;
    *) echo "usage: bench/monorepo.sh [--small] [--keep DIR]" >&2; exit 2 ;;
  esac
done
# GITOPS_LINT_BIN=path times another build (an earlier one, for before/after figures).
if [ -z "${GITOPS_LINT_BIN:-}" ]; then build_lint; fi
bin=${GITOPS_LINT_BIN:-$(lint_bin)}
work=$(mktemp -d)
trap '[ -z "$keep" ] && rm -rf "$work"' EXIT
repo=${keep:-$work/repo}
# One line per app for the pipeline: "kustomize DIR" or "helm RELEASE CHART VALUES NAMESPACE".
pipeline_apps=()

gen_small() {
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
  pipeline_apps+=("kustomize overlays/svc-$i")
done
for i in $(seq 1 150); do
  c=$(( (i - 1) % 30 + 1 ))
  vf="values-rel-$i.yaml"
  printf 'replicaCount: %s\nautoscaling:\n  enabled: %s\n' $(( i % 4 + 1 )) "$([ $((i % 5)) = 0 ] && echo true || echo false)" > "$repo/charts/chart-$c/$vf"
  app "rel-$i" "charts/chart-$c" "team-$(( i % 10 ))" "$vf"
  pipeline_apps+=("helm rel-$i charts/chart-$c $vf team-$(( i % 10 ))")
done
printf 'repo-urls:\n  - https://git.example.com/platform/monorepo.git\n' > "$repo/.gitops-lint.yaml"
}

if [ "$size" = small ]; then
  gen_small
else
  rm -rf "$repo"
  while read -r kind path release values ns; do
    if [ "$kind" = kustomize ]; then pipeline_apps+=("kustomize $path")
    else pipeline_apps+=("helm $release $path $values $ns"); fi
  done < <(python3 bench/gen_platform.py "$repo")
fi

BEST_OUT="$work/out.json" best_of 5 "$bin" "$repo" --format json
lint_wall=$BEST_WALL
findings=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["findings"]))' "$work/out.json")
"$bin" apps "$repo" > "$work/apps.txt"
napps=$(( $(wc -l < "$work/apps.txt") - 1 ))
# Columns: APP KIND CLUSTER PARENT OBJECTS SOURCE... (read from the JSON: names hold no spaces
# there, and a column added to the table does not move the count).
nobj=$("$bin" apps --format json "$repo" | python3 -c 'import json,sys; print(sum(a["objects"] for a in json.load(sys.stdin)["apps"]))')
echo "repo: $napps apps, $nobj objects, $findings findings (${#pipeline_apps[@]} apps render a kustomization or chart)"
figures "gitops-lint (best of 5)"

# The render-twice check renders every chart a second time; with its rule off it is
# skipped, which is the single-render cost it is compared with.
printf 'repo-urls:\n  - https://git.example.com/platform/monorepo.git\nrules:\n  render-nondeterministic: off\n' > "$work/once.yaml"
best_of 5 "$bin" "$repo" --config "$work/once.yaml" --format json
figures "gitops-lint, render-twice off (best of 5)"
awk "BEGIN{printf \"render-twice: single render %.2fs, with the second render %.2fs = %.2fx\n\", $BEST_WALL, $lint_wall, $lint_wall / ($BEST_WALL > 0 ? $BEST_WALL : 0.01)}"

have_helm=1
command -v helm >/dev/null || { have_helm=0; echo "helm not installed (../shared/tools/install-oracles.sh): the helm side is skipped"; }
# The pipeline as a script, so it is timed as one command (children included).
{
  echo 'set -e'
  for a in "${pipeline_apps[@]}"; do
    set -- $a
    if [ "$1" = kustomize ]; then
      echo "kubectl kustomize '$repo/$2' > /dev/null"
    elif [ "$have_helm" = 1 ]; then
      echo "helm template '$2' '$repo/$3' --namespace '$5' -f '$repo/$3/$4' --include-crds > /dev/null"
    fi
  done
} > "$work/pipeline.sh"
kn=$(grep -c '^kubectl' "$work/pipeline.sh" || true); hn=$(grep -c '^helm' "$work/pipeline.sh" || true)
best_of 1 bash "$work/pipeline.sh"
figures "subprocess pipeline (kubectl kustomize x$kn, helm template x$hn, one after another)"
awk "BEGIN{printf \"ratio: gitops-lint is %.0fx faster than the pipeline (wall)\n\", $BEST_WALL / ($lint_wall > 0 ? $lint_wall : 0.01)}"

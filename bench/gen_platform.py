#!/usr/bin/env python3
"""Generate a platform monorepo the size real ones are: 300 Argo CD apps deploying about
6,000 objects.

  bench/gen_platform.py DIR     (prints "KIND PATH [RELEASE VALUES NAMESPACE]" per app)

- 20 shared kustomize bases of 12 objects each (Deployment, Service, ServiceAccount,
  ConfigMap, HPA, PDB, NetworkPolicy, Role, RoleBinding, Ingress, a worker Deployment and
  its HPA), 120 overlays over them (prefix, namespace, images, a replicas patch, a generated
  ConfigMap), 30 of them deployed to a second cluster by a second Application with the same
  `kustomize:` options (the same build, shared);
- 30 local charts with helpers, a `range` over workers and optional HPAs/PDBs, and 150
  releases with per-app values files;
- 10 team app-of-apps roots, each an Application over a directory of that team's
  Applications, plus a platform app of Kyverno policies and namespaces.

The figures the bench prints count the objects `gitops-lint apps` reports.
"""
import os
import sys

REPO_URL = "https://git.example.com/platform/monorepo.git"
TEAMS = 10


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


MONITORING = """apiVersion: v1
kind: Service
metadata:
  name: worker-metrics
  labels: {app: worker}
spec:
  selector: {app: worker}
  ports:
    - {name: metrics, port: 9090, targetPort: 9090}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  endpoints:
    - {port: http, path: /metrics, interval: 30s}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: worker
spec:
  selector:
    matchLabels: {app: worker}
  endpoints:
    - {port: metrics, interval: 30s}
---
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: web
spec:
  groups:
    - name: web.rules
      rules:
        - alert: WebDown
          expr: up{job="web"} == 0
          for: 5m
          labels: {severity: critical}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: dashboards
  labels: {grafana_dashboard: "1"}
data:
  web.json: '{"title": "web", "panels": []}'
"""

JOBS = """apiVersion: batch/v1
kind: CronJob
metadata:
  name: cleanup
spec:
  schedule: "0 3 * * *"
  concurrencyPolicy: Forbid
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          serviceAccountName: web
          containers:
            - name: cleanup
              image: registry.example.com/tools:2.1.0
              args: [cleanup, --older-than, 7d]
"""

SECRETS = """apiVersion: external-secrets.io/v1beta1
kind: ExternalSecret
metadata:
  name: web-credentials
spec:
  refreshInterval: 1h
  secretStoreRef: {kind: ClusterSecretStore, name: vault}
  target: {name: web-credentials}
  dataFrom:
    - extract: {key: apps/web}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: web-tls
spec:
  secretName: web-tls
  issuerRef: {kind: ClusterIssuer, name: letsencrypt}
  dnsNames: [web.example.com]
"""


def base(root, b):
    d = f"{root}/bases/base-{b}"
    write(f"{d}/kustomization.yaml", f"""apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - serviceaccount.yaml
  - rbac.yaml
  - configmap.yaml
  - deployment.yaml
  - worker.yaml
  - service.yaml
  - ingress.yaml
  - hpa.yaml
  - pdb.yaml
  - networkpolicy.yaml
  - monitoring.yaml
  - jobs.yaml
  - secrets.yaml
labels:
  - pairs:
      app.kubernetes.io/part-of: base-{b}
    includeSelectors: false
""")
    write(f"{d}/monitoring.yaml", MONITORING)
    write(f"{d}/jobs.yaml", JOBS)
    write(f"{d}/secrets.yaml", SECRETS)
    write(f"{d}/serviceaccount.yaml", """apiVersion: v1
kind: ServiceAccount
metadata:
  name: web
""")
    write(f"{d}/rbac.yaml", """apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: web
rules:
  - apiGroups: [""]
    resources: [configmaps, secrets]
    verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: web
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: web
subjects:
  - kind: ServiceAccount
    name: web
""")
    write(f"{d}/configmap.yaml", f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  LOG_LEVEL: info
  FEATURE_FLAGS: "search,checkout"
  UPSTREAM: http://base-{b}-api:8080
""")
    container = f"""      serviceAccountName: web
      securityContext:
        runAsNonRoot: true
        seccompProfile: {{type: RuntimeDefault}}
      containers:
        - name: app
          image: registry.example.com/base-{b}:1.0.0
          envFrom:
            - configMapRef: {{name: web-config}}
          ports:
            - {{name: http, containerPort: 8080}}
          readinessProbe:
            httpGet: {{path: /healthz, port: http}}
          livenessProbe:
            httpGet: {{path: /livez, port: http}}
          resources:
            requests: {{cpu: 100m, memory: 128Mi}}
            limits: {{memory: 256Mi}}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities: {{drop: [ALL]}}
"""
    write(f"{d}/deployment.yaml", f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {{app: web}}
  strategy:
    rollingUpdate: {{maxSurge: 25%, maxUnavailable: 0}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
{container}""")
    write(f"{d}/worker.yaml", f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: worker
spec:
  selector:
    matchLabels: {{app: worker}}
  template:
    metadata:
      labels: {{app: worker}}
    spec:
{container.replace("containerPort: 8080", "containerPort: 9090")}""")
    write(f"{d}/service.yaml", """apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
    - {name: http, port: 80, targetPort: http}
""")
    write(f"{d}/ingress.yaml", f"""apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  annotations:
    cert-manager.io/cluster-issuer: letsencrypt
spec:
  ingressClassName: nginx
  rules:
    - host: base-{b}.example.com
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: web
                port: {{name: http}}
""")
    write(f"{d}/hpa.yaml", """apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: worker
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: worker
  minReplicas: 1
  maxReplicas: 10
  metrics:
    - type: Resource
      resource:
        name: cpu
        target: {type: Utilization, averageUtilization: 70}
""")
    write(f"{d}/pdb.yaml", """apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: web}
""")
    write(f"{d}/networkpolicy.yaml", """apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: web
spec:
  podSelector:
    matchLabels: {app: web}
  policyTypes: [Ingress]
  ingress:
    - from:
        - namespaceSelector:
            matchLabels: {kubernetes.io/metadata.name: ingress-nginx}
      ports:
        - {port: 8080, protocol: TCP}
""")


HELPERS = """{{/* Common names and labels. */}}
{{- define "app.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- define "app.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- define "app.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- define "app.selectorLabels" -}}
app.kubernetes.io/name: {{ include "app.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
{{- define "app.labels" -}}
helm.sh/chart: {{ include "app.chart" . }}
{{ include "app.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
{{- define "app.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "app.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}
"""

POD = """    spec:
      serviceAccountName: {{ include "app.serviceAccountName" $ }}
      {{- with $.Values.podSecurityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ $c.name }}
          image: "{{ $.Values.image.repository }}:{{ $.Values.image.tag | default $.Chart.AppVersion }}"
          imagePullPolicy: {{ $.Values.image.pullPolicy }}
          {{- with $c.args }}
          args:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          env:
            {{- range $k, $v := $.Values.env }}
            - name: {{ $k }}
              value: {{ $v | quote }}
            {{- end }}
          ports:
            - name: http
              containerPort: {{ $c.port | default 8080 }}
          resources:
            {{- toYaml ($c.resources | default $.Values.resources) | nindent 12 }}
"""

TEMPLATES = {
    "serviceaccount.yaml": """{{- if .Values.serviceAccount.create -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "app.serviceAccountName" . }}
  labels:
    {{- include "app.labels" . | nindent 4 }}
{{- end }}
""",
    "configmap.yaml": """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "app.fullname" . }}
  labels:
    {{- include "app.labels" . | nindent 4 }}
data:
  {{- range $k, $v := .Values.config }}
  {{ $k }}: {{ $v | quote }}
  {{- end }}
""",
    "deployment.yaml": """{{- $c := dict "name" "app" "port" .Values.service.targetPort "resources" .Values.resources }}
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
      {{- include "app.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      annotations:
        checksum/config: {{ toJson .Values.config | sha256sum }}
      labels:
        {{- include "app.selectorLabels" . | nindent 8 }}
""" + POD,
    "workers.yaml": """{{- range $w := .Values.workers }}
{{- $c := dict "name" $w.name "port" 9090 "args" (list "--queue" $w.queue) }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "app.fullname" $ }}-{{ $w.name }}
  labels:
    {{- include "app.labels" $ | nindent 4 }}
    app.kubernetes.io/component: {{ $w.name }}
spec:
  {{- if not $w.autoscaling }}
  replicas: {{ $w.replicas | default 1 }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "app.selectorLabels" $ | nindent 6 }}
      app.kubernetes.io/component: {{ $w.name }}
  template:
    metadata:
      labels:
        {{- include "app.selectorLabels" $ | nindent 8 }}
        app.kubernetes.io/component: {{ $w.name }}
""" + POD + """---
apiVersion: v1
kind: Service
metadata:
  name: {{ include "app.fullname" $ }}-{{ $w.name }}
  labels:
    {{- include "app.labels" $ | nindent 4 }}
spec:
  ports:
    - {name: metrics, port: 9090, targetPort: 9090}
  selector:
    {{- include "app.selectorLabels" $ | nindent 4 }}
    app.kubernetes.io/component: {{ $w.name }}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "app.fullname" $ }}-{{ $w.name }}
spec:
  selector:
    matchLabels:
      app.kubernetes.io/component: {{ $w.name }}
  endpoints:
    - port: metrics
      interval: {{ $.Values.metrics.interval }}
{{- if $w.autoscaling }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "app.fullname" $ }}-{{ $w.name }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "app.fullname" $ }}-{{ $w.name }}
  minReplicas: 1
  maxReplicas: {{ $w.maxReplicas | default 5 }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target: {type: Utilization, averageUtilization: 75}
{{- end }}
{{- end }}
""",
    "service.yaml": """apiVersion: v1
kind: Service
metadata:
  name: {{ include "app.fullname" . }}
  labels:
    {{- include "app.labels" . | nindent 4 }}
spec:
  type: {{ .Values.service.type }}
  ports:
    - port: {{ .Values.service.port }}
      targetPort: http
      protocol: TCP
      name: http
  selector:
    {{- include "app.selectorLabels" . | nindent 4 }}
""",
    "ingress.yaml": """{{- if .Values.ingress.enabled -}}
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: {{ include "app.fullname" . }}
  labels:
    {{- include "app.labels" . | nindent 4 }}
spec:
  ingressClassName: {{ .Values.ingress.className }}
  rules:
    {{- range .Values.ingress.hosts }}
    - host: {{ . | quote }}
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: {{ include "app.fullname" $ }}
                port:
                  number: {{ $.Values.service.port }}
    {{- end }}
{{- end }}
""",
    "hpa.yaml": """{{- if .Values.autoscaling.enabled }}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "app.fullname" . }}
  labels:
    {{- include "app.labels" . | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "app.fullname" . }}
  minReplicas: {{ .Values.autoscaling.minReplicas }}
  maxReplicas: {{ .Values.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ .Values.autoscaling.targetCPUUtilizationPercentage }}
{{- end }}
""",
    "pdb.yaml": """{{- if .Values.podDisruptionBudget.enabled }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "app.fullname" . }}
spec:
  minAvailable: {{ .Values.podDisruptionBudget.minAvailable }}
  selector:
    matchLabels:
      {{- include "app.selectorLabels" . | nindent 6 }}
{{- end }}
""",
    "networkpolicy.yaml": """apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "app.fullname" . }}
spec:
  podSelector:
    matchLabels:
      {{- include "app.selectorLabels" . | nindent 6 }}
  policyTypes: [Ingress]
  ingress:
    - from:
        - podSelector: {}
""",
    "monitoring.yaml": """{{- if .Values.metrics.enabled }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "app.fullname" . }}
  labels:
    {{- include "app.labels" . | nindent 4 }}
spec:
  selector:
    matchLabels:
      {{- include "app.selectorLabels" . | nindent 6 }}
  endpoints:
    - port: http
      path: /metrics
      interval: {{ .Values.metrics.interval }}
---
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {{ include "app.fullname" . }}
spec:
  groups:
    - name: {{ include "app.fullname" . }}.rules
      rules:
        {{- range .Values.metrics.alerts }}
        - alert: {{ .name }}
          expr: {{ .expr | quote }}
          for: {{ .for | default "5m" }}
        {{- end }}
{{- end }}
""",
    "cronjob.yaml": """{{- range $name, $job := .Values.cronJobs }}
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: {{ include "app.fullname" $ }}-{{ $name }}
spec:
  schedule: {{ $job.schedule | quote }}
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
            - name: {{ $name }}
              image: "{{ $.Values.image.repository }}:{{ $.Values.image.tag | default $.Chart.AppVersion }}"
              args: {{ toJson $job.args }}
{{- end }}
""",
    "rbac.yaml": """{{- if .Values.rbac.create }}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "app.fullname" . }}
rules:
  - apiGroups: [""]
    resources: [configmaps]
    verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "app.fullname" . }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "app.fullname" . }}
subjects:
  - kind: ServiceAccount
    name: {{ include "app.serviceAccountName" . }}
    namespace: {{ .Release.Namespace }}
{{- end }}
""",
}


def chart(root, c):
    d = f"{root}/charts/chart-{c}"
    write(f"{d}/Chart.yaml", f"""apiVersion: v2
name: chart-{c}
description: Service chart {c}
type: application
version: 1.{c}.0
appVersion: "2.{c}"
""")
    write(f"{d}/values.yaml", f"""replicaCount: 2
image:
  repository: registry.example.com/chart-{c}
  pullPolicy: IfNotPresent
  tag: ""
nameOverride: ""
fullnameOverride: ""
serviceAccount:
  create: true
  name: ""
rbac:
  create: true
podSecurityContext:
  runAsNonRoot: true
  seccompProfile:
    type: RuntimeDefault
service:
  type: ClusterIP
  port: 80
  targetPort: 8080
ingress:
  enabled: false
  className: nginx
  hosts: []
resources:
  requests:
    cpu: 100m
    memory: 128Mi
  limits:
    memory: 256Mi
autoscaling:
  enabled: false
  minReplicas: 2
  maxReplicas: 6
  targetCPUUtilizationPercentage: 80
podDisruptionBudget:
  enabled: true
  minAvailable: 1
env:
  LOG_FORMAT: json
config:
  region: eu-west-1
metrics:
  enabled: true
  interval: 30s
  alerts:
    - name: HighErrorRate
      expr: rate(http_requests_total{{code=~"5.."}}[5m]) > 1
    - name: HighLatency
      expr: histogram_quantile(0.99, rate(http_request_duration_seconds_bucket[5m])) > 2
      for: 10m
cronJobs:
  cleanup:
    schedule: "0 3 * * *"
    args: [cleanup, --older-than, 7d]
workers: []
""")
    write(f"{d}/.helmignore", ".git/\n*.swp\n")
    write(f"{d}/templates/_helpers.tpl", HELPERS)
    for name, text in TEMPLATES.items():
        write(f"{d}/templates/{name}", text)
    write(f"{d}/templates/NOTES.txt", "{{ include \"app.fullname\" . }} is installed.\n")


def release_values(i):
    workers = "\n".join(
        f"""  - name: worker-{w}
    queue: q{w}
    replicas: {1 + (i + w) % 3}
    autoscaling: {"true" if (i + w) % 4 == 0 else "false"}
    maxReplicas: {4 + w}"""
        for w in range(1, 2 + i % 3)
    )
    return f"""replicaCount: {i % 4 + 1}
image:
  tag: "3.{i}.0"
autoscaling:
  enabled: {"true" if i % 5 == 0 else "false"}
ingress:
  enabled: {"true" if i % 2 == 0 else "false"}
  hosts:
    - rel-{i}.example.com
    - rel-{i}.internal.example.com
env:
  LOG_FORMAT: json
  TEAM: team-{i % TEAMS}
  RELEASE: rel-{i}
config:
  region: eu-west-{1 + i % 3}
  cache_ttl: "{30 + i}s"
  feature_x: "{"on" if i % 3 else "off"}"
workers:
{workers}
"""


def application(name, path, ns, values=None, kustomize=None, cluster="in-cluster"):
    text = f"""apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: argocd
  finalizers:
    - resources-finalizer.argocd.argoproj.io
spec:
  project: default
  source:
    repoURL: {REPO_URL}
    targetRevision: main
    path: {path}
"""
    if values:
        text += f"    helm:\n      valueFiles:\n        - {values}\n"
    if kustomize:
        text += "    kustomize:\n" + kustomize
    text += f"""  destination:
    name: {cluster}
    namespace: {ns}
  syncPolicy:
    automated:
      prune: true
      selfHeal: true
    syncOptions:
      - CreateNamespace=true
"""
    return text


def main():
    root = sys.argv[1]
    apps = []  # (kind, path, release, values, namespace) for the subprocess pipeline
    for b in range(1, 21):
        base(root, b)
    for c in range(1, 31):
        chart(root, c)
    team_apps = {t: [] for t in range(TEAMS)}
    for i in range(1, 121):
        b = (i - 1) % 20 + 1
        ns = f"team-{i % TEAMS}"
        d = f"{root}/overlays/svc-{i}"
        write(f"{d}/kustomization.yaml", f"""apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../bases/base-{b}
namePrefix: svc-{i}-
namespace: {ns}
images:
  - name: registry.example.com/base-{b}
    newTag: "1.{i}.0"
patches:
  - path: replicas.yaml
configMapGenerator:
  - name: web-config
    behavior: merge
    literals:
      - SERVICE=svc-{i}
      - TEAM={ns}
""")
        write(f"{d}/replicas.yaml", f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: {i % 3 + 1}
""")
        opts = f"""      commonAnnotations:
        example.com/owner: {ns}
      commonLabels:
        example.com/team: {ns}
"""
        team_apps[i % TEAMS].append((f"svc-{i}", application(f"svc-{i}", f"overlays/svc-{i}", ns, kustomize=opts)))
        apps.append(("kustomize", f"overlays/svc-{i}", f"svc-{i}", "", ns))
        if i <= 30:
            # The same overlay with the same options on the second cluster.
            team_apps[i % TEAMS].append((f"svc-{i}-dr", application(f"svc-{i}-dr", f"overlays/svc-{i}", ns, kustomize=opts, cluster="dr-cluster")))
            apps.append(("kustomize", f"overlays/svc-{i}", f"svc-{i}-dr", "", ns))
    for i in range(1, 151):
        c = (i - 1) % 30 + 1
        ns = f"team-{i % TEAMS}"
        vf = f"values-rel-{i}.yaml"
        write(f"{root}/charts/chart-{c}/{vf}", release_values(i))
        team_apps[i % TEAMS].append((f"rel-{i}", application(f"rel-{i}", f"charts/chart-{c}", ns, values=vf)))
        apps.append(("helm", f"charts/chart-{c}", f"rel-{i}", vf, ns))
    # App-of-apps: one root per team over the directory of its Applications.
    for t, items in team_apps.items():
        for name, text in items:
            write(f"{root}/argocd/teams/team-{t}/{name}.yaml", text)
        write(f"{root}/argocd/roots/team-{t}.yaml", application(f"team-{t}", f"argocd/teams/team-{t}", "argocd"))
    # The platform app: namespaces and Kyverno policies (a second writer of some fields).
    plat = f"{root}/platform"
    for t in range(TEAMS):
        write(f"{plat}/namespaces/team-{t}.yaml", f"""apiVersion: v1
kind: Namespace
metadata:
  name: team-{t}
  labels:
    example.com/team: team-{t}
---
apiVersion: v1
kind: ResourceQuota
metadata:
  name: quota
  namespace: team-{t}
spec:
  hard:
    requests.cpu: "40"
    requests.memory: 80Gi
---
apiVersion: v1
kind: LimitRange
metadata:
  name: defaults
  namespace: team-{t}
spec:
  limits:
    - type: Container
      defaultRequest: {{cpu: 50m, memory: 64Mi}}
""")
    for p in range(1, 21):
        write(f"{plat}/policies/policy-{p}.yaml", f"""apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: policy-{p}
  annotations:
    policies.kyverno.io/title: Policy {p}
spec:
  validationFailureAction: Audit
  background: true
  rules:
    - name: require-label-{p}
      match:
        any:
          - resources:
              kinds: [Deployment]
      validate:
        message: "label example.com/p{p} is required"
        pattern:
          metadata:
            labels:
              example.com/p{p}: "?*"
""")
    write(f"{plat}/policies/add-safe-to-evict.yaml", """apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: add-safe-to-evict
spec:
  rules:
    - name: annotate
      match:
        any:
          - resources:
              kinds: [Pod]
      mutate:
        patchStrategicMerge:
          metadata:
            annotations:
              +(cluster-autoscaler.kubernetes.io/safe-to-evict): "true"
""")
    write(f"{root}/argocd/roots/platform.yaml", application("platform", "platform", "kube-system").replace(
        "    path: platform\n", "    path: platform\n    directory:\n      recurse: true\n"))
    write(f"{root}/.gitops-lint.yaml", f"repo-urls:\n  - {REPO_URL}\n")
    for a in apps:
        print(" ".join(a))


main()

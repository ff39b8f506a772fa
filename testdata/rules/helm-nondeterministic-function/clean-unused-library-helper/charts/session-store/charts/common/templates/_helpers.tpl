{{- define "common.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* A generated password for charts that do not bring their own Secret. */}}
{{- define "common.randomPassword" -}}
{{- randAlphaNum 24 -}}
{{- end -}}

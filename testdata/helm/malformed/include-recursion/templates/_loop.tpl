{{- define "loop" -}}
{{ include "loop" . }}
{{- end -}}

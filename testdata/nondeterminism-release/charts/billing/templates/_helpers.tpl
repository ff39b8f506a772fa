{{- define "billing.mode" -}}
{{- if .Release.IsUpgrade }}migrate{{ else }}bootstrap{{ end }}
{{- end }}

{{- define "em.annotations" -}}
{{ tpl (toYaml .Values.admin.annotations) . }}
{{- end -}}

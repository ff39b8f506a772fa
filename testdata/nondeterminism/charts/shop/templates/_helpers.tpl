{{- define "shop.password" -}}
{{- randAlphaNum 24 -}}
{{- end -}}

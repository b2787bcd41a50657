{{/* Labels of the server's objects. The same as artifacts/deploy always had, so that a kustomize installation is
adopted as it is (docs/install.md); Helm adds app.kubernetes.io/managed-by itself when it installs. */}}
{{- define "tapp.labels" -}}
app.kubernetes.io/name: tapp-apiserver
app.kubernetes.io/part-of: tapp-apiserver
{{- end }}

{{- define "tapp.etcdLabels" -}}
app.kubernetes.io/name: tapp-etcd
app.kubernetes.io/part-of: tapp-apiserver
{{- end }}

{{/* The server's image: repository:tag, or repository@digest when a digest pins it. */}}
{{- define "tapp.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/* The client URLs of the etcd members the server uses, comma-separated. */}}
{{- define "tapp.etcdServers" -}}
{{- if .Values.etcd.bundled -}}
{{- $urls := list -}}
{{- range $i := until (int .Values.etcd.members) -}}
{{- $urls = append $urls (printf "https://tapp-etcd-%d.tapp-etcd.%s.svc:2379" $i $.Release.Namespace) -}}
{{- end -}}
{{ join "," $urls }}
{{- else -}}
{{- if not .Values.etcd.external.endpoints -}}
{{- fail "etcd.bundled=false needs etcd.external.endpoints (the client URLs of your etcd's members)" -}}
{{- end -}}
{{ join "," .Values.etcd.external.endpoints }}
{{- end -}}
{{- end }}

{{/* The Secret with the etcd CA and the server's client certificate. */}}
{{- define "tapp.etcdClientSecret" -}}
{{- if .Values.etcd.bundled -}}tapp-apiserver-etcd-client{{- else -}}{{ .Values.etcd.external.clientSecret }}{{- end -}}
{{- end }}

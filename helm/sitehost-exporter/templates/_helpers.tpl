{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "sitehost-exporter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name. A release name that already contains the chart name is used as is,
so the Service (and the Prometheus job) keeps "sitehost-exporter" in its name: the alert
rules select job=~".*sitehost-exporter.*".
*/}}
{{- define "sitehost-exporter.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "sitehost-exporter.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "sitehost-exporter.labels" -}}
helm.sh/chart: {{ include "sitehost-exporter.chart" . }}
{{ include "sitehost-exporter.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: {{ include "sitehost-exporter.name" . }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "sitehost-exporter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sitehost-exporter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "sitehost-exporter.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "sitehost-exporter.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "sitehost-exporter.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end }}

{{/* Name of the Secret holding the client secret (and optionally the client id). */}}
{{- define "sitehost-exporter.secretName" -}}
{{- .Values.credentials.existingSecret | default (include "sitehost-exporter.fullname" .) }}
{{- end }}

{{/*
Name of one shard's workload (and its ConfigMap / PVC). With one shard it is the fullname;
with several, fullname-shard-<index>.
Call with (dict "root" $ "index" $i).
*/}}
{{- define "sitehost-exporter.shardName" -}}
{{- $full := include "sitehost-exporter.fullname" .root -}}
{{- if gt (int .root.Values.shards.count) 1 -}}
{{- printf "%s-shard-%d" ($full | trunc 55 | trimSuffix "-") (int .index) -}}
{{- else -}}
{{- $full -}}
{{- end -}}
{{- end }}

{{/* The config file of one shard: .Values.config with sites.shard set and checkpointDir fixed. */}}
{{- define "sitehost-exporter.config" -}}
{{- $cfg := deepCopy (.root.Values.config | default dict) -}}
{{- $sites := get $cfg "sites" | default dict -}}
{{- $_ := set $sites "shard" (dict "index" (int .index) "count" (int .root.Values.shards.count)) -}}
{{- $_ := set $cfg "sites" $sites -}}
{{- toYaml $cfg -}}
{{- end }}

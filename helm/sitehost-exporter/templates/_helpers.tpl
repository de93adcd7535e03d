{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "sitehost-exporter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name. A release name that already contains the chart name is used as is,
so the Service (and the Prometheus job) keeps "sitehost-exporter" in its name: the alert
rules select job=~".*sitehost-exporter.*". At most 52 characters: the StatefulSet's pods add
"-<ordinal>" and a controller-revision-hash label value of the name plus 11 characters.
*/}}
{{- define "sitehost-exporter.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
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

{{/*
An image reference: [registry/]repository(:tag|@digest). global.imageRegistry wins over the
image's own registry. Call with (dict "image" .Values.image "global" .Values.global "tag" default-tag).
*/}}
{{- define "sitehost-exporter.imageRef" -}}
{{- $registry := (.global | default dict).imageRegistry | default .image.registry -}}
{{- $name := .image.repository -}}
{{- if $registry }}{{ $name = printf "%s/%s" $registry .image.repository }}{{ end -}}
{{- if .image.digest -}}
{{- printf "%s@%s" $name .image.digest -}}
{{- else -}}
{{- printf "%s:%s" $name (.image.tag | default .tag) -}}
{{- end -}}
{{- end }}

{{- define "sitehost-exporter.image" -}}
{{- include "sitehost-exporter.imageRef" (dict "image" .Values.image "global" .Values.global "tag" .Chart.AppVersion) -}}
{{- end }}

{{/* Name of the Secret holding the client secret (and optionally the client id). */}}
{{- define "sitehost-exporter.secretName" -}}
{{- .Values.credentials.existingSecret | default (include "sitehost-exporter.fullname" .) }}
{{- end }}

{{- define "sitehost-exporter.hasClientSecret" -}}
{{- if or .Values.credentials.existingSecret .Values.credentials.clientSecret }}true{{ end -}}
{{- end }}

{{/*
The chart's own Secret (secret.yaml, named fullname) holds what the values give in clear: the
client secret (credentials.clientSecret without existingSecret) and the webhook token
(webhooks.token without existingSecret, receiver enabled). "true" when it carries each.
*/}}
{{- define "sitehost-exporter.chartClientSecret" -}}
{{- if and (not .Values.credentials.existingSecret) .Values.credentials.clientSecret }}true{{ end -}}
{{- end }}

{{- define "sitehost-exporter.chartWebhookToken" -}}
{{- if and .Values.webhooks.enabled (not .Values.webhooks.existingSecret) .Values.webhooks.token }}true{{ end -}}
{{- end }}

{{- define "sitehost-exporter.chartSecret" -}}
{{- if or (include "sitehost-exporter.chartClientSecret" .) (include "sitehost-exporter.chartWebhookToken" .) }}true{{ end -}}
{{- end }}

{{/* "true" when the receiver is on and its token comes from a Secret (mounted as a file). */}}
{{- define "sitehost-exporter.hasWebhookToken" -}}
{{- if and .Values.webhooks.enabled (or .Values.webhooks.existingSecret .Values.webhooks.token) }}true{{ end -}}
{{- end }}

{{/* Secret and key of the webhook token: webhooks.existingSecret, else the chart's Secret. */}}
{{- define "sitehost-exporter.webhookSecretName" -}}
{{- .Values.webhooks.existingSecret | default (include "sitehost-exporter.fullname" .) }}
{{- end }}

{{- define "sitehost-exporter.webhookSecretKey" -}}
{{- if .Values.webhooks.existingSecret }}{{ .Values.webhooks.existingSecretKey }}{{ else }}webhook-token{{ end -}}
{{- end }}

{{/*
Refuses webhook values the exporter would refuse at start (a crash loop instead of a failed
install) and Ingress settings that cannot work. The token is never part of a message.
*/}}
{{- define "sitehost-exporter.validateWebhooks" -}}
{{- $w := .Values.webhooks -}}
{{- if $w.enabled }}
{{- if not (or $w.existingSecret $w.token) }}
{{- fail "webhooks.enabled needs a token: set webhooks.existingSecret (a Secret holding it under webhooks.existingSecretKey) or webhooks.token (at least 16 characters; openssl rand -hex 32)" }}
{{- end }}
{{- if and (not $w.existingSecret) (lt (len $w.token) 16) }}
{{- fail "webhooks.token must be at least 16 characters long (generate one with: openssl rand -hex 32)" }}
{{- end }}
{{- $telemetry := dig "web" "telemetryPath" "/metrics" (.Values.config | default dict) }}
{{- if has $w.path (list "/" "/-/healthy" "/-/ready" $telemetry) }}
{{- fail (printf "webhooks.path %q is served by the exporter already (/, /-/healthy, /-/ready, %s); choose another path" $w.path $telemetry) }}
{{- end }}
{{- if and (include "sitehost-exporter.chartClientSecret" .) (include "sitehost-exporter.chartWebhookToken" .) (eq .Values.credentials.clientSecretKey "webhook-token") }}
{{- fail "credentials.clientSecretKey \"webhook-token\" is the key of the webhook token in the chart's Secret; choose another key" }}
{{- end }}
{{- end }}
{{- if $w.ingress.enabled }}
{{- if not $w.enabled }}
{{- fail "webhooks.ingress.enabled needs webhooks.enabled=true (and a token)" }}
{{- end }}
{{- if not $w.ingress.hosts }}
{{- fail "webhooks.ingress.hosts: name at least one host, the one registered on the platform (e.g. hooks.example.com)" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The exporter's config file: .Values.config as given, plus webhooks.enabled and webhooks.path from
the webhooks values when the receiver is on (the token is a file: SITEHOST_WEBHOOK_TOKEN_FILE). The
shard comes from the pod (SITEHOST_SHARD, SITEHOST_SHARD_COUNT) and overrides sites.shard; a
sites.shard in config would be misleading, so it is refused, and so is config.webhooks.
*/}}
{{- define "sitehost-exporter.config" -}}
{{- $cfg := deepCopy (.Values.config | default dict) -}}
{{- if hasKey ($cfg.sites | default dict) "shard" }}
{{- fail "config.sites.shard is set by the chart from the pod index and shards.count; remove it and set shards.count" }}
{{- end }}
{{- if hasKey $cfg "webhooks" }}
{{- fail "config.webhooks is set by the chart from webhooks.enabled and webhooks.path (the token from a Secret, webhooks.existingSecret or webhooks.token); remove it and set those" }}
{{- end }}
{{- if .Values.webhooks.enabled }}
{{- $_ := set $cfg "webhooks" (dict "enabled" true "path" .Values.webhooks.path) }}
{{- end }}
{{- toYaml $cfg -}}
{{- end }}

{{/* Seconds of a Go/Prometheus-style duration such as 10s, 1m30s or 500ms, rounded up. */}}
{{- define "sitehost-exporter.durationSeconds" -}}
{{- $units := dict "ms" 0.001 "s" 1.0 "m" 60.0 "h" 3600.0 "d" 86400.0 "w" 604800.0 -}}
{{- $total := 0.0 -}}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?(ms|s|m|h|d|w)" (toString .) -1 }}
{{- $number := regexFind "^[0-9]+(\\.[0-9]+)?" . | float64 -}}
{{- $unit := regexReplaceAll "^[0-9]+(\\.[0-9]+)?" . "" -}}
{{- $total = addf $total (mulf $number (get $units $unit)) -}}
{{- end -}}
{{- ceil $total | int -}}
{{- end }}

{{/*
The pod's grace period. On SIGTERM the exporter stops its collectors (up to 5 s), gives the
export in flight logs.shutdownTimeout, shuts its OTLP client down (up to 2 s) and releases the
checkpoint lock: logs.shutdownTimeout + 20 s leaves room. A native sidecar collector gets
SIGTERM only after the exporter exited, within the same grace period.
*/}}
{{- define "sitehost-exporter.gracePeriodNeeded" -}}
{{- $shutdown := dig "logs" "shutdownTimeout" "10s" (.Values.config | default dict) -}}
{{- $need := add (include "sitehost-exporter.durationSeconds" $shutdown | int) 20 -}}
{{- if .Values.otelCollector.enabled }}{{ $need = add $need (int .Values.otelCollector.shutdownSeconds) }}{{ end -}}
{{- $need -}}
{{- end }}

{{- define "sitehost-exporter.gracePeriod" -}}
{{- $need := include "sitehost-exporter.gracePeriodNeeded" . | int -}}
{{- $set := .Values.terminationGracePeriodSeconds -}}
{{- if kindIs "invalid" $set -}}
{{- $need -}}
{{- else if lt (int $set) $need -}}
{{- fail (printf "terminationGracePeriodSeconds %d is shorter than the %d s the pod needs to stop cleanly (logs.shutdownTimeout + 20 s%s); raise it or leave it empty" (int $set) $need (ternary " + otelCollector.shutdownSeconds" "" .Values.otelCollector.enabled)) -}}
{{- else -}}
{{- int $set -}}
{{- end -}}
{{- end }}

{{/* "true" when the exporter serves HTTPS (its web config has tls_server_config). */}}
{{- define "sitehost-exporter.tls" -}}
{{- if or .Values.webConfig.tls (hasKey (.Values.webConfig.config | default dict) "tls_server_config") }}true{{ end -}}
{{- end }}

{{- define "sitehost-exporter.webConfigSecretName" -}}
{{- .Values.webConfig.existingSecret | default (printf "%s-web-config" (include "sitehost-exporter.fullname" .)) }}
{{- end }}

{{- define "sitehost-exporter.hasWebConfig" -}}
{{- if or .Values.webConfig.existingSecret .Values.webConfig.config }}true{{ end -}}
{{- end }}

{{/*
A probe with httpGet.scheme HTTPS when the exporter serves TLS and the probe names no scheme.
Call with (dict "probe" .Values.livenessProbe "root" $).
*/}}
{{- define "sitehost-exporter.probe" -}}
{{- $probe := deepCopy .probe -}}
{{- if and $probe.httpGet (include "sitehost-exporter.tls" .root) (not $probe.httpGet.scheme) }}
{{- $_ := set $probe.httpGet "scheme" "HTTPS" }}
{{- end }}
{{- toYaml $probe -}}
{{- end }}

{{/* Scrape scheme of the ServiceMonitor / PodMonitor: the value, or https with TLS. */}}
{{- define "sitehost-exporter.scrapeScheme" -}}
{{- .monitor.scheme | default (ternary "https" "http" (eq (include "sitehost-exporter.tls" .root) "true")) -}}
{{- end }}

{{/*
The collector's configuration: otelCollector.config plus the health_check extension the probes
use and, with persistentQueue.enabled, a file_storage extension on the checkpoint volume that
every exporter but debug and nop uses as its sending queue, retrying without a time limit
(values the exporter's own config sets win).
*/}}
{{- define "sitehost-exporter.otelCollectorConfig" -}}
{{- $oc := .Values.otelCollector -}}
{{- $cfg := deepCopy ($oc.config | default dict) -}}
{{- $extensions := $cfg.extensions | default dict -}}
{{- $names := list -}}
{{- if not (hasKey $extensions "health_check") }}
{{- $_ := set $extensions "health_check" (dict "endpoint" (printf "${env:POD_IP}:%d" (int $oc.healthCheckPort))) }}
{{- end }}
{{- $names = append $names "health_check" -}}
{{- if $oc.persistentQueue.enabled }}
{{- $_ := set $extensions "file_storage/queue" (dict "directory" $oc.persistentQueue.directory "create_directory" true "fsync" true) }}
{{- $names = append $names "file_storage/queue" -}}
{{- range $name, $exporter := ($cfg.exporters | default dict) }}
{{- $type := first (splitList "/" $name) }}
{{- if not (has $type (list "debug" "nop")) }}
{{- $exp := $exporter | default dict }}
{{- $queue := mergeOverwrite (dict "enabled" true "storage" "file_storage/queue") ($exp.sending_queue | default dict) }}
{{- $_ := set $exp "sending_queue" $queue }}
{{- /* Retry until the backend takes it: the default gives up (drops) after 5 minutes. */}}
{{- $retry := mergeOverwrite (dict "enabled" true "max_elapsed_time" "0s") ($exp.retry_on_failure | default dict) }}
{{- $_ := set $exp "retry_on_failure" $retry }}
{{- $_ := set $cfg.exporters $name $exp }}
{{- end }}
{{- end }}
{{- end }}
{{- $_ := set $cfg "extensions" $extensions -}}
{{- $service := $cfg.service | default dict -}}
{{- $_ := set $service "extensions" (concat ($service.extensions | default list) $names | uniq) -}}
{{- $_ := set $cfg "service" $service -}}
{{- toYaml $cfg -}}
{{- end }}

{{/*
The label matchers of the exporter's series in every rule: prometheusRule.selector, else the job the
ServiceMonitor or PodMonitor gives its targets (the value of its jobLabel; without one, the
Service's name, or namespace/name of the PodMonitor).
*/}}
{{- define "sitehost-exporter.ruleSelector" -}}
{{- if .Values.prometheusRule.selector -}}
{{- .Values.prometheusRule.selector -}}
{{- else -}}
{{- $pod := .Values.podMonitor.enabled -}}
{{- $monitor := ternary .Values.podMonitor .Values.serviceMonitor $pod -}}
{{- $labels := include "sitehost-exporter.labels" . | fromYaml -}}
{{- $labels = merge $labels (ternary .Values.podLabels .Values.service.labels $pod | default dict) -}}
{{- $job := "" -}}
{{- if not $monitor.jobLabel -}}
{{- $name := include "sitehost-exporter.fullname" . -}}
{{- $job = ternary (printf "%s/%s" ($monitor.namespace | default .Release.Namespace) $name) $name $pod -}}
{{- else if hasKey $labels $monitor.jobLabel -}}
{{- $job = index $labels $monitor.jobLabel -}}
{{- else -}}
{{- fail (printf "prometheusRule.selector: the %s has no label %s (its jobLabel) to name the job the rules select; set prometheusRule.selector, e.g. job=\"sitehost-exporter\"" (ternary "pods" "Service" $pod) $monitor.jobLabel) -}}
{{- end -}}
{{- printf "job=%q" $job -}}
{{- end -}}
{{- end }}

{{/* A rule threshold as PromQL: integers without a fraction or exponent (values arrive as floats). */}}
{{- define "sitehost-exporter.promNumber" -}}
{{- $v := float64 . -}}
{{- if eq $v (float64 (int64 $v)) }}{{ int64 $v }}{{ else }}{{ $v }}{{ end -}}
{{- end }}

{{/* Text with each %(name)s replaced by its value. Call with (dict "text" ... "subst" dict). */}}
{{- define "sitehost-exporter.fillPlaceholders" -}}
{{- $text := .text -}}
{{- range $k, $v := .subst }}{{ $text = replace (printf "%%(%s)s" $k) (toString $v) $text }}{{ end -}}
{{- $text -}}
{{- end }}

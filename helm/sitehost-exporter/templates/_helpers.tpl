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
use, its own metrics on otelCollector.telemetry.port (service.telemetry) and, with
persistentQueue.enabled, a file_storage extension on the checkpoint volume that every exporter but
debug and nop uses as its sending queue, bounded in bytes (sitehost-exporter.queueBytes), retrying
without a time limit (values the exporter's own config sets win, within the bound).
*/}}
{{- define "sitehost-exporter.otelCollectorConfig" -}}
{{- $oc := .Values.otelCollector -}}
{{- $pq := $oc.persistentQueue -}}
{{- $cfg := deepCopy ($oc.config | default dict) -}}
{{- $extensions := $cfg.extensions | default dict -}}
{{- $names := list -}}
{{- if not (hasKey $extensions "health_check") }}
{{- $_ := set $extensions "health_check" (dict "endpoint" (printf "${env:POD_IP}:%d" (int $oc.healthCheckPort))) }}
{{- end }}
{{- $names = append $names "health_check" -}}
{{- if $pq.enabled }}
{{- /* Compaction gives the space of a drained queue back to the volume (bbolt files never shrink). */}}
{{- $compaction := dict "directory" $pq.directory "on_start" true "on_rebound" true }}
{{- $_ := set $extensions "file_storage/queue" (dict "directory" $pq.directory "create_directory" true "fsync" true "compaction" $compaction) }}
{{- $names = append $names "file_storage/queue" -}}
{{- $queued := list }}
{{- range $name, $_ := ($cfg.exporters | default dict) }}
{{- if not (has (first (splitList "/" $name)) (list "debug" "nop")) }}{{ $queued = append $queued $name }}{{ end }}
{{- end }}
{{- $bytes := include "sitehost-exporter.queueBytes" (dict "root" . "queues" (len $queued)) | int64 }}
{{- range $name := $queued }}
{{- $exp := index $cfg.exporters $name | default dict }}
{{- $queue := mergeOverwrite (dict "enabled" true "storage" "file_storage/queue" "sizer" "bytes" "queue_size" $bytes) ($exp.sending_queue | default dict) }}
{{- if ne (toString $queue.sizer) "bytes" }}
{{- fail (printf "otelCollector.config.exporters.%s.sending_queue.sizer %q: the persistent queue shares the checkpoint volume and is bounded in bytes; use sizer: bytes (or leave it out)" $name (toString $queue.sizer)) }}
{{- end }}
{{- if gt (int64 $queue.queue_size) $bytes }}
{{- fail (printf "otelCollector.config.exporters.%s.sending_queue.queue_size %d is larger than the %d bytes the checkpoint volume allows each of its %d queue(s) (see the chart README, persistent queue)" $name (int64 $queue.queue_size) $bytes (len $queued)) }}
{{- end }}
{{- $_ := set $queue "queue_size" (int64 $queue.queue_size) }}
{{- $_ := set $exp "sending_queue" $queue }}
{{- /* Retry until the backend takes it: the default gives up (drops) after 5 minutes. */}}
{{- $retry := mergeOverwrite (dict "enabled" true "max_elapsed_time" "0s") ($exp.retry_on_failure | default dict) }}
{{- $_ := set $exp "retry_on_failure" $retry }}
{{- $_ := set $cfg.exporters $name $exp }}
{{- end }}
{{- end }}
{{- $_ := set $cfg "extensions" $extensions -}}
{{- $service := $cfg.service | default dict -}}
{{- $_ := set $service "extensions" (concat ($service.extensions | default list) $names | uniq) -}}
{{- if $oc.telemetry.enabled }}
{{- $telemetry := $service.telemetry | default dict }}
{{- if not (hasKey $telemetry "metrics") }}
{{- $reader := dict "pull" (dict "exporter" (dict "prometheus" (dict "host" "${env:POD_IP}" "port" (int $oc.telemetry.port)))) }}
{{- $_ := set $telemetry "metrics" (dict "level" "normal" "readers" (list $reader)) }}
{{- end }}
{{- $_ := set $service "telemetry" $telemetry }}
{{- end }}
{{- $_ := set $cfg "service" $service -}}
{{- toYaml $cfg -}}
{{- end }}

{{/* Bytes of a Kubernetes quantity such as 1Gi, 500M or 1073741824. */}}
{{- define "sitehost-exporter.quantityBytes" -}}
{{- $q := toString . -}}
{{- $units := dict "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "k" 1000 "K" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "" 1 -}}
{{- if not (regexMatch "^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|k|K|M|G|T)?$" $q) }}
{{- fail (printf "%q is not a size in bytes (a number with Ki, Mi, Gi, Ti, k, M, G or T)" $q) }}
{{- end -}}
{{- $unit := regexReplaceAll "^[0-9.]+" $q "" -}}
{{- $number := regexFind "^[0-9.]+" $q -}}
{{- mulf (float64 $number) (float64 (get $units $unit)) | floor | int64 -}}
{{- end }}

{{/*
Bytes each persistent sending queue may hold. The queues share the checkpoint volume
(persistence.size) with the exporter's own files (persistentQueue.reserve); file_storage's bbolt
file does not shrink until compaction, which writes a copy beside it, so a queue can take twice its
bytes on disk: bytes = (size - reserve) / (2 x queues). persistentQueue.maxSize lowers it; a larger
one is refused. Call with (dict "root" $ "queues" n).
*/}}
{{- define "sitehost-exporter.queueBytes" -}}
{{- $root := .root -}}
{{- $pq := $root.Values.otelCollector.persistentQueue -}}
{{- $queues := max 1 (int64 .queues) -}}
{{- $volume := include "sitehost-exporter.quantityBytes" $root.Values.persistence.size | int64 -}}
{{- $reserve := include "sitehost-exporter.quantityBytes" $pq.reserve | int64 -}}
{{- if le $volume $reserve }}
{{- fail (printf "persistence.size %s leaves nothing for the collector's persistent queue after otelCollector.persistentQueue.reserve %s; raise persistence.size or disable otelCollector.persistentQueue" $root.Values.persistence.size $pq.reserve) }}
{{- end -}}
{{- $allowed := div (sub $volume $reserve) (mul 2 $queues) -}}
{{- if $pq.maxSize }}
{{- $max := include "sitehost-exporter.quantityBytes" $pq.maxSize | int64 -}}
{{- if gt $max $allowed }}
{{- fail (printf "otelCollector.persistentQueue.maxSize %s (%d bytes) is more than the checkpoint volume allows: (persistence.size %s - persistentQueue.reserve %s) / (2 x %d queue(s)) = %d bytes; raise persistence.size or lower maxSize (chart README, persistent queue)" $pq.maxSize $max $root.Values.persistence.size $pq.reserve $queues $allowed) }}
{{- end -}}
{{- $allowed = $max -}}
{{- end -}}
{{- $allowed -}}
{{- end }}

{{/*
The job the ServiceMonitor or PodMonitor gives the exporter's targets: the value of its jobLabel on
the Service or pods; without a jobLabel, the Service's name, or namespace/name of the PodMonitor.
*/}}
{{- define "sitehost-exporter.scrapeJob" -}}
{{- $pod := .Values.podMonitor.enabled -}}
{{- $monitor := ternary .Values.podMonitor .Values.serviceMonitor $pod -}}
{{- $labels := include "sitehost-exporter.labels" . | fromYaml -}}
{{- $labels = merge $labels (ternary .Values.podLabels .Values.service.labels $pod | default dict) -}}
{{- if not $monitor.jobLabel -}}
{{- $name := include "sitehost-exporter.fullname" . -}}
{{- ternary (printf "%s/%s" ($monitor.namespace | default (include "sitehost-exporter.namespace" .)) $name) $name $pod -}}
{{- else if hasKey $labels $monitor.jobLabel -}}
{{- index $labels $monitor.jobLabel -}}
{{- else -}}
{{- fail (printf "prometheusRule.selector: the %s has no label %s (its jobLabel) to name the job the rules select; set prometheusRule.selector, e.g. job=\"sitehost-exporter\"" (ternary "pods" "Service" $pod) $monitor.jobLabel) -}}
{{- end -}}
{{- end }}

{{/* The label matchers of the exporter's series in every rule: prometheusRule.selector, else its job. */}}
{{- define "sitehost-exporter.ruleSelector" -}}
{{- .Values.prometheusRule.selector | default (printf "job=%q" (include "sitehost-exporter.scrapeJob" .)) -}}
{{- end }}

{{/*
The collector sidecar's metrics: scraped as the exporter's job with "-otel-collector" appended
(servicemonitor.yaml, podmonitor.yaml).
*/}}
{{- define "sitehost-exporter.ruleCollectorSelector" -}}
{{- .Values.prometheusRule.collectorSelector | default (printf "job=%q" (printf "%s-otel-collector" (include "sitehost-exporter.scrapeJob" .))) -}}
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

{{/* The namespace of every namespaced object: namespaceOverride, else the release's. */}}
{{- define "sitehost-exporter.namespace" -}}
{{- .Values.namespaceOverride | default .Release.Namespace | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/*
imagePullSecrets of the pods: global.imagePullSecrets then imagePullSecrets, each a name or
{name: ...}, without repeats.
*/}}
{{- define "sitehost-exporter.imagePullSecrets" -}}
{{- $names := list -}}
{{- range (concat (.Values.global.imagePullSecrets | default list) (.Values.imagePullSecrets | default list)) -}}
{{- if kindIs "string" . }}{{ $names = append $names . }}{{ else }}{{ $names = append $names .name }}{{ end -}}
{{- end -}}
{{- range ($names | compact | uniq) }}
- name: {{ . }}
{{- end -}}
{{- end }}

{{/* The limits and attachMetadata of a ServiceMonitor or PodMonitor (call with its values). */}}
{{- define "sitehost-exporter.scrapeLimits" -}}
{{- range $k := list "sampleLimit" "targetLimit" "labelLimit" "labelNameLengthLimit" "labelValueLengthLimit" }}
{{- with index $ $k }}
{{ $k }}: {{ int64 . }}
{{- end }}
{{- end }}
{{- with .attachMetadata }}
attachMetadata:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* "true" when the ServiceMonitor or PodMonitor also scrapes the collector sidecar's own metrics. */}}
{{- define "sitehost-exporter.scrapeCollector" -}}
{{- $t := .Values.otelCollector.telemetry -}}
{{- if and .Values.otelCollector.enabled $t.enabled $t.scrape }}true{{ end -}}
{{- end }}

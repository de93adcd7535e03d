{{/*
Probing the sites (values probes.*, docs/probes.md): blackbox_exporter, the per-shard Services that
give Prometheus each shard's /sd/probes, and the ScrapeConfig.
*/}}

{{/* blackbox_exporter's Deployment, Service and ConfigMap: <fullname>-blackbox-exporter (63 characters at most). */}}
{{- define "sitehost-exporter.blackboxName" -}}
{{- printf "%s-blackbox-exporter" (include "sitehost-exporter.fullname" . | trunc 45 | trimSuffix "-") -}}
{{- end }}

{{/*
blackbox_exporter's own name label: the exporter's ServiceMonitor, PodMonitor, NetworkPolicy and
PodDisruptionBudget select app.kubernetes.io/name of the chart and leave these pods alone.
*/}}
{{- define "sitehost-exporter.blackboxSelectorLabels" -}}
app.kubernetes.io/name: blackbox-exporter
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: prober
{{- end }}

{{- define "sitehost-exporter.blackboxLabels" -}}
helm.sh/chart: {{ include "sitehost-exporter.chart" . }}
{{ include "sitehost-exporter.blackboxSelectorLabels" . }}
app.kubernetes.io/version: {{ .Values.probes.blackboxExporter.image.tag | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: {{ include "sitehost-exporter.name" . }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* host:port Prometheus sends the probes to: the chart's blackbox_exporter, or probes.blackboxExporter.address. */}}
{{- define "sitehost-exporter.blackboxAddress" -}}
{{- if .Values.probes.blackboxExporter.enabled -}}
{{- printf "%s.%s.svc:9115" (include "sitehost-exporter.blackboxName" .) (include "sitehost-exporter.namespace" .) -}}
{{- else -}}
{{- .Values.probes.blackboxExporter.address -}}
{{- end -}}
{{- end }}

{{/* "true" when the chart renders one Service per shard (the ScrapeConfig needs them). */}}
{{- define "sitehost-exporter.shardServices" -}}
{{- if or .Values.probes.shardServices .Values.probes.scrape.enabled }}true{{ end -}}
{{- end }}

{{/* The Service of shard i, <fullname>-shard-<i> (62 characters at most). Call with (dict "root" $ "index" i). */}}
{{- define "sitehost-exporter.shardServiceName" -}}
{{- printf "%s-shard-%d" (include "sitehost-exporter.fullname" .root) (int .index) -}}
{{- end }}

{{/*
Labels of the per-shard Services: the chart's, without app.kubernetes.io/name, so that the
ServiceMonitor (which selects the chart's name and instance) does not scrape every pod twice.
*/}}
{{- define "sitehost-exporter.shardServiceLabels" -}}
helm.sh/chart: {{ include "sitehost-exporter.chart" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: {{ include "sitehost-exporter.name" . }}
app.kubernetes.io/component: shard
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
What the /sd/probes requests use: the probes.scrape.discovery values, else the ServiceMonitor's (or
PodMonitor's) tlsConfig and basicAuth, as for /metrics. Call with (dict "root" $ "key" "tlsConfig").
*/}}
{{- define "sitehost-exporter.discoverySetting" -}}
{{- $v := .root.Values -}}
{{- $monitor := ternary $v.podMonitor $v.serviceMonitor $v.podMonitor.enabled -}}
{{- with (index $v.probes.scrape.discovery .key) | default (index $monitor .key) }}{{ toYaml . }}{{ end -}}
{{- end }}

{{/*
Refuses probe settings that cannot work: a scrape without a blackbox_exporter, with /sd/probes off,
a module the targets name that the chart's blackbox_exporter lacks, TLS files an http_sd_config of
a ScrapeConfig cannot take.
*/}}
{{- define "sitehost-exporter.validateProbes" -}}
{{- $p := .Values.probes -}}
{{- $cfg := .Values.config | default dict -}}
{{- if $p.scrape.enabled }}
{{- if not (include "sitehost-exporter.blackboxAddress" .) }}
{{- fail "probes.scrape.enabled needs a blackbox_exporter: probes.blackboxExporter.enabled=true, or probes.blackboxExporter.address (host:port of an existing one)" }}
{{- end }}
{{- if eq (toString (dig "probes" "enabled" true $cfg)) "false" }}
{{- fail "probes.scrape.enabled reads /sd/probes, which config.probes.enabled=false turns off; remove one of the two" }}
{{- end }}
{{- $tls := include "sitehost-exporter.discoverySetting" (dict "root" . "key" "tlsConfig") | fromYaml }}
{{- range $k := list "caFile" "certFile" "keyFile" }}
{{- if hasKey $tls $k }}
{{- fail (printf "the /sd/probes TLS config has %s: a ScrapeConfig's httpSDConfigs take the CA, certificate and key from Secrets or ConfigMaps only (ca, cert, keySecret); set probes.scrape.discovery.tlsConfig" $k) }}
{{- end }}
{{- end }}
{{- end }}
{{- if $p.blackboxExporter.enabled }}
{{- $probes := dig "probes" dict $cfg -}}
{{- $named := list ($probes.module | default "http_2xx") -}}
{{- range ($probes.overrides | default list) }}{{ with .module }}{{ $named = append $named . }}{{ end }}{{ end -}}
{{- range $m := $named | uniq }}
{{- if not (hasKey ($p.blackboxExporter.modules | default dict) $m) }}
{{- fail (printf "module %q, named by config.probes, is not among probes.blackboxExporter.modules (%s): every target's probe would fail" $m (keys ($p.blackboxExporter.modules | default dict) | sortAlpha | join ", ")) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The SLO rules of config.slos, as `sitehost-exporter slo-rules` prints them for the same section
(src/slo/rules.ts; a test renders both and compares them): SLI recording rules over each window and
multi-window multi-burn-rate alerts. The defaults are the exporter's. The objectives are not in
the rules: the exporter publishes them as sitehost_site_slo_objective_ratio.
*/}}
{{- define "sitehost-exporter.sloRuleGroups" -}}
{{- $s := .Values.config.slos | default dict -}}
{{- $enabled := true -}}
{{- if hasKey $s "enabled" }}{{ $enabled = $s.enabled }}{{ end -}}
{{- if $enabled -}}
{{- $windows := $s.windows | default (list "5m" "30m" "1h" "2h" "6h" "1d" "3d") -}}
{{- $period := $s.period | default "28d" -}}
{{- if not (has $period $windows) }}{{ $windows = append $windows $period }}{{ end -}}
{{- $min := $s.minFailedRequests | default 10 -}}
{{- $page := dict "severity" "critical" "windows" (list (dict "burnRate" 14.4 "long" "1h" "short" "5m" "for" "2m") (dict "burnRate" 6 "long" "6h" "short" "30m" "for" "15m")) -}}
{{- $ticket := dict "severity" "warning" "windows" (list (dict "burnRate" 1 "long" "3d" "short" "6h" "for" "1h")) -}}
{{- $alerts := $s.alerts | default (dict "page" $page "ticket" $ticket) -}}
{{- $by := "cluster, job, instance, site_id, site" -}}
{{- $responses := "sitehost_site_http_responses_total" -}}
{{- $duration := "sitehost_site_http_request_duration_seconds" -}}
{{- $objective := "sitehost_site_slo_objective_ratio" -}}
{{- $sli := list -}}
{{- range $w := $windows -}}
{{- $sli = append $sli (dict "record" (printf "sitehost_site_slo:requests:increase%s" $w) "expr" (printf "sum by (%s) (increase(%s[%s]))" $by $responses $w) "labels" (dict "slo" "availability")) -}}
{{- $sli = append $sli (dict "record" (printf "sitehost_site_slo:errors:increase%s" $w) "expr" (printf "sum by (%s) (increase(%s{status_class=\"5xx\"}[%s])) or sum by (%s) (increase(%s[%s])) * 0" $by $responses $w $by $responses $w) "labels" (dict "slo" "availability")) -}}
{{- $sli = append $sli (dict "record" (printf "sitehost_site_slo:requests:increase%s" $w) "expr" (printf "sum by (%s) (increase(%s_count[%s]))" $by $duration $w) "labels" (dict "slo" "latency")) -}}
{{- $sli = append $sli (dict "record" (printf "sitehost_site_slo:errors:increase%s" $w) "expr" (printf "sum by (%s) (increase(%s_count[%s])) - sum by (%s) (increase(%s_bucket[%s]) and on (site_id, le) %s{slo=\"latency\"})" $by $duration $w $by $duration $w $objective) "labels" (dict "slo" "latency")) -}}
{{- end -}}
{{- $kinds := list (dict "slo" "availability" "alert" "SitehostSiteAvailabilityBudgetBurn" "what" "answers 5xx") (dict "slo" "latency" "alert" "SitehostSiteLatencyBudgetBurn" "what" "serves slower than its latency threshold") -}}
{{- $burn := list -}}
{{- range $k := $kinds -}}
{{- $sel := printf "{slo=\"%s\"}" $k.slo -}}
{{- range $name := keys $alerts | sortAlpha -}}
{{- $cls := get $alerts $name -}}
{{- range $w := $cls.windows -}}
{{- $long := printf "sitehost_site_slo:errors:increase%s%s / sitehost_site_slo:requests:increase%s%s > on (site_id, slo) group_left () (%v * (1 - max by (site_id, slo) (%s%s)))" $w.long $sel $w.long $sel $w.burnRate $objective $sel -}}
{{- $short := printf "sitehost_site_slo:errors:increase%s%s / sitehost_site_slo:requests:increase%s%s > on (site_id, slo) group_left () (%v * (1 - max by (site_id, slo) (%s%s)))" $w.short $sel $w.short $sel $w.burnRate $objective $sel -}}
{{- $guard := printf "sitehost_site_slo:errors:increase%s%s >= %v" $w.long $sel $min -}}
{{- $rule := dict "alert" $k.alert "expr" (printf "%s\nand on (site_id, slo) %s\nand on (site_id, slo) %s" $long $short $guard) -}}
{{- if $w.for }}{{ $_ := set $rule "for" $w.for }}{{ end -}}
{{- $_ := set $rule "labels" (dict "severity" $cls.severity "class" $name "long" $w.long "short" $w.short) -}}
{{- $summary := printf "Site {{ $labels.site }} is spending its %s error budget too fast." $k.slo -}}
{{- $description := printf "Site {{ $labels.site }} (id {{ $labels.site_id }}) %s for {{ $value | humanizePercentage }} of its requests over the last %s, and still over the last %s: at least %v times the rate its objective allows." $k.what $w.long $w.short $w.burnRate -}}
{{- $runbook := printf "https://github.com/sitehost-exporter/sitehost-exporter/blob/main/docs/runbook.md#%s" (lower $k.alert) -}}
{{- $_ := set $rule "annotations" (dict "summary" $summary "description" $description "runbook_url" $runbook) -}}
{{- $burn = append $burn $rule -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toYaml (list (dict "name" "sitehost-slo-sli" "rules" $sli) (dict "name" "sitehost-slo-alerts" "rules" $burn)) -}}
{{- end -}}
{{- end -}}

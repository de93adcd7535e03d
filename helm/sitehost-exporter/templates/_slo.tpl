{{/*
The SLO rules of config.slos, as `sitehost-exporter slo-rules` prints them for the same section
(src/slo/rules.ts, sliRules.ts and windows.ts; a test renders both and compares them): SLI recording
rules over each window (up to 1h from the counters, longer ones summed from the recorded 5-minute or
2-hour increases, those over 6h in a group evaluated every 2m30s) and multi-window multi-burn-rate
alerts. The defaults are the exporter's. The objectives are not in the rules: the exporter publishes
them as sitehost_site_slo_objective_ratio, the latency one with its threshold_seconds.
*/}}

{{/* Milliseconds of a Prometheus duration such as 5m, 1h30m or 2.5s, as a float. */}}
{{- define "sitehost-exporter.durationMs" -}}
{{- $unit := dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000 "d" 86400000 "w" 604800000 -}}
{{- $total := 0.0 -}}
{{- range $part := regexFindAll "[0-9]+(\\.[0-9]+)?(ms|s|m|h|d|w)" . -1 -}}
{{- $u := regexFind "(ms|s|m|h|d|w)$" $part -}}
{{- $total = addf $total (mulf (float64 (trimSuffix $u $part)) (get $unit $u)) -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{- define "sitehost-exporter.sloRuleGroups" -}}
{{- $s := .Values.config.slos | default dict -}}
{{- $enabled := true -}}
{{- if hasKey $s "enabled" }}{{ $enabled = $s.enabled }}{{ end -}}
{{- if $enabled -}}
{{- $windows := $s.windows | default (list "5m" "30m" "1h" "2h" "6h" "1d" "3d") -}}
{{- $period := $s.period | default "28d" -}}
{{- $min := $s.minFailedRequests | default 10 -}}
{{- $page := dict "severity" "critical" "windows" (list (dict "burnRate" 14.4 "long" "1h" "short" "5m" "for" "2m") (dict "burnRate" 6 "long" "6h" "short" "30m" "for" "15m")) -}}
{{- $ticket := dict "severity" "warning" "windows" (list (dict "burnRate" 1 "long" "3d" "short" "6h" "for" "1h")) -}}
{{- $alerts := $s.alerts | default (dict "page" $page "ticket" $ticket) -}}
{{- $grouping := $s.groupingLabels | default ((.Values.prometheusRule | default dict).groupingLabels) | default (list "cluster" "job" "instance") -}}
{{- $by := join ", " (concat $grouping (list "site_id" "site")) -}}
{{- $on := printf "%s, slo" $by -}}
{{- $probes := $s.probes | default dict -}}
{{- $probesOn := true -}}
{{- if hasKey $probes "enabled" }}{{ $probesOn = $probes.enabled }}{{ end -}}
{{- $minProbes := $probes.minFailedProbes | default 3 -}}
{{- $busySeverity := $probes.busySeverity | default "warning" -}}
{{- $probeGrouping := list -}}
{{- if hasKey $probes "groupingLabels" }}{{ $probeGrouping = $probes.groupingLabels }}{{ else }}{{ range $l := $grouping }}{{ if not (has $l (list "job" "instance")) }}{{ $probeGrouping = append $probeGrouping $l }}{{ end }}{{ end }}{{ end -}}
{{- $probeBy := join ", " (append $probeGrouping "site_id") -}}
{{- $probe := "probe_success{site_id!=\"\"}" -}}
{{- $sites := printf "(0 * max by (%s) (sitehost_site_slo_objective_ratio{slo=\"availability\"}) + 1)" $by -}}
{{- $responses := "sitehost_site_http_responses_total" -}}
{{- $duration := "sitehost_site_http_request_duration_seconds" -}}
{{- $objective := "sitehost_site_slo_objective_ratio" -}}
{{- /* Thresholds in use, in seconds as the exporter writes them, in the order of the histogram's bounds. */ -}}
{{- $latencies := list ($s.latency | default (dict "objective" 95 "threshold" "1s")) -}}
{{- if and (hasKey $s "latency") (not $s.latency) }}{{ $latencies = list }}{{ end -}}
{{- range $o := $s.overrides | default list }}{{ if $o.latency }}{{ $latencies = append $latencies $o.latency }}{{ end }}{{ end -}}
{{- $inUse := list -}}
{{- range $l := $latencies }}{{ $inUse = append $inUse (printf "%v" (divf (include "sitehost-exporter.durationMs" $l.threshold | float64) 1000)) }}{{ end -}}
{{- $thresholds := list -}}
{{- range $b := list "0.005" "0.01" "0.025" "0.05" "0.1" "0.25" "0.5" "1" "2.5" "5" "10" "30" }}{{ if has $b $inUse }}{{ $thresholds = append $thresholds $b }}{{ end }}{{ end -}}
{{- /* Every window recorded, shortest first: the configured ones, the period, and the bases of the summed ones. */ -}}
{{- $wanted := uniq (append $windows $period) -}}
{{- $coarse := false -}}
{{- range $w := $wanted -}}
{{- $ms := include "sitehost-exporter.durationMs" $w | float64 -}}
{{- if gt $ms 259200000.0 }}{{ $coarse = true }}{{ $wanted = append $wanted "2h" }}{{ end -}}
{{- if gt $ms 3600000.0 }}{{ $wanted = append $wanted "5m" }}{{ end -}}
{{- end -}}
{{- $keys := list -}}
{{- range $w := uniq $wanted }}{{ $keys = append $keys (printf "%020.0f %s" (include "sitehost-exporter.durationMs" $w | float64) $w) }}{{ end -}}
{{- $fast := list -}}
{{- $slow := list -}}
{{- range $key := sortAlpha $keys -}}
{{- $w := index (splitList " " $key) 1 -}}
{{- $ms := include "sitehost-exporter.durationMs" $w | float64 -}}
{{- $rules := list -}}
{{- if le $ms 3600000.0 -}}
{{- $good := list -}}
{{- range $t := $thresholds -}}
{{- $le := ternary (printf "le=~\"%s|%s.0\"" $t $t) (printf "le=\"%s\"" $t) (regexMatch "^[0-9]+$" $t) -}}
{{- $good = append $good (printf "sum by (%s) (increase(%s_bucket{%s}[%s])) and on (%s) %s{slo=\"latency\", threshold_seconds=\"%s\"}" $by $duration $le $w $by $objective $t) -}}
{{- end -}}
{{- $rules = append $rules (dict "record" (printf "sitehost_site_slo:requests:increase%s" $w) "expr" (printf "sum by (%s) (increase(%s[%s]))" $by $responses $w) "labels" (dict "slo" "availability")) -}}
{{- $rules = append $rules (dict "record" (printf "sitehost_site_slo:errors:increase%s" $w) "expr" (printf "sum by (%s) (increase(%s{status_class=\"5xx\"}[%s])) or sum by (%s) (sitehost_site_slo:requests:increase%s{slo=\"availability\"}) * 0" $by $responses $w $by $w) "labels" (dict "slo" "availability")) -}}
{{- $rules = append $rules (dict "record" (printf "sitehost_site_slo:requests:increase%s" $w) "expr" (printf "sum by (%s) (increase(%s_count[%s]))" $by $duration $w) "labels" (dict "slo" "latency")) -}}
{{- if $good -}}
{{- $rules = append $rules (dict "record" (printf "sitehost_site_slo:errors:increase%s" $w) "expr" (printf "sum by (%s) (sitehost_site_slo:requests:increase%s{slo=\"latency\"})\n- (\n  %s\n)" $by $w (join "\n  or " $good)) "labels" (dict "slo" "latency")) -}}
{{- end -}}
{{- if $probesOn -}}
{{- $rules = append $rules (dict "record" (printf "sitehost_site_slo:requests:increase%s" $w) "expr" (printf "sum by (%s) (count_over_time(%s[%s]))\n* on (%s) group_right ()\n%s" $probeBy $probe $w $probeBy $sites) "labels" (dict "slo" "probe")) -}}
{{- $rules = append $rules (dict "record" (printf "sitehost_site_slo:errors:increase%s" $w) "expr" (printf "sum by (%s) (count_over_time(%s[%s]) - sum_over_time(%s[%s]))\n* on (%s) group_right ()\n%s" $probeBy $probe $w $probe $w $probeBy $sites) "labels" (dict "slo" "probe")) -}}
{{- end -}}
{{- else -}}
{{- /* Over 6h, and the 2h base of the longer ones: one step per base window, in the slow group. */ -}}
{{- $slowSum := or (gt $ms 21600000.0) (and $coarse (eq $w "2h")) -}}
{{- $base := ternary "5m" "2h" (le $ms 259200000.0) -}}
{{- $step := ternary $base "30s" $slowSum -}}
{{- $over := ternary "" " / 10" $slowSum -}}
{{- $summed := list "availability" "latency" -}}
{{- if $probesOn }}{{ $summed = append $summed "probe" }}{{ end -}}
{{- range $slo := $summed -}}
{{- range $kind := list "requests" "errors" -}}
{{- $latest := printf "sitehost_site_slo:%s:increase%s{slo=\"%s\"}" $kind $base $slo -}}
{{- $sum := printf "sum_over_time(%s[%s:%s])" $latest $w $step -}}
{{- $stepS := divf (include "sitehost-exporter.durationMs" $step | float64) 1000 -}}
{{- $since := printf "%s * (time() %% %v) / %v" $latest $stepS $stepS -}}
{{- $expr := ternary (printf "%s + %s\nor %s" $sum $since $since) (printf "%s%s" $sum $over) $slowSum -}}
{{- $rules = append $rules (dict "record" (printf "sitehost_site_slo:%s:increase%s" $kind $w) "expr" $expr "labels" (dict "slo" $slo)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and (le $ms 21600000.0) (not (and $coarse (eq $w "2h"))) }}{{ $fast = concat $fast $rules }}{{ else }}{{ $slow = concat $slow $rules }}{{ end -}}
{{- end -}}
{{- $kinds := list (dict "slo" "availability" "alert" "SitehostSiteAvailabilityBudgetBurn" "what" "answers 5xx") (dict "slo" "latency" "alert" "SitehostSiteLatencyBudgetBurn" "what" "serves slower than its latency threshold") -}}
{{- $burn := list -}}
{{- range $k := $kinds -}}
{{- $sel := printf "{slo=\"%s\"}" $k.slo -}}
{{- range $name := keys $alerts | sortAlpha -}}
{{- $cls := get $alerts $name -}}
{{- range $w := $cls.windows -}}
{{- $long := printf "sitehost_site_slo:errors:increase%s%s / sitehost_site_slo:requests:increase%s%s > on (%s) (%v * (1 - max by (%s) (%s%s)))" $w.long $sel $w.long $sel $on $w.burnRate $on $objective $sel -}}
{{- $short := printf "sitehost_site_slo:errors:increase%s%s / sitehost_site_slo:requests:increase%s%s > on (%s) (%v * (1 - max by (%s) (%s%s)))" $w.short $sel $w.short $sel $on $w.burnRate $on $objective $sel -}}
{{- $guard := printf "sitehost_site_slo:errors:increase%s%s >= %v" $w.long $sel $min -}}
{{- $rule := dict "alert" $k.alert "expr" (printf "%s\nand on (%s) %s\nand on (%s) %s" $long $on $short $on $guard) -}}
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
{{- if $probesOn -}}
{{- range $name := keys $alerts | sortAlpha -}}
{{- $cls := get $alerts $name -}}
{{- range $w := $cls.windows -}}
{{- $long := printf "sitehost_site_slo:errors:increase%s{slo=\"probe\"} / sitehost_site_slo:requests:increase%s{slo=\"probe\"} > on (%s) (%v * (1 - max by (%s) (%s{slo=\"availability\"})))" $w.long $w.long $by $w.burnRate $by $objective -}}
{{- $short := printf "sitehost_site_slo:errors:increase%s{slo=\"probe\"} / sitehost_site_slo:requests:increase%s{slo=\"probe\"} > on (%s) (%v * (1 - max by (%s) (%s{slo=\"availability\"})))" $w.short $w.short $by $w.burnRate $by $objective -}}
{{- $guard := printf "sitehost_site_slo:errors:increase%s{slo=\"probe\"} >= %v" $w.long $minProbes -}}
{{- $busy := printf "sitehost_site_slo:requests:increase%s{slo=\"availability\"} * on (%s) (%v * (1 - max by (%s) (%s{slo=\"availability\"}))) >= %v" $w.long $by $w.burnRate $by $objective $min -}}
{{- range $traffic := list "quiet" "busy" -}}
{{- $rule := dict "alert" "SitehostSiteProbeBudgetBurn" "expr" (printf "%s\nand on (%s) %s\nand on (%s) %s\n%s on (%s) (%s)" $long $by $short $by $guard (ternary "unless" "and" (eq $traffic "quiet")) $by $busy) -}}
{{- if $w.for }}{{ $_ := set $rule "for" $w.for }}{{ end -}}
{{- $_ := set $rule "labels" (dict "severity" (ternary $cls.severity $busySeverity (eq $traffic "quiet")) "class" $name "long" $w.long "short" $w.short "slo" "probe" "traffic" $traffic) -}}
{{- $why := ternary "Its logs counted too few requests over that time to alert on their own: the probes are the only word on it." "Its logs count enough requests to alert on their own (SitehostSiteAvailabilityBudgetBurn): the probes see what they cannot (DNS, the certificate, the edge), or the prober is in trouble." (eq $traffic "quiet") -}}
{{- $description := printf "Probes of site {{ $labels.site }} (id {{ $labels.site_id }}) failed {{ $value | humanizePercentage }} of the time over the last %s, and still over the last %s: at least %v times the rate its availability objective allows. %s" $w.long $w.short $w.burnRate $why -}}
{{- $_ := set $rule "annotations" (dict "summary" "Site {{ $labels.site }} fails its probes from outside." "description" $description "runbook_url" "https://github.com/sitehost-exporter/sitehost-exporter/blob/main/docs/runbook.md#sitehostsiteprobebudgetburn") -}}
{{- $burn = append $burn $rule -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $groups := list (dict "name" "sitehost-slo-sli" "rules" $fast) -}}
{{- if $slow }}{{ $groups = append $groups (dict "name" "sitehost-slo-sli-long" "interval" "2m30s" "rules" $slow) }}{{ end -}}
{{- toYaml (append $groups (dict "name" "sitehost-slo-alerts" "rules" $burn)) -}}
{{- end -}}
{{- end -}}

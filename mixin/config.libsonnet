// The mixin's settings, as the Helm chart's prometheusRule values name them (the chart's README has
// every rule's settings): override with `(import 'mixin.libsonnet') + { _config+:: { ... } }`.
{
  _config+:: {
    // Label matchers selecting the exporter's series in every rule.
    selector: 'job="sitehost-exporter"',
    // Label matchers selecting the OpenTelemetry Collector sidecar's own metrics.
    collectorSelector: 'job="sitehost-exporter-otel-collector"',
    // What every rule aggregates and matches by besides its own labels: the labels that tell one
    // exporter (and cluster) from another.
    groupingLabels: ['cluster', 'job', 'instance'],
    // Labels added to every alert.
    additionalRuleLabels: {},
    // Per rule, by alert or record name: enabled, severity, for, labels, annotations and its
    // thresholds (e.g. { SitehostCertificateExpiringSoon: { days: 21 } }).
    rules: {},
  },
}

// prometheusRules: the SLO recording rules and burn-rate alerts for the default `slos` section
// (lib/slo-rules.json, what `sitehost-exporter slo-rules` prints). Objectives, overrides, windows
// and grouping labels live in the exporter's `slos` configuration: for other settings, print the
// rules with `sitehost-exporter slo-rules --config <file>` and load those instead.
{
  prometheusRules+:: {
    groups+: (import 'lib/slo-rules.json').groups,
  },
}

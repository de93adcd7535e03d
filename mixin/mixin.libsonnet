// sitehost-exporter's monitoring mixin: prometheusAlerts, prometheusRules, grafanaDashboards and
// _config, as kube-prometheus and the monitoring-mixins tools expect (README.md beside this file).
(import 'config.libsonnet') +
(import 'alerts.libsonnet') +
(import 'rules.libsonnet') +
(import 'dashboards.libsonnet')

/**
 * Alerts about the OpenTelemetry Collector sidecar of the Helm chart (otelCollector.enabled), from its own
 * metrics: the chart scrapes them as the exporter's job with "-otel-collector" appended.
 */
import { alert, type GroupDef } from "./rule.js";

export const COLLECTOR_GROUP: GroupDef = {
  name: "sitehost-otel-collector",
  comment:
    "The collector sidecar (Helm chart, otelCollector.enabled): its sending queue on the checkpoint volume, its\nexports to the log backend.",
  rules: [
    alert<"threshold">({
      alert: "SitehostOtelCollectorQueueFilling",
      severity: "warning",
      for: "10m",
      comment:
        "A full queue refuses the exporter's records: the exporter stops reading logs (nothing is lost, they are read late).",
      params: { threshold: 0.8 },
      paramDocs: { threshold: "Share of the sending queue's capacity in use." },
      expr: (c) =>
        `max by (${c.byWith("exporter")}) (otelcol_exporter_queue_size{${c.collectorSel}} / otelcol_exporter_queue_capacity{${c.collectorSel}}) > ${c.p.threshold}`,
      summary: "The collector sidecar's sending queue is filling up.",
      description: (c) =>
        `The sending queue of the collector's {{ $labels.exporter }} exporter on {{ $labels.instance }} is {{ $value | humanizePercentage }} full and has been over {{ ${c.p.threshold} | humanizePercentage }} for ${c.for}; when it is full, log shipping stops until the backend takes records again.`,
    }),
    alert({
      alert: "SitehostOtelCollectorExportFailing",
      severity: "warning",
      for: "15m",
      expr: (c) =>
        `sum by (${c.byWith("exporter")}) (rate(otelcol_exporter_send_failed_log_records_total{${c.collectorSel}}[10m])) > 0`,
      summary: "The collector sidecar cannot send logs to the backend.",
      description: (c) =>
        `The collector's {{ $labels.exporter }} exporter on {{ $labels.instance }} has failed to send {{ $value | humanize }} log records per second for ${c.for}; they wait in its sending queue.`,
    }),
  ],
};

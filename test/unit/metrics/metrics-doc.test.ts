import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { generateMetricsDoc, METRICS_DOC_PATH } from "../../../scripts/gen-metrics-doc.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";

describe("docs/metrics.md", () => {
  it("is what scripts/gen-metrics-doc.ts generates from the code (run npm run docs:metrics)", async () => {
    expect(METRICS_DOC_PATH.endsWith("docs/metrics.md")).toBe(true);
    expect(readFileSync(METRICS_DOC_PATH, "utf8")).toBe(await generateMetricsDoc());
  });
  it("lists every family and the self-metrics of each module", () => {
    const text = readFileSync(METRICS_DOC_PATH, "utf8");
    for (const f of METRIC_FAMILIES) expect(text).toContain(`\`${f.name}\``);
    for (const name of [
      "sitehost_up",
      "sitehost_exporter_collector_skipped_runs_total",
      "sitehost_exporter_api_requests_total",
      "sitehost_exporter_log_lag_seconds",
      "sitehost_exporter_api_planned_requests_per_second",
      "sitehost_exporter_api_requests_per_site_hour",
    ])
      expect(text).toContain(`\`${name}\``);
  });
});

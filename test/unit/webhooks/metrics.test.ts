import { describe, expect, it } from "vitest";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { MetricStore } from "../../../src/metrics/store.js";
import { EventCounts, MAX_EVENT_LABELS } from "../../../src/webhooks/metrics.js";

function lines(store: MetricStore): string[] {
  return store
    .render()
    .split("\n")
    .filter((l) => l.startsWith("sitehost_events_total{"));
}

describe("sitehost_events_total", () => {
  it("starts every documented event at 0, so the first one is an increase", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    new EventCounts(store);
    const shown = lines(store);
    // The documented events, as the platform's documentation lists them.
    for (const event of [
      "site_hacked",
      "site_restore_failed",
      "sync_failed",
      "plugin_install_failed",
      "git_deploy_failed",
    ])
      expect(shown).toContain(`sitehost_events_total{event="${event}"} 0`);
    expect(store.render()).toContain("# TYPE sitehost_events_total counter");
  });

  it("counts under the event's name; a name outside the pattern is other", () => {
    const counts = new EventCounts(new MetricStore(METRIC_FAMILIES), []);
    expect(counts.count("site_disabled")).toBe("site_disabled");
    expect(counts.count("backup.created")).toBe("backup.created");
    for (const odd of ["Site_Hacked", "1up", "a b", "x".repeat(65), 'evil"}', ""])
      expect(counts.count(odd)).toBe("other");
    expect(counts.value("other")).toBe(6);
  });

  it("stops making new series once the label budget is used: later names count as other", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    const counts = new EventCounts(store, []);
    for (let i = 0; i < MAX_EVENT_LABELS * 3; i++) counts.count(`event_${i}`);
    expect(lines(store).length).toBeLessThanOrEqual(MAX_EVENT_LABELS);
    expect(counts.value("other")).toBeGreaterThan(0);
    // A name already counted keeps its own series.
    expect(counts.count("event_0")).toBe("event_0");
  });

  it("metrics.exclude drops the family like any other", () => {
    const store = new MetricStore(METRIC_FAMILIES, { exclude: ["sitehost_events_*"] });
    new EventCounts(store).count("site_disabled");
    expect(lines(store)).toEqual([]);
  });
});

/**
 * Metric names are a type: the family names of src/metrics/families.ts form a union, and a sample, a
 * sample builder or the metric store given any other name does not compile. The `@ts-expect-error`
 * lines are checked by `npm run typecheck` (tsconfig.test.json): if one of them compiled, the
 * directive itself would be the error. At run time the store ignores an unknown family.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { sampleFor } from "../../../src/metrics/siteSample.js";
import { METRIC_FAMILIES, type MetricName } from "../../../src/metrics/families.js";
import type { Sample } from "../../../src/metrics/sample.js";
import { MetricStore } from "../../../src/metrics/store.js";

const site = { id: 1, name: "site-1" };

describe("metric names", () => {
  it("are the union of the families' names", () => {
    expectTypeOf<"sitehost_site_page_views">().toExtend<MetricName>();
    expectTypeOf<"sitehost_site_page_view">().not.toExtend<MetricName>();
    expectTypeOf<Sample["name"]>().toEqualTypeOf<MetricName>();
    expect(new Set(METRIC_FAMILIES.map((f) => f.name)).size).toBe(METRIC_FAMILIES.length);
  });

  it("an unknown family name does not compile, and the store ignores it at run time", () => {
    const store = new MetricStore(METRIC_FAMILIES);
    // @ts-expect-error: no family is called this
    const typo: Sample = { name: "sitehost_site_page_view", labels: {}, value: 1 };
    // @ts-expect-error: sample builders take family names only
    const built = sampleFor(site, "sitehost_site_unknown", {}, 1);
    // @ts-expect-error: neither does the store
    store.replaceGlobal("inventory", [{ name: "sitehost_nope", labels: {}, value: 1 }]);
    store.replaceSite("inventory", "1", [typo, built]);
    expect(store.render()).toBe("");

    store.replaceSite("statistics", "1", [
      sampleFor(site, "sitehost_site_page_views", { period: "today" }, 3),
    ]);
    expect(store.render()).toContain('sitehost_site_page_views{site_id="1",site="site-1",period="today"} 3');
  });

  it("a store built from other families takes their names", () => {
    const families = [
      { name: "test_only", help: "h", type: "gauge", labels: [], perSite: false, collector: "t", source: "" },
    ] as const;
    const store = new MetricStore(families);
    store.replaceGlobal("t", [{ name: "test_only", labels: {}, value: 2 }]);
    // @ts-expect-error: a published family is not one of this store's
    store.replaceGlobal("other", [{ name: "sitehost_site_page_views", labels: {}, value: 2 }]);
    expect(store.render()).toBe("# HELP test_only h\n# TYPE test_only gauge\ntest_only 2\n");
  });
});

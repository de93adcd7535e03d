import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { MetricStore } from "../../../src/metrics/store.js";
import { CROSS_SOURCE_MARGIN_MS, LISTED_SAFE_AFTER_MS, SiteStateBook } from "../../../src/siteState/book.js";
import { factsOfEvent } from "../../../src/siteState/facts.js";
import {
  SITE_STATE_FILE,
  siteStateFile,
  UNKEPT_SITE_STATE,
  type SiteStateStore,
} from "../../../src/siteState/file.js";
import { metricValue } from "../../helpers/daemon.js";
import { makeSite } from "../collectors/fixtures.js";

const on = (state: "maintenance" | "hacked") => ({ facts: [{ state, on: true }], unclear: false });
const off = (state: "maintenance" | "hacked") => ({ facts: [{ state, on: false }], unclear: false });

function rig(opts: { webhooks?: boolean; file?: SiteStateStore } = {}) {
  const store = new MetricStore(METRIC_FAMILIES);
  const registry = new Registry();
  const errors: string[] = [];
  const logger = pino({ level: "warn" }, { write: (line: string) => void errors.push(line) });
  const book = new SiteStateBook({
    store,
    registry,
    file: opts.file ?? UNKEPT_SITE_STATE,
    logger,
    webhooks: opts.webhooks ?? true,
  });
  const value = (name: string, siteId: number) => metricValue(store.render(), name, `site_id="${siteId}"`);
  const corrections = async (state: string, source: string) =>
    (await registry.getSingleMetric("sitehost_exporter_site_state_corrections_total")!.get()).values.find(
      (v) => v.labels.state === state && v.labels.source === source,
    )?.value ?? 0;
  return { store, registry, book, value, corrections, errors };
}

const T = Date.parse("2026-11-29T10:00:00Z");

describe("the sites' maintenance and hacked states", () => {
  it("every watched site has both gauges, 0 until something says otherwise", () => {
    const { book, value } = rig();
    book.updateSites([makeSite(1), makeSite(2)], T);
    expect(value("sitehost_site_maintenance_mode", 1)).toBe(0);
    expect(value("sitehost_site_hacked", 2)).toBe(0);
  });

  it("an activity entry makes good a lost maintenance event, counted as a correction", async () => {
    const { book, value, corrections } = rig();
    book.updateSites([makeSite(1)], T);
    book.observe(1, on("maintenance"), T + 1000, "activity");
    expect(value("sitehost_site_maintenance_mode", 1)).toBe(1);
    expect(await corrections("maintenance", "activity")).toBe(1);
  });

  it("the event first: the activity entry of the same change later is no correction", async () => {
    const { book, value, corrections } = rig();
    book.updateSites([makeSite(1)], T);
    book.observe(
      1,
      factsOfEvent({ event: "maintenance_mode", site_id: 1, maintenance_mode: "enabled" }),
      T + 2000,
      "webhook",
    );
    book.observe(1, on("maintenance"), T + 1000, "activity");
    expect(value("sitehost_site_maintenance_mode", 1)).toBe(1);
    expect(await corrections("maintenance", "activity")).toBe(0);
  });

  it("the newest word wins: an older entry read later never turns a state back", () => {
    const { book, value } = rig();
    book.updateSites([makeSite(1)], T);
    book.observe(1, off("maintenance"), T + 60_000, "webhook");
    book.observe(1, on("maintenance"), T + 1000, "activity");
    expect(value("sitehost_site_maintenance_mode", 1)).toBe(0);
    book.observe(1, on("maintenance"), T + 120_000, "activity");
    expect(value("sitehost_site_maintenance_mode", 1)).toBe(1);
  });

  it("an entry stamped a moment after the event, on the platform's clock, does not undo a later toggle", () => {
    const { book, value } = rig();
    book.updateSites([makeSite(1)], T);
    // Turned off, then on again at once; the off entry's time reads a second after the on event's arrival.
    book.observe(1, off("maintenance"), T, "webhook");
    book.observe(1, on("maintenance"), T + 200, "webhook");
    book.observe(1, off("maintenance"), T + 1200, "activity");
    book.observe(1, on("maintenance"), T + 1300, "activity");
    expect(value("sitehost_site_maintenance_mode", 1)).toBe(1);
    // A toggle well after the event, that only the activity log reports, counts.
    book.observe(1, off("maintenance"), T + CROSS_SOURCE_MARGIN_MS + 5000, "activity");
    expect(value("sitehost_site_maintenance_mode", 1)).toBe(0);
    // An event right after a polled word turns it at once.
    book.observe(1, on("maintenance"), T + CROSS_SOURCE_MARGIN_MS + 6000, "webhook");
    expect(value("sitehost_site_maintenance_mode", 1)).toBe(1);
  });

  it("without webhooks nothing counts as a correction", async () => {
    const { book, corrections } = rig({ webhooks: false });
    book.updateSites([makeSite(1)], T);
    book.observe(1, on("hacked"), T, "activity");
    expect(await corrections("hacked", "activity")).toBe(0);
  });

  it("a hacked site listed enabled again after the margin is safe again; listed sooner it stays hacked", () => {
    const { book, value } = rig();
    book.updateSites([makeSite(1, { state: "live" })], T);
    book.observe(1, on("hacked"), T + 1000, "webhook");
    // A listing read before support disabled it, seen just after the event.
    book.updateSites([makeSite(1, { state: "live" })], T + 2000);
    expect(value("sitehost_site_hacked", 1)).toBe(1);
    book.updateSites([makeSite(1, { state: "disabled" })], T + LISTED_SAFE_AFTER_MS + 2000);
    expect(value("sitehost_site_hacked", 1)).toBe(1);
    book.updateSites([makeSite(1, { state: "live" })], T + LISTED_SAFE_AFTER_MS + 60_000);
    expect(value("sitehost_site_hacked", 1)).toBe(0);
  });

  it("a site no longer watched loses its series", () => {
    const { book, store } = rig();
    book.updateSites([makeSite(1), makeSite(2)], T);
    book.updateSites([makeSite(1)], T + 1000);
    expect(store.render()).not.toContain('site_id="2"');
  });
});

describe("the states kept across restarts", () => {
  let dir: string;
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it("a restarted exporter shows what the last one learnt, without reading it again", async () => {
    dir = await mkdtemp(join(tmpdir(), "site-state-"));
    const first = rig({ file: siteStateFile(dir) });
    first.book.updateSites([makeSite(1)], T);
    first.book.observe(1, on("maintenance"), T, "activity");
    await first.book.flush();
    const second = rig({ file: siteStateFile(dir) });
    await second.book.load();
    second.book.updateSites([makeSite(1)], T + 1000);
    expect(second.value("sitehost_site_maintenance_mode", 1)).toBe(1);
  });

  it("a corrupt file is said once, naming it, and the states are learnt again", async () => {
    dir = await mkdtemp(join(tmpdir(), "site-state-"));
    await writeFile(join(dir, SITE_STATE_FILE), '{"version":1,"sites":{"1":{"maintenance":{"on":"yes"}}}}');
    const { book, value, errors } = rig({ file: siteStateFile(dir) });
    await book.load();
    book.updateSites([makeSite(1)], T);
    expect(value("sitehost_site_maintenance_mode", 1)).toBe(0);
    expect(errors.join("")).toContain(SITE_STATE_FILE);
    // The next change replaces it with a good one.
    book.observe(1, on("maintenance"), T, "webhook");
    await book.flush();
    expect(JSON.parse(await readFile(join(dir, SITE_STATE_FILE), "utf8")).sites["1"].maintenance.on).toBe(
      true,
    );
  });
});

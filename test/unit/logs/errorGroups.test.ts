import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import {
  ErrorGroupBook,
  MAX_GROUPS,
  NEW_GROUP_SHOWN_MS,
  NEWEST_KEPT,
} from "../../../src/logs/errorGroups.js";
import {
  ERROR_GROUPS_FILE,
  errorGroupsFile,
  UNKEPT_ERROR_GROUPS,
  type ErrorGroupStore,
} from "../../../src/logs/errorGroupsFile.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { MetricStore } from "../../../src/metrics/store.js";

const T = Date.parse("2026-11-29T10:00:00Z");
const fp = (n: number) => n.toString(16).padStart(16, "0");
const entryFp = (n: number) => n.toString(16).padStart(32, "0");

function rig(file: ErrorGroupStore = UNKEPT_ERROR_GROUPS, learnForMs = 0) {
  const store = new MetricStore(METRIC_FAMILIES);
  const registry = new Registry();
  const errors: string[] = [];
  let now = T;
  const book = new ErrorGroupBook({
    store,
    registry,
    file,
    logger: pino({ level: "warn" }, { write: (l: string) => void errors.push(l) }),
    now: () => now,
    learnForMs,
  });
  book.updateSites([{ id: 1, name: "shop" }]);
  const line = (name: string, labels: string) =>
    store
      .render()
      .split("\n")
      .find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  const value = (name: string, labels: string) => {
    const l = line(name, labels);
    return l === undefined ? undefined : Number(l.slice(l.lastIndexOf(" ") + 1));
  };
  const metric = async (name: string) => (await registry.getSingleMetric(name)!.get()).values[0]?.value;
  return { book, value, metric, errors, setNow: (ms: number) => (now = ms) };
}

describe("PHP error groups by site", () => {
  it("a group first seen after the site's groups began is new: counted, and shown at its first entry's time", () => {
    const { book, value } = rig();
    expect(book.observe(1, fp(1), "fatal", T + 5000, entryFp(1), 0)).toBe(true);
    expect(value("sitehost_php_error_groups_new_total", 'severity="fatal"')).toBe(1);
    expect(value("sitehost_site_php_error_group_new_timestamp_seconds", 'severity="fatal"')).toBe(
      (T + 5000) / 1000,
    );
    // More of the group: not new, not first; the first record encoded again is still the first.
    expect(book.observe(1, fp(1), "fatal", T + 9000, entryFp(2), 0)).toBe(false);
    expect(book.observe(1, fp(1), "fatal", T + 5000, entryFp(1), 0)).toBe(true);
    expect(value("sitehost_php_error_groups_new_total", 'severity="fatal"')).toBe(1);
    expect(book.groupsOf(1).get(fp(1))?.count).toBe(3);
  });

  it("errors older than the site's table (a first start's backlog) are learnt, not new", () => {
    const { book, value } = rig();
    expect(book.observe(1, fp(1), "error", T - 60_000, entryFp(1), 0)).toBe(true);
    expect(value("sitehost_php_error_groups_new_total", 'severity="error"')).toBe(0);
    expect(value("sitehost_site_php_error_group_new_timestamp_seconds", "shop")).toBeUndefined();
  });

  it("within logs.errorGroupsLearnFor after the site is first watched, a group is learnt; after it, new", () => {
    const { book, value } = rig(UNKEPT_ERROR_GROUPS, 3600_000);
    book.observe(1, fp(1), "fatal", T + 1800_000, entryFp(1), 0);
    expect(value("sitehost_php_error_groups_new_total", 'severity="fatal"')).toBe(0);
    book.observe(1, fp(2), "fatal", T + 3700_000, entryFp(2), 0);
    expect(value("sitehost_php_error_groups_new_total", 'severity="fatal"')).toBe(1);
  });

  it(`keeps at most ${MAX_GROUPS} a site: the newest ${NEWEST_KEPT} whatever their count, then the most seen`, async () => {
    const { book, metric, value } = rig();
    for (let g = 0; g < MAX_GROUPS; g++)
      for (let k = 0; k <= g; k++) book.observe(1, fp(g), "error", T + g * 1000 + k, entryFp(g * 100 + k), 0);
    // Group 0 is the least seen and not among the newest: it goes.
    book.observe(1, fp(99), "error", T + 99_000, entryFp(9999), 0);
    expect(book.groupsOf(1).size).toBe(MAX_GROUPS);
    expect(book.groupsOf(1).has(fp(0))).toBe(false);
    expect(await metric("sitehost_exporter_php_error_groups_evicted_total")).toBe(1);
    expect(await metric("sitehost_exporter_php_error_groups")).toBe(MAX_GROUPS);
    // Group 0 met again: kept again, but not new (it was evicted, not unknown).
    const before = value("sitehost_php_error_groups_new_total", 'severity="error"');
    book.observe(1, fp(0), "error", T + 99_500, entryFp(9998), 0);
    expect(value("sitehost_php_error_groups_new_total", 'severity="error"')).toBe(before);
    expect(book.groupsOf(1).get(fp(0))?.isNew).toBe(false);
    // The newest, seen once, is kept when the next comes.
    book.observe(1, fp(100), "error", T + 100_000, entryFp(10000), 0);
    expect(book.groupsOf(1).has(fp(99))).toBe(true);
    expect(book.groupsOf(1).has(fp(0))).toBe(true);
  });

  it("a new group is shown for 24 hours", () => {
    const { book, value, setNow } = rig();
    book.observe(1, fp(1), "fatal", T + 1000, entryFp(1), 0);
    setNow(T + NEW_GROUP_SHOWN_MS + 2000);
    book.updateSites([{ id: 1, name: "shop" }]);
    expect(value("sitehost_site_php_error_group_new_timestamp_seconds", "shop")).toBeUndefined();
  });

  it("a site no longer watched loses its groups and its series", async () => {
    const { book, value, metric } = rig();
    book.observe(1, fp(1), "fatal", T + 1000, entryFp(1), 0);
    book.updateSites([]);
    expect(value("sitehost_site_php_error_group_new_timestamp_seconds", "shop")).toBeUndefined();
    expect(await metric("sitehost_exporter_php_error_groups")).toBe(0);
  });
});

describe("PHP error groups across restarts", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
  });

  it("are kept in the checkpoint directory: a group met again after a restart is not new", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sitehost-groups-"));
    dirs.push(dir);
    const first = rig(errorGroupsFile(dir));
    first.book.observe(1, fp(1), "fatal", T + 1000, entryFp(1), 0);
    await first.book.flush();
    const second = rig(errorGroupsFile(dir));
    await second.book.load();
    second.book.updateSites([{ id: 1, name: "shop" }]);
    expect(second.book.observe(1, fp(1), "fatal", T + 50_000, entryFp(2), 0)).toBe(false);
    expect(second.value("sitehost_php_error_groups_new_total", 'severity="fatal"')).toBe(0);
    // Its marker is still shown after the restart.
    expect(second.value("sitehost_site_php_error_group_new_timestamp_seconds", 'severity="fatal"')).toBe(
      (T + 1000) / 1000,
    );
  });

  it("a corrupt file is said once, naming it; the groups are learnt again", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sitehost-groups-"));
    dirs.push(dir);
    await writeFile(join(dir, ERROR_GROUPS_FILE), '{"version":1,"sites":{"1":{"sinceMs":"x"}}}');
    const { book, errors } = rig(errorGroupsFile(dir));
    await book.load();
    expect(errors.join("\n")).toContain(join(dir, ERROR_GROUPS_FILE));
  });
});

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { CHANGE_RETENTION_MS, ChangeBook } from "../../../src/changes/book.js";
import { reportActivity, reportEvent, collectedChanges } from "../../../src/changes/feeds.js";
import { CHANGES_FILE, changesFile, UNKEPT_CHANGES, type ChangeStore } from "../../../src/changes/file.js";
import type { ActivityEntry } from "../../../src/api/logSchemas.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { MetricStore } from "../../../src/metrics/store.js";
import { sampleFor } from "../../../src/metrics/siteSample.js";
import { metricValue } from "../../helpers/daemon.js";
import { makeSite } from "../collectors/fixtures.js";

const T = Date.parse("2026-11-29T10:00:00Z");
const MIN = 60_000;

function rig(opts: { file?: ChangeStore; now?: () => number } = {}) {
  const store = new MetricStore(METRIC_FAMILIES);
  const registry = new Registry();
  const errors: string[] = [];
  const logger = pino({ level: "warn" }, { write: (line: string) => void errors.push(line) });
  let clock = T;
  const now = opts.now ?? (() => clock);
  const book = new ChangeBook({ store, registry, file: opts.file ?? UNKEPT_CHANGES, logger, now });
  const marker = (siteId: number, kind: string) => {
    const line = store
      .render()
      .split("\n")
      .find(
        (l) =>
          l.startsWith("sitehost_site_change_timestamp_seconds{") &&
          l.includes(`site_id="${siteId}"`) &&
          l.includes(`kind="${kind}"`),
      );
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
  };
  const total = (kind: string) => metricValue(store.render(), "sitehost_changes_total", `kind="${kind}"`);
  const reports = async (source: string, outcome: string) =>
    (await registry.getSingleMetric("sitehost_exporter_change_reports_total")!.get()).values.find(
      (v) => v.labels.source === source && v.labels.outcome === outcome,
    )?.value ?? 0;
  return { store, book, marker, total, reports, errors, setClock: (ms: number) => (clock = ms) };
}

const activity = (id: number, name: string, description: string): ActivityEntry =>
  ({ id, name, description, timestamp: new Date(T).toISOString() }) as ActivityEntry;

describe("change markers", () => {
  it("a deploy reported by its event, its activity entry and the git history is one change, at the entry's time", async () => {
    const { book, marker, total, reports } = rig();
    book.updateSites([makeSite(1)], T);
    // The git history: asked for at T - 3 min; the event when it completed; the entry of the completion.
    const git = collectedChanges(book, () => T + 5 * MIN);
    const site = makeSite(1);
    git("git", site, [
      sampleFor(site, "sitehost_site_git_last_deploy_timestamp_seconds", {}, (T - 3 * MIN) / 1000),
      sampleFor(site, "sitehost_site_git_last_deploy_success", {}, 1),
    ]);
    reportEvent(book, { event: "git_deploy_completed", site: { id: 1 } }, T + 2000);
    reportActivity(book, 1, activity(77, "git_deploy_completed", "Git deploy completed"), T);
    expect(total("deploy")).toBe(1);
    expect(marker(1, "deploy")).toBe(T / 1000);
    expect(book.changesOf(1)).toHaveLength(1);
    expect(book.changesOf(1)[0]?.sources).toEqual(["activity", "webhook", "git"]);
    expect(await reports("git", "new")).toBe(1);
    expect(await reports("webhook", "merged")).toBe(1);
    expect(await reports("activity", "merged")).toBe(1);
  });

  it("an entry read again, an event delivered again and a list read again are repeats", async () => {
    const { book, total, reports } = rig();
    book.updateSites([makeSite(1)], T);
    const entry = activity(5, "plugin_updated", "Plugin updated");
    reportActivity(book, 1, entry, T);
    reportActivity(book, 1, entry, T);
    const event = { event: "plugin_installed", site: { id: 1 }, plugin: { path: "a/a.php", version: "2.0" } };
    reportEvent(book, event, T + 60_000);
    reportEvent(book, event, T + 90_000);
    expect(total("plugin")).toBe(1);
    expect(await reports("activity", "repeat")).toBe(1);
    expect(await reports("webhook", "repeat")).toBe(1);
  });

  it("the same event body a day later is a change again (maintenance on, off, on)", () => {
    const { book, total, setClock } = rig();
    book.updateSites([makeSite(1)], T);
    const enabled = { event: "maintenance_mode", site_id: 1, maintenance_mode: "enabled" };
    reportEvent(book, enabled, T);
    reportEvent(book, { event: "maintenance_mode", site_id: 1, maintenance_mode: "disabled" }, T + 30 * MIN);
    setClock(T + 60 * MIN);
    reportEvent(book, enabled, T + 60 * MIN);
    expect(total("maintenance")).toBe(3);
  });

  it("two entries of one source are two changes, however close; each matches one report of another source", () => {
    const { book, total } = rig();
    book.updateSites([makeSite(1)], T);
    reportActivity(book, 1, activity(1, "plugin_updated", "Plugin updated"), T);
    reportActivity(book, 1, activity(2, "plugin_updated", "Plugin updated"), T + 1000);
    reportEvent(book, { event: "plugin_installed", site: { id: 1 }, plugin: { path: "b/b.php" } }, T + 3000);
    reportEvent(book, { event: "plugin_installed", site: { id: 1 }, plugin: { path: "c/c.php" } }, T + 4000);
    reportEvent(book, { event: "plugin_installed", site: { id: 1 }, plugin: { path: "d/d.php" } }, T + 5000);
    expect(total("plugin")).toBe(3);
  });

  it("reports far apart in time are different changes", () => {
    const { book, total } = rig();
    book.updateSites([makeSite(1)], T);
    reportActivity(book, 1, activity(1, "site_restored", "Site restored from a backup"), T);
    reportEvent(book, { event: "site_restored", site: { id: 1 } }, T + 3 * 3600_000);
    expect(total("restore")).toBe(2);
  });

  it("a PHP version and a conversion between two listings; the activity entry then gives the time", () => {
    const { book, marker, total } = rig();
    book.updateSites([makeSite(1), makeSite(2)], T);
    book.updateSites([makeSite(1, { phpVersion: "8.3" }), makeSite(2, { staging: true })], T + 5 * MIN);
    expect(total("php")).toBe(1);
    expect(total("conversion")).toBe(1);
    expect(marker(1, "php")).toBe((T + 5 * MIN) / 1000);
    reportActivity(book, 1, activity(9, "php_version_updated", "PHP version changed"), T + 2 * MIN);
    expect(total("php")).toBe(1);
    expect(marker(1, "php")).toBe((T + 2 * MIN) / 1000);
  });

  it("a collaborator added or removed between two listings is an access change", () => {
    const { book, total } = rig();
    book.updateSites([makeSite(1, { collaboratorsCount: 2 })], T);
    book.updateSites([makeSite(1, { collaboratorsCount: 3 })], T + 5 * MIN);
    book.updateSites([makeSite(1, { collaboratorsCount: 3 })], T + 10 * MIN);
    book.updateSites([makeSite(1)], T + 15 * MIN);
    expect(total("access")).toBe(1);
  });

  it("a listing without a field (schema drift) is no conversion; a first listing is no change", () => {
    const { book, total } = rig();
    book.updateSites([makeSite(1)], T);
    const drifted = { ...makeSite(1) } as Partial<ReturnType<typeof makeSite>>;
    delete drifted.staging;
    book.updateSites([drifted as ReturnType<typeof makeSite>], T + MIN);
    book.updateSites([makeSite(1)], T + 2 * MIN);
    expect(total("conversion")).toBe(0);
  });

  it("a new cms administrator between two reads of the users", () => {
    const { book, total } = rig();
    book.updateSites([makeSite(1)], T);
    let at = T;
    const access = collectedChanges(book, () => at);
    const site = makeSite(1);
    const admins = (...logins: string[]) =>
      logins.map((login) => sampleFor(site, "sitehost_site_cms_administrator_info", { login }, 1));
    access("access", site, admins("owner"));
    at += 30 * MIN;
    access("access", site, admins("owner"));
    at += 30 * MIN;
    access("access", site, admins("owner", "intruder"));
    at += 30 * MIN;
    access("access", site, admins("owner", "intruder"));
    expect(total("access")).toBe(1);
  });

  it("changes older than 24 hours are left out, and drop off the markers after 24 hours", async () => {
    const { book, marker, reports, setClock } = rig();
    book.updateSites([makeSite(1)], T);
    reportActivity(
      book,
      1,
      activity(1, "plugin_updated", "Plugin updated"),
      T - CHANGE_RETENTION_MS - 2 * MIN,
    );
    expect(await reports("activity", "old")).toBe(1);
    reportActivity(book, 1, activity(2, "plugin_updated", "Plugin updated"), T);
    expect(marker(1, "plugin")).toBe(T / 1000);
    setClock(T + CHANGE_RETENTION_MS + MIN);
    book.updateSites([makeSite(1)], T + CHANGE_RETENTION_MS + MIN);
    expect(marker(1, "plugin")).toBeUndefined();
  });

  it("a site not watched is left out; a site no longer listed loses its markers", () => {
    const { book, marker, total } = rig();
    book.updateSites([makeSite(1)], T);
    reportActivity(book, 2, activity(1, "plugin_updated", "Plugin updated"), T);
    expect(total("plugin")).toBe(0);
    reportActivity(book, 1, activity(2, "plugin_updated", "Plugin updated"), T);
    book.updateSites([], T + MIN);
    expect(marker(1, "plugin")).toBeUndefined();
  });
});

describe("change markers across restarts", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
  });

  it("are kept in the checkpoint directory: an entry read again after a restart is not a second change", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sitehost-changes-"));
    dirs.push(dir);
    const first = rig({ file: changesFile(dir) });
    first.book.updateSites([makeSite(1)], T);
    reportActivity(first.book, 1, activity(3, "plugin_updated", "Plugin updated"), T);
    await first.book.flush();

    const second = rig({ file: changesFile(dir) });
    await second.book.load();
    second.book.updateSites([makeSite(1)], T + MIN);
    expect(second.marker(1, "plugin")).toBe(T / 1000);
    reportActivity(second.book, 1, activity(3, "plugin_updated", "Plugin updated"), T);
    expect(second.total("plugin")).toBe(0);
  });

  it("a corrupt file is said once, naming it, and the markers start empty", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sitehost-changes-"));
    dirs.push(dir);
    await writeFile(join(dir, CHANGES_FILE), "{not json");
    const { book, errors, marker } = rig({ file: changesFile(dir) });
    await book.load();
    book.updateSites([makeSite(1)], T);
    expect(errors.join("\n")).toContain(join(dir, CHANGES_FILE));
    expect(marker(1, "plugin")).toBeUndefined();
  });
});

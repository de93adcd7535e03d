/**
 * The certificates, git and backups collectors end to end: simulator → daemon (child process) → real
 * Prometheus. The series Prometheus holds equal the simulator's ground truth (certificate expiry given as
 * 'YYYY-MM-DD HH:MM:SS', broken records, certificates without data, sites not enrolled in git, on-demand
 * backup slots, restores), only A records are asked for SSL details, and changes on the platform show
 * at the next runs. Needs the build (`npm run build`) and /usr/bin/prometheus.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";
import { startDaemonProcess, waitReady, type DaemonProcess } from "../helpers/daemon.js";
import { startPrometheus, type PromSample, type RunningPrometheus } from "../helpers/prometheus.js";

const JOB = "sitehost-exporter";
const EVERY_2S = { schedule: "*/2 * * * * *" };
const OFF = { enabled: false };
const DAY = 86_400_000;

let sim: RunningSimulator;
let daemon: DaemonProcess;
let prom: RunningPrometheus;

beforeAll(async () => {
  sim = await startSimulator({ sites: 14, seed: 5, certificateTimeForm: "datetime" });
  daemon = await startDaemonProcess({
    sim,
    config: {
      logs: { enabled: false },
      collectors: {
        inventory: { schedule: "*/5 * * * * *" },
        certificates: EVERY_2S,
        git: EVERY_2S,
        backups: EVERY_2S,
        traffic: OFF,
        statistics: OFF,
        usage: OFF,
        performance: OFF,
        security: OFF,
        domains: OFF,
      },
    },
  });
  await waitReady(daemon.url);
  prom = await startPrometheus({ scrapeTargets: [{ job: JOB, target: daemon.url.replace("http://", "") }] });
  await prom.waitFor(`count(sitehost_site_ondemand_backups{job="${JOB}"})`, (r) => r.length === 1, 30_000);
}, 120_000);

afterAll(async () => {
  await prom?.close();
  expect(await daemon?.stop()).toBe(0);
  await sim?.close();
});

const byKey = (samples: PromSample[], ...labels: string[]) =>
  Object.fromEntries(samples.map((s) => [labels.map((l) => s.metric[l]).join(" "), s.value]));

/** The A records of the simulated zones that belong to a site, with their domain as documented. */
function siteARecords() {
  const sites = new Set(sim.control.sites().map((s) => s.site.id));
  return sim.control.zones().flatMap((zone) =>
    zone.records
      .filter((r) => r.type === "A" && r.siteId !== null && sites.has(r.siteId))
      .map((r) => ({
        record: r,
        zone: zone.name,
        domain: r.name === "@" ? zone.name : `${r.name}.${zone.name}`,
        site: sim.control.site(r.siteId as number)?.site.name as string,
      })),
  );
}

describe("certificates, git deploys, on-demand backups and restores in Prometheus", () => {
  it("certificate expiry and broken flags equal the platform's; records without data have no series", async () => {
    const records = siteARecords();
    const withData = records.filter((r) => sim.control.certificate(r.record.id) !== undefined);
    expect(withData.length).toBeGreaterThan(3);
    expect(records.length).toBeGreaterThan(withData.length); // some have no certificate data yet
    const expected = (value: (cert: NonNullable<ReturnType<typeof sim.control.certificate>>) => number) =>
      Object.fromEntries(
        withData.map((r) => [
          `${r.site} ${r.zone} ${r.domain}`,
          value(
            sim.control.certificate(r.record.id) as NonNullable<ReturnType<typeof sim.control.certificate>>,
          ),
        ]),
      );
    const expiry = await prom.waitFor(
      `sitehost_certificate_expiry_timestamp_seconds{job="${JOB}"}`,
      (r) => r.length === withData.length,
      30_000,
    );
    expect(byKey(expiry, "site", "zone", "domain")).toEqual(expected((c) => c.expiresAt / 1000));
    const broken = await prom.query(`sitehost_certificate_broken{job="${JOB}"}`);
    expect(byKey(broken, "site", "zone", "domain")).toEqual(expected((c) => (c.broken ? 1 : 0)));
    expect(Object.values(byKey(broken, "domain"))).toContain(1);
    const noData = await prom.query(`sitehost_exporter_certificate_records{job="${JOB}", result="no_data"}`);
    expect(noData[0]?.value).toBe(records.length - withData.length);
    // Only A records were ever asked for SSL details.
    expect(Object.keys(sim.control.stats().sslRecordTypes)).toEqual(["A"]);
  });

  it("git: the newest finished deploy per enrolled site; sites not enrolled only counted", async () => {
    const sites = sim.control.sites();
    const expected: Record<string, number> = {};
    let notEnrolled = 0;
    for (const data of sites) {
      const history = sim.control.gitHistory(data.site.id);
      if (history === undefined) {
        notEnrolled += 1;
        continue;
      }
      const newest = history.find((d) => d.state === "deployed" || d.state === "failed");
      if (newest) expected[data.site.name] = newest.state === "deployed" ? 1 : 0;
    }
    expect(notEnrolled).toBeGreaterThan(0);
    expect(Object.values(expected)).toContain(0);
    const success = await prom.waitFor(
      `sitehost_site_git_last_deploy_success{job="${JOB}"}`,
      (r) => r.length === Object.keys(expected).length,
      30_000,
    );
    expect(byKey(success, "site")).toEqual(expected);
    const count = await prom.query(`sitehost_exporter_git_sites_not_enrolled{job="${JOB}"}`);
    expect(count[0]?.value).toBe(notEnrolled);
  });

  it("on-demand backups per type and each site's latest restore state equal the platform's", async () => {
    const expectedSlots: Record<string, number> = {};
    const expectedRestore: Record<string, string> = {};
    for (const data of sim.control.sites()) {
      for (const type of ["fs", "db"]) {
        const held = sim.control.ondemandBackups(data.site.id).filter((b) => b.type === type).length;
        // A type the site holds none of has no series.
        if (held > 0) expectedSlots[`${data.site.name} ${type}`] = held;
      }
      const latest = sim.control.restores(data.site.id)[0];
      if (latest) expectedRestore[data.site.name] = latest.status;
    }
    const slots = await prom.query(`sitehost_site_ondemand_backups{job="${JOB}"}`);
    expect(byKey(slots, "site", "type")).toEqual(expectedSlots);
    const states = await prom.query(`sitehost_site_restore_last_state{job="${JOB}"} == 1`);
    expect(Object.fromEntries(states.map((s) => [s.metric.site, s.metric.state]))).toEqual(expectedRestore);
    expect(Object.values(expectedRestore)).toContain("failed");
  });

  it("changes on the platform show at the next runs", async () => {
    const target = siteARecords().find((r) => {
      const cert = sim.control.certificate(r.record.id);
      return cert !== undefined && !cert.broken;
    });
    expect(target).toBeDefined();
    const { record, domain } = target as NonNullable<typeof target>;
    const expiresAt = Math.floor((Date.now() + 2 * DAY) / 1000) * 1000;
    sim.control.setCertificate(record.id, { expiresAt, broken: true });
    const site = sim.control.site(record.siteId as number)?.site;
    expect(site).toBeDefined();
    const siteId = (site as NonNullable<typeof site>).id;
    sim.control.enrollGit(siteId);
    sim.control.recordDeploy(siteId, { fail: true });
    sim.control.restoreSite(siteId, { fail: true });
    const before = sim.control.ondemandBackups(siteId).filter((b) => b.type === "db").length;
    if (before < 3) sim.control.createOnDemandBackup(siteId, "db");

    const expiry = await prom.waitFor(
      `sitehost_certificate_expiry_timestamp_seconds{job="${JOB}", domain="${domain}"}`,
      (r) => r[0]?.value === expiresAt / 1000,
      30_000,
    );
    expect(expiry).toHaveLength(1);
    await prom.waitFor(
      `sitehost_certificate_broken{job="${JOB}", domain="${domain}"} == 1`,
      (r) => r.length === 1,
      30_000,
    );
    await prom.waitFor(
      `sitehost_site_git_last_deploy_success{job="${JOB}", site_id="${siteId}"} == 0`,
      (r) => r.length === 1,
      30_000,
    );
    await prom.waitFor(
      `sitehost_site_restore_last_state{job="${JOB}", site_id="${siteId}", state="failed"} == 1`,
      (r) => r.length === 1,
      30_000,
    );
    await prom.waitFor(
      `sitehost_site_ondemand_backups{job="${JOB}", site_id="${siteId}", type="db"}`,
      (r) => r[0]?.value === Math.min(before + 1, 3),
      30_000,
    );
  }, 120_000);
});

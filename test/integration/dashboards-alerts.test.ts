/**
 * End to end: simulator → daemon (child process) → real Prometheus (scraping every second, alert rules
 * loaded) → real Alertmanager → webhook. Checks that every query of every shipped dashboard (panels,
 * variables, annotations) returns data against a live exporter, that the platform's webhook events show on the
 * events panel, and that disabling a site makes SitehostSiteDisabled reach the receiver. A second Prometheus
 * loads every shipped rule file as it ships and must report every rule healthy over the same live data.
 * Needs the build (`npm run build`: dist/src/cli/main.js) and /usr/bin/prometheus, /usr/bin/prometheus-alertmanager.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";
import { brokenPluginError } from "../../src/simulator/operations.js";
import { startAlertmanager, type RunningAlertmanager } from "../helpers/alertmanager.js";
import { evenIntervals, ruleStatuses, shippedRuleFiles } from "../helpers/ruleHealth.js";
import { freePort } from "../helpers/ports.js";
import { probesJob, startBlackbox, type RunningBlackbox } from "../helpers/blackbox.js";
import { startHostProxy, type HostProxy } from "../helpers/hostProxy.js";
import { waitFor } from "../helpers/wait.js";
import {
  captureOutput,
  startPrometheus,
  stopChild,
  waitForReady,
  type PromSample,
  type RunningPrometheus,
} from "../helpers/prometheus.js";

const ROOT = join(import.meta.dirname, "..", "..");
const MAIN = join(ROOT, "dist", "src", "cli", "main.js");
const JOB = "sitehost-exporter";
const COLLECTORS = [
  "inventory",
  "traffic",
  "statistics",
  "usage",
  "performance",
  "security",
  "domains",
  "backups",
  "certificates",
  "git",
];

interface Target {
  expr: string;
}
interface PanelJson {
  type: string;
  title?: string;
  datasource?: { type?: string };
  targets?: Target[];
  panels?: PanelJson[];
}
interface DashboardJson {
  uid: string;
  panels: PanelJson[];
  templating: { list: Array<{ name: string; type: string; query?: unknown }> };
  annotations?: { list?: Array<{ name: string; expr?: string }> };
}
interface RuleFile {
  groups: Array<{ name: string; rules: Array<{ alert?: string; for?: string }> }>;
}

let dir: string;
let sim: RunningSimulator;
let daemon: ChildProcess | undefined;
let daemonLogs: () => string = () => "";
let instance: string;
let prom: RunningPrometheus;
let am: RunningAlertmanager;
let blackbox: RunningBlackbox | undefined;
let proxy: HostProxy | undefined;
/** Loads the shipped rule files as they ship (`prom` has a copy with a shorter `for` of SitehostSiteDisabled). */
let promHealth: RunningPrometheus;
let shippedRules: string[];

beforeAll(async () => {
  expect(existsSync(MAIN), `${MAIN} missing: run npm run build first`).toBe(true);
  dir = await mkdtemp(join(tmpdir(), "sitehost-dash-alerts-"));
  sim = await startSimulator({ sites: 8, seed: 11, logRatePerSite: 2 });

  // The daemon, with every collector every 5 seconds and logs counted (not shipped) every second.
  const port = await freePort();
  instance = `127.0.0.1:${port}`;
  const config = {
    api: {
      url: sim.apiUrl,
      authUrl: sim.authUrl,
      clientId: sim.clientId,
      clientSecret: sim.clientSecret,
      maxRequestsPerSecond: 500,
      maxConcurrency: 16,
    },
    collectors: Object.fromEntries(COLLECTORS.map((c) => [c, { schedule: "*/5 * * * * *" }])),
    logs: {
      enabled: true,
      ship: false,
      pollInterval: "1s",
      maxPollInterval: "5s",
      startFrom: "-15m",
      // The new PHP error below comes seconds after the start: none of it is learnt.
      errorGroupsLearnFor: "0s",
      checkpointDir: join(dir, "checkpoints"),
    },
    web: { listenAddress: instance },
    webhooks: { enabled: true },
  };
  const webhookToken = randomBytes(24).toString("hex");
  const configFile = join(dir, "config.yaml");
  await writeFile(configFile, stringify(config));
  daemon = spawn(process.execPath, [MAIN, "run", "--config", configFile, "--log.level", "warn"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, OTEL_SDK_DISABLED: "true", SITEHOST_WEBHOOK_TOKEN: webhookToken },
  });
  daemonLogs = captureOutput(daemon);
  await waitForReady(`http://${instance}/-/ready`, daemon, daemonLogs, 45_000);
  sim.control.setWebhookUrl(`http://${instance}/webhook?token=${webhookToken}`);
  // A change (its event and activity entry) for the change panels and annotations, and the fatal PHP
  // error it causes, which the site never logged before (the new-error panels, and an alert below).
  const firstSite = sim.control.sites()[0]?.site.id as number;
  sim.control.installPlugin(firstSite, { path: "hello-dolly/hello.php" });
  sim.control.appendLog(firstSite, "php", brokenPluginError("hello-dolly", 12));

  // A test copy of the rules with SitehostSiteDisabled's `for` shortened so the test stays short.
  const rules = parse(
    await readFile(join(ROOT, "config", "alerts", "sitehost-exporter.rules.yaml"), "utf8"),
  ) as RuleFile;
  for (const g of rules.groups) for (const r of g.rules) if (r.alert === "SitehostSiteDisabled") r.for = "2s";
  const rulesFile = join(dir, "rules.yaml");
  await writeFile(rulesFile, stringify(rules));

  // blackbox_exporter probing the daemon's /sd/probes targets, through a proxy that knows none of the
  // simulator's names (every probe fails, as for a site whose DNS is gone): the probe panels and rules.
  proxy = await startHostProxy(() => undefined);
  blackbox = await startBlackbox({
    http_2xx: {
      prober: "http",
      http: { proxy_url: proxy.url, skip_resolve_phase_with_proxy: true },
    },
  });
  const probes = probesJob(`http://${instance}/sd/probes`, blackbox.address);

  am = await startAlertmanager({ groupWait: "1s", groupInterval: "1s" });
  prom = await startPrometheus({
    scrapeTargets: [{ job: JOB, target: instance }],
    scrapeInterval: "1s",
    evaluationInterval: "1s",
    // The SLO recording rules feed the SLO panels (burn rates, budget left), all evaluated every second.
    ruleFiles: [rulesFile, await evenIntervals(join(ROOT, "config", "slo", "sitehost-slo.rules.yaml"), dir)],
    alertmanagerUrl: am.url,
    scrapeConfigs: [probes],
  });
  shippedRules = await shippedRuleFiles(dir);
  promHealth = await startPrometheus({
    scrapeTargets: [{ job: JOB, target: instance }],
    scrapeInterval: "1s",
    evaluationInterval: "1s",
    ruleFiles: shippedRules,
    scrapeConfigs: [probes],
  });
  await prom.waitFor(`count(sitehost_site_info{job="${JOB}"})`, (r) => (r[0]?.value ?? 0) > 0, 30_000);
}, 120_000);

afterAll(async () => {
  await promHealth?.close();
  await prom?.close();
  await am?.close();
  await blackbox?.close();
  await proxy?.close();
  if (daemon) await stopChild(daemon);
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function dashboards(): Promise<DashboardJson[]> {
  const files = (await readdir(join(ROOT, "dashboards"))).filter((f) => f.endsWith(".json"));
  return Promise.all(
    files.map(async (f) => JSON.parse(await readFile(join(ROOT, "dashboards", f), "utf8")) as DashboardJson),
  );
}

/** The Prometheus panels (the Loki logs panel queries LogQL, with no Loki here). */
function panelsOf(d: DashboardJson): PanelJson[] {
  return d.panels
    .flatMap((p) => (p.type === "row" ? (p.panels ?? []) : [p]))
    .filter((p) => p.datasource?.type !== "loki");
}

/** What Grafana does to a query before sending it: template variables replaced. */
function substitute(expr: string, site: string): string {
  return expr
    .replaceAll("$__rate_interval", "1m")
    .replaceAll("$__range", "5m")
    .replaceAll("$__interval", "15s")
    .replaceAll("$cluster", ".*")
    .replaceAll("$job", JOB)
    .replaceAll("$instance", instance.replace(/\./g, "\\\\."))
    .replaceAll("$site", site);
}

describe("dashboards and alert rules against a live exporter", () => {
  it("every query of every dashboard panel and variable returns data", async () => {
    const all = await dashboards();
    expect(all.map((d) => d.uid).sort()).toEqual([
      "sitehost-exporter-health",
      "sitehost-fleet",
      "sitehost-site",
    ]);
    const sites = (await prom.query(`sitehost_site_info{job="${JOB}"}`))
      .map((s) => s.metric.site as string)
      .sort();
    expect(sites.length).toBe(8);

    const queries: Array<{ where: string; expr: string; perSite: boolean }> = [];
    for (const d of all) {
      for (const v of d.templating.list) {
        // label_values(selector, label) → the selector must have series carrying the label.
        const m = typeof v.query === "string" ? /^label_values\((.+), (\w+)\)$/.exec(v.query) : null;
        if (m)
          queries.push({
            where: `${d.uid} variable ${v.name}`,
            expr: `count by (${m[2]}) (${m[1]})`,
            perSite: false,
          });
      }
      for (const p of panelsOf(d)) {
        for (const t of p.targets ?? []) {
          queries.push({ where: `${d.uid} / ${p.title}`, expr: t.expr, perSite: t.expr.includes("$site") });
        }
      }
      for (const a of d.annotations?.list ?? []) {
        if (a.expr)
          queries.push({
            where: `${d.uid} annotation ${a.name}`,
            expr: a.expr,
            perSite: a.expr.includes("$site"),
          });
      }
    }
    expect(queries.length).toBeGreaterThan(50);

    // Counters need a few scrapes before rate() has two samples; retry the empty ones until a deadline.
    let empty = queries;
    await waitFor(
      "every dashboard query to have data",
      async () => {
        const still: typeof queries = [];
        for (const q of empty) {
          let result: PromSample[] = [];
          // A site panel "has data" when it shows something for at least one site (not every site has a storage limit or a vulnerable plugin).
          for (const site of q.perSite ? sites : [""]) {
            result = await prom.query(substitute(q.expr, site));
            if (result.length > 0) break;
          }
          if (result.length === 0) still.push(q);
        }
        empty = still;
        return empty.length === 0;
      },
      { timeoutMs: 60_000, intervalMs: 2000 },
    ).catch(() => undefined); // what is still empty is named below
    expect(
      empty.map((q) => `${q.where}: ${q.expr}`),
      `daemon logs:\n${daemonLogs().slice(-3000)}`,
    ).toEqual([]);
  }, 120_000);

  it("the events panel shows the webhook events the platform sent, by event", async () => {
    const fleet = (await dashboards()).find((d) => d.uid === "sitehost-fleet") as DashboardJson;
    const events = panelsOf(fleet).find((p) => p.title === "Platform events");
    const expr = events?.targets?.[0]?.expr;
    expect(expr, "the fleet dashboard has a Platform events panel").toBeDefined();
    const [a, b] = sim.control.sites().map((s) => s.site.id);
    sim.control.installPlugin(a as number, { path: "seo-toolkit", fail: true });
    sim.control.syncSites(a as number, b as number, { fail: true });
    sim.control.syncSites(a as number, b as number, { fail: true });
    await sim.control.webhooksIdle();
    const shown = await prom.waitFor(
      substitute(expr as string, ""),
      (r) =>
        r.some((x) => x.metric.event === "plugin_install_failed" && x.value > 0) &&
        r.some((x) => x.metric.event === "sync_failed" && x.value > 0),
      30_000,
    );
    // Events that did not happen are charted at 0, not left out or made up.
    expect(shown.find((x) => x.metric.event === "site_hacked")?.value).toBe(0);

    // A hacked site pages at once, naming the site.
    const live = sim.control.sites().find((s) => s.site.state === "live");
    sim.control.hackSite(live?.site.id as number);
    const alert = await am.waitForAlert(
      (x) => x.labels.alertname === "SitehostSiteHacked" && x.status === "firing",
      60_000,
    );
    expect(alert.labels).toMatchObject({ severity: "critical", job: JOB, instance, site: live?.site.name });
    expect(alert.annotations.description).toContain(
      `Site ${live?.site.name} (id ${live?.site.id}) was marked hacked`,
    );
  }, 90_000);

  it("a fatal PHP error the site never logged, after a plugin install, pages naming the change", async () => {
    // The plugin was installed on the first site at the start (its event and activity entry), then the
    // error it causes appeared in the site's PHP log.
    const first = sim.control.sites()[0]?.site;
    const alert = await am.waitForAlert(
      (x) => x.labels.alertname === "SitehostSitePhpNewFatalErrorAfterChange" && x.status === "firing",
      60_000,
    );
    expect(alert.labels).toMatchObject({ severity: "warning", job: JOB, site: first?.name, kind: "plugin" });
    expect(alert.annotations.description).toContain(`after its latest change of kind plugin`);
    // Only that site: the other sites' errors were learnt from the logs they already had.
    const firing = await prom.query(
      `ALERTS{alertname="SitehostSitePhpNewFatalErrorAfterChange", alertstate="firing"}`,
    );
    expect(firing.map((x) => x.metric.site)).toEqual([first?.name]);
  }, 90_000);

  it("disabling a site in the platform makes SitehostSiteDisabled reach Alertmanager's receiver", async () => {
    // The rules are loaded and evaluated: site index 3 of the simulated fleet starts disabled.
    const before = await prom.waitFor(
      'ALERTS{alertname="SitehostSiteDisabled", alertstate="firing"}',
      (r) => r.length > 0,
      30_000,
    );
    const live = sim.control.sites().find((s) => s.site.state === "live");
    expect(live).toBeDefined();
    const target = live as NonNullable<typeof live>;
    expect(before.map((s) => s.metric.site)).not.toContain(target.site.name);
    expect(am.received.flatMap((p) => p.alerts).some((a) => a.labels.site === target.site.name)).toBe(false);

    sim.control.disableSite(target.site.id);

    const alert = await am.waitForAlert(
      (a) =>
        a.labels.alertname === "SitehostSiteDisabled" &&
        a.labels.site === target.site.name &&
        a.status === "firing",
      90_000,
    );
    expect(alert.labels).toMatchObject({
      severity: "warning",
      job: JOB,
      instance,
      site_id: String(target.site.id),
      state: "disabled",
    });
    expect(alert.annotations.description).toContain(`Site ${target.site.name} (id ${target.site.id})`);
    expect(alert.annotations.runbook_url).toMatch(/docs\/runbook\.md#sitehostsitedisabled$/);
  }, 120_000);

  it("every shipped rule is healthy over live data: mixed severities, domains, certificates, backups, logs", async () => {
    // First the data the rules are about, in the rule-health Prometheus itself.
    const present = {
      "a site with two vulnerability severities of one extension type": `count by (site_id, type) (sitehost_site_vulnerable_extensions{job="${JOB}"}) > 1`,
      "a site with several domains": `count by (site_id) (sitehost_site_domain_healthy{job="${JOB}"}) > 1`,
      certificates: `sitehost_certificate_expiry_timestamp_seconds{job="${JOB}"}`,
      backups: `sitehost_site_backup_last_timestamp_seconds{job="${JOB}"}`,
      "web-server log traffic": `sum by (site_id) (rate(sitehost_site_http_responses_total{job="${JOB}"}[30s])) > 0`,
      "PHP log traffic": `sum by (site_id) (rate(sitehost_site_php_log_entries_total{job="${JOB}"}[30s])) > 0`,
    };
    for (const [what, query] of Object.entries(present)) {
      await waitFor(what, async () => (await promHealth.query(query)).length > 0, {
        timeoutMs: 60_000,
        intervalMs: 500,
      });
    }
    // Then two evaluations of every rule over it.
    const since = Date.now() + 1000;
    const statuses = await waitFor(
      "every rule evaluated over the live data",
      async () => {
        const s = await ruleStatuses(promHealth.url);
        return s.length > 0 && s.every((r) => r.lastEvaluationMs > since) ? s : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    const expected = (
      await Promise.all(
        shippedRules.map(async (f) =>
          (parse(await readFile(f, "utf8")) as RuleFile).groups.flatMap((g) => g.rules),
        ),
      )
    ).flat().length;
    expect(statuses.length, "rules loaded").toBe(expected);
    expect(statuses.filter((r) => r.type === "alerting").length).toBeGreaterThan(25);
    expect(
      statuses
        .filter((r) => r.health !== "ok")
        .map((r) => `${r.name} (${r.file}): ${r.health} ${r.lastError ?? ""}`),
      promHealth.logs().slice(-2000),
    ).toEqual([]);
  }, 120_000);
});

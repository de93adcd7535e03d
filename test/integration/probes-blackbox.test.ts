/**
 * The view from outside, for real: the daemon's /sd/probes feeds a real Prometheus (http_sd_configs,
 * the relabelling docs/probes.md gives) that scrapes Debian's blackbox_exporter, which probes local
 * HTTPS and HTTP servers standing in for the simulator's sites (their names reach them through a proxy
 * standing in for DNS): one up, one down, one with an expired certificate, one slow, one redirecting to
 * plain HTTP. The probe series carry the sites' labels; the probe SLI's alert (rules from `slo-rules`,
 * windows shortened to a minute) fires for the idle sites that are down and for no other; a site
 * added on the platform is probed and one disabled leaves the probes; every rule is healthy.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { createServer as createHttpServer, type RequestListener, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { TargetGroup } from "../../src/probes/targets.js";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";
import { probesJob, startBlackbox, type RunningBlackbox } from "../helpers/blackbox.js";
import { MAIN, startDaemonProcess, waitReady, type DaemonProcess } from "../helpers/daemon.js";
import { startHostProxy, type HostProxy } from "../helpers/hostProxy.js";
import { refusedPort } from "../helpers/ports.js";
import { startPrometheus, type RunningPrometheus } from "../helpers/prometheus.js";
import { ruleStatuses } from "../helpers/ruleHealth.js";
import { clientCa, expiredServerCert, signedClientCert } from "../helpers/tls.js";
import { waitFor } from "../helpers/wait.js";

const run = promisify(execFile);
const ROLES = ["up", "down", "expired", "slow", "redirect"] as const;
type Role = (typeof ROLES)[number];
/** How long the slow site takes to answer (under the probe's timeout). */
const SLOW_MS = 700;

// The SLO rules with the page's windows shortened from 1h/5m to 1m/10s: the probes run every 2 s.
const config = {
  logs: { enabled: false },
  collectors: { inventory: { schedule: "*/2 * * * * *" } },
  slos: {
    windows: ["10s", "1m"],
    period: "1h",
    alerts: { page: { severity: "critical", windows: [{ burnRate: 14.4, long: "1m", short: "10s" }] } },
  },
};

let dir: string;
let sim: RunningSimulator;
let daemon: DaemonProcess;
let proxy: HostProxy;
let blackbox: RunningBlackbox;
let prom: RunningPrometheus;
const servers: Server[] = [];
/** Site id by role, and each role's host name (the site's primary domain as /sd/probes lists it). */
const sites = new Map<Role, { id: string; host: string; url: string }>();

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return (server.address() as AddressInfo).port;
}

const https = (name: string, handler: RequestListener) =>
  listen(
    createHttpsServer(
      { key: readFileSync(join(dir, `${name}.key`)), cert: readFileSync(join(dir, `${name}.pem`)) },
      handler,
    ),
  );
const ok: RequestListener = (_req, res) =>
  res.writeHead(200, { "content-type": "text/html" }).end("<p>ok</p>");

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sitehost-probes-bb-"));
  sim = await startSimulator({ sites: 6, seed: 11, logRatePerSite: 0 });
  daemon = await startDaemonProcess({ sim, config });
  await waitReady(daemon.url);
  const groups = (await (await fetch(`${daemon.url}/sd/probes`)).json()) as TargetGroup[];
  const bySite = [...groups].sort((a, b) => Number(a.labels.site_id) - Number(b.labels.site_id));
  expect(bySite.length).toBeGreaterThanOrEqual(ROLES.length);
  ROLES.forEach((role, i) => {
    const group = bySite[i] as TargetGroup;
    const url = group.targets[0] as string;
    sites.set(role, { id: group.labels.site_id as string, host: new URL(url).hostname, url });
  });

  // The sites' servers, with certificates of a CA blackbox_exporter trusts.
  clientCa(dir, "/CN=test sites CA");
  const host = (role: Role) => (sites.get(role) as { host: string }).host;
  for (const role of ["up", "slow", "redirect"] as const)
    signedClientCert(dir, role, host(role), `DNS:${host(role)}`);
  expiredServerCert(dir, "expired", host("expired"));
  const ports = new Map<string, number>();
  ports.set(`${host("up")} tls`, await https("up", ok));
  ports.set(`${host("expired")} tls`, await https("expired", ok));
  ports.set(
    `${host("slow")} tls`,
    await https("slow", (req, res) => void setTimeout(() => ok(req, res), SLOW_MS)),
  );
  ports.set(
    `${host("redirect")} tls`,
    await https("redirect", (_req, res) =>
      res.writeHead(301, { location: `http://${host("redirect")}/` }).end(),
    ),
  );
  ports.set(`${host("redirect")} plain`, await listen(createHttpServer(ok)));
  // Down: its name resolves (the proxy knows it) but nothing listens there.
  ports.set(`${host("down")} tls`, await refusedPort());
  proxy = await startHostProxy((name, tls) => ports.get(`${name} ${tls ? "tls" : "plain"}`));

  blackbox = await startBlackbox({
    http_2xx: {
      prober: "http",
      timeout: "5s",
      http: {
        preferred_ip_protocol: "ip4",
        proxy_url: proxy.url,
        skip_resolve_phase_with_proxy: true,
        follow_redirects: true,
        tls_config: { ca_file: join(dir, "ca.pem") },
      },
    },
  });

  const slosFile = join(dir, "slos.yaml");
  await writeFile(slosFile, stringify(config));
  const { stdout } = await run(process.execPath, [MAIN, "slo-rules", "--config", slosFile]);
  const rulesFile = join(dir, "slo-rules.yaml");
  await writeFile(rulesFile, stdout);
  prom = await startPrometheus({
    scrapeTargets: [{ job: "sitehost-exporter", target: daemon.url.replace("http://", "") }],
    // The job docs/probes.md gives, every 2 s.
    scrapeConfigs: [probesJob(`${daemon.url}/sd/probes`, blackbox.address)],
    ruleFiles: [rulesFile],
  });
}, 120_000);

afterAll(async () => {
  await prom?.close();
  await blackbox?.close();
  await proxy?.close();
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  if (daemon) expect(await daemon.stop()).toBe(0);
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const site = (role: Role) => sites.get(role) as { id: string; host: string; url: string };
const byRole = (samples: Array<{ metric: Record<string, string>; value: number }>) =>
  Object.fromEntries(
    ROLES.flatMap((role) => {
      const s = samples.find((x) => x.metric.site_id === site(role).id);
      return s ? [[role, s.value]] : [];
    }),
  );

describe("blackbox_exporter probing the targets of /sd/probes", () => {
  it("probes every site's URL; the series carry its labels and say what a visitor gets", async () => {
    const success = await prom.waitFor(
      'probe_success{job="sitehost-probes"}',
      (r) => ROLES.every((role) => r.some((s) => s.metric.site_id === site(role).id)),
      60_000,
    );
    expect(byRole(success)).toEqual({ up: 1, down: 0, expired: 0, slow: 1, redirect: 1 });
    const up = success.find((s) => s.metric.site_id === site("up").id);
    expect(up?.metric).toMatchObject({
      instance: site("up").url,
      module: "http_2xx",
      primary: "true",
      domain: site("up").host,
      kind: expect.any(String),
    });
    expect(up?.metric.site).toBe(sim.control.site(Number(site("up").id))?.site.name);

    const duration = await prom.query('probe_duration_seconds{job="sitehost-probes"}');
    expect(byRole(duration).slow).toBeGreaterThanOrEqual(SLOW_MS / 1000);
    expect(byRole(await prom.query("probe_http_redirects")).redirect).toBe(1);
    // The certificate served (two days, from the test CA), as the probe read it.
    const expiry = byRole(await prom.query("probe_ssl_earliest_cert_expiry"));
    expect(expiry.up).toBeGreaterThan(Date.now() / 1000 + 86_400);
    expect(expiry.up).toBeLessThan(Date.now() / 1000 + 3 * 86_400);
    expect(expiry.expired).toBeUndefined();
  }, 90_000);

  it("the probe SLI pages for the idle sites that are down (refused, expired certificate) and no other", async () => {
    const firing = 'ALERTS{alertname="SitehostSiteProbeBudgetBurn", alertstate="firing"}';
    const want = [site("down").id, site("expired").id].sort();
    const alerts = await prom.waitFor(
      firing,
      (r) => want.every((id) => r.some((a) => a.metric.site_id === id)),
      90_000,
    );
    expect(alerts.map((a) => a.metric.site_id).sort()).toEqual(want);
    for (const a of alerts) {
      expect(a.metric).toMatchObject({ severity: "critical", class: "page", traffic: "quiet", slo: "probe" });
      // Joined to the site's own series: the exporter's job, not blackbox_exporter's.
      expect(a.metric.job).toBe("sitehost-exporter");
    }
    // The healthy ones stay silent while the others fire (a few more evaluations).
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect((await prom.query(firing)).map((a) => a.metric.site_id).sort()).toEqual(want);
    const unhealthy = (await ruleStatuses(prom.url)).filter((r) => r.health !== "ok");
    expect(unhealthy).toEqual([]);
  }, 120_000);

  it("a site added on the platform is probed, and one disabled leaves the probes, at the next discovery", async () => {
    const activeProbes = async () => {
      const res = await fetch(`${prom.url}/api/v1/targets?state=active`);
      const body = (await res.json()) as {
        data: { activeTargets: Array<{ labels: Record<string, string>; scrapePool: string }> };
      };
      return body.data.activeTargets.filter((t) => t.scrapePool === "sitehost-probes").map((t) => t.labels);
    };
    const added = String(sim.control.addSite().id);
    const gone = site("redirect").id;
    sim.control.disableSite(Number(gone));
    await waitFor(
      "Prometheus to probe the new site and drop the disabled one",
      async () => {
        const probes = await activeProbes();
        return probes.some((t) => t.site_id === added) && !probes.some((t) => t.site_id === gone);
      },
      { timeoutMs: 30_000 },
    );
    // The new site's URL as /sd/probes lists it.
    const groups = (await (await fetch(`${daemon.url}/sd/probes`)).json()) as TargetGroup[];
    const listed = groups.find((g) => g.labels.site_id === added)?.targets[0];
    expect((await activeProbes()).find((t) => t.site_id === added)?.instance).toBe(listed);
  }, 60_000);
});

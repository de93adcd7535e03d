/**
 * The landing page is a status page, and /-/status its JSON twin: the built daemon against the
 * simulator says nothing is wrong when nothing is, and when the secret is wrong or the OTLP collector
 * is down it says so first, with the reason, since when and the runbook entry; /-/ready names the
 * discovery error.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StatusReport } from "../../src/server/status.js";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";
import { startDaemonProcess, waitReady, type DaemonProcess } from "../helpers/daemon.js";
import { startOtlpReceiver, type OtlpReceiver } from "../helpers/otlp-receiver.js";
import { refusedPort } from "../helpers/ports.js";
import { waitFor } from "../helpers/wait.js";

let sim: RunningSimulator;
let receiver: OtlpReceiver;
const daemons: DaemonProcess[] = [];

beforeAll(async () => {
  sim = await startSimulator({ sites: 3, seed: 9, logRatePerSite: 1 });
  receiver = await startOtlpReceiver();
}, 60_000);

afterAll(async () => {
  for (const d of daemons) expect(await d.stop()).toBe(0);
  await receiver?.close();
  await sim?.close();
});

async function daemon(config: Record<string, unknown>, env: Record<string, string>): Promise<DaemonProcess> {
  const d = await startDaemonProcess({
    sim,
    config: { logs: { ship: true, streams: ["php"], ...config } },
    env,
  });
  daemons.push(d);
  return d;
}

async function status(d: DaemonProcess): Promise<StatusReport> {
  const res = await fetch(`${d.url}/-/status`);
  expect(res.headers.get("content-type")).toBe("application/json");
  return (await res.json()) as StatusReport;
}

async function page(d: DaemonProcess): Promise<{ html: string; csp: string | null }> {
  const res = await fetch(`${d.url}/`);
  return { html: await res.text(), csp: res.headers.get("content-security-policy") };
}

describe("the status page", () => {
  it("a healthy exporter: nothing wrong, every part OK, quiet", async () => {
    const d = await daemon({}, { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: receiver.logsEndpoint });
    await waitReady(d.url);
    await waitFor("a log export", async () => (await status(d)).logs.health === "ok", { timeoutMs: 30_000 });
    const s = await status(d);
    expect(s.problems).toEqual([]);
    expect(s.health).toBe("ok");
    expect(s.ready).toEqual({ ready: true });
    expect(s.api).toMatchObject({ health: "ok", url: sim.apiUrl });
    expect(s.discovery).toMatchObject({ health: "ok", sites: 3 });
    expect(s.collectors.filter((c) => c.enabled).every((c) => c.health === "ok")).toBe(true);
    expect(s.logs).toMatchObject({ health: "ok", endpoint: receiver.logsEndpoint });
    expect(s.logs.streams).toEqual([expect.objectContaining({ stream: "php", health: "ok" })]);
    expect(s.lock.health).toBe("ok");
    const { html, csp } = await page(d);
    expect(html).toContain('<h1>sitehost-exporter <span class="state h-ok">OK</span></h1>');
    expect(html).toContain('<p class="state h-ok">Everything works.</p>');
    expect(html).not.toMatch(/class="[^"]*h-(warning|critical)/);
    // No script, nothing from elsewhere; the security headers kept.
    expect(html).not.toMatch(/<script|<link|src=/i);
    expect(csp).toContain("default-src 'none'");
  });

  it("a wrong secret: API access and discovery first, with the reason and runbook; /-/ready names it", async () => {
    const d = await daemon(
      {},
      {
        SITEHOST_CLIENT_SECRET: "not-the-secret-9931",
        OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: receiver.logsEndpoint,
      },
    );
    await waitFor("a failed discovery", async () => (await status(d)).discovery.health === "critical", {
      timeoutMs: 30_000,
    });
    const ready = await fetch(`${d.url}/-/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toBe(
      `Not ready: site discovery has not succeeded yet: POST ${sim.authUrl}/auth/token: the platform rejected the client credentials (HTTP 401); check api.clientId and the client secret (SITEHOST_CLIENT_ID, SITEHOST_CLIENT_SECRET or SITEHOST_CLIENT_SECRET_FILE)\n`,
    );
    const s = await status(d);
    expect(s.health).toBe("critical");
    // API access and discovery fail with the one error: one problem, with their count.
    expect(s.problems[0]?.subjects?.slice(0, 2)).toEqual(["API access", "Site discovery"]);
    expect(s.problems[0]).toMatchObject({
      subject: "API access",
      count: expect.any(Number),
      health: "critical",
      reason: expect.stringContaining("the platform rejected the client credentials (HTTP 401)"),
      since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      runbook: expect.stringMatching(/docs\/runbook\.md#sitehostexporterapiauthfailing$/),
    });
    const { html } = await page(d);
    expect(html).toContain(
      '<div class="problem h-critical"><span class="state h-critical">FAILING</span> <strong>API access</strong>',
    );
    // Said once under What is wrong (and in the readiness line): the discovery's row points to it.
    const overview = html.slice(html.indexOf("<h2>Overview</h2>"));
    expect(overview).not.toContain("the platform rejected the client credentials (HTTP 401)");
    expect(overview).toContain("the error under What is wrong (API access &times;");
    expect(html).toContain(
      'href="https://github.com/sitehost-exporter/sitehost-exporter/blob/main/docs/runbook.md#sitehostexporterapiauthfailing"',
    );
    // What is wrong comes before the overview.
    expect(html.indexOf("API access</strong>")).toBeLessThan(html.indexOf("<h2>Overview</h2>"));
    expect(html + JSON.stringify(s)).not.toContain("not-the-secret-9931");
  });

  it("the OTLP collector down for longer than logs.exportFailureWarnAfter: log shipping first, naming the endpoint and the error", async () => {
    const port = await refusedPort();
    const endpoint = `http://127.0.0.1:${port}/v1/logs`;
    const d = await daemon({ exportFailureWarnAfter: "1s" }, { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: endpoint });
    await waitFor("a lasting export failure", async () => (await status(d)).logs.health === "critical", {
      timeoutMs: 40_000,
    });
    const s = await status(d);
    const shipping = s.problems.find((p) => p.subject === `Log shipping to ${endpoint}`);
    expect(shipping).toMatchObject({
      health: "critical",
      reason: expect.stringContaining(
        `OTLP export to ${endpoint} failed: connection refused: nothing listens at 127.0.0.1:${port} (ECONNREFUSED)`,
      ),
      runbook: expect.stringMatching(/#sitehostexporterlogexportfailing$/),
    });
    expect(s.logs.streams).toEqual([expect.objectContaining({ stream: "php", health: "critical" })]);
    // The API side is fine: the problem is the collector.
    expect(s.api.health).toBe("ok");
    const { html } = await page(d);
    expect(html).toContain(`<strong>Log shipping to ${endpoint}</strong>`);
  });

  it("no secret in any output: the page, /-/status, /-/ready, /metrics, the webhook answers and the logs", async () => {
    const secrets = {
      SITEHOST_CLIENT_SECRET: sim.clientSecret,
      SITEHOST_WEBHOOK_TOKEN: "webhook-token-5d1e0c77aa39f2",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer otlp-bearer-8c2f41e6",
    };
    const port = await refusedPort();
    const e = await startDaemonProcess({
      sim,
      config: {
        logs: { ship: true, streams: ["php"], exportFailureWarnAfter: "1s" },
        webhooks: { enabled: true },
      },
      env: { ...secrets, OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: `http://127.0.0.1:${port}/v1/logs` },
    });
    daemons.push(e);
    await waitReady(e.url);
    await waitFor("a lasting export failure", async () => (await status(e)).logs.health === "critical", {
      timeoutMs: 40_000,
    });
    const hook = (token: string) =>
      fetch(`${e.url}/webhook?token=${token}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ event: "site_disabled", site: { id: 1, state: "disabled" } }),
      }).then(async (r) => `${r.status} ${await r.text()}`);
    const outputs = [
      ...(await Promise.all(
        ["/", "/-/status", "/-/ready", "/-/healthy", "/metrics"].map(async (path) => {
          const res = await fetch(`${e.url}${path}`);
          return `${path}: ${JSON.stringify([...res.headers])} ${await res.text()}`;
        }),
      )),
      await hook(secrets.SITEHOST_WEBHOOK_TOKEN),
      await hook("a-wrong-token-of-some-length"),
    ];
    // The page did show the failing export (the test looked where secrets could leak).
    expect(outputs[0]).toContain("<strong>Log shipping to");
    expect(outputs.slice(5).map((o) => o.slice(0, 3))).toEqual(["200", "401"]);
    expect(await e.stop()).toBe(0);
    daemons.pop();
    outputs.push(e.logs());
    for (const secret of [...Object.values(secrets), "otlp-bearer-8c2f41e6"]) {
      for (const out of outputs) expect(out).not.toContain(secret);
    }
  });
});

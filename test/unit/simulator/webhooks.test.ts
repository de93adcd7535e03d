/**
 * Webhook deliveries to a local receiver: every event of the documented Events table, shaped as the
 * table says, triggered through the control API; retries with a doubling backoff on failures; the
 * deliveries in the stats.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { refusedPort } from "../../helpers/ports.js";
import { startTestSim, T0, type TestSim } from "./helpers.js";
import { EVENT_SHAPES, shapeProblems } from "./shapes.js";

interface Received {
  body: Record<string, unknown>;
  headers: IncomingMessage["headers"];
  method: string;
  at: number;
}

/** A webhook receiver that answers with the queued statuses (then 200) and records every request. */
class Receiver {
  readonly received: Received[] = [];
  readonly statuses: number[] = [];
  private waiters: Array<() => void> = [];
  private server!: Server;
  url = "";

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        this.received.push({
          body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>,
          headers: req.headers,
          method: req.method ?? "",
          at: performance.now(),
        });
        res.writeHead(this.statuses.shift() ?? 200).end();
        for (const w of this.waiters.splice(0)) w();
      });
    });
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook?token=abc`;
    return this;
  }

  /** Resolves once `n` requests have arrived; fails after the deadline. */
  async waitFor(n: number, deadlineMs = 5000): Promise<Received[]> {
    const deadline = Date.now() + deadlineMs;
    while (this.received.length < n) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`only ${this.received.length} of ${n} webhook requests arrived`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => (clearTimeout(timer), resolve()));
      });
    }
    return this.received;
  }

  close(): Promise<void> {
    return new Promise((r) => {
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
  }
}

let t: TestSim | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await t?.close();
  await receiver?.close();
  t = undefined;
  receiver = undefined;
});

describe("webhook events", () => {
  it("every documented event, shaped as the Events table, from the control API", async () => {
    receiver = await new Receiver().start();
    t = await startTestSim({ sites: 20, seed: 5, webhookUrl: receiver.url });
    // Ids by fleet index, taken before a deletion shifts the list.
    const ids = t.sim.control.sites().map((s) => s.site.id);
    const id = (i: number) => ids[i] as number;
    const c = (path: string, body?: unknown) => t!.control("POST", path, body ?? {});
    const steps: Array<[string, () => Promise<unknown>]> = [
      ["site_disabled", () => c(`/_simulator/sites/${id(0)}/disable`)],
      ["site_enabled", () => c(`/_simulator/sites/${id(0)}/enable`)],
      ["site_hacked", () => c(`/_simulator/sites/${id(1)}/hack`)],
      ["site_created", () => c("/_simulator/sites")],
      ["site_deleted", () => c(`/_simulator/sites/${id(2)}/delete`)],
      ["site_converted", () => c(`/_simulator/sites/${id(7)}/convert`, { to: "live" })],
      ["site_restored", () => c(`/_simulator/sites/${id(4)}/restore`)],
      [
        "site_restore_failed",
        () => c(`/_simulator/sites/${id(4)}/restore`, { fail: true, error: "disk full" }),
      ],
      ["sync_success", () => c("/_simulator/sync", { fromSiteId: id(4), toSiteId: id(5) })],
      ["sync_failed", () => c("/_simulator/sync", { fromSiteId: id(4), toSiteId: id(5), fail: true })],
      ["plugin_installed", () => c(`/_simulator/sites/${id(4)}/plugins/install`, { path: "contact-form" })],
      [
        "plugin_install_failed",
        () =>
          c(`/_simulator/sites/${id(4)}/plugins/install`, {
            path: "https://x.example/p.zip",
            version: "2.0.0",
            fail: true,
          }),
      ],
      ["git_deploy_completed", () => c(`/_simulator/sites/${id(0)}/git/deploy`)],
      ["git_deploy_failed", () => c(`/_simulator/sites/${id(0)}/git/deploy`, { fail: true })],
      ["maintenance_mode", () => c(`/_simulator/sites/${id(4)}/maintenance-mode`)],
      ["basic_authentication", () => c(`/_simulator/sites/${id(4)}/basic-authentication`)],
      ["ssh_command", () => c(`/_simulator/sites/${id(4)}/ssh`, { command: "wp cache flush" })],
    ];
    // One at a time, so arrival order is the order of the steps.
    for (const [i, [event, step]] of steps.entries()) {
      await step();
      const got = (await receiver.waitFor(i + 1))[i]!;
      expect(got.body.event, event).toBe(event);
      expect(shapeProblems(got.body, EVENT_SHAPES[event]!), event).toEqual([]);
      expect(got.method).toBe("POST");
      expect(got.headers["content-type"]).toContain("application/json");
    }
    const byEvent = new Map(receiver.received.map((r) => [r.body.event as string, r.body]));
    expect(byEvent.get("site_disabled")).toEqual({
      event: "site_disabled",
      site: { id: id(0), state: "disabled" },
    });
    expect(byEvent.get("site_hacked")).toEqual({
      event: "site_hacked",
      site: { id: id(1), state: "disabled", status: "hacked" },
    });
    expect(byEvent.get("site_converted")).toMatchObject({
      site: { site_converted_from: "staging", site_converted_to: "live" },
    });
    expect(byEvent.get("site_restore_failed")).toMatchObject({
      restore: { error: "disk full", failed_at: new Date(T0).toISOString(), failed_at_timestamp: T0 / 1000 },
    });
    expect(byEvent.get("plugin_installed")).toMatchObject({
      plugin: { path: "contact-form", version: "latest" },
    });
    expect(byEvent.get("plugin_install_failed")).toMatchObject({
      plugin: { version: "2.0.0" },
      error: { message: expect.any(String) },
    });
    expect(byEvent.get("maintenance_mode")).toMatchObject({ maintenance_mode: "enabled" });
    expect(byEvent.get("basic_authentication")).toMatchObject({ maintenance_mode: "activated" });
    expect(byEvent.get("ssh_command")).toEqual({
      event: "ssh_command",
      site_id: id(4),
      result: { message: expect.any(String), command: "wp cache flush" },
    });
    // git_deploy_* carry `event` alone by default (their payload is undocumented).
    expect(byEvent.get("git_deploy_failed")).toEqual({ event: "git_deploy_failed" });
    await t.sim.control.webhooksIdle();
    const stats = t.sim.control.stats().webhookDeliveries;
    expect(stats.map((d) => d.event)).toEqual(steps.map(([e]) => e));
    expect(stats.every((d) => d.status === 200 && d.attempt === 1)).toBe(true);
  });

  it("a failed delivery is retried with a doubling backoff until the receiver takes it", async () => {
    receiver = await new Receiver().start();
    receiver.statuses.push(500, 503);
    t = await startTestSim({ sites: 3, webhookUrl: receiver.url, webhookBackoffMs: 60, webhookAttempts: 4 });
    t.sim.control.disableSite(t.sim.control.sites()[0]!.site.id);
    const got = await receiver.waitFor(3);
    expect(got.map((r) => r.body)).toEqual([got[0]!.body, got[0]!.body, got[0]!.body]);
    // 60 ms before the second attempt, 120 ms before the third (timers never fire early).
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(59);
    expect(got[2]!.at - got[1]!.at).toBeGreaterThanOrEqual(119);
    await t.sim.control.webhooksIdle();
    expect(t.sim.control.stats().webhookDeliveries.map((d) => [d.event, d.attempt, d.status])).toEqual([
      ["site_disabled", 1, 500],
      ["site_disabled", 2, 503],
      ["site_disabled", 3, 200],
    ]);
  });

  it("an unreachable receiver: every attempt is recorded without a status, then it gives up", async () => {
    const url = `http://127.0.0.1:${await refusedPort()}/hook`;
    t = await startTestSim({ sites: 3, webhookUrl: url, webhookBackoffMs: 10, webhookAttempts: 3 });
    t.sim.control.hackSite(t.sim.control.sites()[0]!.site.id);
    await t.sim.control.webhooksIdle();
    expect(t.sim.control.stats().webhookDeliveries.map((d) => [d.attempt, d.status])).toEqual([
      [1, null],
      [2, null],
      [3, null],
    ]);
  });

  it("the URL is set at run time; git events carry the site with the switch", async () => {
    receiver = await new Receiver().start();
    t = await startTestSim({ sites: 3 });
    const id = t.sim.control.sites()[0]!.site.id;
    t.sim.control.recordDeploy(id);
    await t.sim.control.webhooksIdle();
    expect(t.sim.control.stats().webhookDeliveries).toEqual([]);
    expect((await t.control("POST", "/_simulator/webhooks", { url: receiver.url })).body).toEqual({
      url: receiver.url,
    });
    t.sim.control.setBehaviour({ gitEventPayload: "site" });
    t.sim.control.recordDeploy(id);
    expect((await receiver.waitFor(1))[0]!.body).toEqual({ event: "git_deploy_completed", site: { id } });
  });
});

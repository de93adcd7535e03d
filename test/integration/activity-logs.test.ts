/**
 * Activity logs end to end: entries written to the account's and the sites' activity logs while the
 * daemon runs arrive at a real OTLP receiver exactly once, with who, what and from where; entries
 * written before the daemon started (with `logs.startFrom: now`) never arrive. Both ways the account's
 * log may be kept: listing the sites' entries too, or only the account's own.
 */
import { mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSimulator } from "../../src/simulator/index.js";
import { pause } from "../../src/util/time.js";
import { startDaemonProcess } from "../helpers/daemon.js";
import { startOtlpReceiver, type ReceivedRecord } from "../helpers/otlp-receiver.js";
import { waitFor } from "../helpers/wait.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const bodyOf = (r: ReceivedRecord) => (typeof r.body === "string" ? r.body : "");

describe.each(["account", "all"] as const)("the account's log listing %s entries", (scope) => {
  it("ships every activity entry written while the daemon runs exactly once, and none from before", async () => {
    const sim = await startSimulator({ sites: 3, seed: 5, logRatePerSite: 0, accountActivityScope: scope });
    const receiver = await startOtlpReceiver();
    cleanups.push(
      () => sim.close(),
      () => receiver.close(),
    );
    const sites = sim.control.sites().map((s) => s.site);
    const write = (mark: string, siteId: number | null, atMs?: number) =>
      sim.control.appendActivity(
        {
          name: "site.update",
          message: mark,
          siteId,
          source: "api.v1",
          accountEmail: "ops@agency.example",
          ipAddress: "198.51.100.7",
          userAgent: "deploy-bot/2.1",
        },
        atMs,
      );
    // Before the daemon starts: one second ago, on the account and on a site.
    write("before account", null, Date.now() - 1000);
    write(`before site ${sites[0]?.id}`, sites[0]?.id ?? null, Date.now() - 1000);

    const checkpointDir = await mkdtemp(join(tmpdir(), "sitehost-activity-it-"));
    const daemon = await startDaemonProcess({
      sim,
      checkpointDir,
      config: {
        logs: {
          ship: true,
          streams: ["activity"],
          startFrom: "now",
          pollInterval: "500ms",
          maxPollInterval: "1s",
        },
        collectors: { traffic: { enabled: false }, performance: { enabled: false } },
      },
      env: {
        OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: receiver.logsEndpoint,
        OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "http/protobuf",
      },
    });
    cleanups.push(() => daemon.kill());
    // Every activity stream (three sites and the account) has fixed its start point on disk.
    await waitFor(
      "the activity checkpoints",
      async () => (await readdir(checkpointDir)).filter((f) => /activity.*\.json$/.test(f)).length >= 4,
      { timeoutMs: 20_000, intervalMs: 100 },
    );

    // While it runs: rounds of entries on the account and on every site, some in the same second.
    const written: string[] = [];
    for (let round = 0; round < 4; round++) {
      written.push(`during account ${round}`);
      write(`during account ${round}`, null);
      for (const s of sites) {
        written.push(`during site ${s.id} ${round}`);
        write(`during site ${s.id} ${round}`, s.id);
      }
      await pause(700);
    }
    const arrivedCount = (mark: string) => receiver.records.filter((r) => bodyOf(r) === mark).length;
    await waitFor("every entry", () => written.every((m) => arrivedCount(m) >= 1), {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    // A last entry per stream: once each has arrived, every read that could double an earlier entry
    // has been shipped.
    const last = [null, ...sites.map((s) => s.id)].map((id) => `last ${id ?? "account"}`);
    for (const [i, mark] of last.entries()) write(mark, i === 0 ? null : (sites[i - 1]?.id ?? null));
    await waitFor("the last entries", () => last.every((m) => arrivedCount(m) >= 1), {
      timeoutMs: 30_000,
      intervalMs: 100,
    });

    const wrong = written.filter((m) => arrivedCount(m) !== 1).map((m) => `${m}: ${arrivedCount(m)}`);
    expect(wrong, daemon.logs()).toEqual([]);
    expect(receiver.records.filter((r) => bodyOf(r).startsWith("before"))).toEqual([]);

    const account = receiver.records.find((r) => bodyOf(r) === "during account 0");
    // The action is the record's EventName field (OTLP event_name).
    expect(account?.eventName).toBe("site.update");
    expect(account?.attributes).not.toHaveProperty("event.name");
    expect(account?.attributes).toMatchObject({
      "user.email": "ops@agency.example",
      "client.address": "198.51.100.7",
      "user_agent.original": "deploy-bot/2.1",
      "sitehost.activity.source": "api.v1",
    });
    expect(account?.attributes["sitehost.site.id"]).toBeUndefined();
    // A site's entry names its site, unless the account's log listed it too and was read first.
    for (const s of sites) {
      const r = receiver.records.find((x) => bodyOf(x) === `during site ${s.id} 2`);
      const id = r?.attributes["sitehost.site.id"];
      if (scope === "account" || id !== undefined) {
        expect(id).toBe(String(s.id));
        expect(r?.attributes["sitehost.site.name"]).toBe(s.name);
      }
    }
    expect(await daemon.stop("SIGTERM")).toBe(0);
  }, 90_000);
});

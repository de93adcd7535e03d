/**
 * The log tailers work in the platform's time (the exporter's clock corrected by the offset the API
 * client measures): with the exporter's clock an hour behind, entries the platform wrote just now are
 * not "from the future" and are not walked again at every read; an hour ahead, `logs.startFrom: now`
 * is the platform's now, so what was written after the start is shipped, and the lag is the platform's.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ServerLogEntry, Site } from "../../../src/api/schemas.js";
import type { LogPageRef, SitehostApi } from "../../../src/api/types.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { LogPipeline } from "../../../src/logs/pipeline.js";
import { offsetClock, systemClock } from "../../../src/util/time.js";
import { fakeApi } from "../../helpers/fakeApi.js";
import { FakeLogApi, makeTailer, MemorySink, silent } from "./fakes.js";

const HOUR = 3_600_000;
const signal = () => new AbortController().signal;

function line(epochSeconds: number, url: string): ServerLogEntry {
  return { timestamp: epochSeconds, request_type: "GET", request_url: url, status: 200 };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "platform-time-test-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the exporter's clock an hour behind the platform's", () => {
  it("entries the platform wrote just now cost a page or two a read, and none ships twice", async () => {
    // The platform's clock as the API client measured it: an hour ahead of this machine's.
    const platform = offsetClock(systemClock, () => HOUR);
    const rig = makeTailer(dir, { clock: platform });
    rig.api.pageSize = 3;
    const nowS = () => Math.floor(platform.now() / 1000);
    // Ten minutes of entries, one every ten seconds, up to the platform's now: to this machine's
    // clock they are an hour in the future.
    const start = nowS() - 600;
    for (let i = 0; i < 60; i++) rig.api.append(line(start + i * 10, `/old${i}`));
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 60 });
    for (let i = 0; i < 5; i++) {
      rig.api.append(line(nowS(), `/new${i}`));
      const before = rig.api.requests.length;
      expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 1 });
      expect(rig.api.requests.length - before).toBeLessThanOrEqual(2);
    }
    expect(rig.events.futureCount).toBe(0);
    const uids = rig.sink.accepted.map((r) => r.attributes.uid);
    expect(uids).toHaveLength(65);
    expect(new Set(uids).size).toBe(65);
    // The high-water mark is where the platform's entries are, not an hour below them.
    expect(rig.tailer.checkpoint?.highWaterMs).toBeGreaterThan(systemClock.now() + HOUR - 60_000);
  });
});

describe("the exporter's clock an hour ahead of the platform's", () => {
  const SITE = { id: 7, name: "shop" } as unknown as Site;

  function pipelineOn(server: FakeLogApi, sink: MemorySink) {
    const empty = async () => ({ items: [], rejected: 0 });
    const api = fakeApi({
      serverLogs: (ref: LogPageRef) => server.page(ref.scrollId) as ReturnType<SitehostApi["serverLogs"]>,
      accountActivity: empty,
      siteActivity: empty,
    });
    const config = ConfigSchema.parse({
      logs: {
        checkpointDir: join(dir, "cp"),
        pollInterval: "50ms",
        startFrom: "now",
        streams: ["server"],
        shutdownTimeout: "1s",
      },
    });
    const registry = new Registry();
    const p = new LogPipeline({
      config,
      api,
      registry,
      logger: silent,
      sink,
      // The platform's clock minus this machine's, as measured: an hour.
      platformOffsetMs: () => -HOUR,
    });
    return { p, registry };
  }

  it("logs.startFrom now is the platform's now: what was written after the start is shipped, the lag is the platform's", async () => {
    const server = new FakeLogApi();
    const sink = new MemorySink();
    // When the process started, by the platform's clock.
    const platformStartS = Math.floor((performance.timeOrigin - HOUR) / 1000);
    server.append(line(platformStartS - 120, "/before-start"));
    for (let i = 0; i < 8; i++) server.append(line(platformStartS + Math.floor(i / 4), `/after${i}`));
    const { p, registry } = pipelineOn(server, sink);
    await p.start();
    p.updateSites([SITE]);
    await vi.waitFor(() => expect(sink.accepted).toHaveLength(8), { timeout: 10_000, interval: 20 });
    expect(sink.accepted.map((r) => r.timeMs / 1000).every((s) => s >= platformStartS)).toBe(true);
    const lag = await vi.waitFor(
      async () => {
        const m = await registry.getSingleMetric("sitehost_exporter_log_lag_seconds")?.get();
        const v = m?.values.find((s) => s.labels.site_id === "7" && s.labels.stream === "server")?.value;
        expect(v).toBeDefined();
        return v as number;
      },
      { timeout: 10_000, interval: 20 },
    );
    await p.stop();
    expect(lag).toBeLessThan(60);
  });
});

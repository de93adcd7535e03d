/**
 * What the log pipeline publishes about streams that cannot advance: the stalled-streams gauge by
 * stream and reason (0 from the start, so an alert sees it rise), a lag series for every stream with
 * a checkpoint, even one that never shipped (measured from its start point), and the summary the
 * status page shows. One site's PHP log answers with a page over api.maxResponseSize; another site's
 * web-server checkpoint is corrupt.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiResponseTooLargeError } from "../../../src/api/errors.js";
import type { Site } from "../../../src/api/schemas.js";
import type { LogPageRef, SitehostApi } from "../../../src/api/types.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { LogPipeline } from "../../../src/logs/pipeline.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";
import { MetricStore } from "../../../src/metrics/store.js";
import { fakeApi } from "../../helpers/fakeApi.js";
import { FakeLogApi, MemorySink, silent } from "./fakes.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "stalled-streams-test-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const SHOP = { id: 7, name: "shop" } as unknown as Site;
const BLOG = { id: 8, name: "blog" } as unknown as Site;

async function values(registry: Registry, name: string) {
  return (await registry.getSingleMetric(name)?.get())?.values ?? [];
}

describe("stalled log streams in the pipeline's series", () => {
  it("a too-large page and a corrupt checkpoint: counted by stream and reason, named for the status page, with a lag series for the stream that never shipped", async () => {
    const quiet = new FakeLogApi();
    const api: SitehostApi = fakeApi({
      phpLogs: (ref: LogPageRef) =>
        ref.id === SHOP.id
          ? Promise.reject(
              new ApiResponseTooLargeError(
                "/sites/{id}/logs/php",
                33554432,
                "GET https://api.example/v1/sites/7/logs/php",
              ),
            )
          : (quiet.page(ref.scrollId) as ReturnType<SitehostApi["phpLogs"]>),
      serverLogs: (ref: LogPageRef) => quiet.page(ref.scrollId) as ReturnType<SitehostApi["serverLogs"]>,
    });
    const checkpointDir = join(dir, "cp");
    await mkdir(checkpointDir, { recursive: true });
    const corrupt = join(checkpointDir, "site-8-server.json");
    await writeFile(corrupt, "");
    const config = ConfigSchema.parse({
      logs: {
        checkpointDir,
        streams: ["php", "server"],
        pollInterval: "50ms",
        startFrom: "-1h",
        shutdownTimeout: "1s",
      },
    });
    const registry = new Registry();
    const p = new LogPipeline({
      config,
      api,
      registry,
      logger: silent,
      store: new MetricStore(METRIC_FAMILIES),
      sink: new MemorySink(),
    });
    // Every kind and reason from the start, at 0.
    const stalled = async () =>
      Object.fromEntries(
        (await values(registry, "sitehost_exporter_log_streams_stalled")).map((v) => [
          `${v.labels.stream} ${v.labels.reason}`,
          v.value,
        ]),
      );
    expect(await stalled()).toEqual({
      "php too_large": 0,
      "php checkpoint_corrupt": 0,
      "php malformed": 0,
      "php read_failures": 0,
      "server too_large": 0,
      "server checkpoint_corrupt": 0,
      "server malformed": 0,
      "server read_failures": 0,
    });
    await p.start();
    p.updateSites([SHOP, BLOG]);
    await vi.waitFor(
      async () => {
        const now = await stalled();
        expect(now["php too_large"]).toBe(1);
        expect(now["server checkpoint_corrupt"]).toBe(1);
      },
      { timeout: 10_000, interval: 20 },
    );
    expect((await stalled())["php read_failures"]).toBe(0);
    const summary = p.stalls();
    expect(summary.total).toBe(2);
    expect(summary.byReason).toMatchObject({ too_large: 1, checkpoint_corrupt: 1 });
    expect(summary.first.map((s) => [s.site, s.stream, s.reason])).toEqual(
      expect.arrayContaining([
        ["shop", "php", "too_large"],
        ["blog", "server", "checkpoint_corrupt"],
      ]),
    );
    expect(summary.first.find((s) => s.reason === "checkpoint_corrupt")?.detail).toContain(corrupt);
    // The stalled stream never shipped: its lag is measured from its start point (an hour ago).
    const lag = await values(registry, "sitehost_exporter_log_lag_seconds");
    const shopPhp = lag.find((v) => v.labels.site_id === "7" && v.labels.stream === "php");
    expect(shopPhp?.value).toBeGreaterThanOrEqual(3590);
    // The corrupt checkpoint gives no time to measure from: the stalled gauge speaks for it.
    expect(lag.find((v) => v.labels.site_id === "8" && v.labels.stream === "server")).toBeUndefined();
    await p.stop();
    expect(await values(registry, "sitehost_exporter_log_streams_stalled")).toEqual([]);
  });
});

/**
 * Nothing lost and nothing twice: marked log lines written while the daemon
 * runs, is killed with SIGKILL and restarted, or while the collector refuses,
 * arrive at a real OTLP receiver exactly as often as they were written, in both
 * of the simulator's paging behaviours.
 */
import { readdir } from "node:fs/promises";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";
import { startDaemonProcess, type DaemonProcess } from "../helpers/daemon.js";
import { startOtlpReceiver, type OtlpReceiver } from "../helpers/otlp-receiver.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Marked entries written so far: marker → times written. */
class Marks {
  readonly written = new Map<string, number>();
  private n = 0;
  constructor(
    private readonly sim: RunningSimulator,
    private readonly run: string,
  ) {}
  /** One marked web-server line per site, and (every third call) an identical pair in the same second. */
  write(): void {
    const at = Date.now();
    for (const s of this.sim.control.sites().slice(0, 3)) {
      const marker = `/marker/${this.run}/${this.n}/${s.site.id}`;
      const copies = this.n % 3 === 0 ? 2 : 1;
      for (let i = 0; i < copies; i++)
        this.sim.control.appendLog(s.site.id, "server", { request_url: marker, status: 200 }, at);
      this.written.set(marker, (this.written.get(marker) ?? 0) + copies);
      const php = `marker ${this.run} ${this.n} ${s.site.id}`;
      this.sim.control.appendLog(s.site.id, "php", { message: php, severity: "Warning" }, at);
      this.written.set(php, 1);
    }
    this.n += 1;
  }
}

/**
 * Arrivals per marker. With `byUid`, a record whose log.record.uid already arrived is not counted
 * again: how a downstream store drops the one replay a SIGKILL between the collector's ack and the
 * checkpoint write can cause (DESIGN.md). Identical lines keep distinct uids, so they all count.
 */
function receivedCounts(receiver: OtlpReceiver, run: string, byUid = false): Map<string, number> {
  const counts = new Map<string, number>();
  const uids = new Set<unknown>();
  for (const r of receiver.records) {
    if (byUid) {
      const uid = r.attributes["log.record.uid"];
      if (uids.has(uid)) continue;
      uids.add(uid);
    }
    const path = r.attributes["url.path"];
    const key =
      typeof path === "string" && path.startsWith(`/marker/${run}/`)
        ? path
        : typeof r.body === "string" && r.body.startsWith(`marker ${run} `)
          ? r.body
          : undefined;
    if (key) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

async function waitForAll(
  receiver: OtlpReceiver,
  marks: Marks,
  run: string,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const got = receivedCounts(receiver, run);
    if ([...marks.written].every(([k, n]) => (got.get(k) ?? 0) >= n)) return true;
    await sleep(250);
  }
  return false;
}

async function setup(paging: "newest-first" | "oldest-first", protocol: "http/json" | "http/protobuf") {
  // An oldest-first scroll starts at the 7-day retention horizon, so the first cycle reads the whole
  // week: keep that history small so the tailers reach the present within seconds.
  const sim = await startSimulator({
    sites: 3,
    seed: 11,
    logRatePerSite: paging === "oldest-first" ? 0.01 : 0.5,
  });
  if (paging === "oldest-first") sim.control.setLogPaging("oldest-first", "cursor");
  const receiver = await startOtlpReceiver();
  const checkpointDir = await mkdtemp(join(tmpdir(), "sitehost-logs-it-"));
  cleanups.push(
    () => sim.close(),
    () => receiver.close(),
  );
  /** `early` runs as soon as the daemon answers, before its tailers first poll. */
  const start = async (early?: () => void): Promise<DaemonProcess> => {
    const d = await startDaemonProcess({
      sim,
      checkpointDir,
      config: {
        logs: { ship: true, pollInterval: "1s", startFrom: "now", overlap: "2m" },
        collectors: { traffic: { enabled: false }, performance: { enabled: false } },
      },
      env: {
        OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: receiver.logsEndpoint,
        OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: protocol,
      },
    });
    cleanups.push(() => d.kill());
    early?.();
    // Wait until every tailer has fixed its start point on disk, so a SIGKILL cannot move it.
    const deadline = Date.now() + 20_000;
    while (
      (await readdir(checkpointDir)).filter((f) => /^site-.*\.json$/.test(f)).length < 6 &&
      Date.now() < deadline
    )
      await sleep(100);
    return d;
  };
  return { sim, receiver, checkpointDir, start };
}

describe.each([
  ["newest-first", "http/json"],
  ["oldest-first", "http/protobuf"],
] as const)("log delivery with %s paging over %s", (paging, protocol) => {
  it("keeps every marked line exactly once across a SIGKILL and restart", async () => {
    const { sim, receiver, start } = await setup(paging, protocol);
    const run = `kill-${paging}`;
    const marks = new Marks(sim, run);
    // Lines written right after start-up, before any tailer polled, are shipped too: startFrom "now"
    // is when the process started.
    let daemon = await start(() => marks.write());
    for (let i = 0; i < 6; i++) {
      marks.write();
      await sleep(400);
    }
    await daemon.kill(); // SIGKILL mid-run
    for (let i = 0; i < 3; i++) marks.write();
    daemon = await start();
    for (let i = 0; i < 3; i++) {
      marks.write();
      await sleep(300);
    }
    await waitForAll(receiver, marks, run, 30_000);
    await sleep(2500); // any late duplicate would arrive by now
    const got = receivedCounts(receiver, run, true);
    const raw = receivedCounts(receiver, run);
    const replayed = [...raw].reduce((sum, [k, n]) => sum + n - (got.get(k) ?? 0), 0);
    // At most one export (one page per stream) can be replayed by a kill between ack and checkpoint.
    expect(replayed).toBeLessThanOrEqual(2 * 3 * 2);
    const wrong = [...marks.written]
      .filter(([k, n]) => got.get(k) !== n)
      .map(([k, n]) => `${k}: written ${n}, received ${got.get(k) ?? 0}`);
    expect(wrong, daemon.logs()).toEqual([]);
    expect(await daemon.stop("SIGTERM")).toBe(0);
  }, 90_000);

  it("loses and doubles nothing while the collector answers 503 for ten seconds, and stops fetching meanwhile", async () => {
    const { sim, receiver, start } = await setup(paging, protocol);
    const run = `refuse-${paging}`;
    const marks = new Marks(sim, run);
    const daemon = await start();
    marks.write();
    expect(await waitForAll(receiver, marks, run, 20_000), "tailers caught up before the outage").toBe(true);
    receiver.setFailing(503);
    marks.write();
    await sleep(3000); // the first refusal happens and the tailers back off
    const pagesBefore = sim.control.stats().logPageRequests;
    for (let i = 0; i < 4; i++) {
      marks.write();
      await sleep(1500);
    }
    const pagesDuring = sim.control.stats().logPageRequests - pagesBefore;
    receiver.setFailing(null);
    await waitForAll(receiver, marks, run, 40_000);
    await sleep(2500);
    const got = receivedCounts(receiver, run);
    const wrong = [...marks.written]
      .filter(([k, n]) => got.get(k) !== n)
      .map(([k, n]) => `${k}: written ${n}, received ${got.get(k) ?? 0}`);
    expect(wrong, daemon.logs()).toEqual([]);
    expect(receiver.requests.refused).toBeGreaterThan(0);
    // 6 tailers polling every second would make ~36 page requests in 6 s; backpressure keeps it to a few.
    expect(pagesDuring).toBeLessThanOrEqual(8);
    expect(await daemon.stop("SIGTERM")).toBe(0);
  }, 90_000);
});

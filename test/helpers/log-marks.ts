/**
 * Test helper: marked log lines written into the simulator, and the count of each marker that
 * arrived at an OTLP receiver, to tell "nothing lost, nothing twice" across restarts and takeovers.
 */
import type { RunningSimulator } from "../../src/simulator/index.js";
import type { OtlpReceiver } from "./otlp-receiver.js";
import { waitFor } from "./wait.js";

/** Marked entries written so far: marker → times written. */
export class Marks {
  readonly written = new Map<string, number>();
  private n = 0;
  constructor(
    private readonly sim: RunningSimulator,
    readonly run: string,
    /** Every third write, the web-server line twice in the same second (identical lines are all real). */
    private readonly identicalPairs = false,
  ) {}

  /**
   * One marked web-server line and one PHP line per site (of the first three), stamped `lateMs`
   * before now and visible from now (indexed late).
   */
  write(lateMs = 0): void {
    const now = Date.now();
    const at = now - lateMs;
    for (const s of this.sim.control.sites().slice(0, 3)) {
      const marker = `/marker/${this.run}/${this.n}/${s.site.id}`;
      const copies = this.identicalPairs && this.n % 3 === 0 ? 2 : 1;
      for (let i = 0; i < copies; i++)
        this.sim.control.appendLog(s.site.id, "server", { request_url: marker, status: 200 }, at, now);
      this.written.set(marker, (this.written.get(marker) ?? 0) + copies);
      const php = `marker ${this.run} ${this.n} ${s.site.id}`;
      this.sim.control.appendLog(s.site.id, "php", { message: php, severity: "Warning" }, at, now);
      this.written.set(php, 1);
    }
    this.n += 1;
  }

  /**
   * Arrivals per marker. With `byUid`, a record whose log.record.uid already arrived is not counted
   * again: how a downstream store drops the one replay a SIGKILL between the collector's ack and the
   * checkpoint write can cause. Identical lines keep distinct uids, so they all count.
   */
  received(receiver: OtlpReceiver, byUid = false): Map<string, number> {
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
        typeof path === "string" && path.startsWith(`/marker/${this.run}/`)
          ? path
          : typeof r.body === "string" && r.body.startsWith(`marker ${this.run} `)
            ? r.body
            : undefined;
      if (key) counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return counts;
  }

  /** Markers that did not arrive exactly as often as written, as readable lines. */
  wrong(receiver: OtlpReceiver, byUid = false): string[] {
    const got = this.received(receiver, byUid);
    return [...this.written]
      .filter(([k, n]) => got.get(k) !== n)
      .map(([k, n]) => `${k}: written ${n}, received ${got.get(k) ?? 0}`);
  }

  /** Waits until every marker arrived at least as often as written; false at the deadline. */
  async allArrived(receiver: OtlpReceiver, timeoutMs: number): Promise<boolean> {
    const arrived = () => {
      const got = this.received(receiver);
      return [...this.written].every(([k, n]) => (got.get(k) ?? 0) >= n);
    };
    return waitFor("every marker", arrived, { timeoutMs, intervalMs: 250 }).catch(() => false);
  }

  /** Records that arrived more often than written (replays), in all. */
  replayed(receiver: OtlpReceiver): number {
    const raw = this.received(receiver);
    const once = this.received(receiver, true);
    return [...raw].reduce((sum, [k, n]) => sum + n - (once.get(k) ?? 0), 0);
  }
}

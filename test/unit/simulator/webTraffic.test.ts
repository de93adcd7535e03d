/**
 * The simulated visitors: a healthy site's request times and statuses look like a real one's, and the
 * webFaults knob makes a site slow, failing or idle for the seconds it covers, and only those.
 */
import { describe, expect, it } from "vitest";
import { SimLogs, type LogSource } from "../../../src/simulator/logs.js";
import type { WebFault } from "../../../src/simulator/options.js";

const src: LogSource = { siteId: 5, siteName: "shop", host: "shop.example", seed: 1234 };
const NO_LATENESS = () => ({ delaySeconds: 0, fraction: 0, maxSeconds: 0 });

function entries(faults: WebFault[], from: number, to: number) {
  const logs = new SimLogs(20, NO_LATENESS, () => faults);
  const out: Array<Record<string, unknown>> = [];
  for (let s = from; s <= to; s++) out.push(...logs.entriesAt(src, "server", s, 0));
  return out.filter((e) => e.request_url !== "/healthz");
}

const uncachedTimes = (list: Array<Record<string, unknown>>) =>
  list
    .filter((e) => e.cached !== "HIT")
    .map((e) => e.request_time as number)
    .sort((a, b) => a - b);
const quantile = (sorted: number[], q: number) => sorted[Math.floor(q * (sorted.length - 1))] as number;
const serverErrors = (list: Array<Record<string, unknown>>) =>
  list.filter((e) => (e.status as number) >= 500).length / list.length;

describe("simulated visitors", () => {
  it("a healthy site: most requests fast, a slow tail, about 0.5 % 5xx", () => {
    const list = entries([], 1_000_000, 1_000_499);
    const times = uncachedTimes(list);
    expect(quantile(times, 0.5)).toBeGreaterThan(0.05);
    expect(quantile(times, 0.5)).toBeLessThan(0.3);
    expect(quantile(times, 0.99)).toBeGreaterThan(4 * quantile(times, 0.5));
    expect(serverErrors(list)).toBeLessThan(0.015);
  });

  it("slow, failing and idle for the seconds a fault covers, the usual outside them", () => {
    const faults: WebFault[] = [
      { siteId: 5, slow: true, errorRate: 0.9, fromSecond: 2_000_100, toSecond: 2_000_199 },
    ];
    const during = entries(faults, 2_000_100, 2_000_199);
    const after = entries(faults, 2_000_200, 2_000_299);
    expect(quantile(uncachedTimes(during), 0.5)).toBeGreaterThan(1);
    expect(serverErrors(during)).toBeGreaterThan(0.8);
    expect(quantile(uncachedTimes(after), 0.5)).toBeLessThan(0.3);
    expect(serverErrors(after)).toBeLessThan(0.05);
    expect(entries([{ siteId: 5, rate: 0 }], 3_000_000, 3_000_099)).toEqual([]);
    expect(entries([{ siteId: 6, rate: 0 }], 3_000_000, 3_000_099).length).toBeGreaterThan(1000);
  });
});

/**
 * The platform's clock against the exporter's, from the Date header of the API's answers: one
 * answer's offset (the header's second plus half a second, minus the middle of the round trip), the
 * median of the recent ones, answers that say nothing usable, and through the real client against a
 * server whose clock is an hour ahead (the self-metric too).
 */
import { afterEach, describe, expect, it } from "vitest";
import { ClockSkew, offsetFromDate, SAMPLES } from "../../../src/api/clockSkew.js";
import type { ApiClient } from "../../../src/api/client.js";
import { makeClient, startServer, type TestServer } from "./helpers.js";

const HOUR = 3_600_000;
/** 2026-03-01T12:00:00Z, on a whole second. */
const T = Date.UTC(2026, 2, 1, 12, 0, 0);
const date = (ms: number) => ({ date: new Date(ms).toUTCString() });

describe("one answer's offset", () => {
  it("is the Date's second plus half a second, minus the middle of the round trip", () => {
    // Sent at T - 1 h by our clock, headers back 400 ms later, the platform wrote 12:00:00.
    expect(offsetFromDate(date(T), T - HOUR, 400)).toBe(HOUR + 500 - 200);
    expect(offsetFromDate(date(T), T + HOUR, 0)).toBe(-HOUR + 500);
  });

  it("is nothing without a Date header, with one that does not parse, or from a cache (Age)", () => {
    expect(offsetFromDate({}, T, 10)).toBeUndefined();
    expect(offsetFromDate({ date: "yesterday-ish" }, T, 10)).toBeUndefined();
    expect(offsetFromDate({ ...date(T - HOUR), age: "3600" }, T, 10)).toBeUndefined();
  });
});

describe("the estimate", () => {
  it("is unknown (0 in force) until the first usable answer", () => {
    const skew = new ClockSkew();
    skew.observe({}, T, 10, 0);
    skew.observe({ date: "not a date" }, T, 10, 5_000);
    expect(skew.offset).toBeUndefined();
    expect(skew.offsetMs()).toBe(0);
  });

  it("is the median of the recent offsets: an odd answer does not move it", () => {
    const skew = new ClockSkew();
    // The platform an hour ahead; answers 2 s apart, 0 to 900 ms into the platform's second.
    for (let i = 0; i < 10; i++) {
      const platformMs = T + HOUR + i * 2000 + (i % 10) * 100;
      const sentAt = platformMs - HOUR - 50;
      skew.observe(date(Math.floor(platformMs / 1000) * 1000), sentAt, 100, i * 2000);
    }
    // A proxy's answer with a Date a day old.
    skew.observe(date(T - 24 * HOUR), T + 21_000, 100, 21_000);
    const offset = skew.offset;
    expect(offset?.samples).toBe(11);
    expect(Math.abs((offset?.offsetMs ?? 0) - HOUR)).toBeLessThanOrEqual(500);
  });

  it("follows a clock stepped by NTP within half its window", () => {
    const skew = new ClockSkew();
    let t = 0;
    const answer = (offsetMs: number) => {
      t += 1000;
      skew.observe(date(T + t + offsetMs), T + t, 0, t);
    };
    for (let i = 0; i < SAMPLES; i++) answer(HOUR);
    for (let i = 0; i < Math.floor(SAMPLES / 2); i++) answer(0);
    expect(Math.abs(skew.offsetMs() - HOUR)).toBeLessThan(1000);
    answer(0);
    expect(Math.abs(skew.offsetMs())).toBeLessThan(1000);
  });

  it("takes at most one answer a second (a burst says the same thing once)", () => {
    const skew = new ClockSkew();
    skew.observe(date(T), T, 0, 0);
    skew.observe(date(T + HOUR), T, 0, 999);
    expect(skew.offset?.samples).toBe(1);
    expect(Math.abs(skew.offsetMs())).toBeLessThan(1000);
  });
});

describe("the API client", () => {
  let server: TestServer | undefined;
  let client: ApiClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
    client = undefined;
    server = undefined;
  });

  it("measures a platform an hour ahead from its answers, and publishes the skew", async () => {
    server = await startServer(() => ({
      status: 200,
      body: { account: { id: 1 } },
      headers: { date: new Date(Date.now() + HOUR).toUTCString() },
    }));
    const { client: c, registry } = makeClient(server);
    client = c;
    expect(c.clockOffset()).toBeUndefined();
    await c.account().catch(() => undefined);
    expect(c.clockOffset()).toBeDefined();
    // The token endpoint's Date is the real one: two answers of the API a second apart outvote it.
    for (let i = 0; i < 2; i++) {
      await new Promise((r) => setTimeout(r, 1010));
      await c.account().catch(() => undefined);
    }
    expect(Math.abs((c.clockOffset()?.offsetMs ?? 0) - HOUR)).toBeLessThan(1500);
    const text = await registry.metrics();
    const line = text.split("\n").find((l) => l.startsWith("sitehost_exporter_clock_skew_seconds "));
    expect(Math.abs(Number(line?.split(" ")[1]) - 3600)).toBeLessThan(1.5);
  }, 15_000);
});

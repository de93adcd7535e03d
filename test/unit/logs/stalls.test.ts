/**
 * A stream that cannot advance says why and since when (the status page and the stalled-streams
 * gauge read it), and a page over api.maxResponseSize never stops a stream for ever: after its bound
 * the read ships what lies above the page and counts the rest as a gap, and later entries flow again.
 * Against the scripted platform (FakeLogApi), 3 entries a page, on a clock the test moves.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiResponseTooLargeError } from "../../../src/api/errors.js";
import type { ServerLogEntry } from "../../../src/api/schemas.js";
import { TOO_LARGE_SKIP_AFTER_MS } from "../../../src/logs/stall.js";
import { systemClock, type Clock } from "../../../src/util/time.js";
import { makeTailer, type TailerRig } from "./fakes.js";

const T0 = Math.floor(Date.now() / 1000) - 3600;
const line = (second: number, url = `/p${second}`): ServerLogEntry => ({
  timestamp: T0 + second,
  request_type: "GET",
  request_url: url,
  status: 200,
});
const ms = (second: number) => (T0 + second) * 1000;
const signal = () => new AbortController().signal;

let dir: string;
let now: number;
const clock: Clock = { now: () => now, sleep: systemClock.sleep };
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "stalls-test-"));
  now = Date.now();
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A tailer whose first read delivered seconds 1 to 3; entries with url /big make their page too large. */
async function delivered(order: "newest-first" | "oldest-first" = "newest-first"): Promise<TailerRig> {
  const rig = makeTailer(dir, { clock });
  rig.api.order = order;
  rig.api.tooLarge = (e) => (e as ServerLogEntry).request_url === "/big";
  rig.api.append(line(1), line(2), line(3));
  expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 3 });
  return rig;
}

const tooLarge = (rig: TailerRig) =>
  expect(rig.tailer.read(signal())).rejects.toBeInstanceOf(ApiResponseTooLargeError);

describe("a page over api.maxResponseSize", () => {
  it("stalls the stream at once; after its bound the read skips it, counts the gap and ships what is newer, and later entries flow", async () => {
    const rig = await delivered();
    // Newest first: [18 17 16] [15 14 13] [12 /big 10] [3 2 1].
    rig.api.append(
      line(10),
      line(11, "/big"),
      line(12),
      line(13),
      line(14),
      line(15),
      line(16),
      line(17),
      line(18),
    );
    const first = now;
    await tooLarge(rig);
    expect(rig.tailer.stall).toMatchObject({ reason: "too_large", sinceMs: first });
    expect(rig.tailer.stall?.detail).toContain("api.maxResponseSize");
    // Not before its bound: every read fails the same way, nothing is shipped, the stall keeps its start.
    now += 10 * 60_000;
    await tooLarge(rig);
    now += 10 * 60_000;
    await tooLarge(rig);
    expect(rig.sink.accepted).toHaveLength(3);
    expect(rig.events.gaps).toEqual([]);
    expect(rig.tailer.stall).toMatchObject({ reason: "too_large", sinceMs: first });
    // Past it: the read ends above the page, ships 13 to 18, and what lies below is a counted gap.
    now = first + TOO_LARGE_SKIP_AFTER_MS;
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 6 });
    expect(rig.sink.paths().slice(3)).toEqual(["/p13", "/p14", "/p15", "/p16", "/p17", "/p18"]);
    expect(rig.events.gaps).toEqual([{ fromMs: ms(3), toMs: ms(13) }]);
    expect(rig.tailer.stall).toBeUndefined();
    // The checkpoint is past the page: later entries are read and shipped without meeting it again.
    rig.api.append(line(19), line(20));
    now += 60_000;
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 2 });
    expect(rig.sink.paths().slice(9)).toEqual(["/p19", "/p20"]);
    expect(rig.tailer.checkpoint?.highWaterMs).toBe(ms(20));
  });

  it("the newest page cannot be skipped (nothing above it is known): stalled until newer entries push it down", async () => {
    const rig = await delivered();
    rig.api.append(line(10), line(11), line(12, "/big"));
    const first = now;
    await tooLarge(rig);
    now += 15 * 60_000;
    await tooLarge(rig);
    now = first + TOO_LARGE_SKIP_AFTER_MS + 60_000;
    await tooLarge(rig);
    await tooLarge(rig);
    expect(rig.tailer.stall).toMatchObject({ reason: "too_large", sinceMs: first });
    expect(rig.events.gaps).toEqual([]);
    rig.api.append(line(20), line(21), line(22));
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 3 });
    expect(rig.events.gaps).toEqual([{ fromMs: ms(3), toMs: ms(20) }]);
    expect(rig.tailer.stall).toBeUndefined();
  });

  it("an oldest-first scroll cannot get past it (its continuation is in the page): the stream stays stalled", async () => {
    const rig = await delivered("oldest-first");
    rig.api.append(line(10, "/big"), line(11), line(12), line(13));
    const first = now;
    for (let i = 0; i < 4; i++) {
      await tooLarge(rig);
      now += 15 * 60_000;
    }
    expect(rig.tailer.stall).toMatchObject({ reason: "too_large", sinceMs: first });
    expect(rig.sink.accepted).toHaveLength(3);
  });
});

describe("other stalls", () => {
  it("reads that keep failing: stalled from the third failure in a row, since the first; a good read clears it", async () => {
    const rig = makeTailer(dir, { clock });
    rig.api.append(line(1));
    for (const n of [1, 2, 3]) rig.api.failOn.add(n);
    const first = now;
    await expect(rig.tailer.read(signal())).rejects.toThrow("HTTP 503");
    now += 5_000;
    await expect(rig.tailer.read(signal())).rejects.toThrow("HTTP 503");
    expect(rig.tailer.stall).toBeUndefined();
    now += 10_000;
    await expect(rig.tailer.read(signal())).rejects.toThrow("HTTP 503");
    expect(rig.tailer.stall).toEqual({
      reason: "read_failures",
      sinceMs: first,
      reads: 3,
      detail: expect.stringContaining("HTTP 503"),
    });
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 1 });
    expect(rig.tailer.stall).toBeUndefined();
  });

  it("reads that meet nothing but malformed entries: stalled from the third; a usable entry clears it", async () => {
    const rig = makeTailer(dir, { clock });
    rig.api.allRejected = true;
    rig.api.append(line(1), line(2));
    const first = now;
    for (let i = 0; i < 2; i++) {
      expect(await rig.tailer.read(signal())).toEqual({ kind: "empty" });
      now += 60_000;
    }
    expect(rig.tailer.stall).toBeUndefined();
    expect(await rig.tailer.read(signal())).toEqual({ kind: "empty" });
    expect(rig.tailer.stall).toMatchObject({ reason: "malformed", sinceMs: first });
    expect(rig.tailer.stall?.detail).toContain("met 2 malformed entries and nothing it could ship");
    rig.api.allRejected = false;
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 2 });
    expect(rig.tailer.stall).toBeUndefined();
  });

  it("new entries that all fail the schema (drift): stalled from the third read, while the delivered ones still come back; a good entry clears it", async () => {
    const rig = makeTailer(dir, { clock });
    rig.api.unfit = (e) => (e as ServerLogEntry).request_url?.startsWith("/drift") === true;
    rig.api.append(line(1), line(2));
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 2 });
    rig.api.append(line(3, "/drift3"), line(4, "/drift4"));
    for (let i = 0; i < 3; i++) {
      expect(rig.tailer.stall).toBeUndefined();
      now += 60_000;
      expect(await rig.tailer.read(signal())).toEqual({ kind: "empty" });
    }
    expect(rig.tailer.stall).toMatchObject({ reason: "malformed" });
    rig.api.append(line(5));
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 1 });
    expect(rig.tailer.stall).toBeUndefined();
  });

  it("a quiet stream whose newest page holds an old malformed entry is not stalled", async () => {
    const rig = makeTailer(dir, { clock });
    rig.api.rejectedPerPage = 1;
    rig.api.append(line(1), line(2));
    expect(await rig.tailer.read(signal())).toMatchObject({ kind: "found", shipped: 2 });
    for (let i = 0; i < 4; i++) {
      now += 60_000;
      expect(await rig.tailer.read(signal())).toEqual({ kind: "empty" });
    }
    expect(rig.events.malformedCount).toBeGreaterThan(3);
    expect(rig.tailer.stall).toBeUndefined();
  });

  it.each([
    ["not JSON", "{ not json"],
    ["empty", ""],
    ["half a file", '{"version":2,"siteId":1,"stream":"server","floorMs":17'],
  ])(
    "a corrupt checkpoint (%s): stopped, stalled at once, naming the file and how to reset it",
    async (_what, text) => {
      await mkdir(join(dir, "checkpoints"), { recursive: true });
      const file = join(dir, "checkpoints", "site-1-server.json");
      await writeFile(file, text);
      const rig = makeTailer(dir, { clock });
      rig.api.append(line(1));
      expect(await rig.tailer.read(signal())).toEqual({ kind: "stopped" });
      expect(rig.sink.accepted).toEqual([]);
      expect(rig.tailer.stall).toMatchObject({ reason: "checkpoint_corrupt", sinceMs: now });
      expect(rig.tailer.stall?.detail).toContain(file);
      expect(rig.tailer.stall?.detail).toContain("delete the file (and its .journal)");
    },
  );

  it("a checkpoint that is a directory stalls the stream the same way", async () => {
    await mkdir(join(dir, "checkpoints", "site-1-server.json"), { recursive: true });
    const rig = makeTailer(dir, { clock });
    expect(await rig.tailer.read(signal())).toEqual({ kind: "stopped" });
    expect(rig.tailer.stall?.reason).toBe("checkpoint_corrupt");
  });
});

/**
 * Fingerprints across schema drift: a field sent as null is the same as a field not sent, and entries
 * delivered before (by this release or an earlier one) are never shipped again because of it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ServerLogEntry } from "../../../src/api/schemas.js";
import { canonical, fingerprint, fingerprintKeepingNulls } from "../../../src/logs/entry.js";
import { fingerprintOf } from "../../../src/logs/streams.js";
import { hash } from "node:crypto";
import { FakeLogApi, makeTailer } from "./fakes.js";

const T0 = Math.floor(Date.now() / 1000) - 3600;
const sparse = (second: number): ServerLogEntry => ({
  timestamp: T0 + second,
  status: 200,
  request_type: "GET",
  request_url: `/p${second}`,
});
/** The same entry from a platform that now sends every optional field, null when it has no value. */
const withNulls = (second: number): ServerLogEntry => ({
  ...sparse(second),
  http_referer: null,
  user_ip: null,
  request_time: null,
});
const signal = () => new AbortController().signal;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "fingerprint-test-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("fingerprints", () => {
  it("a null field and an absent one fingerprint alike, in the fast path and the general one", () => {
    const fast = fingerprintOf("server");
    expect(fast(withNulls(1))).toBe(fast(sparse(1)));
    expect(fingerprint(withNulls(1))).toBe(fingerprint(sparse(1)));
    expect(fast(withNulls(1))).toBe(fingerprint(withNulls(1)));
  });

  it("an entry without nulls keeps the fingerprint it always had; one with nulls can be looked up as before", () => {
    // What the releases before wrote: sha256 of the canonical text with nulls kept.
    const before = (e: object) =>
      hash("sha256", JSON.stringify(Object.fromEntries(Object.entries(e).sort())), "hex").slice(0, 32);
    expect(fingerprintOf("server")(sparse(1))).toBe(before(sparse(1)));
    expect(fingerprintKeepingNulls(sparse(1))).toBeUndefined();
    expect(fingerprintKeepingNulls(withNulls(1))).toBe(before(withNulls(1)));
    expect(canonical({ b: null, a: 1, c: { d: null, e: 2 } })).toBe('{"a":1,"c":{"e":2}}');
  });

  it("a platform that starts sending nulls where it left fields out re-ships nothing", async () => {
    const rig = makeTailer(dir, { fingerprint: fingerprintOf("server") });
    for (let i = 0; i < 5; i++) rig.api.append(sparse(i));
    await rig.tailer.read(signal());
    // The same entries again, now with nulls, and one new entry.
    rig.api.log.splice(0, 5, ...Array.from({ length: 5 }, (_, i) => withNulls(i)));
    rig.api.append(withNulls(5));
    await rig.tailer.read(signal());
    expect(rig.sink.paths()).toEqual(["/p0", "/p1", "/p2", "/p3", "/p4", "/p5"]);
  });

  it("entries with nulls delivered by an earlier release (nulls kept in the fingerprint) are not shipped again", async () => {
    const keepingNulls = (e: object) => fingerprintKeepingNulls(e) ?? fingerprint(e);
    const api = new FakeLogApi();
    for (let i = 0; i < 5; i++) api.append(withNulls(i));
    const earlier = makeTailer(dir, { api, fingerprint: keepingNulls });
    await earlier.tailer.read(signal());
    api.append(withNulls(5));
    const now = makeTailer(dir, { api, fingerprint: fingerprintOf("server") });
    await now.tailer.read(signal());
    expect(now.sink.paths()).toEqual(["/p5"]);
  });
});

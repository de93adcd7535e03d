import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { LogEntry, ServerLogEntry } from "../../../../src/api/schemas.js";
import type { LogPage } from "../../../../src/api/types.js";
import { checkedRecords } from "../../../../src/api/logRecords.js";
import { makeTailer } from "../fakes.js";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "page-retention-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const until = async (done: () => boolean, what: () => string): Promise<void> => {
  const deadline = Date.now() + 5_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

it("lets go of a page's parsed entries while its records wait to be shipped", async () => {
  const rig = makeTailer(dir, { maxRecords: 3 });
  rig.api.order = "oldest-first";
  // Written an hour ago, one a second (web-server times are epoch seconds).
  const t0 = Math.floor(Date.now() / 1000) - 3600;
  for (let i = 0; i < 30; i++) {
    const entry: ServerLogEntry = {
      timestamp: t0 + i,
      request_type: "GET",
      request_url: `/p${i}`,
      status: 200,
      http_version: "HTTP/1.1",
    };
    rig.api.append(entry);
  }
  // Every page the read is given, watched through a weak reference to its entries.
  const pages: Array<WeakRef<object>> = [];
  const served = rig.api.page;
  Object.defineProperty(rig.api, "page", {
    value: async (scrollId: string | null): Promise<LogPage<LogEntry>> => {
      const page = await served(scrollId);
      const items = Array.from({ length: page.records.length }, (_, i) => page.records.record(i) as LogEntry);
      pages.push(new WeakRef(items));
      return { ...page, records: checkedRecords(items) };
    },
  });
  // The collector holds the first exports: the read waits to hand over its second page's records.
  let release = (): void => undefined;
  const held = new Promise<void>((r) => (release = r));
  rig.sink.answer = async () => {
    await held;
    return { kind: "accepted", rejected: 0 };
  };
  const read = rig.tailer.read(new AbortController().signal);
  let requests = -1;
  await until(
    () => {
      const settled = rig.sink.attempts >= 1 && rig.api.requests.length === requests;
      requests = rig.api.requests.length;
      return settled && requests >= 3;
    },
    () =>
      `the read to wait on the collector (${rig.sink.attempts} exports, ${rig.api.requests.length} requests)`,
  );
  await new Promise((r) => setImmediate(r));
  collectGarbage();
  // The page being shipped is gone from memory; only the page fetched ahead is still wanted.
  const alive = pages.map((p) => p.deref() !== undefined);
  expect(alive.slice(0, -1)).not.toContain(true);
  release();
  await read;
  expect(rig.sink.paths()).toEqual(Array.from({ length: 30 }, (_, i) => `/p${i}`));
});

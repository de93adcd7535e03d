/**
 * What the request-duration histogram adds to the log path per record, measured on the parts it
 * touches and nothing else, so that the figure survives a loaded machine: for simulated web-server
 * entries, the counter keys of each page of 200 (`preparePage`'s counting), the page spooled and read
 * back (a newest-first drain spools every page), the increments added up per export of 2,000 records
 * (`addCounts`, journalled with the checkpoint delta) and, with the histogram, the exemplars taken from
 * each export. On: what the exporter does; off: the status count alone. Alternating runs, CPU time of
 * this process (`process.cpuUsage()`).
 *
 *   npx tsc -p tsconfig.json && node <logging flags> dist/bench/histogramParts.js [records=400000] [rounds=5]
 */
import type { ServerLogEntry } from "../src/api/schemas.js";
import type { PendingRecord } from "../src/logs/pending.js";
import { addCounts, deserializePage, serializePage, type PreparedPage } from "../src/logs/prepared.js";
import { RecentRecords } from "../src/logs/requestCounts.js";
import { FULL_HISTOGRAM } from "../src/logs/histogramLayout.js";
import { encoderFor } from "../src/logs/streams.js";
import type { LogSink } from "../src/logs/otlp/sink.js";
import { serverEntry } from "../src/simulator/logEntries.js";

const [records = 400_000, rounds = 5] = process.argv.slice(2).map(Number);
const PAGE = 200;
const EXPORT = 2_000;

const src = { siteId: 7, siteName: "shop", host: "shop.example", seed: 21 };
const entries: PendingRecord[] = Array.from({ length: records }, (_, i) => ({
  entry: serverEntry(src, 1_764_000_000 + Math.floor(i / 20), i % 20) as unknown as ServerLogEntry,
  timeMs: (1_764_000_000 + Math.floor(i / 20)) * 1000,
  fingerprint: i.toString(16).padStart(32, "0"),
  occurrence: 0,
})) as unknown as PendingRecord[];

/** The pages' counting alone (no encoding: that is the same either way). */
function pages(durations: boolean): PreparedPage[] {
  const counter = encoderFor({} as LogSink, { id: 7, name: "shop" }, "server", () => 0, {
    requestTime: "auto",
    durations,
  }).counter;
  if (!counter) throw new Error("server records are counted");
  const out: PreparedPage[] = [];
  for (let from = 0; from < records; from += PAGE) {
    const n = Math.min(PAGE, records - from);
    const ids = new Uint16Array(n * counter.slots);
    const values = new Float64Array(n * counter.slots);
    const fingerprints = new Array<string>(n);
    const occurrences = new Uint32Array(n);
    const times = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const r = entries[from + i] as PendingRecord;
      counter.write(r, ids, values, i * counter.slots);
      fingerprints[i] = r.fingerprint;
      times[i] = r.timeMs;
    }
    const page: PreparedPage = {
      count: n,
      bytes: Buffer.alloc(0),
      ends: new Uint32Array(n),
      fingerprints,
      occurrences,
      times,
    };
    page.counts = { slots: counter.slots, ids, values };
    out.push(page);
  }
  return out;
}

function run(durations: boolean): number {
  const t0 = process.cpuUsage();
  const spooled = pages(durations).map((p) => deserializePage(Buffer.concat(serializePage(p))));
  const recent = new RecentRecords(FULL_HISTOGRAM);
  let sum = 0;
  for (let i = 0; i < spooled.length; i += EXPORT / PAGE) {
    const batch = spooled.slice(i, i + EXPORT / PAGE);
    sum += Object.keys(addCounts(batch)).length;
    if (durations) recent.take(batch);
  }
  const cpu = process.cpuUsage(t0);
  if (sum === 0) throw new Error("nothing counted");
  return (cpu.user + cpu.system) / records;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
run(true);
run(false); // warm-up
const on: number[] = [];
const off: number[] = [];
for (let i = 0; i < rounds; i++) {
  if (i % 2 === 0) {
    on.push(run(true));
    off.push(run(false));
  } else {
    off.push(run(false));
    on.push(run(true));
  }
}
const round2 = (x: number) => +x.toFixed(2);
console.log(
  JSON.stringify({
    phase: "histogram-parts",
    records,
    cpuUsPerRecordOn: on.map(round2),
    cpuUsPerRecordOff: off.map(round2),
    medianOn: round2(median(on)),
    medianOff: round2(median(off)),
    differenceUs: round2(median(on) - median(off)),
  }),
);

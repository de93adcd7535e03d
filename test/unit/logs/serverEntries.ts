/** Web-server entries and what a checkpoint and a shipped page hold of them, for the log-count tests. */
import type { ServerLogEntry } from "../../../src/api/schemas.js";
import { counterKeyOf } from "../../../src/logs/counterKeys.js";
import type { PreparedPage } from "../../../src/logs/prepared.js";
import { RequestTimeUnit, SERVER_COUNT_SLOTS, serverCounts } from "../../../src/logs/requestCounts.js";

export function entry(request_time: unknown, status = 200, cached = "MISS", bytes?: number): ServerLogEntry {
  return {
    timestamp: 1,
    status,
    cached,
    request_time: request_time as number,
    ...(bytes === undefined ? {} : { body_bytes_sent: bytes }),
  };
}

/** The counts a checkpoint would hold after these entries, read as one page (its values seen first). */
export function countsOf(
  entries: ServerLogEntry[],
  unit = new RequestTimeUnit("auto"),
): Record<string, number> {
  unit.observe(entries.map((e) => e.request_time));
  const ids = new Uint16Array(entries.length * SERVER_COUNT_SLOTS);
  const values = new Float64Array(entries.length * SERVER_COUNT_SLOTS);
  entries.forEach((e, i) => serverCounts(e, unit, ids, values, i * SERVER_COUNT_SLOTS));
  const counts: Record<string, number> = {};
  ids.forEach((id, i) => {
    const k = counterKeyOf(id);
    if (k !== "") counts[k] = (counts[k] ?? 0) + (values[i] as number);
  });
  return counts;
}

/** A shipped page of these entries: fingerprints fp<first>, fp<first+1>, …, times <first>, <first+1>, … s. */
export function shippedPage(entries: ServerLogEntry[], first = 0): PreparedPage {
  const n = entries.length;
  const ids = new Uint16Array(n * SERVER_COUNT_SLOTS);
  const values = new Float64Array(n * SERVER_COUNT_SLOTS);
  const unit = new RequestTimeUnit("seconds");
  entries.forEach((e, i) => serverCounts(e, unit, ids, values, i * SERVER_COUNT_SLOTS));
  return {
    count: n,
    bytes: Buffer.alloc(0),
    ends: new Uint32Array(n),
    fingerprints: entries.map((_, i) => `fp${first + i}`),
    occurrences: new Uint32Array(n),
    times: Float64Array.from(entries, (_, i) => (first + i) * 1000),
    counts: { slots: SERVER_COUNT_SLOTS, ids, values },
  };
}

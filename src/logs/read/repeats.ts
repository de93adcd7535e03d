/**
 * Pages a pass has read, to tell a source that loops back (a scroll that returns to its first page,
 * numbered pages whose `nextPage` never ends) from a stream that goes on.
 *
 * A page is known by its first and last entries' fingerprints and every entry's time. In a scroll
 * ordered by time, a later page with the same entries and times as an earlier one can only be the same
 * page again, unless all its entries share one second: a burst of identical lines in one second
 * (identical lines are real) fills page after page with the same content. Such pages are never taken
 * for a loop; the read's page and byte bounds stop a loop of them.
 */
import { createHash } from "node:crypto";
import type { Fingerprint, PageEntries } from "./types.js";

/** Pages up to this many entries have their times written into one array kept for the purpose. */
const SCRATCH_ENTRIES = 4096;
let scratch = new Float64Array(256);

/** The page's identity, or undefined when a repeat of it may be real (fewer than two distinct times). */
export function pageSignature(entries: PageEntries, fingerprint: Fingerprint): string | undefined {
  const n = entries.length;
  if (n === 0) return undefined;
  // The times as numbers in an array, hashed as its bytes: no string per time, none of them joined
  // (every page read is signed, thousands a minute).
  if (scratch.length < n && n <= SCRATCH_ENTRIES) scratch = new Float64Array(n);
  const times = scratch.length >= n ? scratch : new Float64Array(n);
  let low = Infinity;
  let high = -Infinity;
  for (let i = 0; i < n; i++) {
    const t = entries.timeMs(i);
    times[i] = t ?? Number.NaN;
    if (t === undefined) continue;
    if (t < low) low = t;
    if (t > high) high = t;
  }
  if (!(high > low)) return undefined;
  // The first entry's length keeps the two apart whatever they hold.
  const first = fingerprintAt(entries, 0, fingerprint);
  return createHash("sha1")
    .update(`${first.length}:${first}|${fingerprintAt(entries, n - 1, fingerprint)}|`)
    .update(new Uint8Array(times.buffer, 0, n * 8))
    .digest("hex");
}

/**
 * What tells an entry apart: its fingerprint ("-" for a record that does not fit the schema, which is
 * not reported for this). The same however the page was decoded (read lazily from its bytes, or
 * parsed whole as a backlog's pages are), so a scroll that loops back to a page read one way and now
 * decoded the other is still seen to repeat.
 */
function fingerprintAt(entries: PageEntries, i: number, fingerprint: Fingerprint): string {
  const entry = entries.quietEntry(i);
  return entry ? fingerprint(entry) : "-";
}

/** A page read before in the pass: the one just before it (served again), or an earlier one (a loop). */
export type Repeat = "previous" | "earlier";

export class PagesSeen {
  private readonly seen = new Set<string>();
  private last: string | undefined;

  /** Whether this page was read before in the pass, and when (and remember it). */
  repeats(entries: PageEntries, fingerprint: Fingerprint): Repeat | undefined {
    const signature = pageSignature(entries, fingerprint);
    const previous = this.last;
    this.last = signature;
    if (signature === undefined) return undefined;
    if (this.seen.has(signature)) return signature === previous ? "previous" : "earlier";
    this.seen.add(signature);
    return undefined;
  }
}

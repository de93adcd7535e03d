/**
 * The platform's clock against this machine's, measured from the `Date` header of the platform's
 * answers. Log entries are stamped by the platform: the log tailers take this machine's clock
 * corrected by the offset for "now" (docs/logs.md), and the offset is a self-metric
 * (`sitehost_exporter_clock_skew_seconds`), a part of the status page and a finding of `doctor`.
 *
 * A Date header has one-second resolution (the second it was written in) and was written somewhere
 * between the request leaving and the answer's headers coming back. One answer gives the offset as
 * the header's second plus half a second, minus the moment halfway through the round trip: it is off
 * by at most half a second plus half the round trip. The estimate is the median of the last
 * `SAMPLES` offsets, taken at most one a second: an odd answer (a proxy's, a cache's) does not move
 * it, and a clock stepped by NTP is followed within half as many samples. Answers without a Date
 * header, with one that does not parse, or served from a cache (an `Age` header: their Date is the
 * origin's, from when the answer was cached) are not samples.
 */
import type { IncomingHttpHeaders } from "node:http";

/** Offsets the estimate is the median of. */
export const SAMPLES = 15;
/** At most one sample per this many ms (a burst of answers within one second says the same). */
export const SAMPLE_SPACING_MS = 1000;
/**
 * Skew beyond which the status page shows a problem and SitehostExporterClockSkewed fires. The log
 * tailers are unaffected by any skew (they work in the platform's time); what is not corrected is
 * this machine's own: its log lines, token expiry, the lock's heartbeats, what Prometheus is told.
 */
export const CLOCK_SKEW_WARN_SECONDS = 30;

export interface ClockOffset {
  /** The platform's clock minus this machine's, ms: the median of the recent samples. */
  offsetMs: number;
  /** Samples the median is of (at most SAMPLES). */
  samples: number;
  /** When the latest sample was taken, by this machine's clock (epoch ms). */
  atMs: number;
}

/**
 * One answer's offset (the platform's clock minus this machine's, ms), or undefined when it says
 * nothing usable of the platform's clock. `sentAtMs`: when the request was sent, by this machine's
 * clock; `roundTripMs`: from then until the answer's headers came.
 */
export function offsetFromDate(
  headers: IncomingHttpHeaders,
  sentAtMs: number,
  roundTripMs: number,
): number | undefined {
  const date = headers.date;
  if (typeof date !== "string" || headers.age !== undefined) return undefined;
  const platformMs = Date.parse(date);
  if (!Number.isFinite(platformMs)) return undefined;
  return platformMs + 500 - (sentAtMs + Math.max(0, roundTripMs) / 2);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The estimate: fed every answer, read by whoever wants the platform's time. */
export class ClockSkew {
  /** The last SAMPLES offsets, a ring. */
  private readonly offsets: number[] = [];
  private next = 0;
  /** When the last sample was taken (monotonic ms). */
  private sampledAt = Number.NEGATIVE_INFINITY;
  private estimate: ClockOffset | undefined;

  /**
   * An answer came. `sentAtMs`: when its request was sent (this machine's clock); `roundTripMs`: from
   * then until its headers came; `monotonicMs`: a monotonic time of its arrival (performance.now()).
   */
  observe(headers: IncomingHttpHeaders, sentAtMs: number, roundTripMs: number, monotonicMs: number): void {
    if (monotonicMs - this.sampledAt < SAMPLE_SPACING_MS) return;
    const offset = offsetFromDate(headers, sentAtMs, roundTripMs);
    if (offset === undefined) return;
    this.sampledAt = monotonicMs;
    this.offsets[this.next] = offset;
    this.next = (this.next + 1) % SAMPLES;
    this.estimate = {
      offsetMs: median(this.offsets),
      samples: this.offsets.length,
      atMs: sentAtMs + Math.max(0, roundTripMs),
    };
  }

  /** The estimate, or undefined before the first answer with a usable Date header. */
  get offset(): ClockOffset | undefined {
    return this.estimate;
  }

  /** The offset in force: the estimate's, 0 until there is one. */
  offsetMs(): number {
    return this.estimate?.offsetMs ?? 0;
  }
}

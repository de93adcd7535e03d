/**
 * When a stream is read next, from how fast its entries arrive (pure, and table-tested).
 *
 * `readIntervalMs`: a read is worth a request once about a quarter of a page has arrived, and is due
 * no later than `logs.maxPollInterval` (the freshness bound) nor sooner than `logs.pollInterval`. A
 * stream with a few entries an hour is read every `logs.maxPollInterval`, not pulled back to
 * `logs.pollInterval` by each entry it finds; a busy one is paced by `paceMs`.
 *
 * `paceMs`, a busy stream. A read fetches the new entries plus what it re-reads below the
 * high-water mark (its window and the mark's own second), page by page; a read whose entries spill a
 * little onto a second page costs two requests for one page's worth. So a stream busier than a page
 * per poll interval is read a little sooner, at the interval that fills its pages, whenever that costs
 * fewer requests per entry; never later than the poll interval.
 */

export interface ReadPace {
  /** New entries per second the stream has shown lately. */
  ratePerSecond: number;
  /** How far below the high-water mark each read re-reads: its window plus the mark's second, ms. */
  rereadMs: number;
  /** Entries a page of the stream holds. */
  pageSize: number;
}

/** Pages are planned this full, so that an uneven second does not spill onto another page. */
const FILL = 0.97;
/** The shortest interval pacing chooses. */
const MIN_INTERVAL_MS = 1000;

/** Pages a read `intervalMs` after the last one fetches: the new entries, the re-read, one below it. */
function pagesPerRead(p: ReadPace, intervalMs: number): number {
  const entries = (p.ratePerSecond * (intervalMs + p.rereadMs)) / 1000 + 1;
  return Math.max(1, Math.ceil(entries / p.pageSize));
}

/** The interval until the next read: `pollMs`, or sooner when whole pages cost fewer requests per entry. */
export function paceMs(p: ReadPace, pollMs: number): number {
  const rate = p.ratePerSecond;
  if (!(rate > 0) || !Number.isFinite(rate)) return pollMs;
  const atPoll = pagesPerRead(p, pollMs);
  if (atPoll <= 1) return pollMs;
  let best = { intervalMs: pollMs, cost: atPoll / (rate * pollMs) };
  for (let pages = 1; pages < atPoll; pages++) {
    // The longest interval whose read fits in `pages` pages, in whole seconds: entry times have
    // one-second precision, so a read fetches whole seconds, and waits of whole seconds (shortened by
    // the scheduler's spread, never lengthened) never take in one second more than planned.
    const intervalMs = Math.floor((pages * p.pageSize * FILL - 1) / rate - p.rereadMs / 1000) * 1000;
    if (intervalMs < MIN_INTERVAL_MS || intervalMs >= pollMs) continue;
    const cost = pages / (rate * intervalMs);
    if (cost < best.cost) best = { intervalMs, cost };
  }
  return best.intervalMs;
}

/** A read is due once this share of a page is expected to wait in the stream. */
const ENTRIES_PER_READ_SHARE = 0.25;

/** The entries a read is worth a request for: a quarter of the stream's page. */
export function entriesPerRead(pageSize: number): number {
  return pageSize * ENTRIES_PER_READ_SHARE;
}

/** The interval at which `ratePerSecond` fills a quarter of a page, in whole seconds, within the bounds. */
export function arrivalIntervalMs(
  ratePerSecond: number,
  pageSize: number,
  pollMs: number,
  maxPollMs: number,
): number {
  if (!(ratePerSecond > 0) || !Number.isFinite(ratePerSecond)) return maxPollMs;
  const ms = Math.ceil(entriesPerRead(pageSize) / ratePerSecond) * 1000;
  return Math.min(maxPollMs, Math.max(pollMs, ms));
}

/**
 * The interval until the next read of a stream whose rate is known: by its arrivals between
 * `pollMs` and `maxPollMs`, and paced for whole pages once it is busy enough for `pollMs`.
 */
export function readIntervalMs(p: ReadPace, pollMs: number, maxPollMs: number): number {
  const byArrival = arrivalIntervalMs(p.ratePerSecond, p.pageSize, pollMs, maxPollMs);
  return byArrival > pollMs ? byArrival : paceMs(p, pollMs);
}

/**
 * When each scraper will scrape next. Prometheus scrapes a target at a fixed interval and a fixed
 * offset within it, so once a scraper's last few scrapes came at a steady interval, its next one is
 * due one interval after its last. A scraper is told apart by its address and User-Agent (the two
 * Prometheus of an HA pair scrape at their own offsets); one that comes irregularly (a person with
 * curl, a scraper whose interval changed) has no forecast.
 */

/** Scrapes remembered per scraper: three intervals. */
const HISTORY = 4;
/** Scrapers remembered; the one seen longest ago is forgotten first. */
const MAX_SCRAPERS = 16;
/** Intervals count as steady when the longest is at most this much longer than the shortest. */
const STEADY = 1.2;
/** Shorter intervals are bursts, not a schedule. */
const MIN_INTERVAL_MS = 2000;

export interface Forecast {
  /** When the next scrape is due (ms since the epoch). */
  next: number;
  intervalMs: number;
}

export class ScrapeForecast {
  private readonly seen = new Map<string, number[]>();

  /** A scrape by `scraper` at `now`; its forecast, when its scrapes keep a steady interval. */
  arrived(scraper: string, now: number): Forecast | undefined {
    const times = this.seen.get(scraper) ?? [];
    this.seen.delete(scraper); // re-inserted last: the map's order is the order scrapers were seen
    times.push(now);
    if (times.length > HISTORY) times.shift();
    this.seen.set(scraper, times);
    if (this.seen.size > MAX_SCRAPERS) this.seen.delete(this.seen.keys().next().value as string);
    if (times.length < 3) return undefined;
    const intervals = times.slice(1).map((t, i) => t - (times[i] as number));
    const shortest = Math.min(...intervals);
    const longest = Math.max(...intervals);
    if (shortest < MIN_INTERVAL_MS || longest > shortest * STEADY) return undefined;
    const intervalMs = [...intervals].sort((a, b) => a - b)[Math.floor(intervals.length / 2)] as number;
    return { next: now + intervalMs, intervalMs };
  }
}

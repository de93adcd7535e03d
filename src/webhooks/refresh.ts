/**
 * Site events refresh the inventory at once instead of at the next discovery, within a bounded share
 * of the API budget:
 * - a site the exporter watches is read alone (GET /sites/{id}); requests gather for `debounceMs`,
 *   each site is read once however many events named it (one still being read is read again
 *   afterwards, as a later event may say something newer);
 * - a site it does not know (a new one, or an id that names nothing) is never read alone: all such ids
 *   are batched into one discovery run, at most one per `discoveryIntervalMs`, so events naming
 *   hundreds of unknown ids cost one listing, not a request each. Ids still unknown after that run are
 *   not a reason for another one for `absentForMs`;
 * - a burst naming more than `maxSingleReads` watched sites, or more single reads than
 *   `maxReadsPerSecond` allows, joins that discovery run too (it costs fewer requests).
 * Every request goes through the shared API request budget; what the refreshes cost over the last
 * `windowMs` (single reads, and the discovery runs they asked for) is the request plan's `webhooks`
 * source, and the plan is told when it changes.
 */
import type { Logger } from "pino";
import { systemClock, type Clock } from "../util/time.js";

export interface RefreshTarget {
  /** Read one site (GET /sites/{id}) and publish what it says. */
  refreshSite(siteId: number, signal: AbortSignal): Promise<void>;
  /** A whole discovery run; false when one is running already (the request is kept and tried again). */
  rediscover(): Promise<boolean>;
  /** Whether the exporter watches this site (its inventory has it). */
  isKnown(siteId: number): boolean;
  /** API requests one discovery run costs. */
  discoveryCost(): number;
}

export interface RefresherOptions {
  debounceMs: number;
  maxSingleReads: number;
  /** Single reads per second at most (averaged over 10 s); more go into a discovery run. */
  maxReadsPerSecond: number;
  /** Discovery runs asked for by events are at least this far apart. */
  discoveryIntervalMs: number;
  /** How long an id that a discovery did not find is not a reason for another one. */
  absentForMs: number;
  /** How long after a discovery that could not start to try again. */
  retryMs: number;
  /** Window of the observed request rate. */
  windowMs: number;
  clock: Pick<Clock, "now">;
  /** Called when the observed request rate changed (at most every few seconds): re-plan the budget. */
  onRateChange?: () => void;
}

export const DEFAULT_REFRESHER_OPTIONS: RefresherOptions = {
  debounceMs: 250,
  maxSingleReads: 10,
  maxReadsPerSecond: 2,
  discoveryIntervalMs: 60_000,
  absentForMs: 60 * 60_000,
  retryMs: 2000,
  windowMs: 15 * 60_000,
  clock: systemClock,
};

/** Window of the single-read cap. */
const READ_WINDOW_MS = 10_000;
/** Ids remembered as not found, at most (the oldest are forgotten). */
const MAX_ABSENT = 10_000;
/** The plan is told about a changed rate at most this often. */
const RATE_NOTICE_MS = 5_000;

export class SiteRefresher {
  private readonly wanted = new Set<number>();
  private readonly reading = new Set<number>();
  private readonly running = new Set<Promise<unknown>>();
  private readonly abort = new AbortController();
  private readonly opts: RefresherOptions;
  private readonly log: Logger;
  /** Times of the requests made within the window, and of the single reads within READ_WINDOW_MS. */
  private readonly made: number[] = [];
  private readonly reads: number[] = [];
  /** A discovery run is wanted for these ids (unknown ones, and watched ones past the caps). */
  private readonly forDiscovery = new Set<number>();
  private discoveryTimer: NodeJS.Timeout | undefined;
  private discovering = false;
  private lastDiscoveryAt = -Infinity;
  /** Ids a discovery did not find, and when. */
  private readonly absent = new Map<number, number>();
  private lastRateNotice = -Infinity;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly target: RefreshTarget,
    logger: Logger,
    opts: Partial<RefresherOptions> = {},
  ) {
    this.opts = { ...DEFAULT_REFRESHER_OPTIONS, ...opts };
    this.log = logger.child({ component: "webhooks" });
  }

  request(siteId: number): void {
    if (this.abort.signal.aborted) return;
    if (this.target.isKnown(siteId)) {
      this.wanted.add(siteId);
      this.schedule(this.opts.debounceMs);
      return;
    }
    const notFoundAt = this.absent.get(siteId);
    if (notFoundAt !== undefined && this.opts.clock.now() - notFoundAt < this.opts.absentForMs) return;
    this.wantDiscovery([siteId]);
  }

  /** API requests per second the refreshes made (or had discovery make), averaged over the window. */
  requestsPerSecond(): number {
    this.trim();
    return this.made.length / (this.opts.windowMs / 1000);
  }

  /** Reads or a discovery waiting or in flight (tests). */
  get busy(): boolean {
    return this.wanted.size > 0 || this.running.size > 0 || this.forDiscovery.size > 0 || this.discovering;
  }

  async stop(): Promise<void> {
    this.abort.abort(new Error("shutting down"));
    clearTimeout(this.timer);
    clearTimeout(this.discoveryTimer);
    this.timer = undefined;
    this.discoveryTimer = undefined;
    this.wanted.clear();
    this.forDiscovery.clear();
    await Promise.allSettled([...this.running]);
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.abort.signal.aborted) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, delayMs);
  }

  private flush(): void {
    const ids = [...this.wanted].filter((id) => !this.reading.has(id));
    if (ids.length === 0) return;
    for (const id of ids) this.wanted.delete(id);
    if (ids.length > Math.min(this.opts.maxSingleReads, this.readsAllowed())) {
      this.wantDiscovery(ids);
      return;
    }
    for (const id of ids) {
      this.reading.add(id);
      this.reads.push(this.opts.clock.now());
      this.note(1);
      this.track(
        this.target.refreshSite(id, this.abort.signal).finally(() => {
          this.reading.delete(id);
          if (this.wanted.has(id)) this.schedule(this.opts.debounceMs);
        }),
        { siteId: id },
      );
    }
  }

  /** Single reads the cap allows now. */
  private readsAllowed(): number {
    const from = this.opts.clock.now() - READ_WINDOW_MS;
    while (this.reads.length > 0 && (this.reads[0] as number) < from) this.reads.shift();
    return Math.max(0, Math.floor((this.opts.maxReadsPerSecond * READ_WINDOW_MS) / 1000) - this.reads.length);
  }

  private wantDiscovery(ids: readonly number[], atLeastMs = this.opts.debounceMs): void {
    // The ids only serve to say afterwards which were not found: a bounded number is kept.
    for (const id of ids) if (this.forDiscovery.size < MAX_ABSENT) this.forDiscovery.add(id);
    if (this.discoveryTimer || this.discovering || this.abort.signal.aborted) return;
    const wait = Math.max(
      atLeastMs,
      this.lastDiscoveryAt + this.opts.discoveryIntervalMs - this.opts.clock.now(),
    );
    this.discoveryTimer = setTimeout(() => {
      this.discoveryTimer = undefined;
      // A timer may fire a millisecond before the clock says the interval is over: wait the rest.
      if (this.opts.clock.now() < this.lastDiscoveryAt + this.opts.discoveryIntervalMs)
        this.wantDiscovery([], 0);
      else this.discover();
    }, wait);
  }

  private discover(): void {
    if (this.abort.signal.aborted || this.forDiscovery.size === 0) return;
    const ids = [...this.forDiscovery];
    this.forDiscovery.clear();
    this.discovering = true;
    const cost = this.target.discoveryCost();
    let retryInMs = this.opts.debounceMs;
    // Discovery's requests go through the budget under its own source, inventory; the plan counts
    // them here, as webhook work, since no schedule planned them.
    this.track(
      this.target
        .rediscover()
        .then((ran) => {
          if (!ran) {
            // One is running already: try again soon (what it finds may settle some of the ids).
            for (const id of ids) this.forDiscovery.add(id);
            retryInMs = this.opts.retryMs;
            return;
          }
          this.note(cost);
          this.lastDiscoveryAt = this.opts.clock.now();
          const missing = ids.filter((id) => !this.target.isKnown(id));
          for (const id of missing) this.markAbsent(id);
          this.log.info(
            { sites: ids.length, notFound: missing.length, requests: cost },
            "discovery run for sites named by webhook events",
          );
        })
        .finally(() => {
          this.discovering = false;
          if (this.forDiscovery.size > 0 && !this.abort.signal.aborted) this.wantDiscovery([], retryInMs);
        }),
      { sites: ids.length },
    );
  }

  private markAbsent(id: number): void {
    this.absent.delete(id);
    this.absent.set(id, this.opts.clock.now());
    if (this.absent.size > MAX_ABSENT) this.absent.delete(this.absent.keys().next().value as number);
  }

  private track(work: Promise<unknown>, fields: Record<string, unknown>): void {
    const p = work.catch((err: unknown) => {
      if (!this.abort.signal.aborted)
        this.log.warn({ ...fields, err }, "site refresh after a webhook failed");
    });
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  private note(requests: number): void {
    const now = this.opts.clock.now();
    for (let i = 0; i < requests; i++) this.made.push(now);
    this.trim();
    if (this.opts.onRateChange && now - this.lastRateNotice >= RATE_NOTICE_MS) {
      this.lastRateNotice = now;
      this.opts.onRateChange();
    }
  }

  private trim(): void {
    const from = this.opts.clock.now() - this.opts.windowMs;
    let drop = 0;
    while (drop < this.made.length && (this.made[drop] as number) < from) drop++;
    if (drop > 0) this.made.splice(0, drop);
  }
}

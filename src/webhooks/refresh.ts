/**
 * Site events refresh that site's inventory at once instead of at the next discovery. Requests are
 * coalesced: they gather for `debounceMs`, each site is read once however many events named it (one
 * still being read is read again afterwards, as a later event may say something newer), and a burst
 * naming more than `maxSingleReads` sites becomes one discovery run, which costs fewer requests.
 * Every read goes through the shared API request budget (source `webhooks`); the rate of reads over
 * the last `windowMs` is what the request plan shows for webhooks.
 */
import type { Logger } from "pino";
import { systemClock, type Clock } from "../util/time.js";

export interface RefreshTarget {
  /** Read one site (GET /sites/{id}) and publish what it says. */
  refreshSite(siteId: number, signal: AbortSignal): Promise<void>;
  /** A whole discovery run; false when one is running already (the request is kept and tried again). */
  rediscover(): Promise<boolean>;
}

export interface RefresherOptions {
  debounceMs: number;
  maxSingleReads: number;
  /** How long after a discovery that could not start to try again. */
  retryMs: number;
  /** Window of the observed request rate. */
  windowMs: number;
  clock: Pick<Clock, "now">;
}

export const DEFAULT_REFRESHER_OPTIONS: RefresherOptions = {
  debounceMs: 250,
  maxSingleReads: 10,
  retryMs: 2000,
  windowMs: 15 * 60_000,
  clock: systemClock,
};

export class SiteRefresher {
  private readonly wanted = new Set<number>();
  private readonly reading = new Set<number>();
  private readonly running = new Set<Promise<unknown>>();
  private readonly abort = new AbortController();
  private readonly opts: RefresherOptions;
  private readonly log: Logger;
  /** Times of the refresh requests made within the window. */
  private readonly made: number[] = [];
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
    this.wanted.add(siteId);
    this.schedule(this.opts.debounceMs);
  }

  /** API requests per second the refreshes made, averaged over the window. */
  requestsPerSecond(): number {
    this.trim();
    return this.made.length / (this.opts.windowMs / 1000);
  }

  /** Reads waiting or in flight (tests). */
  get busy(): boolean {
    return this.wanted.size > 0 || this.running.size > 0;
  }

  async stop(): Promise<void> {
    this.abort.abort(new Error("shutting down"));
    clearTimeout(this.timer);
    this.timer = undefined;
    this.wanted.clear();
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
    if (ids.length > this.opts.maxSingleReads) {
      this.track(
        // Discovery's requests count under its own source, inventory.
        this.target.rediscover().then((ran) => {
          if (ran) return;
          for (const id of ids) this.wanted.add(id);
          this.schedule(this.opts.retryMs);
        }),
        { sites: ids.length },
      );
      return;
    }
    for (const id of ids) {
      this.reading.add(id);
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
  }

  private trim(): void {
    const from = this.opts.clock.now() - this.opts.windowMs;
    let drop = 0;
    while (drop < this.made.length && (this.made[drop] as number) < from) drop++;
    if (drop > 0) this.made.splice(0, drop);
  }
}

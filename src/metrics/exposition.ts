/**
 * The cached exposition, per format: the store's text is rendered once per change, the prom-client
 * self-metrics at most once per `selfMetricsTtlMs` (shared by both formats), and concurrent scrapes
 * share one render. Scrape cost does not grow with scrape rate; a format nobody asks for is never
 * rendered.
 *
 * Rendered ahead of a scrape that is due: with logs on, the log-derived counts of thousands of sites
 * move between two scrapes, and rendering them takes hundreds of milliseconds, which a scrape would
 * otherwise wait for. Once a scraper scrapes at a steady interval (`ScrapeForecast`), its next
 * exposition is rendered shortly before its next scrape (twice the last render's time, at least a
 * second), and that scrape is served it as it is: data that old, at no more CPU than rendering at the
 * scrape. A scrape that comes later than that, or from a scraper without a forecast, is rendered at
 * the scrape as before.
 */
import { gunzipSync } from "node:zlib";

import type { Registry } from "prom-client";
import { CONTENT_TYPES, openMetricsFromText, type ExpositionFormat } from "./openMetrics.js";
import { GzipMembers, gzipText } from "./gzipMembers.js";
import { SelfRegistry } from "./readGauge.js";
import { ScrapeForecast } from "./scrapeForecast.js";
import type { MetricStore } from "./store.js";

/** The least time a render ahead starts before a scrape is due. */
const MIN_LEAD_MS = 1000;
/** How late past its due time a scrape may still be served the body rendered ahead of it. */
const LATE_SCRAPE_MS = 2000;

export interface ExpositionBody {
  /** Uncompressed text; decompressed from the gzip members on first use and kept until the next change. */
  readonly body: Buffer;
  /**
   * The gzip stream as its members (the store's: per family its header, then its lines in members of
   * about 32 KB of text; then the self-metrics'), sent one after the other: joining them would copy
   * the whole exposition on every change.
   */
  readonly gzipParts: readonly Buffer[];
  readonly gzipLength: number;
  contentType: string;
}

/** Only the compressed text is kept by default: Prometheus always asks for gzip. */
class CachedBody implements ExpositionBody {
  private plain: Buffer | undefined;
  readonly gzipLength: number;
  constructor(
    readonly gzipParts: readonly Buffer[],
    readonly contentType: string,
    readonly storeVersion: number,
    readonly at: number,
    /** Rendered ahead of a scrape: served as it is until this long after `at`. */
    readonly servedForMs?: number,
  ) {
    this.gzipLength = gzipParts.reduce((n, part) => n + part.length, 0);
  }
  get body(): Buffer {
    this.plain ??= gunzipSync(Buffer.concat(this.gzipParts));
    return this.plain;
  }
}

export class Exposition {
  private readonly cached = new Map<ExpositionFormat, CachedBody>();
  private readonly inFlight = new Map<ExpositionFormat, Promise<ExpositionBody>>();
  private self: { text: Promise<string>; at: number } | undefined;
  private readonly forecast = new ScrapeForecast();
  /** Renders due ahead of a scraper's next scrape, per scraper and format. */
  private readonly ahead = new Map<string, NodeJS.Timeout>();
  /** How long the last render took (ms). */
  private lastBuildMs = 0;
  /** How many times a body was rebuilt (tests, benchmark). */
  renders = 0;

  constructor(
    private readonly store: MetricStore,
    private readonly registry: Registry,
    private readonly selfMetricsTtlMs = 1000,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * The body for a scrape in `format`; `scraper` (its address and User-Agent) lets a steady scraper's
   * next exposition be rendered ahead of its next scrape.
   */
  current(format: ExpositionFormat = "text", scraper?: string): Promise<ExpositionBody> {
    const now = this.clock();
    if (scraper !== undefined) this.renderAheadOf(`${scraper} ${format}`, format, now);
    const ahead = this.cached.get(format);
    if (ahead?.servedForMs !== undefined && now - ahead.at <= ahead.servedForMs)
      return Promise.resolve(ahead);
    this.store.settle();
    const c = this.cached.get(format);
    if (c && c.storeVersion === this.store.version && Date.now() - c.at < this.selfMetricsTtlMs) {
      return Promise.resolve(c);
    }
    let pending = this.inFlight.get(format);
    if (!pending) {
      pending = this.build(format).finally(() => this.inFlight.delete(format));
      this.inFlight.set(format, pending);
    }
    return pending;
  }

  /**
   * prom-client's text and when it was asked for, rendered at most once per TTL for both formats:
   * without the exporter's read gauges (`SelfRegistry`), which `build` writes itself.
   */
  private selfMetrics(): { text: Promise<string>; at: number } {
    const now = Date.now();
    if (!this.self || now - this.self.at >= this.selfMetricsTtlMs) {
      const { registry } = this;
      const text = registry instanceof SelfRegistry ? registry.besideReadGauges() : registry.metrics();
      const self = { text, at: now };
      const forget = () => {
        if (this.self === self) this.self = undefined;
      };
      self.text.catch(forget);
      // Not held past its TTL: with a stream's series per log stream it is megabytes at thousands of
      // sites, and the next scrape renders it anew anyway.
      setTimeout(forget, this.selfMetricsTtlMs).unref();
      this.self = self;
    }
    return this.self;
  }

  /** The read gauges' families (tens of thousands of per-stream series), written straight as gzip members. */
  private readGaugeParts(format: ExpositionFormat): Buffer[] {
    const { registry } = this;
    if (!(registry instanceof SelfRegistry)) return [];
    const members = new GzipMembers();
    try {
      for (const gauge of registry.readGauges()) gauge.write(members.writer, format);
      return members.finish();
    } finally {
      members.writer.finish();
    }
  }

  /** Schedules a render ahead of the scraper's next scrape, when it has a forecast. */
  private renderAheadOf(key: string, format: ExpositionFormat, now: number): void {
    clearTimeout(this.ahead.get(key));
    this.ahead.delete(key);
    const due = this.forecast.arrived(key, now);
    if (!due) return;
    const lead = Math.min(due.intervalMs / 2, Math.max(MIN_LEAD_MS, 2 * this.lastBuildMs));
    const timer = setTimeout(
      () => {
        this.ahead.delete(key);
        if (this.inFlight.has(format)) return;
        this.store.settle();
        const pending = this.build(format, lead + LATE_SCRAPE_MS).finally(() => this.inFlight.delete(format));
        this.inFlight.set(format, pending);
        pending.catch(() => undefined); // a scrape that joins it sees the error; alone it is retried then
      },
      due.next - lead - now,
    );
    timer.unref();
    this.ahead.set(key, timer);
  }

  private async build(format: ExpositionFormat, servedForMs?: number): Promise<ExpositionBody> {
    const started = performance.now();
    const storeVersion = this.store.version;
    const { text, at } = this.selfMetrics();
    const self = await text;
    const tail = format === "text" ? self : `${openMetricsFromText(self)}# EOF\n`;
    const zipped = [...this.store.gzipParts(format), ...this.readGaugeParts(format), gzipText(tail)];
    this.renders += 1;
    this.lastBuildMs = performance.now() - started;
    const body = new CachedBody(
      zipped,
      CONTENT_TYPES[format],
      storeVersion,
      servedForMs === undefined ? at : this.clock(),
      servedForMs,
    );
    this.cached.set(format, body);
    return body;
  }
}

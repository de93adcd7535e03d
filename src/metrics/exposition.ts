/**
 * The cached exposition, per format: the store's text is rendered once per change, the prom-client
 * self-metrics at most once per `selfMetricsTtlMs` (shared by both formats), and concurrent scrapes
 * share one render. Scrape cost does not grow with scrape rate; a format nobody asks for is never
 * rendered.
 */
import { gunzipSync } from "node:zlib";

import type { Registry } from "prom-client";
import { CONTENT_TYPES, openMetricsFromText, type ExpositionFormat } from "./openMetrics.js";
import { GzipMembers, gzipText } from "./gzipMembers.js";
import { SelfRegistry } from "./readGauge.js";
import type { MetricStore } from "./store.js";

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
  /** How many times a body was rebuilt (tests, benchmark). */
  renders = 0;

  constructor(
    private readonly store: MetricStore,
    private readonly registry: Registry,
    private readonly selfMetricsTtlMs = 1000,
  ) {}

  current(format: ExpositionFormat = "text"): Promise<ExpositionBody> {
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

  private async build(format: ExpositionFormat): Promise<ExpositionBody> {
    const storeVersion = this.store.version;
    const { text, at } = this.selfMetrics();
    const self = await text;
    const tail = format === "text" ? self : `${openMetricsFromText(self)}# EOF\n`;
    const zipped = [...this.store.gzipParts(format), ...this.readGaugeParts(format), gzipText(tail)];
    this.renders += 1;
    const body = new CachedBody(zipped, CONTENT_TYPES[format], storeVersion, at);
    this.cached.set(format, body);
    return body;
  }
}

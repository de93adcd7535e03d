/**
 * The cached exposition: the store's text is rendered once per change, the
 * prom-client self-metrics at most once per `selfMetricsTtlMs`, and concurrent
 * scrapes share one render. Scrape cost does not grow with scrape rate.
 */
import { gunzipSync, gzipSync } from "node:zlib";

import type { Registry } from "prom-client";
import type { MetricStore } from "./store.js";

export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export interface ExpositionBody {
  /** Uncompressed text; decompressed from `gzip` on first use and kept until the next change. */
  readonly body: Buffer;
  gzip: Buffer;
  contentType: string;
}

/** Only the compressed text is kept by default: Prometheus always asks for gzip. */
class CachedBody implements ExpositionBody {
  private plain: Buffer | undefined;
  readonly contentType = CONTENT_TYPE;
  constructor(
    readonly gzip: Buffer,
    readonly storeVersion: number,
    readonly at: number,
  ) {}
  get body(): Buffer {
    this.plain ??= gunzipSync(this.gzip);
    return this.plain;
  }
}

export class Exposition {
  private cached: CachedBody | undefined;
  private inFlight: Promise<ExpositionBody> | undefined;
  /** How many times the body was rebuilt (tests, benchmark). */
  renders = 0;

  constructor(
    private readonly store: MetricStore,
    private readonly registry: Registry,
    private readonly selfMetricsTtlMs = 1000,
  ) {}

  current(): Promise<ExpositionBody> {
    const c = this.cached;
    if (c && c.storeVersion === this.store.version && Date.now() - c.at < this.selfMetricsTtlMs) {
      return Promise.resolve(c);
    }
    if (!this.inFlight) {
      this.inFlight = this.build().finally(() => {
        this.inFlight = undefined;
      });
    }
    return this.inFlight;
  }

  private async build(): Promise<ExpositionBody> {
    const storeVersion = this.store.version;
    const self = await this.registry.metrics();
    const zipped = Buffer.concat([...this.store.gzipParts(), gzipSync(self, { level: 1 })]);
    this.renders += 1;
    this.cached = new CachedBody(zipped, storeVersion, Date.now());
    return this.cached;
  }
}

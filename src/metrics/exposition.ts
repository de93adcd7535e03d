/**
 * The cached exposition: the store's text is rendered once per change, the
 * prom-client self-metrics at most once per `selfMetricsTtlMs`, and concurrent
 * scrapes share one render. Scrape cost does not grow with scrape rate.
 */
import { gzip as gzipCallback } from "node:zlib";
import { promisify } from "node:util";
import type { Registry } from "prom-client";
import type { MetricStore } from "./store.js";

const gzip = promisify(gzipCallback);
export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export interface ExpositionBody {
  body: Buffer;
  gzip: Buffer;
  contentType: string;
}

export class Exposition {
  private cached: (ExpositionBody & { storeVersion: number; at: number }) | undefined;
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
    const body = Buffer.from(this.store.render() + self, "utf8");
    // Level 1: scrapes are frequent and the text compresses well anyway.
    const zipped = await gzip(body, { level: 1 });
    this.renders += 1;
    this.cached = { body, gzip: zipped, contentType: CONTENT_TYPE, storeVersion, at: Date.now() };
    return this.cached;
  }
}

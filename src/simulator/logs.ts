/**
 * Simulated PHP and web-server logs: entries are a pure function of (site,
 * stream, second), materialised only when read, plus entries appended by tests.
 * Scrolls page through them 200 at a time in either order.
 */
import { hash32, unit } from "./random.js";

export type SimStream = "php" | "server";
export type LogOrder = "newest-first" | "oldest-first";
export type ScrollMode = "snapshot" | "cursor";

export const LOG_PAGE_SIZE = 200;
export const RETENTION_SECONDS = 7 * 86_400;

type Entry = Record<string, unknown>;

interface Appended {
  seq: number;
  entry: Entry;
}

const PATHS = [
  "/",
  "/shop/",
  "/blog/hello-world/",
  "/wp-login.php",
  "/cart/?add=12",
  "/feed/",
  "/about/",
  "/search/?q=shoes",
];
const METHODS = ["GET", "GET", "GET", "GET", "POST", "HEAD"];
const STATUSES = [200, 200, 200, 200, 200, 301, 304, 404, 403, 500, 502];
const AGENTS = [
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36",
  "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 Version/18.1 Mobile Safari/604.1",
  "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  "curl/8.5.0",
];
const CACHE = ["HIT", "HIT", "MISS", "BYPASS", "EXPIRED"];
const PHP_SEVERITIES = ["Notice", "Warning", "Warning", "Deprecated", "Fatal error", "Parse error"];
const FILES = [
  "/www/site/public/wp-content/plugins/shop-engine/src/Cart.php",
  "/www/site/public/wp-content/themes/storefront/functions.php",
  "/www/site/public/wp-includes/class-wp-query.php",
];

export interface LogSource {
  siteId: number;
  siteName: string;
  host: string;
  seed: number;
}

export class SimLogs {
  private readonly appended = new Map<string, Map<number, Appended[]>>();
  private seq = 0;

  constructor(
    /** Generated entries per second per site and stream. */
    public ratePerSecond: number,
  ) {}

  append(siteId: number, stream: SimStream, entry: Entry, second: number): void {
    const key = `${siteId}/${stream}`;
    let bySecond = this.appended.get(key);
    if (!bySecond) this.appended.set(key, (bySecond = new Map()));
    const list = bySecond.get(second) ?? [];
    list.push({ seq: ++this.seq, entry });
    bySecond.set(second, list);
  }

  get currentSeq(): number {
    return this.seq;
  }

  appendedCount(siteId: number, stream: SimStream, from: number, to: number): number {
    let n = 0;
    for (const [second, list] of this.appended.get(`${siteId}/${stream}`) ?? []) {
      if (second >= from && second <= to) n += list.length;
    }
    return n;
  }

  /** Generated entries of one second (fixed forever), then appended ones visible at `maxSeq`. */
  entriesAt(src: LogSource, stream: SimStream, second: number, maxSeq: number): Entry[] {
    const out: Entry[] = [];
    const rate = this.ratePerSecond;
    const streamNo = stream === "php" ? 1 : 2;
    const base = Math.floor(rate);
    const count = base + (unit(src.seed, streamNo, second) < rate - base ? 1 : 0);
    for (let k = 0; k < count; k++)
      out.push(stream === "server" ? serverEntry(src, second, k) : phpEntry(src, second, k));
    // Health checks: twice in the same second, byte-identical, once a minute.
    if (stream === "server" && rate > 0 && second % 60 === src.seed % 60) {
      const check = healthCheck(src, second);
      out.push(check, { ...check });
    }
    const extra = this.appended.get(`${src.siteId}/${stream}`)?.get(second);
    if (extra) for (const a of extra) if (a.seq <= maxSeq) out.push(a.entry);
    return out;
  }

  /**
   * total_results of a scroll over [from, to]: the expected number of generated entries (the rate is a
   * mean), plus the exact number of health checks and appended entries. Approximate, as a search
   * engine's hit count is; filters are not taken into account.
   */
  estimateTotal(src: LogSource, stream: SimStream, from: number, to: number): number {
    let checks = 0;
    if (stream === "server" && this.ratePerSecond > 0 && to >= from) {
      // Seconds s in [from, to] with s % 60 === seed % 60, two entries each.
      const phase = src.seed % 60;
      const first = from + ((((phase - from) % 60) + 60) % 60);
      checks = first > to ? 0 : 2 * (Math.floor((to - first) / 60) + 1);
    }
    return (
      Math.round(this.ratePerSecond * (to - from + 1)) +
      checks +
      this.appendedCount(src.siteId, stream, from, to)
    );
  }
}

function serverEntry(src: LogSource, second: number, k: number): Entry {
  const h = hash32(src.seed, second, k);
  const status = STATUSES[h % STATUSES.length] as number;
  const method = METHODS[(h >>> 4) % METHODS.length] as string;
  const url = PATHS[(h >>> 8) % PATHS.length] as string;
  const cached = status < 300 && method === "GET" ? (CACHE[(h >>> 12) % CACHE.length] as string) : "BYPASS";
  return {
    body_bytes_sent: status === 304 ? 0 : 500 + ((h >>> 3) % 90_000),
    cached,
    date: new Date(second * 1000).toISOString(),
    http2: "on",
    http_host: src.host,
    http_referer: (h & 1) === 0 ? `https://${src.host}/` : "-",
    http_user_agent: AGENTS[(h >>> 16) % AGENTS.length] as string,
    http_version: "HTTP/2.0",
    http_x_forwarded_for: "-",
    renderer: cached === "HIT" ? "static" : "php",
    request_completion: "OK",
    request_time: cached === "HIT" ? 0.002 : Math.round((0.03 + ((h >>> 20) % 900) / 1000) * 1000) / 1000,
    request_type: method,
    request_url: url,
    scheme: "https",
    status,
    timestamp: second,
    type: "access",
    user_ip: `203.0.113.${(h >>> 24) % 250}`,
  };
}

function healthCheck(src: LogSource, second: number): Entry {
  return {
    body_bytes_sent: 2,
    cached: "BYPASS",
    date: new Date(second * 1000).toISOString(),
    http2: "off",
    http_host: src.host,
    http_referer: "-",
    http_user_agent: "HealthCheck/1.0",
    http_version: "HTTP/1.1",
    http_x_forwarded_for: "-",
    renderer: "php",
    request_completion: "OK",
    request_time: 0.004,
    request_type: "GET",
    request_url: "/healthz",
    scheme: "https",
    status: 200,
    timestamp: second,
    type: "access",
    user_ip: "10.1.2.3",
  };
}

function phpEntry(src: LogSource, second: number, k: number): Entry {
  const h = hash32(src.seed, second, k, 7);
  const severity = PHP_SEVERITIES[h % PHP_SEVERITIES.length] as string;
  const file = FILES[(h >>> 5) % FILES.length] as string;
  const line = 10 + ((h >>> 9) % 400);
  let message: string;
  if (severity === "Fatal error" && (h & 8) === 0) {
    message =
      `PHP Fatal error:  Uncaught RuntimeException: Payment gateway timed out after 30 seconds in ${file}:${line}\n` +
      `Stack trace:\n#0 ${FILES[0]}(88): ShopEngine\\Gateway->charge(Object(ShopEngine\\Order))\n` +
      `#1 /www/site/public/wp-includes/class-wp-hook.php(324): ShopEngine\\Cart->checkout()\n#2 {main}\n` +
      `  thrown in ${file} on line ${line}`;
  } else if (severity === "Fatal error") {
    message = `PHP Fatal error:  Allowed memory size of 268435456 bytes exhausted (tried to allocate 20480 bytes) in ${file} on line ${line}`;
  } else if (severity === "Parse error") {
    message = `PHP Parse error:  syntax error, unexpected token "}" in ${file} on line ${line}`;
  } else if (severity === "Deprecated") {
    message = `PHP Deprecated:  Creation of dynamic property Cart::$total is deprecated in ${file} on line ${line}`;
  } else if (severity === "Notice") {
    message = `PHP Notice:  Function wp_enqueue_script was called incorrectly in ${file} on line ${line}`;
  } else {
    message = `PHP Warning:  Undefined array key "page" in ${file} on line ${line}`;
  }
  return {
    message,
    severity,
    kind: "php",
    name: "php-fpm",
    file,
    line,
    timestamp: new Date(second * 1000).toISOString(),
    hosted_site_id: src.siteId,
  };
}

interface ScrollState {
  id: string;
  siteId: number;
  stream: SimStream;
  order: LogOrder;
  mode: ScrollMode;
  /** Next second to read and how many entries of it were already returned. */
  second: number;
  index: number;
  lower: number;
  upper: number;
  maxSeq: number;
  lastUsed: number;
  /** The request's filters (status, request_type, user_ip), fixed when the scroll opened. */
  filter: ((entry: Entry) => boolean) | null;
}

/** Filters of the log endpoints: php `status` (a severity word); server `status`, `request_type`, `user_ip`. */
export function logFilter(
  stream: SimStream,
  params: Record<string, string | null>,
): ((e: Entry) => boolean) | null {
  const tests: Array<(e: Entry) => boolean> = [];
  const status = params.status ?? null;
  if (stream === "php") {
    if (status) tests.push((e) => String(e.severity ?? "").toLowerCase() === status.toLowerCase());
  } else {
    if (status) tests.push((e) => String(e.status) === status);
    const method = params.request_type ?? null;
    if (method) tests.push((e) => String(e.request_type ?? "").toUpperCase() === method.toUpperCase());
    const ip = params.user_ip ?? null;
    if (ip) tests.push((e) => e.user_ip === ip);
  }
  return tests.length === 0 ? null : (e) => tests.every((t) => t(e));
}

export class ScrollStore {
  private readonly scrolls = new Map<string, ScrollState>();
  private counter = 0;
  private lastSweep = 0;

  constructor(
    private readonly logs: SimLogs,
    public idleTimeoutMs: number,
  ) {}

  open(
    src: LogSource,
    stream: SimStream,
    order: LogOrder,
    mode: ScrollMode,
    nowMs: number,
    filter: ((entry: Entry) => boolean) | null = null,
  ): ScrollState {
    this.sweep(nowMs);
    const nowSec = Math.floor(nowMs / 1000);
    const lower = nowSec - RETENTION_SECONDS;
    const state: ScrollState = {
      id: `scroll-${++this.counter}-${hash32(src.siteId, nowMs, this.counter).toString(36)}`,
      siteId: src.siteId,
      stream,
      order,
      mode: order === "newest-first" ? "snapshot" : mode,
      second: order === "newest-first" ? nowSec : lower,
      index: 0,
      lower,
      upper: nowSec,
      maxSeq: this.logs.currentSeq,
      lastUsed: nowMs,
      filter,
    };
    this.scrolls.set(state.id, state);
    return state;
  }

  get(id: string, nowMs: number): ScrollState | undefined {
    const state = this.scrolls.get(id);
    if (!state) return undefined;
    if (nowMs - state.lastUsed > this.idleTimeoutMs) {
      this.scrolls.delete(id);
      return undefined;
    }
    return state;
  }

  /** The next page of a scroll (empty when it is exhausted). */
  page(src: LogSource, state: ScrollState, nowMs: number): Entry[] {
    state.lastUsed = nowMs;
    const out: Entry[] = [];
    const growing = state.mode === "cursor";
    if (growing) {
      state.upper = Math.floor(nowMs / 1000);
      state.maxSeq = this.logs.currentSeq;
    }
    if (state.order === "oldest-first") {
      while (out.length < LOG_PAGE_SIZE && state.second <= state.upper) {
        const entries = this.entriesOf(src, state);
        const take = entries.slice(state.index, state.index + (LOG_PAGE_SIZE - out.length));
        out.push(...take);
        state.index += take.length;
        // A growing cursor stays on the current second: more may be written to it.
        if (state.index >= entries.length && (state.second < state.upper || !growing)) {
          state.second += 1;
          state.index = 0;
        } else if (state.index >= entries.length) break;
      }
    } else {
      while (out.length < LOG_PAGE_SIZE && state.second >= state.lower) {
        const entries = this.entriesOf(src, state).reverse();
        const take = entries.slice(state.index, state.index + (LOG_PAGE_SIZE - out.length));
        out.push(...take);
        state.index += take.length;
        if (state.index >= entries.length) {
          state.second -= 1;
          state.index = 0;
        }
      }
    }
    return out;
  }

  private entriesOf(src: LogSource, state: ScrollState): Entry[] {
    const all = this.logs.entriesAt(src, state.stream, state.second, state.maxSeq);
    return state.filter ? all.filter(state.filter) : all;
  }

  /** Drop idle scrolls, at most once per second of the clock and only once there are many. */
  private sweep(nowMs: number): void {
    if (this.scrolls.size < 1000 || nowMs - this.lastSweep < 1000) return;
    this.lastSweep = nowMs;
    for (const [id, s] of this.scrolls) if (nowMs - s.lastUsed > this.idleTimeoutMs) this.scrolls.delete(id);
  }

  get size(): number {
    return this.scrolls.size;
  }
}

/** Generated PHP and web-server log entries: pure functions of (site, second, position). */
import { hash32, unit } from "./random.js";

export type Entry = Record<string, unknown>;

export interface LogSource {
  siteId: number;
  siteName: string;
  host: string;
  seed: number;
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
/** Statuses of a healthy site's requests, by share: mostly 200, a few redirects and 4xx, 0.2 % 5xx. */
const STATUS_SHARES: ReadonlyArray<readonly [number, number]> = [
  [301, 0.02],
  [304, 0.03],
  [404, 0.03],
  [403, 0.005],
  [500, 0.0012],
  [502, 0.0008],
];
const SERVER_ERRORS = [500, 502, 503, 504];
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

/** How a site's visitors fare in one second (see options.ts WebFault); the fleet's usual when absent. */
export interface Traffic {
  slow?: boolean;
  errorRate?: number;
}

function statusOf(u: number, traffic: Traffic | undefined): number {
  const errorRate = traffic?.errorRate;
  if (errorRate !== undefined) {
    return u < errorRate ? (SERVER_ERRORS[Math.floor((u / errorRate) * 4)] as number) : 200;
  }
  let at = 0;
  for (const [status, share] of STATUS_SHARES) {
    at += share;
    if (u < at) return status;
  }
  return 200;
}

/**
 * Seconds an uncached request took: log-normal around the site's own median (60 to 220 ms, from its
 * seed), with a slow tail (3 % take 8 times longer), millisecond resolution as nginx writes it.
 */
export function requestSeconds(src: LogSource, second: number, k: number, traffic?: Traffic): number {
  const u1 = Math.max(unit(src.seed, second, k, 0x71), 1e-9);
  const u2 = unit(src.seed, second, k, 0x72);
  const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  const medianMs = 60 + (src.seed % 5) * 40;
  let ms = medianMs * Math.exp(0.5 * z);
  if (unit(src.seed, second, k, 0x73) < 0.03) ms *= 8;
  if (traffic?.slow) ms *= 25;
  return Math.round(Math.min(ms, 60_000)) / 1000;
}

export function serverEntry(src: LogSource, second: number, k: number, traffic?: Traffic): Entry {
  const h = hash32(src.seed, second, k);
  const status = statusOf(unit(src.seed, second, k, 0x70), traffic);
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
    request_time: cached === "HIT" ? (1 + ((h >>> 20) % 8)) / 1000 : requestSeconds(src, second, k, traffic),
    request_type: method,
    request_url: url,
    scheme: "https",
    status,
    timestamp: second,
    type: "access",
    user_ip: `203.0.113.${(h >>> 24) % 250}`,
  };
}

export function healthCheck(src: LogSource, second: number): Entry {
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

export function phpEntry(src: LogSource, second: number, k: number): Entry {
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

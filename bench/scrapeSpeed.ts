/**
 * How long a scrape of `/metrics` takes at 5,000 sites (by default), as Prometheus scrapes it
 * (OpenMetrics, so exemplars are written; gzip; every 30 s; from the request to the answer's last byte),
 * with logs on and with logs off, one after
 * the other in one run. With logs on every site's log-derived counts move between two scrapes (the
 * simulator writes every stream every few seconds), so each scrape publishes them and renders their
 * families anew: the busiest case. Logs on is measured once every stream was read and every site's
 * traffic counted; logs off once the daemon is ready.
 *
 *   node dist/bench/scrapeSpeed.js [sites=5000] [scrapes=10]
 */
import { get } from "node:http";
import { gunzipSync } from "node:zlib";
import { sleep } from "../src/util/time.js";
import { values } from "./daemon.js";
import { PROMETHEUS_ACCEPT, startFleet, stop, type Daemon } from "./fleetDaemon.js";

const SCRAPE_INTERVAL_MS = 30_000;
/** The longest a run waits for the daemon to be ready and, with logs, for every stream's first read. */
const WARM_UP_CAP_MS = 20 * 60_000;

interface Scrape {
  ms: number;
  text: string;
  gzipBytes: number;
}

/**
 * One scrape, timed from the request to the last byte of the compressed answer (the exporter's work;
 * the client's gunzip and parsing are left out), then decompressed for reading.
 */
function timedScrape(url: string): Promise<Scrape> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = get(
      `${url}/metrics`,
      { headers: { accept: PROMETHEUS_ACCEPT, "accept-encoding": "gzip" }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const ms = performance.now() - t0;
          const body = Buffer.concat(chunks);
          const text =
            res.headers["content-encoding"] === "gzip" ? gunzipSync(body).toString() : body.toString();
          resolve({ ms, text, gzipBytes: body.length });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
  });
}

async function warm(d: Daemon, sites: number, logs: boolean): Promise<void> {
  const streams = sites * 3 + 1;
  while (performance.now() - d.started < WARM_UP_CAP_MS) {
    await sleep(5_000);
    const ready = await fetch(`${d.url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (!ready) continue;
    if (!logs) return;
    const { text } = await timedScrape(d.url);
    const read = values(text, "sitehost_exporter_log_last_read_timestamp_seconds").length;
    const counted = new Set(
      values(text, "sitehost_site_requests_total").map((r) => /site_id="(\d+)"/.exec(r.labels)?.[1]),
    ).size;
    if (read >= streams && counted >= sites) return;
  }
}

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] as number;

async function measure(sites: number, scrapes: number, logs: boolean): Promise<Record<string, unknown>> {
  const { sim, receiver, d } = await startFleet(sites, undefined, logs);
  try {
    await warm(d, sites, logs);
    const times: number[] = [];
    let last: Scrape | undefined;
    for (let i = 0; i < scrapes; i++) {
      await sleep(SCRAPE_INTERVAL_MS);
      last = await timedScrape(d.url);
      times.push(last.ms);
    }
    const lines = (last?.text ?? "").split("\n").filter((l) => l && !l.startsWith("#"));
    return {
      logs,
      sites,
      series: lines.length,
      siteSeriesPerSite: +(lines.filter((l) => l.startsWith("sitehost_site_")).length / sites).toFixed(1),
      gzipKb: Math.round((last?.gzipBytes ?? 0) / 1024),
      scrapeMsP50: +percentile(times, 50).toFixed(1),
      scrapeMsP90: +percentile(times, 90).toFixed(1),
      scrapeMs: times.map((t) => Math.round(t)),
    };
  } finally {
    await stop(d, sim, receiver.server);
  }
}

const sites = Number(process.argv[2] ?? 5000);
const scrapes = Number(process.argv[3] ?? 10);
for (const logs of [true, false]) console.log(JSON.stringify(await measure(sites, scrapes, logs)));
process.exit(0);

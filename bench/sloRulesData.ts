/**
 * The data of the SLO rules benchmark, as OpenMetrics for `promtool tsdb create-blocks-from`: per
 * site, the exporter's counters at the defaults (responses by status class and cache state, the
 * latency histogram's count and buckets, the objectives) over the last 2 hours, and the recorded
 * windows as if the rules had run for that long: the 5-minute increases over 3 days and the 2-hour
 * ones over the budget's whole period (what the longer windows are summed from), the others over the
 * last 2 hours (the alerts read their latest values). At a 30 s scrape and evaluation interval, the
 * slow group's windows every 2m30s. And blackbox_exporter's probe_success of each site, once a
 * minute, for the probe SLI.
 */
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { ConfigSchema } from "../src/config/schema.js";
import { durationMs } from "../src/config/duration.js";
import { publishedBounds } from "../src/logs/histogramLayout.js";
import { COARSE_BASE, FINE_BASE, planWindows, SLOW_INTERVAL } from "../src/slo/windows.js";

export const STEP_S = 30;
const RAW_S = 2 * 3600;
/** blackbox_exporter's probe interval (the chart's ScrapeConfig default). */
const PROBE_S = 60;

export interface DataShape {
  sites: number;
  /** End of the data (seconds, on a 30 s step). */
  end: number;
}

const TARGET = 'job="sitehost-exporter",instance="127.0.0.1:10987"';
const site = (i: number) => `${TARGET},site_id="${10001 + i}",site="site-${i}"`;

/** The raw series of one site at the defaults, with each one's share of its requests. */
function rawSeries(i: number): Array<{ name: string; labels: string; share: number }> {
  const defaults = ConfigSchema.parse({});
  const cached = defaults.metrics.requestDurationCacheHits ? ["false", "true"] : ["false"];
  const out: Array<{ name: string; labels: string; share: number }> = [];
  const classes: Array<[string, number]> = [
    ["2xx", 0.9],
    ["3xx", 0.05],
    ["4xx", 0.045],
    ["5xx", 0.005],
  ];
  for (const c of ["false", "true"]) {
    for (const [cls, share] of classes) {
      out.push({
        name: "sitehost_site_http_responses_total",
        labels: `${site(i)},status_class="${cls}",cached="${c}"`,
        share: share / 2,
      });
    }
  }
  for (const c of cached) {
    const d = "sitehost_site_http_request_duration_seconds";
    out.push({ name: `${d}_count`, labels: `${site(i)},cached="${c}"`, share: 0.5 });
    for (const le of [...publishedBounds(defaults).map(String), "+Inf"]) {
      const share = le === "+Inf" ? 1 : Math.min(1, Number(le) * 2);
      out.push({ name: `${d}_bucket`, labels: `${site(i)},cached="${c}",le="${le}"`, share: share / 2 });
    }
  }
  return out;
}

/**
 * The recorded windows, how far back each is written and how often, as the rules record them: the
 * bases as far as the longest window summed from them reaches (3 days of 5-minute increases, the whole
 * period of 2-hour ones), the others (read by the alerts only) over the raw span; every 30 s in the
 * fast group, every 2m30s in the slow one.
 */
function recordedSpans(windows: readonly string[], period: string): Array<[string, number, number]> {
  return planWindows(windows, period).map(({ window, fast }) => {
    const reach =
      window === FINE_BASE ? 3 * 86_400 : window === COARSE_BASE ? durationMs(period) / 1000 : RAW_S;
    return [window, reach + 3600, fast ? STEP_S : durationMs(SLOW_INTERVAL) / 1000];
  });
}

/** Writes the data; returns the number of samples. */
export async function writeData(path: string, shape: DataShape): Promise<number> {
  const out = createWriteStream(path);
  let samples = 0;
  let buf = "";
  const write = async (text: string) => {
    buf += text;
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await once(out, "drain");
      buf = "";
    }
  };
  const { sites, end } = shape;
  // Families by name, as OpenMetrics wants them: every site's series of one name together.
  const families = new Map<string, Array<{ labels: string; share: number; perSecond: number }>>();
  for (let i = 0; i < sites; i++) {
    const perSecond = 0.5 + (i % 20);
    for (const s of rawSeries(i)) {
      const list = families.get(s.name) ?? [];
      list.push({ labels: s.labels, share: s.share, perSecond });
      families.set(s.name, list);
    }
  }
  for (const [name, series] of families) {
    await write(`# TYPE ${name} gauge\n`);
    for (const s of series) {
      for (let t = end - RAW_S; t <= end; t += STEP_S) {
        await write(`${name}{${s.labels}} ${Math.round((t - end + RAW_S) * s.perSecond * s.share)} ${t}\n`);
        samples++;
      }
    }
  }
  const objective = "sitehost_site_slo_objective_ratio";
  await write(`# TYPE ${objective} gauge\n`);
  for (let i = 0; i < sites; i++) {
    for (let t = end - RAW_S; t <= end; t += STEP_S) {
      await write(`${objective}{${site(i)},slo="availability"} 0.995 ${t}\n`);
      await write(`${objective}{${site(i)},slo="latency",threshold_seconds="1"} 0.95 ${t}\n`);
      samples += 2;
    }
  }
  // blackbox_exporter's probes of the /sd/probes targets: one per site a minute, its own job and the
  // probed URL as the instance; one probe in 200 fails.
  await write(`# TYPE probe_success gauge\n`);
  for (let i = 0; i < sites; i++) {
    const labels = `job="sitehost-probes",instance="https://site-${i}.example/",site_id="${10001 + i}",site="site-${i}"`;
    for (let t = end - RAW_S, n = 0; t <= end; t += PROBE_S, n++) {
      await write(`probe_success{${labels}} ${(n + i) % 200 === 0 ? 0 : 1} ${t}\n`);
      samples++;
    }
  }
  const { slos } = ConfigSchema.parse({});
  for (const [window, reachS, stepS] of recordedSpans(slos.windows, slos.period)) {
    const perWindow = durationMs(window) / 1000;
    for (const kind of ["requests", "errors"]) {
      const name = `sitehost_site_slo:${kind}:increase${window}`;
      await write(`# TYPE ${name} gauge\n`);
      const share = kind === "errors" ? 0.005 : 1;
      for (let i = 0; i < sites; i++) {
        for (const slo of ["availability", "latency", "probe"]) {
          const perSecond = slo === "probe" ? 1 / PROBE_S : 0.5 + (i % 20);
          const value = Math.round(perSecond * perWindow * share);
          for (let t = end - reachS; t <= end; t += stepS) {
            await write(`${name}{${site(i)},slo="${slo}"} ${value} ${t}\n`);
            samples++;
          }
        }
      }
    }
  }
  await write("# EOF\n");
  out.end(buf);
  await once(out, "finish");
  return samples;
}

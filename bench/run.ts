/**
 * `npm run bench`: every benchmark, one after another, each in its own process
 * so one's memory does not colour the next. Figures go to docs/benchmarks.md.
 *
 *   npm run bench                 all of them (about 6 hours)
 *   npm run bench -- metrics      only the metrics benchmark (also: logs, histogram, error-groups, busy, idle, requests, first-picture, fleet, scrape, slo-rules, probes, streams, simulator)
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { LEAN_MALLOC_ENV, V8_FLAGS } from "../src/cli/v8Flags.js";

const BENCHES: Record<string, string[][]> = {
  simulator: [["simulator.js"]],
  metrics: [["metrics.js", "1000", "5000"]],
  logs: [["logs.js"], ["logs.js", "newest-first", "1000000", "10800", "no-steady", "16"]],
  histogram: [
    ["histogramParts.js", "400000", "5"],
    ["histogram.js", "2", "1000000", "16"],
  ],
  "error-groups": [
    ["errorGroupParts.js", "6000", "50"],
    ["errorGroups.js", "5", "1000000", "16"],
  ],
  busy: [
    ["logs.js", "busy", "30", "120"],
    ["logs.js", "busy", "36", "120"],
    ["logs.js", "busy", "30", "120", "0.05", "3"],
  ],
  idle: [["logs.js", "idle", "200", "20"]],
  requests: [
    ["requests.js", "200", "45", "20", "default"],
    ["requests.js", "200", "45", "20", "30 */10 * * * *"],
    // Trickle (about 7 entries an hour per stream), then with webhook events; idle with webhooks; 0.5/s.
    ["requests.js", "200", "30", "15", "default", "0.00194"],
    ["requests.js", "200", "30", "15", "default", "0.00194", "0.2"],
    ["requests.js", "200", "30", "15", "default", "0", "0"],
    ["requests.js", "200", "30", "15", "default", "0.5"],
    // The same quiet fleets at the steady state of the collectors that back off (ten times faster).
    ["requests.js", "200", "40", "15", "default", "0.00194", "0.2", "fast"],
    ["requests.js", "200", "40", "15", "default", "0.00194", "none", "fast"],
    ["requests.js", "200", "40", "15", "default", "0", "0", "fast"],
  ],
  "first-picture": [["firstPicture.js", "1000", "20", "20"]],
  fleet: [
    ["fleet.js", "budget", "1000", "100", "5", "0.01"],
    ["fleet.js", "rss", "5000", "4"],
  ],
  "slo-rules": [["sloRules.js", "50", "200"]],
  probes: [["probeCost.js", "83", "30"]],
  scrape: [["scrapeSpeed.js", "5000", "10"]],
  streams: [
    ["streams.js", "2000"],
    ["overlapWindow.js", "memory", "15000", "17"],
    ["overlapWindow.js", "cpu", "5000"],
  ],
};
/** The log pipeline runs in the benchmark's own process: give it the V8 flags the daemon gives itself. */
const lean = process.env.SITEHOST_NODE_FLAGS !== "off";
const DAEMON_FLAGS: Record<string, readonly string[]> = {
  logs: lean ? V8_FLAGS.logs : [],
  histogram: lean ? V8_FLAGS.logs : [],
  "error-groups": lean ? V8_FLAGS.logs : [],
  busy: lean ? V8_FLAGS.logs : [],
  idle: lean ? V8_FLAGS.logs : [],
  // Heap after a full collection: the benchmark collects itself.
  streams: ["--expose-gc"],
};

const wanted = process.argv.slice(2);
let failed = false;
for (const [name, runs] of Object.entries(BENCHES)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  for (const [file, ...args] of runs) {
    const script = resolve(import.meta.dirname, file as string);
    if (!existsSync(script)) {
      console.error(`bench ${name}: ${file} is missing`);
      failed = true;
      continue;
    }
    const flags = DAEMON_FLAGS[name] ?? [];
    console.log(`\n=== ${name}: node ${[...flags, file, ...args].join(" ")}`);
    const r = spawnSync(process.execPath, [...process.execArgv, ...flags, script, ...args], {
      stdio: "inherit",
      env: DAEMON_FLAGS[name] && lean ? { ...process.env, ...LEAN_MALLOC_ENV.logs } : process.env,
    });
    if (r.status !== 0) failed = true;
  }
}
process.exit(failed ? 1 : 0);

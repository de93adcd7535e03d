/**
 * What the request-duration histogram costs the log path, side by side in one run: the backlog drain
 * of bench/logs.ts (1,000,000 web-server records over 16 sites' streams by default) with the
 * histogram on (status, duration bucket and sum, bytes, exemplars: what the exporter does) and off
 * (the status count alone), alternating on/off in fresh processes so both see the same machine.
 *
 *   npx tsc -p tsconfig.json && node <logging flags> dist/bench/histogram.js [pairs=2] [backlog=1000000] [sites=16]
 *
 * Prints each run's JSON line and a summary: CPU per record (µs) with and without, the medians and
 * the difference of the medians.
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";

interface Run {
  durations: boolean;
  records: number;
  recordsPerSecond: number;
  cpuMsPer1000: number;
  cpuCoresBusy: number;
  peakRssMb: number;
}

const [pairs = 2, backlog = 1_000_000, sites = 16] = process.argv.slice(2).map(Number);
const script = resolve(import.meta.dirname, "logs.js");

function drain(durations: boolean): Run {
  const args = ["newest-first", String(backlog), "10800", "no-steady", String(sites)];
  if (!durations) args.push("durations-off");
  const r = spawnSync(process.execPath, [...process.execArgv, script, ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = r.stdout.split("\n").find((l) => l.includes('"phase":"backlog"'));
  if (r.status !== 0 || !line) throw new Error(`logs.js ${args.join(" ")} failed (${r.status}): ${r.stdout}`);
  console.log(line);
  return JSON.parse(line) as Run;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

const runs: Run[] = [];
for (let i = 0; i < pairs; i++) {
  // Alternate which goes first, so neither always meets the machine in the same state.
  for (const durations of i % 2 === 0 ? [true, false] : [false, true]) runs.push(drain(durations));
}
// CPU ms per 1,000 records is µs per record.
const on = runs.filter((r) => r.durations).map((r) => r.cpuMsPer1000);
const off = runs.filter((r) => !r.durations).map((r) => r.cpuMsPer1000);
console.log(
  JSON.stringify({
    phase: "histogram",
    sites,
    records: backlog,
    cpuUsPerRecordOn: on,
    cpuUsPerRecordOff: off,
    medianOn: median(on),
    medianOff: median(off),
    differenceUs: +(median(on) - median(off)).toFixed(2),
  }),
);

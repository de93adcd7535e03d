/**
 * What grouping PHP errors costs the log path, side by side in one run: the backlog drain of
 * bench/logs.ts over the sites' PHP streams (1,000,000 records over 16 sites by default; the
 * simulator's mix: a third fatal and parse errors, which are grouped; warnings, notices and
 * deprecations, which are not) with groups on (what the exporter does: fingerprint, the site's
 * table, two attributes) and off, alternating on/off in fresh processes so both see the same machine.
 *
 *   npx tsc -p tsconfig.json && node <logging flags> dist/bench/errorGroups.js [pairs=3] [backlog=1000000] [sites=16]
 *
 * Prints each run's JSON line and a summary: CPU per record (µs) with and without, the medians, the
 * difference of the medians and the median of the pairs' differences.
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";

interface Run {
  groups: boolean;
  records: number;
  recordsPerSecond: number;
  cpuMsPer1000: number;
  cpuCoresBusy: number;
  peakRssMb: number;
}

const [pairs = 3, backlog = 1_000_000, sites = 16] = process.argv.slice(2).map(Number);
const script = resolve(import.meta.dirname, "logs.js");

function drain(groups: boolean): Run {
  const args = ["newest-first", String(backlog), "10800", "no-steady", String(sites), "php"];
  if (!groups) args.push("groups-off");
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
  for (const groups of i % 2 === 0 ? [true, false] : [false, true]) runs.push(drain(groups));
}
// CPU ms per 1,000 records is µs per record.
const on = runs.filter((r) => r.groups).map((r) => r.cpuMsPer1000);
const off = runs.filter((r) => !r.groups).map((r) => r.cpuMsPer1000);
const pairDifferences = on.map((x, i) => +(x - (off[i] as number)).toFixed(2));
console.log(
  JSON.stringify({
    phase: "errorGroups",
    sites,
    records: backlog,
    cpuUsPerRecordOn: on,
    cpuUsPerRecordOff: off,
    medianOn: median(on),
    medianOff: median(off),
    differenceUs: +(median(on) - median(off)).toFixed(2),
    pairDifferencesUs: pairDifferences,
    medianOfPairsUs: median(pairDifferences),
  }),
);

/**
 * The backlog drain of bench/logs.ts run in pairs, one variant on and one off, alternating which goes
 * first in fresh processes so both meet the machine in the same states; each run's JSON line is
 * printed. Used by the benchmarks that weigh one part of the log path (histogram.ts, errorGroups.ts).
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";

export interface DrainRun {
  records: number;
  recordsPerSecond: number;
  cpuMsPer1000: number;
  cpuCoresBusy: number;
  peakRssMb: number;
}

const script = resolve(import.meta.dirname, "logs.js");

/** One drain of bench/logs.ts with these arguments after the mode's. */
function drain(args: readonly string[]): DrainRun {
  const r = spawnSync(process.execPath, [...process.execArgv, script, ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = r.stdout.split("\n").find((l) => l.includes('"phase":"backlog"'));
  if (r.status !== 0 || !line) throw new Error(`logs.js ${args.join(" ")} failed (${r.status}): ${r.stdout}`);
  console.log(line);
  return JSON.parse(line) as DrainRun;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/**
 * `pairs` pairs of drains, `argsFor(on)` giving each run's arguments; CPU per record (µs) of the runs
 * on and off, in pair order, with their medians, the difference of the medians and the median of the
 * pairs' differences.
 */
export function drainPairs(pairs: number, argsFor: (on: boolean) => string[]) {
  const on: number[] = [];
  const off: number[] = [];
  for (let i = 0; i < pairs; i++) {
    for (const variant of i % 2 === 0 ? [true, false] : [false, true])
      // CPU ms per 1,000 records is µs per record.
      (variant ? on : off).push(drain(argsFor(variant)).cpuMsPer1000);
  }
  const pairDifferencesUs = on.map((x, i) => +(x - (off[i] as number)).toFixed(2));
  return {
    cpuUsPerRecordOn: on,
    cpuUsPerRecordOff: off,
    medianOn: median(on),
    medianOff: median(off),
    differenceUs: +(median(on) - median(off)).toFixed(2),
    pairDifferencesUs,
    medianOfPairsUs: median(pairDifferencesUs),
  };
}

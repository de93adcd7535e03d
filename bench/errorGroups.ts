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
import { drainPairs } from "./drainPairs.js";

const [pairs = 3, backlog = 1_000_000, sites = 16] = process.argv.slice(2).map(Number);
const result = drainPairs(pairs, (on) => [
  "newest-first",
  String(backlog),
  "10800",
  "no-steady",
  String(sites),
  "php",
  ...(on ? [] : ["groups-off"]),
]);
console.log(JSON.stringify({ phase: "errorGroups", sites, records: backlog, ...result }));

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
import { drainPairs } from "./drainPairs.js";

const [pairs = 2, backlog = 1_000_000, sites = 16] = process.argv.slice(2).map(Number);
const result = drainPairs(pairs, (on) => [
  "newest-first",
  String(backlog),
  "10800",
  "no-steady",
  String(sites),
  ...(on ? [] : ["durations-off"]),
]);
console.log(JSON.stringify({ phase: "histogram", sites, records: backlog, ...result }));

/**
 * What the PHP error group's fingerprint costs one record, without the rest of the log path: the
 * simulator's PHP entries (parsed from JSON, as the API client gets them), the grouped ones (fatal,
 * parse, error) fingerprinted again and again; the median of seven rounds.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/errorGroupParts.js [entries=6000] [rounds=50]
 */
import { errorGroupFingerprint, GROUPED_SEVERITIES } from "../src/logs/errorGroup.js";
import { phpSeverity } from "../src/logs/mapper.js";
import { phpEntry } from "../src/simulator/logEntries.js";

const SOURCE = { siteId: 1, siteName: "shop", host: "shop.example", seed: 7 };
const [count = 6000, rounds = 50] = process.argv.slice(2).map(Number);
const all: Array<{ message: string; file?: string | null; severity?: string | null }> = [];
for (let s = 0; s < count; s++) all.push(JSON.parse(JSON.stringify(phpEntry(SOURCE, 1_700_000_000 + s, 0))));
const grouped = all.filter((e) => GROUPED_SEVERITIES.has(phpSeverity(e.severity).label));
let sink = 0;
const perRecordNs: number[] = [];
for (let round = 0; round < 7; round++) {
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < rounds; k++)
    for (const e of grouped) sink += errorGroupFingerprint(e.message, e.file).length;
  perRecordNs.push(Number(process.hrtime.bigint() - t0) / (rounds * grouped.length));
}
perRecordNs.sort((a, b) => a - b);
const median = perRecordNs[3] as number;
console.log(
  JSON.stringify({
    phase: "errorGroupParts",
    grouped: grouped.length,
    phpRecords: all.length,
    nsPerGroupedRecord: Math.round(median),
    nsPerPhpRecord: Math.round((median * grouped.length) / all.length),
    sink: sink > 0,
  }),
);

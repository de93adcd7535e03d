/**
 * The memory the README quotes for a metrics-only daemon at 5,000 sites is the one the metrics
 * benchmark measured (docs/benchmarks.md, "Metrics: scrape cost, memory, …": the 5,000-site row's
 * RSS and its peak), so a new benchmark run that moves it fails here until the README follows.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");

function measuredAt5000(): { steady: number; peak: number } {
  const section = read("docs/benchmarks.md").split("## Metrics: scrape cost, memory")[1] ?? "";
  const row = section.split("\n").find((line) => line.startsWith("| 5,000 |"));
  const m = row?.match(/\*\*(\d+) \((\d+)\) MB\*\*/);
  if (!m) throw new Error("docs/benchmarks.md: no 5,000-site row with an RSS (peak) in the metrics table");
  return { steady: Number(m[1]), peak: Number(m[2]) };
}

describe("memory figures quoted in the README", () => {
  it("metrics only at 5,000 sites: the benchmark's steady and peak RSS", () => {
    const { steady, peak } = measuredAt5000();
    const text = read("README.md").replace(/\s+/g, " ");
    const quoted = text.match(
      /metrics only\).*?resident memory at 5,000 sites is about (\d+) MB at steady state and (\d+) MB at the start-up peak/,
    );
    expect(quoted, "README.md: the metrics-only memory sentence").not.toBeNull();
    expect([Number(quoted?.[1]), Number(quoted?.[2])]).toEqual([steady, peak]);
  });
});

/**
 * Generates docs/metrics.md from the code: METRIC_FAMILIES for the per-site and
 * account families, and the exporter's self-metrics read back from a fresh
 * prom-client Registry on which the real registrations were made.
 *
 * Run: npm run docs:metrics (writes docs/metrics.md). `--check` exits 1 when the file is stale.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import pino from "pino";
import { format, resolveConfig } from "prettier";
import { Registry } from "prom-client";

import { apiSelfMetrics } from "../src/api/selfMetrics.js";
import type { SitehostApi } from "../src/api/types.js";
import { ConfigSchema } from "../src/config/schema.js";
import { CheckpointLock } from "../src/ha/lock.js";
import { publishShardInfo } from "../src/ha/shardLayout.js";
import { CheckpointVolume } from "../src/ha/volume.js";
import { LogPipeline } from "../src/logs/pipeline.js";
import { METRIC_FAMILIES } from "../src/metrics/families.js";
import type { MetricFamily } from "../src/metrics/sample.js";
import { discoveryMetrics } from "../src/discovery/metrics.js";
import { BudgetPlanner } from "../src/scheduling/budgetPlanner.js";
import { MeasuredRates } from "../src/scheduling/measuredRates.js";
import { collectorSelfMetrics } from "../src/scheduling/selfMetrics.js";
import { webhookSelfMetrics } from "../src/webhooks/metrics.js";
import { SiteStateBook } from "../src/siteState/book.js";
import { UNKEPT_SITE_STATE } from "../src/siteState/file.js";
import { MetricStore } from "../src/metrics/store.js";
import { ChangeBook } from "../src/changes/book.js";
import { UNKEPT_CHANGES } from "../src/changes/file.js";
import { ErrorGroupBook } from "../src/logs/errorGroups.js";
import { UNKEPT_ERROR_GROUPS } from "../src/logs/errorGroupsFile.js";

interface Row {
  name: string;
  type: string;
  labels: readonly string[];
  help: string;
  source?: string;
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");
const code = (names: readonly string[]) => (names.length ? names.map((n) => `\`${n}\``).join(", ") : "—");

function table(rows: readonly Row[], withSource: boolean): string {
  const head = withSource
    ? "| metric | type | labels | source | description |\n|---|---|---|---|---|\n"
    : "| metric | type | labels | description |\n|---|---|---|---|\n";
  return (
    head +
    rows
      .map((r) =>
        withSource
          ? `| \`${r.name}\` | ${r.type} | ${code(r.labels)} | ${cell(r.source ?? "")} | ${cell(r.help)} |`
          : `| \`${r.name}\` | ${r.type} | ${code(r.labels)} | ${cell(r.help)} |`,
      )
      .join("\n") +
    "\n"
  );
}

function familyRow(f: MetricFamily): Row {
  return {
    name: f.name,
    // info and stateset families are exposed as gauges
    type: f.type === "info" || f.type === "stateset" ? `gauge (${f.type})` : f.type,
    labels: f.perSite ? ["site_id", "site", ...f.labels] : f.labels,
    help: f.help,
    source: f.source,
  };
}

/** docs/metrics.md, from dist/scripts/ (compiled) or scripts/ (vitest). */
const here = dirname(fileURLToPath(import.meta.url));
export const METRICS_DOC_PATH = here.endsWith(join("dist", "scripts"))
  ? join(here, "..", "..", "docs", "metrics.md")
  : join(here, "..", "docs", "metrics.md");

const unusedApi = (): Promise<never> => Promise.reject(new Error("not used"));

/** The self-metrics as registered by the real code, grouped by the module that owns them. */
async function selfMetricGroups(): Promise<Array<{ title: string; rows: Row[] }>> {
  const read = async (register: (registry: Registry) => void): Promise<Row[]> => {
    const registry = new Registry();
    register(registry);
    const json = await registry.getMetricsAsJSON();
    return json
      .map((m) => {
        // The JSON lists labels of observed series only; the metric object has its declared names.
        const metric = registry.getSingleMetric(m.name) as unknown as { labelNames?: string[] } | undefined;
        const labelNames = metric?.labelNames;
        const fromValues = [...new Set(m.values.flatMap((v) => Object.keys(v.labels)))].filter(
          (l) => l !== "le",
        );
        return {
          name: m.name,
          type: String(m.type),
          labels: labelNames ?? fromValues,
          help: m.help,
        };
      })
      .sort((a, b) => a.name.localeCompare(b.name));
  };
  const api = new Proxy({}, { get: () => unusedApi }) as SitehostApi;
  return [
    { title: "API client", rows: await read((r) => void apiSelfMetrics(r, () => 0)) },
    {
      title: "Request plan",
      rows: await read(
        (registry) =>
          void new BudgetPlanner(
            { budgetRequestsPerSecond: 20, shardCount: 1, logsMaxPollInterval: "5m" },
            registry,
            pino({ level: "silent" }),
            { setWeights: () => undefined },
            { sources: () => [] },
          ),
      ),
    },
    {
      title: "Collectors and discovery",
      rows: await read((r) => {
        collectorSelfMetrics(r);
        discoveryMetrics(r);
      }),
    },
    {
      title: "Request plan",
      rows: await read((registry) => {
        const logger = pino({ level: "silent" });
        const settings = { budgetRequestsPerSecond: 20, shardCount: 1, logsMaxPollInterval: "5m" };
        void new BudgetPlanner(
          settings,
          registry,
          logger,
          { setWeights: () => undefined },
          { sources: () => [] },
        );
        void new MeasuredRates(registry, { granted: () => new Map(), sites: () => 0 });
      }),
    },
    {
      title: "Log pipeline",
      rows: await read(
        (registry) =>
          void new LogPipeline({
            config: ConfigSchema.parse({}),
            api,
            registry,
            logger: pino({ level: "silent" }),
          }),
      ),
    },
    {
      title: "Checkpoint directory, lock and shard",
      rows: await read((registry) => {
        // The constructors only register the metrics; nothing is written to the directory.
        new CheckpointVolume({ dir: "checkpoints", logger: pino({ level: "silent" }), registry }).close();
        void new CheckpointLock({
          dir: "checkpoints",
          timeoutMs: 60_000,
          logger: pino({ level: "silent" }),
          registry,
        });
        publishShardInfo(registry, { index: 0, count: 1 });
      }),
    },
    { title: "Webhook receiver", rows: await read((r) => void webhookSelfMetrics(r)) },
    {
      title: "Site states",
      rows: await read(
        (registry) =>
          void new SiteStateBook({
            store: new MetricStore(METRIC_FAMILIES),
            registry,
            file: UNKEPT_SITE_STATE,
            logger: pino({ level: "silent" }),
            webhooks: true,
          }),
      ),
    },
    {
      title: "PHP error groups",
      rows: await read(
        (registry) =>
          void new ErrorGroupBook({
            store: new MetricStore(METRIC_FAMILIES),
            registry,
            file: UNKEPT_ERROR_GROUPS,
            logger: pino({ level: "silent" }),
            now: () => 0,
            learnForMs: 0,
          }),
      ),
    },
    {
      title: "Changes",
      rows: await read(
        (registry) =>
          void new ChangeBook({
            store: new MetricStore(METRIC_FAMILIES),
            registry,
            file: UNKEPT_CHANGES,
            logger: pino({ level: "silent" }),
          }),
      ),
    },
  ];
}

export async function generateMetricsDoc(): Promise<string> {
  const byCollector = new Map<string, MetricFamily[]>();
  for (const f of METRIC_FAMILIES) {
    const list = byCollector.get(f.collector) ?? [];
    list.push(f);
    byCollector.set(f.collector, list);
  }
  const parts: string[] = [
    "# Metrics reference\n",
    "<!-- Generated by scripts/gen-metrics-doc.ts from src/metrics/families.ts and the self-metric\n" +
      "     registrations; do not edit by hand. Regenerate with `npm run docs:metrics`. -->\n",
    "All metric names start with `sitehost_`. Values are in base units (`_seconds`, `_bytes`,\n" +
      "ratios 0–1). Per-site series carry `site_id` (the site's integer id as a string) and `site`\n" +
      "(the unique site name). `info` and state-set families are exposed as gauges: an info series\n" +
      "is always 1, a state set has 1 for the current state and 0 for the others. Any family can be\n" +
      "dropped with `metrics.exclude`; a collector whose families are all excluded is not run.\n" +
      "See [collectors.md](collectors.md) for schedules and request costs.\n",
    "## Site and account metrics\n",
  ];
  for (const [collector, families] of byCollector) {
    // Webhook events are received, not collected; site states come from events, activity logs and the site list.
    parts.push(
      collector === "webhooks"
        ? "### Webhook events (`webhooks.enabled`)\n"
        : collector === "state"
          ? "### Site states: maintenance mode, hacked, events by site\n"
          : collector === "changes"
            ? "### Changes: deploys, plugins, themes, restores, PHP, conversions, maintenance, access\n"
            : `### Collector \`${collector}\`\n`,
    );
    parts.push(table(families.map(familyRow), true));
  }
  parts.push("## Exporter self-metrics\n");
  parts.push(
    "These carry no site labels unless listed. The process also exposes prom-client's default\n" +
      "`process_*` and `nodejs_*` metrics and `sitehost_exporter_build_info` (`version`,\n" +
      "`revision`, `nodejs`; always 1), registered in `src/daemon.ts`.\n",
  );
  for (const group of await selfMetricGroups()) {
    parts.push(`### ${group.title}\n`);
    parts.push(table(group.rows, false));
  }
  // Formatted as `npm run format` would, so formatting the repository leaves the file unchanged.
  const options = (await resolveConfig(METRICS_DOC_PATH)) ?? {};
  return format(parts.join("\n"), { ...options, parser: "markdown" });
}

async function main(): Promise<void> {
  const text = await generateMetricsDoc();
  if (process.argv.includes("--check")) {
    const current = readFileSync(METRICS_DOC_PATH, "utf8");
    if (current !== text) {
      process.stderr.write("docs/metrics.md is stale: run npm run docs:metrics\n");
      process.exitCode = 1;
    }
    return;
  }
  writeFileSync(METRICS_DOC_PATH, text);
  process.stdout.write(`wrote ${METRICS_DOC_PATH}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();

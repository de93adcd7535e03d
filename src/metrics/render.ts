/** Prometheus text exposition format 0.0.4. */
import type { MetricFamily, Sample } from "./sample.js";

/** A character a label value must escape. */
const ESCAPED = /[\\\n"]/;

export function escapeLabelValue(value: string): string {
  // Most values hold none: no new string for them (every series of every scrape passes here).
  if (!ESCAPED.test(value)) return value;
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

export function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

export function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

export function renderFamilyHeader(family: MetricFamily): string {
  const type = family.type === "counter" || family.type === "histogram" ? family.type : "gauge";
  return `# HELP ${family.name} ${escapeHelp(family.help)}\n# TYPE ${family.name} ${type}\n`;
}

const SITE_LABELS = ["site_id", "site"] as const;

/** `text`, a label list, with `name="value"` added (nothing for an undefined value). */
function withLabel(text: string, name: string, value: string | undefined): string {
  if (value === undefined) return text;
  return `${text}${text === "" ? "" : ","}${name}="${escapeLabelValue(value)}"`;
}

/** Whether `name` has its place in the family's label order (the others follow it, as given). */
function ordered(family: MetricFamily, name: string): boolean {
  return (family.perSite && (name === "site_id" || name === "site")) || family.labels.includes(name);
}

/** One series line; labels in a stable order: site_id, site, then the family's labels, then any others. */
export function renderSample<N extends string>(family: MetricFamily<N>, sample: Sample<N>): string {
  // Written straight into one string: collectors publish every site's samples at each run.
  const { labels } = sample;
  let text = "";
  if (family.perSite) for (const name of SITE_LABELS) text = withLabel(text, name, labels[name]);
  for (const name of family.labels) text = withLabel(text, name, labels[name]);
  for (const name in labels) if (!ordered(family, name)) text = withLabel(text, name, labels[name]);
  return `${sample.name}${sample.suffix ?? ""}${text === "" ? "" : `{${text}}`} ${formatValue(sample.value)}\n`;
}

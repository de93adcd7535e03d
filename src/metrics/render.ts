/** Prometheus text exposition format 0.0.4. */
import type { MetricFamily, Sample } from "./sample.js";

export function escapeLabelValue(value: string): string {
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

/** One series line; labels in a stable order: site_id, site, then the family's labels. */
export function renderSample<N extends string>(family: MetricFamily<N>, sample: Sample<N>): string {
  const parts: string[] = [];
  const order = family.perSite ? ["site_id", "site", ...family.labels] : [...family.labels];
  const seen = new Set<string>();
  for (const name of order) {
    const value = sample.labels[name];
    seen.add(name);
    if (value !== undefined) parts.push(`${name}="${escapeLabelValue(value)}"`);
  }
  for (const [name, value] of Object.entries(sample.labels)) {
    if (!seen.has(name)) parts.push(`${name}="${escapeLabelValue(value)}"`);
  }
  const labels = parts.length > 0 ? `{${parts.join(",")}}` : "";
  return `${sample.name}${sample.suffix ?? ""}${labels} ${formatValue(sample.value)}\n`;
}

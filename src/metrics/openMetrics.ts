/**
 * OpenMetrics 1.0 text, for scrapers that ask for it in `Accept` (Prometheus does by default): the
 * same series as text format 0.0.4, plus exemplars, counters' `# TYPE` named without `_total`, and
 * `# EOF` at the end. Text format 0.0.4 stays the answer to every other `Accept`.
 */
import type { Exemplar, MetricType } from "./sample.js";
import { escapeLabelValue, formatValue } from "./render.js";

export type ExpositionFormat = "text" | "openmetrics";

export const TEXT_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
export const OPENMETRICS_CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8";
export const CONTENT_TYPES: Record<ExpositionFormat, string> = {
  text: TEXT_CONTENT_TYPE,
  openmetrics: OPENMETRICS_CONTENT_TYPE,
};

/** OpenMetrics versions whose text this exporter writes (0.0.1 is the same text under its draft name). */
const OPENMETRICS_VERSIONS = new Set([undefined, "1.0.0", "0.0.1"]);

/**
 * The format an `Accept` header asks for: OpenMetrics when an acceptable `application/openmetrics-text`
 * has a higher quality than anything that means text (text/plain, text/*, * /*), or the same quality and
 * comes first; text format 0.0.4 otherwise, and when there is no header.
 */
export function negotiateFormat(accept: string | undefined): ExpositionFormat {
  if (!accept) return "text";
  let best: { format: ExpositionFormat; q: number } = { format: "text", q: 0 };
  for (const range of accept.split(",")) {
    const [mediaType = "", ...params] = range.split(";").map((p) => p.trim());
    const values = new Map<string, string>();
    for (const param of params) {
      const eq = param.indexOf("=");
      if (eq > 0) values.set(param.slice(0, eq).trim().toLowerCase(), param.slice(eq + 1).trim());
    }
    const q = values.has("q") ? Number(values.get("q")) : 1;
    if (!(q > 0)) continue;
    const type = mediaType.toLowerCase();
    let format: ExpositionFormat | undefined;
    if (type === "application/openmetrics-text") {
      if (OPENMETRICS_VERSIONS.has(values.get("version"))) format = "openmetrics";
    } else if (type === "text/plain" || type === "text/*" || type === "*/*") format = "text";
    if (format && q > best.q) best = { format, q };
  }
  return best.format;
}

/** What HELP text may hold in OpenMetrics: backslash, newline and double quote escaped. */
function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

/**
 * `# HELP` and `# TYPE` of a family. A counter's family is named without `_total` (its samples keep
 * it); a counter whose name lacks `_total` is `unknown` to OpenMetrics, and so are `untyped` families.
 */
export function openMetricsHeader(name: string, help: string, type: MetricType | string): string {
  let family = name;
  let kind = type === "info" || type === "stateset" ? "gauge" : type;
  if (type === "counter") {
    if (name.endsWith("_total")) family = name.slice(0, -"_total".length);
    else kind = "unknown";
  } else if (type === "untyped") kind = "unknown";
  return `# HELP ${family} ${escapeHelp(help)}\n# TYPE ${family} ${kind}\n`;
}

/** The combined length of an exemplar's label names and values may not pass this (OpenMetrics). */
export const EXEMPLAR_MAX_LABEL_CHARS = 128;

/** Code points in `text` (a surrogate pair is one; a lone surrogate one too), without an array of them. */
function codePoints(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n -= 1;
        i += 1;
      }
    }
  }
  return n;
}

/** ` # {labels} value timestamp`, to append to a sample's line before its newline; "" when too long. */
export function renderExemplar(exemplar: Exemplar): string {
  let chars = 0;
  let labels = "";
  for (const name in exemplar.labels) {
    const value = exemplar.labels[name] as string;
    chars += codePoints(name) + codePoints(value);
    labels += `${labels === "" ? "" : ","}${name}="${escapeLabelValue(value)}"`;
  }
  if (chars > EXEMPLAR_MAX_LABEL_CHARS) return "";
  const at = exemplar.timestampMs === undefined ? "" : ` ${(exemplar.timestampMs / 1000).toFixed(3)}`;
  return ` # {${labels}} ${formatValue(exemplar.value)}${at}`;
}

/**
 * prom-client's text format 0.0.4 rewritten as OpenMetrics lines (without `# EOF`): the headers as
 * `openMetricsHeader` writes them, HELP unescaped first, blank lines left out. Its registry is not
 * switched to OpenMetrics: that renames its counters for good.
 */
export function openMetricsFromText(text: string): string {
  let out = "";
  let help: { name: string; text: string } | undefined;
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (line.startsWith("# HELP ")) {
      const rest = line.slice("# HELP ".length);
      const space = rest.indexOf(" ");
      const name = space < 0 ? rest : rest.slice(0, space);
      const escaped = space < 0 ? "" : rest.slice(space + 1);
      help = { name, text: escaped.replace(/\\(\\|n)/g, (_, c: string) => (c === "n" ? "\n" : "\\")) };
    } else if (line.startsWith("# TYPE ")) {
      const [name = "", type = "untyped"] = line.slice("# TYPE ".length).split(" ");
      out += openMetricsHeader(name, help?.name === name ? help.text : name, type);
      help = undefined;
    } else if (!line.startsWith("#")) out += `${line}\n`;
  }
  return out;
}

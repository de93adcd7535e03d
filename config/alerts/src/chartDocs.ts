/** The chart's values schema and README table of `prometheusRule.rules`, from the definitions. */
import { ruleName, type GroupDef } from "./rule.js";
import { defaultSettings, SETTING_KEYS } from "./render.js";

const DURATION = "^(([0-9]+(ms|s|m|h|d|w|y))+)?$";
const STRINGS = { type: "object", additionalProperties: { type: "string" } };

/** JSON schema of `prometheusRule.rules`: each rule by name, each of its settings typed. */
export function rulesSchema(groups: GroupDef[]): unknown {
  const properties: Record<string, unknown> = {};
  for (const r of groups.flatMap((g) => g.rules)) {
    const settings: Record<string, unknown> = { enabled: { type: "boolean" } };
    if ("alert" in r) {
      settings.severity = { enum: ["critical", "warning", "info"] };
      settings.for = { type: "string", pattern: DURATION };
      settings.annotations = STRINGS;
    }
    settings.labels = STRINGS;
    for (const [k] of Object.entries(r.params ?? {}))
      settings[k] = { type: "number", description: r.paramDocs?.[k as never] ?? "" };
    properties[ruleName(r)] = { type: "object", properties: settings, additionalProperties: false };
  }
  return { type: "object", properties, additionalProperties: false };
}

/** Rows of the chart README's table: rule, severity, for, thresholds with their defaults. */
export function rulesTable(groups: GroupDef[]): string {
  const rows = groups.flatMap((g) =>
    g.rules.map((r) => {
      const d = defaultSettings(r);
      const params = Object.keys(r.params ?? {})
        .map((k) => `\`${k}: ${String(d[k])}\` ${r.paramDocs?.[k as never] ?? ""}`.trim())
        .join("<br>");
      return `| \`${ruleName(r)}\` | ${d.severity ?? ""} | ${d.for ? `\`${String(d.for)}\`` : "none"} | ${params || "none"} |`;
    }),
  );
  return ["| rule | severity | for | thresholds (defaults) |", "| --- | --- | --- | --- |", ...rows].join(
    "\n",
  );
}

/** The chart's placeholders besides the thresholds: a threshold of one of these names would be replaced as it. */
const PLACEHOLDERS = ["selector", "collectorSelector", "for", "by"];

export function checkParamNames(groups: GroupDef[]): void {
  for (const r of groups.flatMap((g) => g.rules))
    for (const k of Object.keys(r.params ?? {}))
      if ((SETTING_KEYS as readonly string[]).includes(k) || PLACEHOLDERS.includes(k) || /[.+-]/.test(k))
        throw new Error(`${ruleName(r)}: a threshold may not be named ${k}`);
}

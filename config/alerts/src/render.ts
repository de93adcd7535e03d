/**
 * Rule files from the definitions: with settings (defaults or a user's), or with the placeholders the
 * chart's template fills in (templates/prometheusrule.yaml does the same as `renderRules`, in Go).
 */
import { DEFAULT_GROUPING_LABELS as SLO_GROUPING_LABELS } from "../../../src/config/slos.js";
import { Document, isMap, isSeq, type Node, type YAMLMap } from "yaml";
import {
  ruleName,
  runbookUrl,
  type AlertDef,
  type GroupDef,
  type RuleContext,
  type RuleDef,
  type Severity,
} from "./rule.js";

/** The settings of one rule; thresholds by their names besides these. */
export interface RuleSettings {
  enabled: boolean;
  severity?: Severity;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [param: string]: unknown;
}

/** What the chart's `prometheusRule` values hold, and the rules renderer takes. */
export interface RulesConfig {
  /** Label matchers of the exporter's series in every rule. */
  selector: string;
  /** Label matchers of the collector sidecar's metrics (its alerts). */
  collectorSelector?: string;
  /**
   * What every rule aggregates and matches by, before its own labels (site_id, site, stream...): the
   * labels that tell one exporter, and one cluster, from another. Default `DEFAULT_GROUPING_LABELS`.
   */
  groupingLabels?: readonly string[];
  /** Labels of every alert (a rule's own labels and severity win). */
  additionalRuleLabels?: Record<string, string>;
  /** Settings by rule name, over the defaults. */
  rules?: Record<string, Partial<RuleSettings>>;
}

export const DEFAULT_SELECTOR = 'job="sitehost-exporter"';
/** The chart scrapes the collector sidecar as the exporter's job with this suffix. */
export const COLLECTOR_JOB_SUFFIX = "-otel-collector";
export const DEFAULT_COLLECTOR_SELECTOR = `job="sitehost-exporter${COLLECTOR_JOB_SUFFIX}"`;
export const SETTING_KEYS = ["enabled", "severity", "for", "labels", "annotations"] as const;
/**
 * The grouping labels by default: a series without `cluster` (one Prometheus per cluster) groups as
 * `cluster=""`, so the rules are the same as by (job, instance) there.
 */
/** The SLO rules' default (`slos.groupingLabels`): shipped and generated rules keep the same labels apart. */
export const DEFAULT_GROUPING_LABELS: readonly string[] = Object.freeze([...SLO_GROUPING_LABELS]);

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The grouping labels of `config`, checked: at least one, each a label name, none twice. */
export function groupingLabelsOf(config: RulesConfig): readonly string[] {
  const labels = config.groupingLabels ?? DEFAULT_GROUPING_LABELS;
  if (labels.length === 0)
    throw new Error("groupingLabels is empty: name at least one label (default cluster, job, instance)");
  for (const l of labels)
    if (!LABEL_NAME.test(l))
      throw new Error(`groupingLabels: ${JSON.stringify(l)} is not a Prometheus label name`);
  if (new Set(labels).size !== labels.length)
    throw new Error(`groupingLabels names a label twice: ${labels.join(", ")}`);
  return labels;
}

/** One grouping clause of a rule: the grouping labels less `without`, then `extra`. */
export interface Grouping {
  without: string[];
  extra: string[];
}

/** A grouping clause's labels as written in `by (...)` and `on (...)`: each label once, in order. */
export function groupingText(labels: readonly string[], g: Grouping): string {
  const out = labels.filter((l) => !g.without.includes(l));
  for (const l of g.extra) if (!out.includes(l)) out.push(l);
  return out.join(", ");
}

export interface RenderedRule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export interface RuleFile {
  groups: Array<{ name: string; rules: RenderedRule[] }>;
}

/** A threshold as PromQL and Go's `%v` write it (the chart prints integers as integers). */
export function promNumber(v: number): string {
  if (!Number.isFinite(v) || (!Number.isInteger(v) && Math.abs(v) < 1e-4) || Math.abs(v) >= 1e21)
    throw new Error(`threshold ${v} is out of the range the rule files write alike in TypeScript and Go`);
  return String(v);
}

export function defaultSettings(r: RuleDef): RuleSettings {
  const s: RuleSettings = { enabled: true };
  if ("alert" in r) {
    s.severity = r.severity;
    s.for = r.for ?? "";
  }
  return { ...s, ...(r.params ?? {}) };
}

function settingsOf(r: RuleDef, config: RulesConfig): RuleSettings {
  return { ...defaultSettings(r), ...(config.rules?.[ruleName(r)] ?? {}) };
}

function findRule(groups: GroupDef[], name: string): RuleDef {
  const r = groups.flatMap((g) => g.rules).find((x) => ruleName(x) === name);
  if (!r) throw new Error(`a rule refers to ${name}, which is not defined`);
  return r;
}

function contextFor(
  r: RuleDef,
  s: RuleSettings,
  groups: GroupDef[],
  config: RulesConfig,
): RuleContext<string> {
  const labels = groupingLabelsOf(config);
  return {
    sel: config.selector,
    collectorSel: config.collectorSelector || DEFAULT_COLLECTOR_SELECTOR,
    by: groupingText(labels, { without: [], extra: [] }),
    byWith: (...extra) => groupingText(labels, { without: [], extra }),
    byWithoutInstance: (...extra) => groupingText(labels, { without: ["instance"], extra }),
    byWithoutTarget: (...extra) => groupingText(labels, { without: ["job", "instance"], extra }),
    for: s.for ?? "",
    p: Object.fromEntries(Object.keys(r.params ?? {}).map((k) => [k, promNumber(Number(s[k]))])),
    ref: (alert, param) => promNumber(Number(settingsOf(findRule(groups, alert), config)[param])),
  };
}

function text(t: string | ((c: RuleContext<string>) => string), c: RuleContext<string>): string {
  return typeof t === "string" ? t : t(c);
}

function annotationsOf(a: AlertDef, c: RuleContext<string>): Record<string, string> {
  return { summary: text(a.summary, c), description: a.description(c), runbook_url: runbookUrl(a.alert) };
}

function renderRule(r: RuleDef, groups: GroupDef[], config: RulesConfig): RenderedRule | undefined {
  const s = settingsOf(r, config);
  if (!s.enabled) return undefined;
  const c = contextFor(r, s, groups, config);
  if (!("alert" in r)) {
    const rec: RenderedRule = { record: r.record, expr: r.expr(c) };
    if (s.labels && Object.keys(s.labels).length) rec.labels = { ...s.labels };
    return rec;
  }
  const out: RenderedRule = { alert: r.alert, expr: r.expr(c) };
  if (s.for) out.for = s.for;
  out.labels = { ...config.additionalRuleLabels, severity: s.severity as string, ...s.labels };
  out.annotations = { ...annotationsOf(r, c), ...s.annotations };
  return out;
}

/** The rules with `config`'s settings; disabled rules left out, and groups left empty. */
export function renderRules(groups: GroupDef[], config: RulesConfig): RuleFile {
  return {
    groups: groups.flatMap((g) => {
      const rules = g.rules.flatMap((r) => renderRule(r, groups, config) ?? []);
      return rules.length ? [{ name: g.name, rules }] : [];
    }),
  };
}

/** The rendered file as YAML, with the definitions' comments above their groups and rules. */
export function ruleFileYaml(groups: GroupDef[], config: RulesConfig, header: string): string {
  const doc = new Document(renderRules(groups, config));
  doc.commentBefore = header;
  const comments = new Map<string, string | undefined>(
    groups.flatMap((g) => [
      [`group:${g.name}`, g.comment],
      ...g.rules.map((r) => [ruleName(r), r.comment] as const),
    ]),
  );
  const groupSeq = doc.get("groups") as Node;
  if (isSeq(groupSeq)) {
    for (const g of groupSeq.items) {
      if (!isMap(g)) continue;
      const gc = comments.get(`group:${String(g.get("name"))}`);
      if (gc) (g as YAMLMap).commentBefore = gc.replace(/^/gm, " ");
      const rules = g.get("rules");
      if (!isSeq(rules)) continue;
      for (const [i, r] of rules.items.entries()) {
        if (!isMap(r)) continue;
        if (i > 0) r.spaceBefore = true;
        const rc = comments.get(String(r.get("alert") ?? r.get("record")));
        if (rc) (r as YAMLMap).commentBefore = " " + rc;
      }
    }
  }
  return doc.toString({ lineWidth: 0 });
}

/** A placeholder of the chart's copy: `%(name)s`, filled in by templates/prometheusrule.yaml. */
const hole = (name: string): string => `%(${name})s`;

/** The placeholder of a grouping clause: `by`, `by+site_id+site`, `by-instance+namespace+shard`. */
function groupingHole(g: Grouping): string {
  return ["by", ...g.without.map((l) => `-${l}`), ...g.extra.map((l) => `+${l}`)].join("");
}

/**
 * The chart's copy: each rule's text with placeholders for the selector, the grouping clauses (`grouping`:
 * what the template writes into each from prometheusRule.groupingLabels), `for`, its thresholds and the
 * thresholds of other rules it refers to, and its default settings.
 */
export function chartDefinitions(groups: GroupDef[]): unknown {
  return {
    groups: groups.map((g) => ({
      name: g.name,
      rules: g.rules.map((r) => {
        const refs: Record<string, number> = {};
        const grouping: Record<string, Grouping> = {};
        const clause = (clauseOf: Grouping): string => {
          grouping[groupingHole(clauseOf)] = clauseOf;
          return hole(groupingHole(clauseOf));
        };
        const c: RuleContext<string> = {
          sel: hole("selector"),
          collectorSel: hole("collectorSelector"),
          get by() {
            return clause({ without: [], extra: [] });
          },
          byWith: (...extra) => clause({ without: [], extra }),
          byWithoutInstance: (...extra) => clause({ without: ["instance"], extra }),
          byWithoutTarget: (...extra) => clause({ without: ["job", "instance"], extra }),
          for: hole("for"),
          p: Object.fromEntries(Object.keys(r.params ?? {}).map((k) => [k, hole(k)])),
          ref: (alert, param) => {
            refs[`${alert}.${param}`] = Number(defaultSettings(findRule(groups, alert))[param]);
            return hole(`${alert}.${param}`);
          },
        };
        const name = "alert" in r ? { alert: r.alert } : { record: r.record };
        const expr = r.expr(c);
        const annotations = "alert" in r ? { annotations: annotationsOf(r, c) } : {};
        return { ...name, expr, ...annotations, defaults: defaultSettings(r), refs, grouping };
      }),
    })),
  };
}

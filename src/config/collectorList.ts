/** The `--collectors a,b` list of `once`: known names only, a misspelling named with its likely meaning. */
import { closest, ConfigError } from "./errors.js";
import { COLLECTOR_NAMES, type CollectorName } from "./schema.js";

export function parseCollectorList(text: string): CollectorName[] {
  const names = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const problems: string[] = [];
  for (const name of names) {
    if ((COLLECTOR_NAMES as readonly string[]).includes(name)) continue;
    const hint = closest(name, COLLECTOR_NAMES);
    problems.push(
      `--collectors: unknown collector ${JSON.stringify(name)}; ${hint ? `did you mean ${hint}?` : `known: ${COLLECTOR_NAMES.join(", ")}`}`,
    );
  }
  if (names.length === 0)
    problems.push(`--collectors: empty; give one or more of ${COLLECTOR_NAMES.join(", ")}`);
  if (problems.length > 0) throw new ConfigError(problems);
  return names as CollectorName[];
}

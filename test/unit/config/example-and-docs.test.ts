import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { z } from "zod";
import { ENV_KEYS, loadConfig } from "../../../src/config/load.js";
import { COLLECTOR_NAMES, ConfigSchema } from "../../../src/config/schema.js";
import { objectShape } from "../../../src/config/schemaKeys.js";
import { METRIC_FAMILIES } from "../../../src/metrics/families.js";

const root = resolve(import.meta.dirname, "../../..");
const examplePath = join(root, "config/example.yaml");

describe("config/example.yaml", () => {
  const raw = parse(readFileSync(examplePath, "utf8")) as Record<string, Record<string, unknown>>;

  it("is valid against ConfigSchema", () => {
    const r = ConfigSchema.safeParse(raw);
    expect(r.success ? [] : r.error.issues).toEqual([]);
  });

  it("loads through loadConfig, the client id from the environment as the README runs it", async () => {
    const c = await loadConfig({
      configFile: examplePath,
      env: { SITEHOST_CLIENT_ID: "app-7f3e", SITEHOST_CLIENT_SECRET: "<CLIENT_SECRET>" },
      requireCredentials: true,
    });
    expect(c.api.clientId).toBe("app-7f3e");
  });

  it("runs safely as the README uses it: every site watched, every metric published", async () => {
    const c = await loadConfig({ configFile: examplePath, env: {} });
    expect(c.sites.include).toBeUndefined();
    expect(c.sites.exclude).toEqual(ConfigSchema.parse({}).sites.exclude);
    expect(c.sites.kinds).toEqual(ConfigSchema.parse({}).sites.kinds);
    expect(c.metrics.exclude).toEqual([]);
    expect(c.api.clientId).toBeUndefined();
  });

  it("shows every site filter as a commented example", () => {
    const text = readFileSync(examplePath, "utf8");
    for (const line of [
      "# include:",
      "#   tags: [production]",
      "# exclude:",
      '#   namePatterns: ["*-test"]',
    ]) {
      expect(text).toContain(line);
    }
  });

  it("shows every section, every site setting and every collector", () => {
    expect(Object.keys(raw).sort()).toEqual([
      "api",
      "collectors",
      "logs",
      "metrics",
      "probes",
      "sites",
      "web",
      "webhooks",
    ]);
    expect(Object.keys(raw.sites ?? {}).sort()).toEqual(["kinds", "shard"]);
    expect(Object.keys(raw.collectors ?? {}).sort()).toEqual([...COLLECTOR_NAMES].sort());
    // Each collector with every key it has.
    const defaults = ConfigSchema.parse({}).collectors;
    for (const name of COLLECTOR_NAMES) {
      expect(Object.keys((raw.collectors?.[name] ?? {}) as object).sort(), name).toEqual(
        Object.keys(defaults[name]).sort(),
      );
    }
    expect(raw.metrics?.exclude).toBeInstanceOf(Array);
  });

  it("the metrics.exclude pattern its comment suggests names real metrics", () => {
    const text = readFileSync(examplePath, "utf8");
    const patterns = [...text.matchAll(/For example\s*\n?\s*#?\s*"([^"]+)"/g)].map((m) => m[1] as string);
    expect(patterns).toEqual(["sitehost_site_audit_*"]);
    for (const pattern of patterns) {
      const re = new RegExp(
        `^${pattern
          .replace(/[.+^${}()|[\]\\]/g, "\\$&")
          .replace(/\*/g, ".*")
          .replace(/\?/g, ".")}$`,
      );
      expect(
        METRIC_FAMILIES.some((f) => re.test(f.name)),
        pattern,
      ).toBe(true);
    }
  });

  it.each(["my-client-id", "<CLIENT_ID>", "your-client-id", "changeme", "${SITEHOST_CLIENT_ID}"])(
    "a placeholder client id (%s) is refused, naming the key and the variable",
    async (clientId) => {
      const err = await loadConfig({
        env: { SITEHOST_CLIENT_ID: clientId, SITEHOST_CLIENT_SECRET: "<CLIENT_SECRET>" },
        requireCredentials: true,
      }).catch((e: unknown) => e);
      expect((err as { problems?: string[] }).problems).toEqual([
        `api.clientId: ${JSON.stringify(clientId)} is a placeholder: set your API application's client id (SITEHOST_CLIENT_ID or api.clientId)`,
      ]);
    },
  );

  it.each(["my-id", "test-client", "client-id-7", "a1b2c3d4e5"])(
    "a short or test-looking client id (%s) is accepted: only template values are placeholders",
    async (clientId) => {
      const config = await loadConfig({
        env: { SITEHOST_CLIENT_ID: clientId, SITEHOST_CLIENT_SECRET: "s3cret" },
        requireCredentials: true,
      });
      expect(config.api.clientId).toBe(clientId);
    },
  );

  it("contains no secret", () => {
    expect(raw.api?.clientSecret).toBeUndefined();
    expect(raw.webhooks?.token).toBeUndefined();
  });
});

/** Every dotted key path of the schema, e.g. api.url, sites.include.ids, collectors.traffic.schedule. */
function keyPaths(schema: z.ZodType, prefix: string[] = []): string[] {
  const out: string[] = [];
  for (const [key, child] of Object.entries(objectShape(schema) ?? {})) {
    const path = [...prefix, key];
    out.push(path.join("."));
    out.push(...keyPaths(child, path));
  }
  return out;
}

describe("docs/configuration.md", () => {
  const doc = readFileSync(join(root, "docs/configuration.md"), "utf8");

  it("documents every key of ConfigSchema (as `key.path`)", () => {
    const paths = keyPaths(ConfigSchema);
    // Sanity: the walk reaches nested keys (8 collectors x enabled/schedule among them).
    expect(paths).toContain("collectors.backups.schedule");
    expect(paths).toContain("sites.exclude.namePatterns");
    const missing = paths.filter((p) => {
      // Per-collector keys are documented once, as collectors.<name>.enabled/schedule.
      const generic = p.replace(/^collectors\.[a-z]+(\.|$)/, "collectors.<name>$1");
      // include and exclude share one shape, documented as sites.include / sites.exclude keys.
      return !doc.includes(`\`${p}\``) && !doc.includes(`\`${generic}\``);
    });
    expect(missing).toEqual([]);
    for (const name of COLLECTOR_NAMES) expect(doc).toContain(`\`${name}\``);
  });

  it("documents every environment variable, flag and exit code", () => {
    for (const name of Object.keys(ENV_KEYS)) expect(doc).toContain(`\`${name}\``);
    for (const name of [
      "OTEL_EXPORTER_OTLP_ENDPOINT",
      "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
      "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
      "OTEL_EXPORTER_OTLP_HEADERS",
      "OTEL_SERVICE_NAME",
      "OTEL_RESOURCE_ATTRIBUTES",
    ])
      expect(doc).toContain(`\`${name}\``);
    for (const flag of [
      "--config",
      "--web.listen-address",
      "--web.telemetry-path",
      "--web.config.file",
      "--log.level",
      "--log.format",
    ])
      expect(doc).toContain(`\`${flag}`);
    expect(doc).toMatch(/\|\s*`?0`?\s*\|/);
    expect(doc).toMatch(/\|\s*`?1`?\s*\|/);
    expect(doc).toMatch(/\|\s*`?2`?\s*\|/);
  });

  it("the defaults it documents are the schema's defaults", () => {
    const defaults = ConfigSchema.parse({}) as unknown as Record<string, unknown>;
    const at = (path: string) =>
      path
        .split(".")
        .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], defaults);
    // Table rows as trimmed cells (prettier pads the columns).
    const rows = doc
      .split("\n")
      .filter((l) => l.startsWith("|"))
      .map((l) =>
        l
          .split("|")
          .slice(1, -1)
          .map((c) => c.trim()),
      );
    const code = (cell: string | undefined) => /^`([^`]*)`$/.exec(cell ?? "")?.[1];
    const compared = new Set<string>();
    // Defaults derived from another key: documented as derived from it, not as a value.
    const derived: Record<string, string> = { "api.authUrl": "the host root of `api.url`" };
    for (const [path, from] of Object.entries(derived)) {
      expect(rows.find((cells) => code(cells[0]) === path)?.[2], path).toBe(from);
      compared.add(path);
    }
    for (const cells of rows) {
      const path = code(cells[0]);
      const documented = code(cells[2]);
      if (!path || documented === undefined || !path.includes(".")) continue;
      const actual = at(path);
      if (typeof actual === "string" || typeof actual === "number" || typeof actual === "boolean") {
        expect(String(actual), path).toBe(documented);
        compared.add(path);
      }
    }
    // Collector schedule table: | `name` | `cron` | why |
    for (const name of COLLECTOR_NAMES) {
      const row = rows.find((cells) => code(cells[0]) === name && code(cells[1]) !== undefined);
      expect(code(row?.[1]), name).toBe(at(`collectors.${name}.schedule`));
    }
    // Every scalar default (a collector's enabled and schedule are documented per collector above; its
    // own settings, like collectors.traffic.maxInterval, in a table of keys) was found and compared.
    const scalars: string[] = [];
    const walk = (node: unknown, path: string[]) => {
      if (node !== null && typeof node === "object" && !Array.isArray(node)) {
        for (const [k, v] of Object.entries(node)) walk(v, [...path, k]);
      } else if (
        ["string", "number", "boolean"].includes(typeof node) &&
        !(path[0] === "collectors" && ["enabled", "schedule"].includes(path[2] ?? ""))
      ) {
        scalars.push(path.join("."));
      }
    };
    walk(defaults, []);
    expect(scalars.length).toBeGreaterThan(20);
    expect([...compared].sort()).toEqual(scalars.sort());
  });
});

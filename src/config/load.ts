import { readFile } from "node:fs/promises";
import { parseDocument } from "yaml";
import type { z } from "zod";
import { authHostWarning } from "./authUrl.js";
import { checkCheckpointDir } from "./checkpointDir.js";
import { closest, ConfigError } from "./errors.js";
import { logExportDisabledBy, otlpEnvProblems } from "./otelEnv.js";
import { valueAt } from "./path.js";
import { REDACTED, redactUrl } from "./redact.js";
import { ConfigSchema, type Config } from "./schema.js";
import { CLIENT_SECRET, pickSecretLayer, readSecretFile, WEBHOOK_TOKEN } from "./secrets.js";
import { allowedKeys } from "./schemaKeys.js";
import { yamlSyntaxProblems } from "./yamlErrors.js";
import { parseShard, shardFromEnv } from "./shard.js";

/** Command-line flags that map onto config keys. */
export interface CliFlags {
  "web.listen-address"?: string;
  "web.telemetry-path"?: string;
  "web.config.file"?: string;
  /** `i/n`: overrides `sites.shard` (and SITEHOST_SHARD). */
  "sites.shard"?: string;
}

export interface LoadOptions {
  configFile?: string;
  env?: NodeJS.ProcessEnv;
  flags?: CliFlags;
  /** `run` and `once` need credentials; `check-config` reports their absence without failing on it. */
  requireCredentials?: boolean;
  /**
   * Check what the daemon needs beyond the schema when logs are tailed: the OTLP variables and
   * the checkpoint directory. `create` (run) creates the directory; `probe` (check-config) only
   * proves it could. Absent (once): not checked.
   */
  checkRuntime?: "create" | "probe";
  /** Told what is not a problem yet deserves saying (a checkpoint directory that is full right now). */
  warn?: (warning: string) => void;
}

type Json = Record<string, unknown>;

function nonEmpty(value: string | undefined): boolean {
  return value !== undefined && value !== "";
}

function setPath(target: Json, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== "object" || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Json;
  }
  node[path[path.length - 1] as string] = value;
}

/** Environment variables and the config keys they override. */
export const ENV_KEYS: Record<string, string[]> = {
  SITEHOST_API_URL: ["api", "url"],
  SITEHOST_AUTH_URL: ["api", "authUrl"],
  SITEHOST_CLIENT_ID: ["api", "clientId"],
  SITEHOST_CLIENT_SECRET: ["api", "clientSecret"],
  SITEHOST_CLIENT_SECRET_FILE: ["api", "clientSecretFile"],
  SITEHOST_LISTEN_ADDRESS: ["web", "listenAddress"],
  SITEHOST_CHECKPOINT_DIR: ["logs", "checkpointDir"],
  SITEHOST_WEBHOOK_TOKEN: ["webhooks", "token"],
  SITEHOST_WEBHOOK_TOKEN_FILE: ["webhooks", "tokenFile"],
};

const FLAG_KEYS: Record<Exclude<keyof CliFlags, "sites.shard">, string[]> = {
  "web.listen-address": ["web", "listenAddress"],
  "web.telemetry-path": ["web", "telemetryPath"],
  "web.config.file": ["web", "configFile"],
};

async function readYaml(file: string): Promise<Json> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new ConfigError([
      `${file}: cannot read the config file (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    ]);
  }
  const doc = parseDocument(text, { prettyErrors: false });
  if (doc.errors.length > 0) throw new ConfigError(yamlSyntaxProblems(file, text, doc));
  const value: unknown = doc.toJS();
  if (value === null || value === undefined) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new ConfigError([
      `${file}: the top level must be a mapping of keys (api, sites, metrics, collectors, logs, web, webhooks)`,
    ]);
  }
  return value as Json;
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return String(value);
}

/** Keys whose values are never echoed in error messages (the web config's users may hold a mistyped password). */
const SECRET_KEYS = new Set(["clientSecret", "token", "basic_auth_users"]);

/** Turns zod issues into one line each: `key.path: what was expected`. Secret values are never echoed. */
export function formatIssues(
  issues: z.core.$ZodIssue[],
  input: unknown,
  schema: z.ZodType = ConfigSchema,
): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const path = issue.path.map(String);
    const where = path.join(".") || "(top level)";
    if (issue.code === "unrecognized_keys") {
      const allowed = allowedKeys(schema, issue.path);
      for (const key of issue.keys) {
        const full = [...path, key].join(".");
        const hint = closest(key, allowed);
        lines.push(
          `${full}: unknown key; ${hint ? `did you mean ${hint}?` : `allowed keys here: ${allowed.join(", ")}`}`,
        );
      }
      continue;
    }
    const got = valueAt(input, issue.path);
    const secret = path.some((p) => SECRET_KEYS.has(p));
    if (issue.code === "invalid_type") {
      lines.push(
        got === undefined
          ? `${where}: required (${issue.expected})`
          : `${where}: expected ${issue.expected === "array" ? "a list" : issue.expected === "object" ? "a mapping" : `a ${issue.expected}`}, got ${secret ? "<redacted>" : describe(got)}`,
      );
    } else if (issue.code === "invalid_value") {
      lines.push(
        `${where}: ${secret ? "<redacted>" : describe(got)} is not one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`,
      );
    } else {
      lines.push(`${where}: ${issue.message}`);
    }
  }
  return lines;
}

/** Merge YAML < environment < flags, validate, and resolve the client secret file. */
export async function loadConfig(opts: LoadOptions = {}): Promise<Config> {
  const env = opts.env ?? process.env;
  const raw: Json = opts.configFile ? await readYaml(opts.configFile) : {};
  for (const [name, path] of Object.entries(ENV_KEYS)) {
    const value = env[name];
    if (value !== undefined && value !== "") setPath(raw, path, value);
  }
  const envShard = shardFromEnv(env);
  if (envShard) setPath(raw, ["sites", "shard"], envShard);
  for (const [flag, path] of Object.entries(FLAG_KEYS)) {
    const value = opts.flags?.[flag as keyof CliFlags];
    if (value !== undefined) setPath(raw, path, value);
  }
  const flagShard = opts.flags?.["sites.shard"];
  if (flagShard !== undefined) setPath(raw, ["sites", "shard"], parseShard(flagShard, "--sites.shard"));
  pickSecretLayer(raw, env, CLIENT_SECRET);
  pickSecretLayer(raw, env, WEBHOOK_TOKEN);
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(formatIssues(parsed.error.issues, raw));
  const config = parsed.data;
  const authWarning = authHostWarning(config.api);
  if (authWarning) opts.warn?.(authWarning);

  if (config.api.clientSecretFile) {
    config.api.clientSecret = await readSecretFile(config.api.clientSecretFile, CLIENT_SECRET, env);
  }
  if (config.webhooks.tokenFile) {
    config.webhooks.token = await readSecretFile(config.webhooks.tokenFile, WEBHOOK_TOKEN, env);
  }
  const paths = [...telemetryPathProblems(config), ...webhookProblems(config)];
  if (paths.length > 0) throw new ConfigError(paths);
  // OTEL_SDK_DISABLED=true or OTEL_LOGS_EXPORTER=none: logs are read and counted, not exported.
  if (logExportDisabledBy(env)) config.logs.ship = false;
  if (opts.requireCredentials) {
    const problems = credentialProblems(config);
    if (problems.length > 0) throw new ConfigError(problems);
  }
  if (opts.checkRuntime && config.logs.enabled) {
    const problems = config.logs.ship ? otlpEnvProblems(env) : [];
    const dirKey = nonEmpty(env.SITEHOST_CHECKPOINT_DIR)
      ? "logs.checkpointDir (SITEHOST_CHECKPOINT_DIR)"
      : "logs.checkpointDir";
    const dir = await checkCheckpointDir(config.logs.checkpointDir, opts.checkRuntime, dirKey);
    if (dir.problem) problems.push(dir.problem);
    if (dir.warning) opts.warn?.(dir.warning);
    if (problems.length > 0) throw new ConfigError(problems);
  }
  return config;
}

/**
 * Client ids that examples and templates use, never a real one: `<CLIENT_ID>`, `${CLIENT_ID}`,
 * `my-client-id`, `changeme`. Kept narrow on purpose: a short real or test id (`my-id`) is accepted.
 */
export function isPlaceholderClientId(value: string): boolean {
  const v = value.trim().toLowerCase();
  return (
    /^<.*>$/.test(v) ||
    /^\$\{.*\}$/.test(v) ||
    /^(my|your)[-_ ]client[-_ ]id$/.test(v) ||
    /^(changeme|change[-_ ]me|placeholder)$/.test(v)
  );
}

export function credentialProblems(config: Config): string[] {
  const problems: string[] = [];
  if (!config.api.clientId)
    problems.push("api.clientId: required (set it in the config file or SITEHOST_CLIENT_ID)");
  else if (isPlaceholderClientId(config.api.clientId)) {
    problems.push(
      `api.clientId: ${JSON.stringify(config.api.clientId)} is a placeholder: set your API application's client id (SITEHOST_CLIENT_ID or api.clientId)`,
    );
  }
  if (!config.api.clientSecret) {
    problems.push(
      "api.clientSecret: required (set SITEHOST_CLIENT_SECRET, or SITEHOST_CLIENT_SECRET_FILE / api.clientSecretFile pointing at a file)",
    );
  }
  return problems;
}

/** Shortest webhook token accepted: a guessable token would let anyone write records and page people. */
export const MIN_WEBHOOK_TOKEN_LENGTH = 16;

/** Paths the exporter serves itself; the webhook path must be another one. */
const RESERVED_PATHS = ["/", "/-/healthy", "/-/ready", "/-/status", "/sd/probes"];

/** The metrics endpoint on a path of its own: on another one it would hide that page. */
export function telemetryPathProblems(config: Config): string[] {
  const path = config.web.telemetryPath;
  return RESERVED_PATHS.includes(path)
    ? [
        `web.telemetryPath (--web.telemetry-path): ${JSON.stringify(path)} is served by the exporter already; choose another path, such as /metrics`,
      ]
    : [];
}

/** With webhooks enabled: a token long enough, and a path of its own. The token is never echoed. */
export function webhookProblems(config: Config): string[] {
  const w = config.webhooks;
  if (!w.enabled) return [];
  const problems: string[] = [];
  if (!w.token) {
    problems.push(
      "webhooks.token: required when webhooks.enabled is true (set SITEHOST_WEBHOOK_TOKEN, or SITEHOST_WEBHOOK_TOKEN_FILE / webhooks.tokenFile pointing at a file)",
    );
  } else if (w.token.length < MIN_WEBHOOK_TOKEN_LENGTH) {
    problems.push(
      `webhooks.token: must be at least ${MIN_WEBHOOK_TOKEN_LENGTH} characters long (generate one with: openssl rand -hex 32)`,
    );
  }
  if (w.path === config.web.telemetryPath || RESERVED_PATHS.includes(w.path)) {
    problems.push(
      `webhooks.path: ${JSON.stringify(w.path)} is served by the exporter already; choose another path`,
    );
  }
  return problems;
}

/** The effective config with every secret replaced (check-config, landing page, logs): the client secret, the webhook token and URL passwords. */
export function redactConfig(config: Config): Config {
  const copy = structuredClone(config);
  if (copy.api.clientSecret !== undefined) copy.api.clientSecret = REDACTED;
  if (copy.webhooks.token !== undefined) copy.webhooks.token = REDACTED;
  copy.api.url = redactUrl(copy.api.url);
  copy.api.authUrl = redactUrl(copy.api.authUrl);
  return copy;
}

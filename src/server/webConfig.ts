/**
 * The Prometheus exporter-toolkit web configuration file (--web.config.file): TLS and client
 * certificates (webConfigTls.ts), basic auth with bcrypt hashes, HTTP/2, response headers and the
 * request rate limit.
 */
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { parse } from "yaml";
import { z } from "zod";
import { parseDuration } from "../config/duration.js";
import { ConfigError } from "../config/errors.js";
import { errnoCode } from "../ha/volume.js";
import { formatIssues } from "../config/load.js";
import { headerProblems } from "./headers.js";
import { loadTls, TlsServerConfigSchema, type TlsSettings } from "./webConfigTls.js";

export { clientCertProblem, sanValues } from "./clientCertPolicy.js";

export const WebConfigSchema = z.strictObject({
  tls_server_config: TlsServerConfigSchema.optional(),
  http_server_config: z
    .strictObject({
      http2: z.boolean().default(true),
      headers: z.record(z.string(), z.string()).optional(),
    })
    .optional(),
  basic_auth_users: z
    .record(z.string(), z.string().regex(/^\$2[abxy]?\$\d\d\$/, "must be a bcrypt hash"))
    .optional(),
  /** A token bucket over every request: one more every `interval` (0: off), `burst` at most at once. */
  rate_limit: z
    .strictObject({
      // YAML reads a bare 0 as a number; any other number lacks its unit.
      interval: z
        .union([z.string(), z.literal(0).transform(() => "0")])
        .refine((v) => parseDuration(v) !== undefined, "must be a duration such as 100ms, 1s or 0 (off)"),
      burst: z.number().int().min(0),
    })
    .optional(),
});

export interface WebConfig {
  tls?: TlsSettings;
  /** Serve HTTP/2 (with HTTP/1.1 beside it) when TLS is on. */
  http2: boolean;
  headers: Record<string, string>;
  users?: Map<string, string>;
  /** rate_limit: one request more every `intervalMs`, at most `burst` at once; absent: no limit. */
  rateLimit?: { intervalMs: number; burst: number };
}

export async function loadWebConfig(file: string): Promise<WebConfig> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new ConfigError([`${file}: cannot read the web config file (${errnoCode(err)})`]);
  }
  let raw: unknown;
  try {
    raw = parse(text) ?? {};
  } catch (err) {
    throw new ConfigError([`${file}: ${(err as Error).message.split("\n")[0]}`]);
  }
  const parsed = WebConfigSchema.safeParse(raw);
  if (!parsed.success)
    throw new ConfigError(
      formatIssues(parsed.error.issues, raw, WebConfigSchema).map((l) => `${file}: ${l}`),
    );
  const c = parsed.data;
  const headers = c.http_server_config?.headers ?? {};
  const problems = headerProblems(headers);
  if (problems.length > 0) throw new ConfigError(problems.map((l) => `${file}: ${l}`));
  const out: WebConfig = { headers, http2: c.http_server_config?.http2 ?? true };
  if (c.tls_server_config) {
    try {
      out.tls = await loadTls(c.tls_server_config, dirname(resolve(file)));
    } catch (err) {
      if (err instanceof ConfigError) throw new ConfigError(err.problems.map((l) => `${file}: ${l}`));
      throw err;
    }
  }
  if (c.basic_auth_users) out.users = new Map(Object.entries(c.basic_auth_users));
  const intervalMs = c.rate_limit ? (parseDuration(c.rate_limit.interval) ?? 0) : 0;
  if (c.rate_limit && intervalMs > 0 && c.rate_limit.burst === 0)
    throw new ConfigError([
      `${file}: rate_limit.burst: 0 with an interval refuses every request; set 1 or more (or interval: 0 to turn the limit off)`,
    ]);
  // As in exporter-toolkit, an interval of 0 turns the limit off.
  if (c.rate_limit && intervalMs > 0) out.rateLimit = { intervalMs, burst: c.rate_limit.burst };
  return out;
}

/**
 * The Prometheus exporter-toolkit web configuration file (--web.config.file):
 * TLS and basic auth with bcrypt hashes.
 */
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { createHash } from "node:crypto";
import bcrypt from "bcryptjs";
import { parse } from "yaml";
import { z } from "zod";
import { ConfigError } from "../config/errors.js";
import { formatIssues } from "../config/load.js";

const CLIENT_AUTH = [
  "NoClientCert",
  "RequestClientCert",
  "RequireAnyClientCert",
  "VerifyClientCertIfGiven",
  "RequireAndVerifyClientCert",
] as const;

export const WebConfigSchema = z.strictObject({
  tls_server_config: z
    .strictObject({
      cert_file: z.string().min(1),
      key_file: z.string().min(1),
      client_auth_type: z.enum(CLIENT_AUTH).default("NoClientCert"),
      client_ca_file: z.string().optional(),
      min_version: z.enum(["TLS10", "TLS11", "TLS12", "TLS13"]).default("TLS12"),
      max_version: z.enum(["TLS10", "TLS11", "TLS12", "TLS13"]).optional(),
      cipher_suites: z.array(z.string()).optional(),
      prefer_server_cipher_suites: z.boolean().optional(),
      curve_preferences: z.array(z.string()).optional(),
    })
    .optional(),
  http_server_config: z
    .strictObject({
      http2: z.boolean().optional(),
      headers: z.record(z.string(), z.string()).optional(),
    })
    .optional(),
  basic_auth_users: z
    .record(z.string(), z.string().regex(/^\$2[abxy]?\$\d\d\$/, "must be a bcrypt hash"))
    .optional(),
});

export interface WebConfig {
  tls?: {
    cert: Buffer;
    key: Buffer;
    ca?: Buffer;
    requestCert: boolean;
    rejectUnauthorized: boolean;
    clientAuth: (typeof CLIENT_AUTH)[number];
    minVersion: "TLSv1" | "TLSv1.1" | "TLSv1.2" | "TLSv1.3";
    maxVersion?: "TLSv1" | "TLSv1.1" | "TLSv1.2" | "TLSv1.3";
  };
  headers: Record<string, string>;
  users?: Map<string, string>;
}

const TLS_VERSION = { TLS10: "TLSv1", TLS11: "TLSv1.1", TLS12: "TLSv1.2", TLS13: "TLSv1.3" } as const;

/** Relative paths in the file are relative to the file's own directory, as in exporter-toolkit. */
async function readNamed(baseDir: string, file: string, key: string): Promise<Buffer> {
  const full = resolve(baseDir, file);
  try {
    return await readFile(full);
  } catch (err) {
    throw new ConfigError([
      `${key}: cannot read ${full} (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    ]);
  }
}

export async function loadWebConfig(file: string): Promise<WebConfig> {
  let raw: unknown;
  try {
    raw = parse(await readFile(file, "utf8")) ?? {};
  } catch (err) {
    throw new ConfigError([`${file}: ${(err as Error).message.split("\n")[0]}`]);
  }
  const parsed = WebConfigSchema.safeParse(raw);
  if (!parsed.success)
    throw new ConfigError(
      formatIssues(parsed.error.issues, raw, WebConfigSchema).map((l) => `${file}: ${l}`),
    );
  const c = parsed.data;
  const baseDir = dirname(resolve(file));
  const out: WebConfig = { headers: c.http_server_config?.headers ?? {} };
  if (c.tls_server_config) {
    const t = c.tls_server_config;
    const auth = t.client_auth_type;
    if ((auth === "VerifyClientCertIfGiven" || auth === "RequireAndVerifyClientCert") && !t.client_ca_file) {
      throw new ConfigError([
        `${file}: tls_server_config.client_ca_file: required for client_auth_type ${auth}`,
      ]);
    }
    out.tls = {
      cert: await readNamed(baseDir, t.cert_file, "tls_server_config.cert_file"),
      key: await readNamed(baseDir, t.key_file, "tls_server_config.key_file"),
      ca: t.client_ca_file
        ? await readNamed(baseDir, t.client_ca_file, "tls_server_config.client_ca_file")
        : undefined,
      requestCert: auth !== "NoClientCert",
      // Only RequireAndVerifyClientCert can be left to the TLS handshake; RequireAnyClientCert
      // (any certificate, unverified) and VerifyClientCertIfGiven (verified only when present)
      // are enforced by the server on each new connection (see clientCertProblem).
      rejectUnauthorized: auth === "RequireAndVerifyClientCert",
      clientAuth: auth,
      minVersion: TLS_VERSION[t.min_version],
      maxVersion: t.max_version ? TLS_VERSION[t.max_version] : undefined,
    };
  }
  if (c.basic_auth_users) out.users = new Map(Object.entries(c.basic_auth_users));
  return out;
}

/**
 * Why a TLS connection must be refused under the configured client_auth_type, or undefined.
 * `hasCert`: the client presented a certificate; `authorized`: it verified against client_ca_file.
 */
export function clientCertProblem(
  clientAuth: (typeof CLIENT_AUTH)[number],
  hasCert: boolean,
  authorized: boolean,
): string | undefined {
  if ((clientAuth === "RequireAnyClientCert" || clientAuth === "RequireAndVerifyClientCert") && !hasCert)
    return "client certificate required";
  if (
    (clientAuth === "VerifyClientCertIfGiven" || clientAuth === "RequireAndVerifyClientCert") &&
    hasCert &&
    !authorized
  )
    return "client certificate not trusted";
  return undefined;
}

/**
 * Basic-auth check. bcrypt is slow on purpose; successful checks are cached by a
 * digest of (user, password, hash) so each scrape does not pay it again.
 */
export class BasicAuth {
  private readonly verified = new Set<string>();

  private readonly decoy: string;

  constructor(private readonly users: Map<string, string>) {
    this.decoy = users.values().next().value ?? "";
  }

  async check(header: string | undefined): Promise<boolean> {
    const m = /^Basic\s+(.+)$/i.exec(header ?? "");
    if (!m) return false;
    const decoded = Buffer.from(m[1] as string, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) return false;
    const user = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    const hash = this.users.get(user);
    // Unknown users still cost a full bcrypt comparison (against a configured hash, so the
    // cost factor matches), so timing does not reveal which users exist.
    const digest = createHash("sha256")
      .update(`${user}\u0000${password}\u0000${hash ?? ""}`)
      .digest();
    const key = digest.toString("hex");
    if (hash && this.verified.has(key)) return true;
    let ok: boolean;
    try {
      ok = await bcrypt.compare(password, hash ?? this.decoy);
    } catch {
      ok = false;
    }
    if (ok && hash) {
      if (this.verified.size > 1000) this.verified.clear();
      this.verified.add(key);
    }
    return ok && hash !== undefined;
  }
}

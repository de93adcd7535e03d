/**
 * The Prometheus exporter-toolkit web configuration file (--web.config.file):
 * TLS, client certificates, basic auth with bcrypt hashes, HTTP/2 and response headers.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from "node:crypto";
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { createSecureContext } from "node:tls";
import { parse } from "yaml";
import { z } from "zod";
import { closest, ConfigError } from "../config/errors.js";
import { formatIssues } from "../config/load.js";
import { headerProblems } from "./headers.js";
import { CIPHER_SUITES, CURVES, opensslCiphers, opensslCurves } from "./tlsNames.js";

const CLIENT_AUTH = [
  "NoClientCert",
  "RequestClientCert",
  "RequireAnyClientCert",
  "VerifyClientCertIfGiven",
  "RequireAndVerifyClientCert",
] as const;

/** A list of Go names from `known`; an unknown one is named, with the closest known name. */
const goNames = (known: Readonly<Record<string, string>>, what: string) =>
  z.array(z.string()).superRefine((names, ctx) => {
    for (const [i, name] of names.entries()) {
      if (Object.hasOwn(known, name)) continue;
      const hint = closest(name, Object.keys(known));
      ctx.addIssue({
        code: "custom",
        path: [i],
        message: `unknown ${what} ${JSON.stringify(name)}; ${hint ? `did you mean ${hint}?` : `known: ${Object.keys(known).join(", ")}`}`,
      });
    }
  });

export const WebConfigSchema = z.strictObject({
  tls_server_config: z
    .strictObject({
      cert_file: z.string().min(1),
      key_file: z.string().min(1),
      client_auth_type: z.enum(CLIENT_AUTH).default("NoClientCert"),
      client_ca_file: z.string().optional(),
      min_version: z.enum(["TLS10", "TLS11", "TLS12", "TLS13"]).default("TLS12"),
      max_version: z.enum(["TLS10", "TLS11", "TLS12", "TLS13"]).optional(),
      cipher_suites: goNames(CIPHER_SUITES, "cipher suite").optional(),
      prefer_server_cipher_suites: z.boolean().default(true),
      curve_preferences: goNames(CURVES, "curve").optional(),
    })
    .optional(),
  http_server_config: z
    .strictObject({
      http2: z.boolean().default(true),
      headers: z.record(z.string(), z.string()).optional(),
    })
    .optional(),
  basic_auth_users: z
    .record(z.string(), z.string().regex(/^\$2[abxy]?\$\d\d\$/, "must be a bcrypt hash"))
    .optional(),
});

type TlsVersion = "TLSv1" | "TLSv1.1" | "TLSv1.2" | "TLSv1.3";

export interface WebConfig {
  tls?: {
    cert: Buffer;
    key: Buffer;
    ca?: Buffer;
    requestCert: boolean;
    rejectUnauthorized: boolean;
    clientAuth: (typeof CLIENT_AUTH)[number];
    minVersion: TlsVersion;
    maxVersion?: TlsVersion;
    /** OpenSSL cipher string; undefined: Node.js's defaults. */
    ciphers?: string;
    /** OpenSSL curve list; undefined: Node.js's defaults. */
    ecdhCurve?: string;
    honorCipherOrder: boolean;
  };
  /** Serve HTTP/2 (with HTTP/1.1 beside it) when TLS is on. */
  http2: boolean;
  headers: Record<string, string>;
  users?: Map<string, string>;
}

const TLS_VERSION = { TLS10: "TLSv1", TLS11: "TLSv1.1", TLS12: "TLSv1.2", TLS13: "TLSv1.3" } as const;
const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function errCode(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? "error";
}

/** Relative paths in the file are relative to the file's own directory, as in exporter-toolkit. */
async function readNamed(baseDir: string, file: string, key: string): Promise<Buffer> {
  const full = resolve(baseDir, file);
  try {
    return await readFile(full);
  } catch (err) {
    throw new ConfigError([`${key}: cannot read ${full} (${errCode(err)})`]);
  }
}

/** The PEM certificates in `pem`; a ConfigError naming `key` when there are none or one is broken. */
function certificates(pem: Buffer, key: string, full: string): X509Certificate[] {
  const blocks = pem.toString("latin1").match(PEM_CERT) ?? [];
  if (blocks.length === 0) throw new ConfigError([`${key}: ${full} holds no PEM certificate`]);
  return blocks.map((block) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw new ConfigError([`${key}: ${full} holds a PEM certificate that cannot be read`]);
    }
  });
}

function privateKey(pem: Buffer, key: string, full: string): KeyObject {
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem.toString("latin1")))
    throw new ConfigError([`${key}: ${full} holds no PEM private key`]);
  try {
    return createPrivateKey(pem);
  } catch {
    throw new ConfigError([
      `${key}: ${full} holds a private key that cannot be read (an encrypted key needs its passphrase, which is not supported)`,
    ]);
  }
}

async function loadTls(
  t: NonNullable<z.infer<typeof WebConfigSchema>["tls_server_config"]>,
  baseDir: string,
): Promise<NonNullable<WebConfig["tls"]>> {
  const auth = t.client_auth_type;
  if ((auth === "VerifyClientCertIfGiven" || auth === "RequireAndVerifyClientCert") && !t.client_ca_file) {
    throw new ConfigError([`tls_server_config.client_ca_file: required for client_auth_type ${auth}`]);
  }
  if (t.client_ca_file && auth === "NoClientCert") {
    throw new ConfigError([
      "tls_server_config.client_ca_file: set, but client_auth_type is NoClientCert; choose a client_auth_type that asks for certificates",
    ]);
  }
  const cert = await readNamed(baseDir, t.cert_file, "tls_server_config.cert_file");
  const key = await readNamed(baseDir, t.key_file, "tls_server_config.key_file");
  const ca = t.client_ca_file
    ? await readNamed(baseDir, t.client_ca_file, "tls_server_config.client_ca_file")
    : undefined;
  const [leaf] = certificates(cert, "tls_server_config.cert_file", resolve(baseDir, t.cert_file));
  const keyObject = privateKey(key, "tls_server_config.key_file", resolve(baseDir, t.key_file));
  if (!(leaf as X509Certificate).checkPrivateKey(keyObject)) {
    throw new ConfigError([
      `tls_server_config.key_file: the key in ${resolve(baseDir, t.key_file)} does not belong to the certificate in ${resolve(baseDir, t.cert_file)}`,
    ]);
  }
  if (ca && t.client_ca_file)
    certificates(ca, "tls_server_config.client_ca_file", resolve(baseDir, t.client_ca_file));
  const tls: NonNullable<WebConfig["tls"]> = {
    cert,
    key,
    ca,
    requestCert: auth !== "NoClientCert",
    // Only RequireAndVerifyClientCert can be left to the TLS handshake; RequireAnyClientCert
    // (any certificate, unverified) and VerifyClientCertIfGiven (verified only when present)
    // are enforced by the server on each new connection (see clientCertProblem).
    rejectUnauthorized: auth === "RequireAndVerifyClientCert",
    clientAuth: auth,
    minVersion: TLS_VERSION[t.min_version],
    maxVersion: t.max_version ? TLS_VERSION[t.max_version] : undefined,
    ciphers: t.cipher_suites?.length ? opensslCiphers(t.cipher_suites) : undefined,
    ecdhCurve: t.curve_preferences?.length ? opensslCurves(t.curve_preferences) : undefined,
    honorCipherOrder: t.prefer_server_cipher_suites,
  };
  if (tls.maxVersion && tls.maxVersion < tls.minVersion)
    throw new ConfigError([
      `tls_server_config.max_version: ${t.max_version} is below min_version ${t.min_version}`,
    ]);
  try {
    // What the server will build: catches suites or curves this Node.js / OpenSSL cannot use.
    createSecureContext({
      cert,
      key,
      ca,
      ciphers: tls.ciphers,
      ecdhCurve: tls.ecdhCurve,
      minVersion: tls.minVersion,
      maxVersion: tls.maxVersion,
    });
  } catch (err) {
    throw new ConfigError([
      `tls_server_config: this Node.js cannot use these TLS settings (${(err as Error).message.replace(/^error:[0-9A-F]+:/i, "")})`,
    ]);
  }
  return tls;
}

export async function loadWebConfig(file: string): Promise<WebConfig> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new ConfigError([`${file}: cannot read the web config file (${errCode(err)})`]);
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

/**
 * The web config file's `tls_server_config`, as exporter-toolkit reads it: the certificate, key and
 * client CA from files (relative to the web config file) or inline, the client certificate policy,
 * the client certificate's allowed subject alternative names, versions, cipher suites and curves.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from "node:crypto";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { createSecureContext } from "node:tls";
import { z } from "zod";
import { closest, ConfigError } from "../config/errors.js";
import { errnoCode } from "../ha/volume.js";
import { CIPHER_SUITES, CURVES, opensslCiphers, opensslCurves } from "./tlsNames.js";

export const CLIENT_AUTH = [
  "NoClientCert",
  "RequestClientCert",
  "RequireAnyClientCert",
  "VerifyClientCertIfGiven",
  "RequireAndVerifyClientCert",
] as const;
export type ClientAuth = (typeof CLIENT_AUTH)[number];

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

export const TlsServerConfigSchema = z.strictObject({
  cert_file: z.string().min(1).optional(),
  key_file: z.string().min(1).optional(),
  /** The certificate, key and client CA inline (PEM), instead of the files. */
  cert: z.string().min(1).optional(),
  key: z.string().min(1).optional(),
  client_ca: z.string().min(1).optional(),
  client_auth_type: z.enum(CLIENT_AUTH).default("NoClientCert"),
  client_ca_file: z.string().optional(),
  client_allowed_sans: z.array(z.string().min(1)).optional(),
  min_version: z.enum(["TLS10", "TLS11", "TLS12", "TLS13"]).default("TLS12"),
  max_version: z.enum(["TLS10", "TLS11", "TLS12", "TLS13"]).optional(),
  cipher_suites: goNames(CIPHER_SUITES, "cipher suite").optional(),
  prefer_server_cipher_suites: z.boolean().default(true),
  curve_preferences: goNames(CURVES, "curve").optional(),
});
export type TlsServerConfig = z.infer<typeof TlsServerConfigSchema>;

type TlsVersion = "TLSv1" | "TLSv1.1" | "TLSv1.2" | "TLSv1.3";

export interface TlsSettings {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
  requestCert: boolean;
  rejectUnauthorized: boolean;
  clientAuth: ClientAuth;
  /** A client certificate must name one of these (DNS, IP, e-mail or URI), exactly; absent: any. */
  allowedSans?: readonly string[];
  minVersion: TlsVersion;
  maxVersion?: TlsVersion;
  /** OpenSSL cipher string; undefined: Node.js's defaults. */
  ciphers?: string;
  /** OpenSSL curve list; undefined: Node.js's defaults. */
  ecdhCurve?: string;
  honorCipherOrder: boolean;
}

const TLS_VERSION = { TLS10: "TLSv1", TLS11: "TLSv1.1", TLS12: "TLSv1.2", TLS13: "TLSv1.3" } as const;
const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** PEM material and where it came from, as messages name it. */
interface Material {
  pem: Buffer;
  /** The file's full path, or "the inline value". */
  where: string;
  /** The key that gave it. */
  key: string;
}

/**
 * The `inlineKey` value or the `fileKey` file (relative to the web config file's directory, as in
 * exporter-toolkit): one of them, never both.
 */
async function material(
  baseDir: string,
  t: TlsServerConfig,
  inlineKey: "cert" | "key" | "client_ca",
  fileKey: "cert_file" | "key_file" | "client_ca_file",
): Promise<Material | undefined> {
  const inline = t[inlineKey];
  const file = t[fileKey];
  if (inline !== undefined && file) {
    throw new ConfigError([
      `tls_server_config.${inlineKey}: set beside ${fileKey}; give the ${inlineKey === "key" ? "key" : "certificate"} inline or as a file, not both`,
    ]);
  }
  if (inline !== undefined)
    return { pem: Buffer.from(inline), where: "the inline value", key: `tls_server_config.${inlineKey}` };
  if (!file) return undefined;
  const full = resolve(baseDir, file);
  try {
    return { pem: await readFile(full), where: full, key: `tls_server_config.${fileKey}` };
  } catch (err) {
    throw new ConfigError([`tls_server_config.${fileKey}: cannot read ${full} (${errnoCode(err)})`]);
  }
}

async function required(
  baseDir: string,
  t: TlsServerConfig,
  inlineKey: "cert" | "key",
  fileKey: "cert_file" | "key_file",
): Promise<Material> {
  const m = await material(baseDir, t, inlineKey, fileKey);
  if (!m) throw new ConfigError([`tls_server_config.${fileKey}: required (or ${inlineKey}, inline PEM)`]);
  return m;
}

/** The PEM certificates of `m`; a ConfigError naming its key when there are none or one is broken. */
function certificates(m: Material): X509Certificate[] {
  const blocks = m.pem.toString("latin1").match(PEM_CERT) ?? [];
  if (blocks.length === 0) throw new ConfigError([`${m.key}: ${m.where} holds no PEM certificate`]);
  return blocks.map((block) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw new ConfigError([`${m.key}: ${m.where} holds a PEM certificate that cannot be read`]);
    }
  });
}

function privateKey(m: Material): KeyObject {
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(m.pem.toString("latin1")))
    throw new ConfigError([`${m.key}: ${m.where} holds no PEM private key`]);
  try {
    return createPrivateKey(m.pem);
  } catch {
    throw new ConfigError([
      `${m.key}: ${m.where} holds a private key that cannot be read (an encrypted key needs its passphrase, which is not supported)`,
    ]);
  }
}

/** The client certificate policy's own rules, before anything is read. */
function policyProblems(t: TlsServerConfig): string[] {
  const auth = t.client_auth_type;
  const hasCa = Boolean(t.client_ca_file) || t.client_ca !== undefined;
  if ((auth === "VerifyClientCertIfGiven" || auth === "RequireAndVerifyClientCert") && !hasCa)
    return [
      `tls_server_config.client_ca_file: required for client_auth_type ${auth} (or client_ca, inline PEM)`,
    ];
  if (hasCa && auth === "NoClientCert")
    return [
      "tls_server_config.client_ca_file: set, but client_auth_type is NoClientCert; choose a client_auth_type that asks for certificates",
    ];
  if (
    t.client_allowed_sans?.length &&
    auth !== "RequireAnyClientCert" &&
    auth !== "RequireAndVerifyClientCert"
  )
    return [
      `tls_server_config.client_allowed_sans: needs client_auth_type RequireAndVerifyClientCert (or RequireAnyClientCert), not ${auth}: under it a client may connect without a certificate, leaving no name to check`,
    ];
  return [];
}

export async function loadTls(t: TlsServerConfig, baseDir: string): Promise<TlsSettings> {
  const problems = policyProblems(t);
  if (problems.length > 0) throw new ConfigError(problems);
  const certM = await required(baseDir, t, "cert", "cert_file");
  const keyM = await required(baseDir, t, "key", "key_file");
  const caM = await material(baseDir, t, "client_ca", "client_ca_file");
  const [leaf] = certificates(certM);
  if (!(leaf as X509Certificate).checkPrivateKey(privateKey(keyM))) {
    throw new ConfigError([
      `${keyM.key}: the key in ${keyM.where} does not belong to the certificate in ${certM.where}`,
    ]);
  }
  if (caM) certificates(caM);
  const auth = t.client_auth_type;
  const tls: TlsSettings = {
    cert: certM.pem,
    key: keyM.pem,
    ca: caM?.pem,
    requestCert: auth !== "NoClientCert",
    // Only RequireAndVerifyClientCert can be left to the TLS handshake; RequireAnyClientCert
    // (any certificate, unverified) and VerifyClientCertIfGiven (verified only when present)
    // are enforced by the server on each new connection (see clientCertProblem).
    rejectUnauthorized: auth === "RequireAndVerifyClientCert",
    clientAuth: auth,
    ...(t.client_allowed_sans?.length ? { allowedSans: t.client_allowed_sans } : {}),
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
      cert: tls.cert,
      key: tls.key,
      ca: tls.ca,
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

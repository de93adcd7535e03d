/**
 * Secrets that may come as a value or as a file holding it (the client secret, the webhook token):
 * which layer gives them, and reading the file. Their values never appear in a message.
 */
import { readFile } from "node:fs/promises";
import { ConfigError } from "./errors.js";

type Json = Record<string, unknown>;

export interface SecretSource {
  /** Config section and keys, e.g. `api`, `clientSecret`, `clientSecretFile`. */
  section: string;
  key: string;
  fileKey: string;
  /** The environment variables that set them. */
  envKey: string;
  envFileKey: string;
}

const nonEmpty = (value: string | undefined): boolean => value !== undefined && value !== "";

/**
 * The secret comes from exactly one place: the highest layer (environment over YAML) that sets either
 * the value or a file wins as a whole; both in one layer is ambiguous. Runs on the raw merged input,
 * after the environment was applied, and drops the key the winning layer overrides.
 */
export function pickSecretLayer(raw: Json, env: NodeJS.ProcessEnv, s: SecretSource): void {
  const fromEnv = nonEmpty(env[s.envKey]);
  const fileFromEnv = nonEmpty(env[s.envFileKey]);
  if (fromEnv && fileFromEnv) {
    throw new ConfigError([`${s.envKey} and ${s.envFileKey} are both set; set only one of them`]);
  }
  const section = raw[s.section];
  if (typeof section !== "object" || section === null || Array.isArray(section)) return;
  const values = section as Json;
  if (fromEnv) delete values[s.fileKey];
  else if (fileFromEnv) delete values[s.key];
  else if (values[s.key] !== undefined && values[s.fileKey] !== undefined) {
    throw new ConfigError([
      `${s.section}.${s.key} and ${s.section}.${s.fileKey} are both set; set only one of them`,
    ]);
  }
}

/** The secret in `file`; trailing newlines (from `echo` or an editor) are not part of it. */
export async function readSecretFile(file: string, s: SecretSource, env: NodeJS.ProcessEnv): Promise<string> {
  const key = nonEmpty(env[s.envFileKey])
    ? `${s.section}.${s.fileKey} (${s.envFileKey})`
    : `${s.section}.${s.fileKey}`;
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new ConfigError([
      `${key}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    ]);
  }
  const secret = text.replace(/(?:\r?\n)+$/, "");
  if (secret === "") throw new ConfigError([`${key}: ${file} is empty`]);
  return secret;
}

export const CLIENT_SECRET: SecretSource = {
  section: "api",
  key: "clientSecret",
  fileKey: "clientSecretFile",
  envKey: "SITEHOST_CLIENT_SECRET",
  envFileKey: "SITEHOST_CLIENT_SECRET_FILE",
};

export const WEBHOOK_TOKEN: SecretSource = {
  section: "webhooks",
  key: "token",
  fileKey: "tokenFile",
  envKey: "SITEHOST_WEBHOOK_TOKEN",
  envFileKey: "SITEHOST_WEBHOOK_TOKEN_FILE",
};

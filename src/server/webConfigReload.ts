/**
 * The web config file re-read while the server runs, as exporter-toolkit reads it for every request:
 * every few seconds the file and the files it names are loaded again, and a version that differs
 * from the one in use (a rotated certificate, a new client CA, changed users, headers or rate limit)
 * replaces it for new connections and requests. A version that does not load keeps the last good one,
 * with a warning naming the problem; what a running server cannot change (TLS on or off,
 * client_auth_type, HTTP/2) is warned about and waits for a restart.
 */
import { createHash } from "node:crypto";
import type { Logger } from "pino";
import { ConfigError } from "../config/errors.js";
import { loadWebConfig, type WebConfig } from "./webConfig.js";

export const WEB_CONFIG_RELOAD_MS = 5_000;

const digest = (b: Buffer | undefined) => (b ? createHash("sha256").update(b).digest("hex") : "");

/** Everything of a version that a reload applies, as one comparable text. */
function contentKey(web: WebConfig): string {
  const { tls } = web;
  return JSON.stringify([
    tls && [
      digest(tls.cert),
      digest(tls.key),
      digest(tls.ca),
      tls.allowedSans,
      tls.minVersion,
      tls.maxVersion,
    ],
    tls && [tls.ciphers, tls.ecdhCurve, tls.honorCipherOrder],
    [...(web.users ?? new Map<string, string>())],
    web.headers,
    web.rateLimit,
  ]);
}

/** What only a restart changes. */
function restartKey(web: WebConfig): string {
  return JSON.stringify([Boolean(web.tls), web.tls?.clientAuth, web.http2]);
}

export interface WebConfigWatch {
  stop(): void;
}

export function watchWebConfig(
  file: string,
  initial: WebConfig,
  apply: (next: WebConfig) => void,
  log: Pick<Logger, "info" | "warn">,
  intervalMs = WEB_CONFIG_RELOAD_MS,
): WebConfigWatch {
  let applied = contentKey(initial);
  const started = restartKey(initial);
  let lastProblem: string | undefined;
  let running = false;
  const check = async () => {
    if (running) return;
    running = true;
    try {
      const next = await loadWebConfig(file);
      lastProblem = undefined;
      const key = contentKey(next);
      if (key === applied) return;
      if (restartKey(next) !== started) {
        warnOnce(
          "TLS on or off, client_auth_type or http2 changed: restart the exporter to apply them; the rest of the file is applied",
        );
      }
      apply(next);
      applied = key;
      log.info({ file }, "web config file reloaded");
    } catch (err) {
      const problem = err instanceof ConfigError ? err.problems.join("; ") : (err as Error).message;
      warnOnce(`${problem}; the last good version stays in use`);
    } finally {
      running = false;
    }
  };
  const warnOnce = (problem: string) => {
    if (problem === lastProblem) return;
    lastProblem = problem;
    log.warn({ file, problem }, "web config file not (fully) reloaded");
  };
  const timer = setInterval(() => void check(), intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

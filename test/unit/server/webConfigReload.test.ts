/**
 * The web config file re-read under a running server, as exporter-toolkit does: a rotated
 * certificate is served to new connections, a changed user list applies to the next request, and a
 * version that does not load keeps the last good one, with a warning naming the problem.
 */
import { X509Certificate } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import bcrypt from "bcryptjs";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { selfSignedServerCert } from "../../helpers/tls.js";
import { waitFor } from "../../helpers/wait.js";
import { send, webConfigTestbed } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "sitehost-webcfg-reload-"));
const { webFile, start } = webConfigTestbed(dir);
const RELOAD_MS = 100;

/** A fresh self-signed certificate and key in `dir/<name>/`; its SHA-256 fingerprint. */
function newCert(name: string): { pem: string; key: string; fingerprint: string } {
  const at = join(dir, name);
  mkdirSync(at, { recursive: true });
  selfSignedServerCert(at, "IP:127.0.0.1");
  const pem = join(at, "server.pem");
  return {
    pem,
    key: join(at, "server.key"),
    fingerprint: new X509Certificate(readFileSync(pem)).fingerprint256,
  };
}

/** The fingerprint of the certificate a new TLS connection is served. */
function servedFingerprint(url: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port: Number(port), rejectUnauthorized: false }, () => {
      resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? "");
      socket.end();
    });
    socket.on("error", reject);
  });
}

/** A logger whose lines can be read back. */
function capturedLogger() {
  const lines: string[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(line) });
  return { logger, lines };
}

describe("a running server re-reads its web config", () => {
  it("serves a rotated certificate to new connections; a broken one keeps the last good, with a warning", async () => {
    const first = newCert("first");
    const live = join(dir, "live");
    mkdirSync(live);
    copyFileSync(first.pem, join(live, "server.pem"));
    copyFileSync(first.key, join(live, "server.key"));
    const { logger, lines } = capturedLogger();
    const url = await start(
      webFile("tls_server_config:\n  cert_file: live/server.pem\n  key_file: live/server.key\n"),
      {
        webConfigReloadMs: RELOAD_MS,
        logger,
      },
    );
    expect(await servedFingerprint(url)).toBe(first.fingerprint);

    // cert-manager style: the new pair written over the old one.
    const second = newCert("second");
    copyFileSync(second.key, join(live, "server.key"));
    copyFileSync(second.pem, join(live, "server.pem"));
    await waitFor(
      "the rotated certificate",
      async () => (await servedFingerprint(url)) === second.fingerprint,
      {
        timeoutMs: 10_000,
        intervalMs: 100,
      },
    );
    expect(lines.some((l) => l.includes('"web config file reloaded"'))).toBe(true);

    // A key that is no key: the second certificate stays in use, and the warning names the key.
    writeFileSync(join(live, "server.key"), "not a key\n");
    await waitFor(
      "the warning",
      () => lines.some((l) => l.includes("web config file not (fully) reloaded")),
      {
        timeoutMs: 10_000,
        intervalMs: 50,
      },
    );
    const warning = lines.find((l) => l.includes("web config file not (fully) reloaded")) ?? "";
    expect(warning).toContain("tls_server_config.key_file");
    expect(warning).toContain("the last good version stays in use");
    expect(await servedFingerprint(url)).toBe(second.fingerprint);
  });

  it("a changed user list applies to the next request", async () => {
    const users = (name: string, password: string) =>
      `basic_auth_users:\n  ${name}: ${bcrypt.hashSync(password, 4)}\n`;
    const file = webFile(users("prometheus", "first secret"));
    const url = await start(file, { webConfigReloadMs: RELOAD_MS });
    const as = (user: string, password: string) =>
      send(`${url}/-/healthy`, {
        headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` },
      }).then((r) => r.status);
    expect(await as("prometheus", "first secret")).toBe(200);
    writeFileSync(file, users("grafana", "second secret"));
    await waitFor("the new user", async () => (await as("grafana", "second secret")) === 200, {
      timeoutMs: 10_000,
      intervalMs: 100,
    });
    expect(await as("prometheus", "first secret")).toBe(401);
  });
});

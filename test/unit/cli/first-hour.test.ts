/**
 * The built CLI as a user first runs it: the token endpoint's host, the warning when it is set apart
 * from the API's, and a listen address in use named with the settings that choose another.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type AddressInfo, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";

const root = resolve(import.meta.dirname, "../../..");
const main = join(root, "dist/src/cli/main.js");
const dir = mkdtempSync(join(tmpdir(), "sitehost-first-hour-"));
const CREDENTIALS = { SITEHOST_CLIENT_ID: "id", SITEHOST_CLIENT_SECRET: "first-hour-secret-5521" };

beforeAll(() => {
  spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], {
    cwd: root,
    stdio: "ignore",
  });
  expect(existsSync(main)).toBe(true);
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, [main, ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", ...env },
    encoding: "utf8",
    timeout: 20_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("api.authUrl", () => {
  it("SITEHOST_API_URL alone: check-config shows the token endpoint on the API's host, no warning", () => {
    const r = cli(["check-config", "--config", join(root, "config/example.yaml")], {
      ...CREDENTIALS,
      SITEHOST_API_URL: "https://api.example.com:8443/v1",
    });
    expect(r.code).toBe(0);
    const printed = parse(r.stdout) as { api: { url: string; authUrl: string } };
    expect(printed.api).toMatchObject({
      url: "https://api.example.com:8443/v1",
      authUrl: "https://api.example.com:8443",
    });
    expect(r.stderr).not.toContain("warning");
  });

  it("a token endpoint on another host: check-config warns naming both hosts and both keys, exit 0", () => {
    const r = cli(["check-config"], {
      ...CREDENTIALS,
      SITEHOST_API_URL: "https://api.example.com/v1",
      SITEHOST_AUTH_URL: "https://api.sitehost.example",
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      "sitehost-exporter: warning: api.authUrl (SITEHOST_AUTH_URL) points at api.sitehost.example but api.url (SITEHOST_API_URL) at api.example.com: token requests go to api.sitehost.example; if the token endpoint is on the API's host, remove api.authUrl",
    );
    expect(r.stderr).toContain("configuration is valid");
  });
});

describe("run with a listen address in use", () => {
  let taken: Server;
  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
  });
  afterAll(() => new Promise<void>((r) => taken.close(() => r())));

  it("stops at start with one line naming the address and how to choose another, exit 1", () => {
    const address = `127.0.0.1:${(taken.address() as AddressInfo).port}`;
    const r = cli(["run", "--log.format", "json"], {
      ...CREDENTIALS,
      SITEHOST_API_URL: "http://127.0.0.1:9/v1",
      SITEHOST_LISTEN_ADDRESS: address,
      SITEHOST_CHECKPOINT_DIR: join(dir, "checkpoints"),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `sitehost-exporter: ${address} is already in use by another process: choose another with --web.listen-address (web.listenAddress, SITEHOST_LISTEN_ADDRESS)\n`,
    );
    expect(r.stderr + r.stdout).not.toContain("listen EADDRINUSE");
  });
});

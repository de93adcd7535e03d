/**
 * The built CLI as a user first runs it: the token endpoint's host, the warning when it is set apart
 * from the API's, and a listen address in use named with the settings that choose another.
 */
import { createServer, type AddressInfo, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { builtCli, root } from "../../helpers/builtCli.js";

const { dir, run: cli } = builtCli("first-hour");
const CREDENTIALS = { SITEHOST_CLIENT_ID: "id", SITEHOST_CLIENT_SECRET: "first-hour-secret-5521" };

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

/** api.authUrl: derived from api.url when not given; api.authUrl and SITEHOST_AUTH_URL override it. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { authHostWarning, hostRootOf } from "../../../src/config/authUrl.js";
import { loadConfig } from "../../../src/config/load.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { configProblems, yamlFiles } from "../../helpers/config.js";

const dir = mkdtempSync(join(tmpdir(), "sitehost-authurl-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const yamlFile = yamlFiles(dir);

describe("api.authUrl defaults to the host root of api.url", () => {
  it("drops the /v1 path", () => {
    expect(hostRootOf("https://api.example.com/v1")).toBe("https://api.example.com");
    expect(ConfigSchema.parse({ api: { url: "https://api.example.com/v1" } }).api.authUrl).toBe(
      "https://api.example.com",
    );
  });

  it("keeps the scheme and the port, drops a longer path, a query and the user info", () => {
    expect(hostRootOf("http://127.0.0.1:8080/platform/v1/?x=1")).toBe("http://127.0.0.1:8080");
    expect(hostRootOf("https://svc:pw@api.internal:8443/v1")).toBe("https://api.internal:8443");
    expect(hostRootOf("http://[::1]:9000/v1")).toBe("http://[::1]:9000");
  });

  it("with nothing set: the default API host's root", async () => {
    const c = await loadConfig({ env: {} });
    expect(c.api.url).toBe("https://api.sitehost.example/v1");
    expect(c.api.authUrl).toBe("https://api.sitehost.example");
  });

  it("SITEHOST_API_URL alone moves the token endpoint with it", async () => {
    const c = await loadConfig({ env: { SITEHOST_API_URL: "https://api.example.com:8443/v1" } });
    expect(c.api.authUrl).toBe("https://api.example.com:8443");
  });

  it("api.url in the file alone, under an environment URL: the environment's host", async () => {
    const file = yamlFile("api:\n  url: https://yaml.example/v1\n");
    const c = await loadConfig({ configFile: file, env: { SITEHOST_API_URL: "http://127.0.0.1:9/v1" } });
    expect(c.api.authUrl).toBe("http://127.0.0.1:9");
  });

  it("api.authUrl in the file overrides the derived value", async () => {
    const file = yamlFile("api:\n  url: https://api.example.com/v1\n  authUrl: https://auth.example.com\n");
    const c = await loadConfig({ configFile: file, env: {} });
    expect(c.api.authUrl).toBe("https://auth.example.com");
  });

  it("SITEHOST_AUTH_URL overrides the file and the derived value", async () => {
    const file = yamlFile("api:\n  authUrl: https://yaml-auth.example\n");
    const env = {
      SITEHOST_API_URL: "https://api.example.com/v1",
      SITEHOST_AUTH_URL: "https://env-auth.example",
    };
    expect((await loadConfig({ configFile: file, env })).api.authUrl).toBe("https://env-auth.example");
    const noFile = await loadConfig({ env });
    expect(noFile.api.authUrl).toBe("https://env-auth.example");
  });

  it("an api.url that is no URL is reported as such, not as a crash of the derivation", async () => {
    expect(await configProblems(loadConfig({ env: { SITEHOST_API_URL: "api.example.com/v1" } }))).toEqual([
      'api.url: "api.example.com/v1" is not an http(s) URL',
    ]);
  });
});

describe("a token endpoint on another host than the API", () => {
  it("is warned about at load time, naming both hosts and both keys", async () => {
    const warnings: string[] = [];
    await loadConfig({
      env: {
        SITEHOST_API_URL: "https://api.example.com/v1",
        SITEHOST_AUTH_URL: "https://api.sitehost.example",
      },
      warn: (w) => warnings.push(w),
    });
    expect(warnings).toEqual([
      "api.authUrl (SITEHOST_AUTH_URL) points at api.sitehost.example but api.url (SITEHOST_API_URL) at api.example.com: token requests go to api.sitehost.example; if the token endpoint is on the API's host, remove api.authUrl (it defaults to the scheme, host and port of api.url)",
    ]);
  });

  it("a port of its own is another host; the same host, or a derived value, is no warning", () => {
    expect(authHostWarning({ url: "http://127.0.0.1:8080/v1", authUrl: "http://127.0.0.1:9090" })).toContain(
      "points at 127.0.0.1:9090 but api.url (SITEHOST_API_URL) at 127.0.0.1:8080",
    );
    expect(authHostWarning({ url: "https://api.example.com/v1", authUrl: "https://api.example.com/" })).toBe(
      undefined,
    );
    expect(authHostWarning(ConfigSchema.parse({ api: { url: "http://127.0.0.1:8080/v1" } }).api)).toBe(
      undefined,
    );
  });
});

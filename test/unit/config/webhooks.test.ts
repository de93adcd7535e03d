import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig, redactConfig } from "../../../src/config/load.js";
import { redactQueryToken } from "../../../src/config/redact.js";
import { configProblems, yamlFiles } from "../../helpers/config.js";

const dir = mkdtempSync(join(tmpdir(), "sitehost-webhook-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const TOKEN = "<webhook-token>-5e0c2a7d91b4";

const yaml = yamlFiles(dir);

describe("webhooks configuration", () => {
  it("off by default, on /webhook", async () => {
    const c = await loadConfig({ env: {} });
    expect(c.webhooks).toEqual({ enabled: false, path: "/webhook" });
  });

  it("enabled without a token is one clear problem", async () => {
    const p = await configProblems(loadConfig({ configFile: yaml("webhooks:\n  enabled: true\n"), env: {} }));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^webhooks\.token: required when webhooks\.enabled is true/);
    expect(p[0]).toContain("SITEHOST_WEBHOOK_TOKEN");
  });

  it("takes the token from SITEHOST_WEBHOOK_TOKEN, or from a file (trailing newline trimmed)", async () => {
    const fromEnv = await loadConfig({
      configFile: yaml("webhooks:\n  enabled: true\n"),
      env: { SITEHOST_WEBHOOK_TOKEN: TOKEN },
    });
    expect(fromEnv.webhooks.token).toBe(TOKEN);
    const file = join(dir, "token");
    writeFileSync(file, `${TOKEN}\n`);
    const fromFile = await loadConfig({
      configFile: yaml(`webhooks:\n  enabled: true\n  token: from-yaml-but-overridden\n`),
      env: { SITEHOST_WEBHOOK_TOKEN_FILE: file },
    });
    expect(fromFile.webhooks.token).toBe(TOKEN);
  });

  it("the token and its file together are ambiguous; an empty or missing file names the key", async () => {
    const both = await configProblems(
      loadConfig({ env: { SITEHOST_WEBHOOK_TOKEN: TOKEN, SITEHOST_WEBHOOK_TOKEN_FILE: "/x" } }),
    );
    expect(both.join("\n")).toContain("both set");
    expect(both.join("\n")).not.toContain(TOKEN);
    const bothYaml = await configProblems(
      loadConfig({ configFile: yaml(`webhooks:\n  token: ${TOKEN}\n  tokenFile: /x\n`), env: {} }),
    );
    expect(bothYaml[0]).toContain("webhooks.token and webhooks.tokenFile are both set");
    const missing = await configProblems(
      loadConfig({ env: { SITEHOST_WEBHOOK_TOKEN_FILE: join(dir, "nope") } }),
    );
    expect(missing[0]).toMatch(
      /^webhooks\.tokenFile \(SITEHOST_WEBHOOK_TOKEN_FILE\): cannot read .* \(ENOENT\)$/,
    );
  });

  it("a short token is refused without being echoed; so is a path the exporter serves itself", async () => {
    const p = await configProblems(
      loadConfig({
        configFile: yaml("webhooks:\n  enabled: true\n  path: /metrics\n"),
        env: { SITEHOST_WEBHOOK_TOKEN: "short-secret" },
      }),
    );
    expect(p).toHaveLength(2);
    expect(p[0]).toMatch(/^webhooks\.token: must be at least 16 characters/);
    expect(p[1]).toMatch(/^webhooks\.path: "\/metrics" is served by the exporter already/);
    expect(p.join("\n")).not.toContain("short-secret");
  });

  it("the status endpoint is the exporter's own too", async () => {
    const p = await configProblems(
      loadConfig({
        configFile: yaml("webhooks:\n  enabled: true\n  path: /-/status\n"),
        env: { SITEHOST_WEBHOOK_TOKEN: "a-webhook-token-long-enough" },
      }),
    );
    expect(p).toEqual([`webhooks.path: "/-/status" is served by the exporter already; choose another path`]);
  });

  it("a token of the wrong type is not echoed in the error", async () => {
    const p = await configProblems(
      loadConfig({ configFile: yaml("webhooks:\n  token: 1234567890123456789\n"), env: {} }),
    );
    expect(p.join("\n")).toContain("webhooks.token");
    expect(p.join("\n")).not.toContain("1234567890123456789");
  });

  it("a path must start with / and carry no query", async () => {
    const p = await configProblems(
      loadConfig({ configFile: yaml("webhooks:\n  path: hooks?x=1\n"), env: {} }),
    );
    expect(p[0]).toMatch(/^webhooks\.path: must start with \//);
  });

  it("redactConfig hides the token", async () => {
    const c = await loadConfig({
      configFile: yaml("webhooks:\n  enabled: true\n"),
      env: { SITEHOST_WEBHOOK_TOKEN: TOKEN },
    });
    const shown = redactConfig(c);
    expect(shown.webhooks.token).toBe("<redacted>");
    expect(JSON.stringify(shown)).not.toContain(TOKEN);
    expect(c.webhooks.token).toBe(TOKEN);
  });

  it("redactQueryToken hides a token query parameter in a logged URL", () => {
    expect(redactQueryToken("/webhook?token=abc&x=1")).toBe("/webhook?token=<redacted>&x=1");
    expect(redactQueryToken("http://h/webhook?a=1&token=abc#f")).toBe(
      "http://h/webhook?a=1&token=<redacted>#f",
    );
    expect(redactQueryToken("/webhook?mytoken=keep")).toBe("/webhook?mytoken=keep");
  });
});

import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/config/errors.js";
import { loadConfig, redactConfig } from "../../../src/config/load.js";
import { configProblems, yamlFiles } from "../../helpers/config.js";

const dir = mkdtempSync(join(tmpdir(), "sitehost-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const yamlFile = yamlFiles(dir);

const SECRET = "S3cr3t-do-not-print-7f3a";

describe("precedence: YAML < environment < flags", () => {
  it("each layer overrides the one below it, key by key", async () => {
    const file = yamlFile(
      [
        "api:",
        "  url: https://yaml.example/v1",
        "  authUrl: https://yaml-auth.example",
        "  clientId: yaml-id",
        "web:",
        "  listenAddress: 127.0.0.1:1111",
        "  telemetryPath: /yaml-metrics",
        "logs:",
        "  checkpointDir: /yaml/checkpoints",
      ].join("\n"),
    );
    const c = await loadConfig({
      configFile: file,
      env: {
        SITEHOST_API_URL: "https://env.example/v1",
        SITEHOST_LISTEN_ADDRESS: "127.0.0.1:2222",
        SITEHOST_CHECKPOINT_DIR: "/env/checkpoints",
      },
      flags: { "web.listen-address": "127.0.0.1:3333" },
    });
    expect(c.api.url).toBe("https://env.example/v1"); // env over YAML
    expect(c.api.authUrl).toBe("https://yaml-auth.example"); // YAML only
    expect(c.api.clientId).toBe("yaml-id");
    expect(c.web.listenAddress).toBe("127.0.0.1:3333"); // flag over env over YAML
    expect(c.web.telemetryPath).toBe("/yaml-metrics");
    expect(c.logs.checkpointDir).toBe("/env/checkpoints");
  });

  it("without file, env or flags the documented defaults apply", async () => {
    const c = await loadConfig({ env: {} });
    expect(c.web.listenAddress).toBe(":10987");
    expect(c.web.telemetryPath).toBe("/metrics");
    expect(c.api.url).toBe("https://api.sitehost.example/v1");
    expect(c.logs.pollInterval).toBe("30s");
    expect(c.collectors.inventory).toEqual({ enabled: true, schedule: "*/5 * * * *" });
    expect(c.sites.shard).toEqual({ index: 0, count: 1 });
  });

  it("an empty environment variable does not override the file", async () => {
    const file = yamlFile("api:\n  clientId: yaml-id\n");
    const c = await loadConfig({ configFile: file, env: { SITEHOST_CLIENT_ID: "" } });
    expect(c.api.clientId).toBe("yaml-id");
  });
});

describe("client secret", () => {
  it("SITEHOST_CLIENT_SECRET_FILE is read, its trailing newline trimmed", async () => {
    const secretFile = join(dir, "secret-nl");
    writeFileSync(secretFile, `${SECRET}\n`);
    const c = await loadConfig({
      env: { SITEHOST_CLIENT_ID: "id", SITEHOST_CLIENT_SECRET_FILE: secretFile },
      requireCredentials: true,
    });
    expect(c.api.clientSecret).toBe(SECRET);
  });

  it("a secret file in the environment wins over a plain secret in the YAML (env > YAML)", async () => {
    const secretFile = join(dir, "secret-env");
    writeFileSync(secretFile, "from-file\r\n");
    const file = yamlFile("api:\n  clientId: id\n  clientSecret: from-yaml\n");
    const c = await loadConfig({ configFile: file, env: { SITEHOST_CLIENT_SECRET_FILE: secretFile } });
    expect(c.api.clientSecret).toBe("from-file");
  });

  it("an unreadable secret file is an error naming the key and the file", async () => {
    const missing = join(dir, "no-such-secret");
    const p = await configProblems(loadConfig({ env: { SITEHOST_CLIENT_SECRET_FILE: missing } }));
    expect(p).toHaveLength(1);
    expect(p[0]).toContain("SITEHOST_CLIENT_SECRET_FILE");
    expect(p[0]).toContain("api.clientSecretFile");
    expect(p[0]).toContain(missing);
    expect(p[0]).toContain("ENOENT");
  });

  it("an empty secret file is an error", async () => {
    const empty = join(dir, "empty-secret");
    writeFileSync(empty, "\n");
    const p = await configProblems(loadConfig({ env: { SITEHOST_CLIENT_SECRET_FILE: empty } }));
    expect(p[0]).toMatch(/api\.clientSecretFile.*is empty/);
  });

  it("SITEHOST_CLIENT_SECRET and SITEHOST_CLIENT_SECRET_FILE together are ambiguous", async () => {
    const p = await configProblems(
      loadConfig({ env: { SITEHOST_CLIENT_SECRET: SECRET, SITEHOST_CLIENT_SECRET_FILE: "/x" } }),
    );
    expect(p.join("\n")).toContain("both set");
    expect(p.join("\n")).not.toContain(SECRET);
  });

  it("missing credentials are reported when required, and only then", async () => {
    const p = await configProblems(loadConfig({ env: {}, requireCredentials: true }));
    expect(p.some((l) => l.startsWith("api.clientId: required"))).toBe(true);
    expect(p.some((l) => l.startsWith("api.clientSecret: required"))).toBe(true);
    await expect(loadConfig({ env: {} })).resolves.toBeDefined();
  });

  it("redactConfig hides the secret", async () => {
    const c = await loadConfig({ env: { SITEHOST_CLIENT_ID: "id", SITEHOST_CLIENT_SECRET: SECRET } });
    expect(c.api.clientSecret).toBe(SECRET);
    const r = redactConfig(c);
    expect(r.api.clientSecret).toBe("<redacted>");
    expect(JSON.stringify(r)).not.toContain(SECRET);
    expect(c.api.clientSecret).toBe(SECRET); // the original is untouched
  });
});

describe("validation messages name the key and what was expected", () => {
  it("unknown key with a suggestion", async () => {
    const file = yamlFile("collectors:\n  trafic:\n    enabled: false\n");
    expect(await configProblems(loadConfig({ configFile: file, env: {} }))).toEqual([
      "collectors.trafic: unknown key; did you mean traffic?",
    ]);
  });

  it("unknown key without a close match lists the allowed keys", async () => {
    const file = yamlFile("web:\n  zzzzzzzzzz: 1\n");
    expect(await configProblems(loadConfig({ configFile: file, env: {} }))).toEqual([
      "web.zzzzzzzzzz: unknown key; allowed keys here: listenAddress, telemetryPath, configFile, readyTimeout",
    ]);
  });

  it("bad duration", async () => {
    const file = yamlFile('logs:\n  pollInterval: "5 minutes"\n');
    expect(await configProblems(loadConfig({ configFile: file, env: {} }))).toEqual([
      'logs.pollInterval: "5 minutes" is not a duration such as 30s or 5m',
    ]);
  });

  it("cron: five fields and six fields (leading seconds) are accepted", async () => {
    const file = yamlFile(
      'collectors:\n  traffic:\n    schedule: "*/15 * * * * *"\n  usage:\n    schedule: "0 4 * * 1"\n',
    );
    const c = await loadConfig({ configFile: file, env: {} });
    expect(c.collectors.traffic.schedule).toBe("*/15 * * * * *");
    expect(c.collectors.usage.schedule).toBe("0 4 * * 1");
  });

  it.each(["every minute", "61 * * * *", "* * * *", "* * * * * * *"])("cron %j is rejected", async (expr) => {
    const file = yamlFile(`collectors:\n  backups:\n    schedule: ${JSON.stringify(expr)}\n`);
    const p = await configProblems(loadConfig({ configFile: file, env: {} }));
    expect(p).toHaveLength(1);
    // Either the field that is out of range, or (wrong shape) what a cron expression looks like.
    expect(p[0]).toMatch(
      /^collectors\.backups\.schedule: ".*"(: minute 61 is out of range 0-59| is not a cron expression)/,
    );
  });

  it("bad URL (from the environment too)", async () => {
    expect(await configProblems(loadConfig({ env: { SITEHOST_API_URL: "ftp://x.example" } }))).toEqual([
      'api.url: "ftp://x.example" is not an http(s) URL',
    ]);
    expect(await configProblems(loadConfig({ env: { SITEHOST_AUTH_URL: "not a url" } }))).toEqual([
      'api.authUrl: "not a url" is not an http(s) URL',
    ]);
  });

  it("wrong type", async () => {
    const file = yamlFile('api:\n  maxConcurrency: "eight"\nlogs:\n  enabled: 1\nmetrics:\n  exclude: foo\n');
    const p = await configProblems(loadConfig({ configFile: file, env: {} }));
    expect(p).toContain('api.maxConcurrency: expected a number, got "eight"');
    expect(p).toContain("logs.enabled: expected a boolean, got 1");
    expect(p).toContain('metrics.exclude: expected a list, got "foo"');
  });

  it("bad enum value and shard index out of range", async () => {
    const file = yamlFile("sites:\n  kinds: [live, prod]\n  shard: {index: 2, count: 2}\n");
    const p = await configProblems(loadConfig({ configFile: file, env: {} }));
    expect(p).toContain('sites.kinds.1: "prod" is not one of "live", "staging", "sandbox", "kit"');
    expect(p).toContain("sites.shard.index: index must be less than count");
  });

  it("bad listen address is caught at load time, from the flag too", async () => {
    const p = await configProblems(loadConfig({ env: {}, flags: { "web.listen-address": "localhost" } }));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^web\.listenAddress: "localhost" is not host:port/);
    const ok = await loadConfig({ env: { SITEHOST_LISTEN_ADDRESS: "[::1]:0" } });
    expect(ok.web.listenAddress).toBe("[::1]:0");
  });

  it("a secret of the wrong type is not echoed", async () => {
    const file = yamlFile("api:\n  clientSecret: 987654321987\n");
    const p = await configProblems(loadConfig({ configFile: file, env: {} }));
    expect(p).toEqual(["api.clientSecret: expected a string, got <redacted>"]);
  });

  it("a secret never appears in any error message", async () => {
    const file = yamlFile(`api:\n  clientSecret: ${SECRET}\n  timeout: soon\n  bogus: 1\n`);
    const err = await loadConfig({ configFile: file, env: {} }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain("api.timeout");
    expect((err as Error).message).toContain("api.bogus");
    expect((err as Error).message).not.toContain(SECRET);
  });

  it("YAML syntax error names file:line", async () => {
    // line 1 "api:", line 2 the good key, line 3 the broken flow sequence.
    const file = yamlFile("api:\n  clientId: x\n  timeout: [30s\nweb: {}\n");
    const p = await configProblems(loadConfig({ configFile: file, env: {} }));
    expect(p.length).toBeGreaterThan(0);
    expect(p[0]).toMatch(
      new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:\\d+:\\d+: YAML syntax error`),
    );
  });

  it("YAML syntax error: the reported line is where the error is", async () => {
    // A tab-indented key on line 3 is invalid YAML.
    const file = yamlFile("web:\n  telemetryPath: /m\n\tlistenAddress: :1\n");
    const p = await configProblems(loadConfig({ configFile: file, env: {} }));
    expect(p[0]?.startsWith(`${file}:3:`)).toBe(true);
  });

  it("a missing config file is an error naming the file", async () => {
    const missing = join(dir, "absent.yaml");
    expect(await configProblems(loadConfig({ configFile: missing, env: {} }))).toEqual([
      `${missing}: cannot read the config file (ENOENT)`,
    ]);
  });

  it("a top level that is not a mapping is an error", async () => {
    const file = yamlFile("- a\n- b\n");
    const p = await configProblems(loadConfig({ configFile: file, env: {} }));
    expect(p[0]).toContain("the top level must be a mapping");
  });
});

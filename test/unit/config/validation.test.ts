/** Values the schema used to accept although the daemon would misbehave on them. */
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig, redactConfig } from "../../../src/config/load.js";
import { configProblems, yamlFiles } from "../../helpers/config.js";

const dir = mkdtempSync(join(tmpdir(), "sitehost-validation-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const yamlFile = yamlFiles(dir);

const schedule = (expr: string) =>
  loadConfig({
    configFile: yamlFile(`collectors:\n  backups:\n    schedule: ${JSON.stringify(expr)}\n`),
    env: {},
  });

describe("cron field ranges", () => {
  it.each([
    ["*/61 * * * *", /minute step "61" is out of range 1-60/],
    ["*/0 * * * *", /minute/],
    ["*/61 * * * * *", /second step "61" is out of range 1-60/],
    ["0 */61 * * * *", /minute step "61" is out of range 1-60/],
    ["0 */25 * * *", /hour step "25" is out of range 1-24/],
    ["0 24 * * *", /hour/],
    ["0 0 0 * *", /day of month/],
    ["0 0 1/32 * *", /day of month step "32" is out of range 1-31/],
    ["0 0 * 13 *", /month/],
    ["0 0 * */13 *", /month step "13" is out of range 1-12/],
    ["0 0 * * 8", /week day|day of week/],
    ["0 0 * * */8", /day of week step "8" is out of range 1-8|day of week/],
    ["5-70 * * * *", /minute/],
  ])("%j is rejected, naming the field", async (expr, expected) => {
    const p = await configProblems(schedule(expr));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^collectors\.backups\.schedule: /);
    expect(p[0]).toMatch(expected);
  });

  it.each([
    "*/60 * * * *",
    "*/15 * * * * *",
    "0 */6 * * *",
    "10-50/10 * * * *",
    "0 0 1,15 jan-mar mon-fri",
    "0 0 * * 7",
    "0 9 * * MON",
    "@hourly",
    "17 */3 * * *",
  ])("%j is accepted", async (expr) => {
    expect((await schedule(expr)).collectors.backups.schedule).toBe(expr);
  });
});

describe("cron expressions that never run, and what is not one", () => {
  it.each([
    ["0 0 31 2 *", "day of month 31 does not occur in February"],
    ["0 0 30,31 2 *", "day of month 30,31 does not occur in February"],
    ["0 0 31 4,6,9,11 *", "day of month 31 does not occur in April, June, September, November"],
    ["0 0 0 31 feb ?", "day of month 31 does not occur in February"],
  ])("%j: says it never runs, and why", async (expr, why) => {
    expect(await configProblems(schedule(expr))).toEqual([
      `collectors.backups.schedule: ${JSON.stringify(expr)}: never runs: ${why}`,
    ]);
  });

  it.each(["0 0 29 2 *", "0 0 31 1-3 *", "0 0 L 2 *"])(
    "%j runs on some day, so it is accepted",
    async (expr) => {
      expect((await schedule(expr)).collectors.backups.schedule).toBe(expr);
    },
  );

  it("something that is no cron expression says so, with the forms that are", async () => {
    expect(await configProblems(schedule("every five minutes"))).toEqual([
      'collectors.backups.schedule: "every five minutes" is not a cron expression such as "*/5 * * * *" (five fields, an optional leading seconds field, or one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly)',
    ]);
  });

  it.each(["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"])(
    "the nickname %s is accepted (and planned)",
    async (expr) => {
      expect((await schedule(expr)).collectors.backups.schedule).toBe(expr);
    },
  );
});

describe("durations that must be positive", () => {
  it.each(["api.timeout", "logs.pollInterval", "logs.shutdownTimeout", "logs.maxExportBackoff"])(
    "%s: 0 is rejected",
    async (key) => {
      const [section, name] = key.split(".") as [string, string];
      const p = await configProblems(
        loadConfig({ configFile: yamlFile(`${section}:\n  ${name}: "0"\n`), env: {} }),
      );
      expect(p).toEqual([`${key}: "0" must be longer than zero, such as 30s or 5m`]);
      const zeroMs = await configProblems(
        loadConfig({ configFile: yamlFile(`${section}:\n  ${name}: 0ms\n`), env: {} }),
      );
      expect(zeroMs[0]).toMatch(new RegExp(`^${key.replace(".", "\\.")}: "0ms" must be longer than zero`));
    },
  );

  it.each(["api.tokenRefreshMargin", "logs.overlap"])("%s: 0 is allowed (an empty margin)", async (key) => {
    const [section, name] = key.split(".") as [string, string];
    const c = await loadConfig({ configFile: yamlFile(`${section}:\n  ${name}: "0"\n`), env: {} });
    expect((c as unknown as Record<string, Record<string, string>>)[section]?.[name]).toBe("0");
  });

  it("a duration longer than a timer can hold is rejected instead of firing at once", async () => {
    const p = await configProblems(
      loadConfig({ configFile: yamlFile("logs:\n  pollInterval: 30d\n"), env: {} }),
    );
    expect(p).toEqual(['logs.pollInterval: "30d" is longer than the maximum of 24d']);
  });
});

describe("passwords in URLs", () => {
  const PASSWORD = "pa55-w0rd-in-url-93c1";

  it("redactConfig hides the password of api.url and api.authUrl, keeping the rest", async () => {
    const c = await loadConfig({
      env: {
        SITEHOST_API_URL: `http://svc:${PASSWORD}@api.internal:8080/v1?x=1`,
        SITEHOST_AUTH_URL: `https://svc:${PASSWORD}@auth.internal`,
      },
    });
    expect(c.api.url).toContain(PASSWORD); // the client still needs it
    const shown = redactConfig(c);
    expect(JSON.stringify(shown)).not.toContain(PASSWORD);
    expect(shown.api.url).toBe("http://svc:<redacted>@api.internal:8080/v1?x=1");
    expect(shown.api.authUrl).toBe("https://svc:<redacted>@auth.internal/");
  });

  it("an invalid URL's error message does not repeat its password", async () => {
    const p = await configProblems(
      loadConfig({ env: { SITEHOST_API_URL: `ftp://svc:${PASSWORD}@files.example/v1` } }),
    );
    expect(p).toEqual(['api.url: "ftp://svc:<redacted>@files.example/v1" is not an http(s) URL']);
  });
});

describe("OTLP exporter variables (checked when logs are shipped)", () => {
  const load = (env: Record<string, string>, yaml = "") =>
    loadConfig({
      configFile: yamlFile(yaml || "{}\n"),
      env: { SITEHOST_CHECKPOINT_DIR: dir, ...env },
      checkRuntime: "probe",
    });

  it("an unknown protocol is named with the accepted ones", async () => {
    expect(await configProblems(load({ OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "http/proto" }))).toEqual([
      'OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "http/proto" is not one of http/protobuf, http/json, grpc',
    ]);
    expect(await configProblems(load({ OTEL_EXPORTER_OTLP_PROTOCOL: "grcp" }))).toEqual([
      'OTEL_EXPORTER_OTLP_PROTOCOL: "grcp" is not one of http/protobuf, http/json, grpc',
    ]);
  });

  it("the logs-specific protocol wins; an empty one counts as unset", async () => {
    await expect(
      load({ OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "grpc", OTEL_EXPORTER_OTLP_PROTOCOL: "zipkin" }),
    ).resolves.toBeDefined();
    expect(
      (
        await configProblems(
          load({ OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "", OTEL_EXPORTER_OTLP_PROTOCOL: "zipkin" }),
        )
      )[0],
    ).toMatch(/^OTEL_EXPORTER_OTLP_PROTOCOL: "zipkin"/);
  });

  it.each([
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"],
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "http//collector:4318"],
    ["OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "not a url"],
    ["OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "ftp://collector/v1/logs"],
  ])("%s=%j is rejected instead of falling back to localhost", async (name, value) => {
    const p = await configProblems(load({ [name]: value }));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(new RegExp(`^${name}: .* is not an absolute http\\(s\\) URL`));
  });

  it("the endpoint's password is not repeated", async () => {
    const p = await configProblems(load({ OTEL_EXPORTER_OTLP_ENDPOINT: "mailto://u:s3cr3t-otlp@x" }));
    expect(p.join("\n")).not.toContain("s3cr3t-otlp");
  });

  it("gRPC takes host:port and unix: sockets as its exporter does", async () => {
    for (const endpoint of ["collector:4317", "http://collector:4317", "unix:///run/otel.sock"])
      await expect(
        load({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }),
      ).resolves.toBeDefined();
  });

  it("are not checked when logs are not shipped, nor by `once`", async () => {
    const env = { OTEL_EXPORTER_OTLP_PROTOCOL: "zipkin", OTEL_EXPORTER_OTLP_ENDPOINT: "::" };
    await expect(load(env, "logs:\n  ship: false\n")).resolves.toBeDefined();
    await expect(load(env, "logs:\n  enabled: false\n")).resolves.toBeDefined();
    await expect(loadConfig({ env })).resolves.toBeDefined();
  });
});

describe("logs.checkpointDir is usable", () => {
  const check = (checkpointDir: string, mode: "create" | "probe") =>
    loadConfig({ env: { SITEHOST_CHECKPOINT_DIR: checkpointDir }, checkRuntime: mode });

  it.each(["create", "probe"] as const)(
    "%s: a directory under /proc is refused at once, naming the key",
    async (mode) => {
      const p = await configProblems(check("/proc/sitehost-checkpoints/a", mode));
      expect(p).toHaveLength(1);
      expect(p[0]).toMatch(
        /^logs\.checkpointDir \(SITEHOST_CHECKPOINT_DIR\): cannot create \/proc\/sitehost-checkpoints\/a \(/,
      );
    },
  );

  it("a file where the directory should be is refused", async () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    expect((await configProblems(check(join(file, "sub"), "probe")))[0]).toMatch(/a-file is not a directory/);
  });

  it("check-config (probe) leaves a missing directory uncreated; run (create) creates it with its parents", async () => {
    const target = join(dir, "new", "checkpoints");
    await check(target, "probe");
    expect(existsSync(join(dir, "new"))).toBe(false);
    await check(target, "create");
    expect(statSync(target).isDirectory()).toBe(true);
  });

  it("is not checked when logs are disabled", async () => {
    await expect(
      loadConfig({
        configFile: yamlFile("logs:\n  enabled: false\n  checkpointDir: /proc/x\n"),
        env: {},
        checkRuntime: "create",
      }),
    ).resolves.toBeDefined();
  });
});

describe("logs.startFrom", () => {
  const startFrom = (value: string) =>
    loadConfig({ configFile: yamlFile(`logs:\n  startFrom: ${JSON.stringify(value)}\n`), env: {} });

  it("a timestamp in the future is refused, naming the key", async () => {
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const p = await configProblems(startFrom(future));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(new RegExp(`^logs\\.startFrom: "${future.replace(/\./g, "\\.")}" is in the future`));
  });

  it.each(["now", "-15m", "2024-01-31T00:00:00Z"])("%j is accepted", async (value) => {
    expect((await startFrom(value)).logs.startFrom).toBe(value);
  });
});

describe("what the performance and statistics collectors publish", () => {
  const load = (yaml: string) => loadConfig({ configFile: yamlFile(`collectors:\n${yaml}`), env: {} });

  it("defaults to mobile audits and yesterday, the current and the last month", async () => {
    const c = await load("  usage: {enabled: true}\n");
    expect(c.collectors.performance.strategies).toEqual(["mobile"]);
    expect(c.collectors.statistics.periods).toEqual(["yesterday", "current_month", "last_month"]);
  });

  it("takes the old output back: both strategies, every period", async () => {
    const c = await load(
      "  performance: {strategies: [mobile, desktop]}\n  statistics: {periods: [today, yesterday, current_month, last_month, two_months_ago, last_one_year, last_two_years]}\n",
    );
    expect(c.collectors.performance.strategies).toEqual(["mobile", "desktop"]);
    expect(c.collectors.statistics.periods).toHaveLength(7);
  });

  it.each([
    [
      "  performance: {strategies: [tablet]}\n",
      /^collectors\.performance\.strategies\.0: .*"mobile".*"desktop"/,
    ],
    ["  performance: {strategies: []}\n", /^collectors\.performance\.strategies: /],
    [
      "  statistics: {periods: [yesterday, yesterday]}\n",
      /^collectors\.statistics\.periods: lists a value twice/,
    ],
    ["  statistics: {periods: [lastMonth]}\n", /^collectors\.statistics\.periods\.0: .*"last_month"/],
  ])("%j is refused, naming the key", async (yaml, expected) => {
    const p = await configProblems(load(yaml));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(expected);
  });
});

describe("sites.shard from the environment and the command line", () => {
  const shard = async (env: Record<string, string>, flag?: string, yaml = "") =>
    (
      await loadConfig({
        configFile: yamlFile(yaml || "{}\n"),
        env,
        flags: flag ? { "sites.shard": flag } : {},
      })
    ).sites.shard;

  it("SITEHOST_SHARD=i/n, or the index with SITEHOST_SHARD_COUNT; flag > environment > YAML", async () => {
    const yaml = "sites:\n  shard: {index: 0, count: 2}\n";
    expect(await shard({}, undefined, yaml)).toEqual({ index: 0, count: 2 });
    expect(await shard({ SITEHOST_SHARD: "2/5" }, undefined, yaml)).toEqual({ index: 2, count: 5 });
    expect(await shard({ SITEHOST_SHARD: "3", SITEHOST_SHARD_COUNT: "4" }, undefined, yaml)).toEqual({
      index: 3,
      count: 4,
    });
    expect(await shard({ SITEHOST_SHARD: "2/5" }, "1/3", yaml)).toEqual({ index: 1, count: 3 });
  });

  it.each([
    [{ SITEHOST_SHARD: "3/3" }, undefined, /^SITEHOST_SHARD: index 3 is not below the count 3/],
    [
      { SITEHOST_SHARD: "4", SITEHOST_SHARD_COUNT: "4" },
      undefined,
      /^SITEHOST_SHARD: index 4 is not below the count 4/,
    ],
    [
      { SITEHOST_SHARD: "1" },
      undefined,
      /^SITEHOST_SHARD: "1" is an index alone; give i\/n or set SITEHOST_SHARD_COUNT/,
    ],
    [{ SITEHOST_SHARD_COUNT: "3" }, undefined, /^SITEHOST_SHARD_COUNT: set SITEHOST_SHARD/],
    [{ SITEHOST_SHARD: "a/b" }, undefined, /^SITEHOST_SHARD: "a\/b" is not a shard/],
    [{ SITEHOST_SHARD: "1.5/3" }, undefined, /^SITEHOST_SHARD: "1.5\/3" is not a shard/],
    [
      { SITEHOST_SHARD: "1/3", SITEHOST_SHARD_COUNT: "4" },
      undefined,
      /^SITEHOST_SHARD: "1\/3" says 3 shards but SITEHOST_SHARD_COUNT says "4"/,
    ],
    [{ SITEHOST_SHARD: "0", SITEHOST_SHARD_COUNT: "0" }, undefined, /at least 1/],
    [{}, "2/2", /^--sites\.shard: index 2 is not below the count 2/],
    [{}, "-1/2", /^--sites\.shard: "-1\/2" is not a shard/],
  ])("%j %s is refused with one line", async (env, flag, expected) => {
    const p = await configProblems(shard(env, flag));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(expected);
  });
});

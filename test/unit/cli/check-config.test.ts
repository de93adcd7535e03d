/**
 * The built CLI (`dist/src/cli/main.js`) run as a child process, as a user runs it.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { builtCli } from "../../helpers/builtCli.js";

const { dir, run: cli, file } = builtCli("cli");
const SECRET = "Zq9-very-distinctive-secret-4411";

describe("check-config", () => {
  it("valid config: prints the effective YAML with the secret redacted, exit 0", () => {
    const cfg = file("ok.yaml", "api:\n  clientId: my-id\ncollectors:\n  backups:\n    enabled: false\n");
    const r = cli(["check-config", "--config", cfg], { SITEHOST_CLIENT_SECRET: SECRET });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(SECRET);
    expect(r.stderr).not.toContain(SECRET);
    const printed = parse(r.stdout) as {
      api: { clientId: string; clientSecret: string };
      collectors: { backups: { enabled: boolean; schedule: string } };
      web: { listenAddress: string };
    };
    expect(printed.api.clientSecret).toBe("<redacted>");
    expect(printed.api.clientId).toBe("my-id");
    expect(printed.collectors.backups).toEqual({ enabled: false, schedule: "7 * * * *", maxInterval: "4h" });
    expect(printed.web.listenAddress).toBe(":10987");
    expect(r.stderr).toContain("configuration is valid");
  });

  it("a secret read from SITEHOST_CLIENT_SECRET_FILE is redacted as well", () => {
    const secretFile = file("secret", `${SECRET}\n`);
    const r = cli(["check-config"], { SITEHOST_CLIENT_ID: "id", SITEHOST_CLIENT_SECRET_FILE: secretFile });
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(r.stdout).toContain("clientSecret: <redacted>");
    expect(r.stdout).toContain(`clientSecretFile: ${secretFile}`);
  });

  it("flags override the file in the printed config", () => {
    const cfg = file("flags.yaml", "web:\n  listenAddress: 127.0.0.1:1111\n");
    const r = cli(
      [
        "check-config",
        "--config",
        cfg,
        "--web.listen-address",
        "127.0.0.1:2222",
        "--web.telemetry-path",
        "/m",
      ],
      {
        SITEHOST_CLIENT_ID: "id",
        SITEHOST_CLIENT_SECRET: SECRET,
      },
    );
    expect(r.code).toBe(0);
    const printed = parse(r.stdout) as { web: { listenAddress: string; telemetryPath: string } };
    expect(printed.web).toEqual({
      listenAddress: "127.0.0.1:2222",
      telemetryPath: "/m",
      readyTimeout: "90s",
    });
  });

  it("invalid config: one line per problem on stderr, exit 2, secret not shown", () => {
    const cfg = file(
      "bad.yaml",
      `api:\n  clientSecret: ${SECRET}\ncollectors:\n  trafic: {}\nlogs:\n  pollInterval: 5 minutes\n`,
    );
    const r = cli(["check-config", "--config", cfg]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("collectors.trafic: unknown key; did you mean traffic?");
    expect(r.stderr).toContain('logs.pollInterval: "5 minutes" is not a duration such as 30s or 5m');
    expect(r.stdout).toBe("");
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  it("the webhook token (from the environment or a file) is printed as <redacted>, never as itself", () => {
    const token = "Wk7-another-distinctive-webhook-token-903";
    const cfg = file("webhooks.yaml", "webhooks:\n  enabled: true\n  path: /hooks/platform\n");
    const env = { SITEHOST_CLIENT_ID: "id", SITEHOST_CLIENT_SECRET: SECRET };
    const r = cli(["check-config", "--config", cfg], { ...env, SITEHOST_WEBHOOK_TOKEN: token });
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(token);
    const printed = parse(r.stdout) as { webhooks: Record<string, unknown> };
    expect(printed.webhooks).toEqual({ enabled: true, path: "/hooks/platform", token: "<redacted>" });
    const tokenFile = file("webhook-token", `${token}\n`);
    const f = cli(["check-config", "--config", cfg], { ...env, SITEHOST_WEBHOOK_TOKEN_FILE: tokenFile });
    expect(f.code).toBe(0);
    expect(f.stdout + f.stderr).not.toContain(token);
    expect(f.stdout).toContain("token: <redacted>");
  });

  it("webhooks enabled without a token: exit 2 with one line naming the key", () => {
    const cfg = file("webhooks-no-token.yaml", "webhooks:\n  enabled: true\n");
    const r = cli(["check-config", "--config", cfg], {
      SITEHOST_CLIENT_ID: "id",
      SITEHOST_CLIENT_SECRET: SECRET,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("webhooks.token: required when webhooks.enabled is true");
    expect(r.stdout).toBe("");
  });

  it("missing credentials: the config is printed, the problem named, exit 2", () => {
    const r = cli(["check-config"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("api.clientId: required");
    expect(r.stderr).toContain("api.clientSecret: required");
  });

  it("a broken web config file is caught by check-config", () => {
    const web = file("web-bad.yml", "basic_auth_user:\n  alice: x\n");
    const r = cli(["check-config", "--web.config.file", web], {
      SITEHOST_CLIENT_ID: "id",
      SITEHOST_CLIENT_SECRET: SECRET,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("basic_auth_user: unknown key; did you mean basic_auth_users?");
  });
});

describe("run", () => {
  it("an invalid web config file stops the daemon at start with exit 2, naming the key", () => {
    const web = file(
      "web-run-bad.yml",
      "tls_server_config:\n  cert_file: a.pem\n  key_file: a.key\n  client_auth_type: RequireAndVerifyClientCert\n",
    );
    const r = cli(["run", "--web.listen-address", "127.0.0.1:0", "--web.config.file", web], {
      SITEHOST_CLIENT_ID: "id",
      SITEHOST_CLIENT_SECRET: SECRET,
      SITEHOST_API_URL: "http://127.0.0.1:9/v1",
      SITEHOST_AUTH_URL: "http://127.0.0.1:9",
      SITEHOST_CHECKPOINT_DIR: join(dir, "checkpoints"),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "tls_server_config.client_ca_file: required for client_auth_type RequireAndVerifyClientCert",
    );
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  it("missing credentials: exit 2 before anything starts", () => {
    const r = cli(["run", "--web.listen-address", "127.0.0.1:0"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("api.clientId: required");
  });
});

describe("usage", () => {
  it("--version prints the package version, exit 0", () => {
    const r = cli(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("0.1.0"); // package.json "version"
  });

  it("an unknown command is named, with a suggestion, exit 2", () => {
    const r = cli(["chek-config"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown command "chek-config"; did you mean check-config?');
  });

  it("an unknown flag is an error, exit 2", () => {
    const r = cli(["check-config", "--web.listen-adress", ":1"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option '--web.listen-adress'");
  });

  it("a bad --log.format choice is an error, exit 2", () => {
    const r = cli(["check-config", "--log.format", "xml"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("xml");
  });

  it("run with a secret but an unreachable API: exit 1 and the secret is not in the output", () => {
    // Port 9 on 127.0.0.1 (discard) is closed on a test machine: the token request fails fast.
    const r = cli(["once", "--log.format", "logfmt", "--log.level", "debug"], {
      SITEHOST_CLIENT_ID: "id",
      SITEHOST_CLIENT_SECRET: SECRET,
      SITEHOST_API_URL: "http://127.0.0.1:9/v1",
      SITEHOST_AUTH_URL: "http://127.0.0.1:9",
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the platform API is unreachable");
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });
});

/** check-config and run, with credentials and a closed API port. */
const BASE_ENV = {
  SITEHOST_CLIENT_ID: "id",
  SITEHOST_CLIENT_SECRET: SECRET,
  SITEHOST_API_URL: "http://127.0.0.1:9/v1",
  SITEHOST_AUTH_URL: "http://127.0.0.1:9",
};

describe("what run would fail on, check-config catches (exit 2, one line naming the key)", () => {
  const checkpoints = () => ({ SITEHOST_CHECKPOINT_DIR: join(dir, "checkpoints") });

  it.each([
    [
      "an out-of-range cron step",
      'collectors:\n  traffic:\n    schedule: "*/61 * * * *"\n',
      /collectors\.traffic\.schedule: "\*\/61 \* \* \* \*": minute step "61" is out of range 1-60/,
    ],
    [
      "a zero poll interval",
      'logs:\n  pollInterval: "0"\n',
      /logs\.pollInterval: "0" must be longer than zero/,
    ],
    ["a zero API timeout", 'api:\n  timeout: "0"\n', /api\.timeout: "0" must be longer than zero/],
  ])("%s", (_what, yaml, expected) => {
    const cfg = file(`bad-${yaml.length}.yaml`, yaml);
    for (const command of ["check-config", "run"]) {
      const r = cli([command, "--config", cfg, "--web.listen-address", "127.0.0.1:0"], {
        ...BASE_ENV,
        ...checkpoints(),
      });
      expect(r.code, command).toBe(2);
      expect(r.stderr).toMatch(expected);
      expect(r.stderr).not.toContain("listening");
    }
  });

  it.each([
    [
      "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
      "grpcs",
      /OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "grpcs" is not one of http\/protobuf, http\/json, grpc/,
    ],
    [
      "OTEL_EXPORTER_OTLP_ENDPOINT",
      "otel collector:4318",
      /OTEL_EXPORTER_OTLP_ENDPOINT: "otel collector:4318" is not an absolute http\(s\) URL/,
    ],
  ])("%s=%j: both commands refuse it before anything listens", (name, value, expected) => {
    for (const command of ["check-config", "run"]) {
      const r = cli([command, "--web.listen-address", "127.0.0.1:0"], {
        ...BASE_ENV,
        ...checkpoints(),
        [name]: value,
      });
      expect(r.code, command).toBe(2);
      expect(r.stderr).toMatch(expected);
      expect(r.stderr).not.toContain("listening");
    }
  });

  it("a checkpoint directory under /proc: refused at once instead of a daemon that hangs", () => {
    for (const command of ["check-config", "run"]) {
      const r = cli([command, "--web.listen-address", "127.0.0.1:0"], {
        ...BASE_ENV,
        SITEHOST_CHECKPOINT_DIR: "/proc/sitehost-checkpoints",
      });
      expect(r.code, command).toBe(2);
      expect(r.stderr).toMatch(
        /logs\.checkpointDir \(SITEHOST_CHECKPOINT_DIR\): cannot create \/proc\/sitehost-checkpoints/,
      );
    }
  });

  it("check-config checks the checkpoint directory without creating it", () => {
    const target = join(dir, "fresh", "checkpoints");
    expect(cli(["check-config"], { ...BASE_ENV, SITEHOST_CHECKPOINT_DIR: target }).code).toBe(0);
    expect(existsSync(join(dir, "fresh"))).toBe(false);
  });

  it("a web config whose certificate is not PEM", () => {
    const cert = file("not-a-cert.pem", "hello\n");
    const web = file("web-notpem.yml", `tls_server_config:\n  cert_file: ${cert}\n  key_file: ${cert}\n`);
    for (const command of ["check-config", "run"]) {
      const r = cli([command, "--web.config.file", web, "--web.listen-address", "127.0.0.1:0"], {
        ...BASE_ENV,
        ...checkpoints(),
      });
      expect(r.code, command).toBe(2);
      expect(r.stderr).toContain(`${web}: tls_server_config.cert_file: ${cert} holds no PEM certificate`);
    }
  });

  it("a web config header with a line break in its value", () => {
    const web = file(
      "web-crlf.yml",
      'http_server_config:\n  headers:\n    X-Frame-Options: "deny\\r\\nX-Evil: 1"\n',
    );
    const r = cli(["check-config", "--web.config.file", web], BASE_ENV);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("http_server_config.headers.X-Frame-Options: the value contains a line break");
  });

  it("a missing web config file: one clear line, exit 2", () => {
    const missing = join(dir, "no-such-web.yml");
    for (const command of ["check-config", "run"]) {
      const r = cli([command, "--web.config.file", missing, "--web.listen-address", "127.0.0.1:0"], {
        ...BASE_ENV,
        ...checkpoints(),
      });
      expect(r.code, command).toBe(2);
      expect(r.stderr.trim().split("\n")).toEqual([
        "sitehost-exporter: invalid web config file",
        `  ${missing}: cannot read the web config file (ENOENT)`,
      ]);
    }
  });
});

describe("check-config and OTLP", () => {
  it("prints the effective OTLP settings (no header values, no password) and warns of a doubled /v1/logs", () => {
    const r = cli(["check-config"], {
      ...BASE_ENV,
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel:pw-1234@collector.example:4318/v1/logs",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20tok-5678",
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      "# OTLP log export (from the OTEL_EXPORTER_OTLP_* environment, not config keys):\n#   shipping: yes\n#   protocol: http/protobuf\n#   endpoint: http://collector.example:4318/v1/logs/v1/logs (from OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/logs))\n#   headers: authorization (values not shown)\n",
    );
    expect(r.stderr).toContain(
      "sitehost-exporter: warning: OTLP endpoint http://collector.example:4318/v1/logs/v1/logs: the path repeats /v1/logs",
    );
    expect(r.stdout + r.stderr).not.toContain("pw-1234");
    expect(r.stdout + r.stderr).not.toContain("tok-5678");
  });

  it("without OTEL variables: the default endpoint, said to be the default", () => {
    const r = cli(["check-config"], BASE_ENV);
    expect(r.stdout).toContain(
      "#   endpoint: http://localhost:4318/v1/logs (the default: no OTEL_EXPORTER_OTLP_ENDPOINT set)",
    );
  });
});

describe("once", () => {
  it("an unreachable API: one line on stderr naming the URL and what happened, exit 1", () => {
    const r = cli(["once"], BASE_ENV);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toEqual([
      "sitehost-exporter: the platform API is unreachable: POST http://127.0.0.1:9/auth/token: connection refused: nothing listens at 127.0.0.1:9 (ECONNREFUSED); check the host and port in api.url (SITEHOST_API_URL; the token endpoint is on its host), and that the server there is up (details: --log.level debug)",
    ]);
  });

  it("details (the log lines) at --log.level debug", () => {
    const r = cli(["once", "--log.level", "debug"], BASE_ENV);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.filter((l) => l.startsWith("{") && l.includes("ECONNREFUSED")).length).toBeGreaterThan(0);
  });
});

describe("once --collectors", () => {
  it("a misspelt collector is a usage error (exit 2) with a suggestion, before any API call", () => {
    const r = cli(["once", "--collectors", "inventory,trafic"], BASE_ENV);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      'sitehost-exporter: --collectors: unknown collector "trafic"; did you mean traffic?',
    );
  });
});

describe("passwords in URLs", () => {
  it("check-config prints SITEHOST_API_URL and SITEHOST_AUTH_URL without their passwords", () => {
    const password = "url-pa55word-77ab";
    const r = cli(["check-config"], {
      ...BASE_ENV,
      SITEHOST_API_URL: `https://svc:${password}@api.internal/v1`,
      SITEHOST_AUTH_URL: `https://svc:${password}@api.internal`,
    });
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(password);
    const printed = parse(r.stdout) as { api: { url: string; authUrl: string } };
    expect(printed.api.url).toBe("https://svc:<redacted>@api.internal/v1");
  });
});

describe("sharding from the environment and the command line", () => {
  const shardOf = (stdout: string) => (parse(stdout) as { sites: { shard: unknown } }).sites.shard;

  it("SITEHOST_SHARD (i/n, or the index with SITEHOST_SHARD_COUNT) and --sites.shard show in check-config", () => {
    expect(shardOf(cli(["check-config"], { ...BASE_ENV, SITEHOST_SHARD: "1/3" }).stdout)).toEqual({
      index: 1,
      count: 3,
    });
    expect(
      shardOf(cli(["check-config"], { ...BASE_ENV, SITEHOST_SHARD: "2", SITEHOST_SHARD_COUNT: "4" }).stdout),
    ).toEqual({ index: 2, count: 4 });
    expect(
      shardOf(cli(["check-config", "--sites.shard", "0/2"], { ...BASE_ENV, SITEHOST_SHARD: "1/3" }).stdout),
    ).toEqual({ index: 0, count: 2 });
  });

  it("an index out of range is exit 2 with one line", () => {
    for (const [args, env] of [
      [["check-config"], { SITEHOST_SHARD: "3", SITEHOST_SHARD_COUNT: "3" }],
      [["run", "--sites.shard", "5/5"], {}],
    ] as const) {
      const r = cli([...args], { ...BASE_ENV, ...env });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/(SITEHOST_SHARD|--sites\.shard): index \d is not below the count \d/);
    }
  });
});

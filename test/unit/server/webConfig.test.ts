import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/config/errors.js";
import { startHttpServer, type RunningHttpServer } from "../../../src/server/http.js";
import { loadWebConfig, WebConfigSchema } from "../../../src/server/webConfig.js";
import { parse } from "yaml";
import { makeExposition, send, silentLogger } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "sitehost-webcfg-"));
const p = (name: string) => join(dir, name);
const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

beforeAll(() => {
  // Server certificate, self-signed, valid for 127.0.0.1 and localhost.
  openssl(
    "req",
    "-x509",
    ...EC,
    "-keyout",
    "server.key",
    "-out",
    "server.pem",
    "-days",
    "2",
    "-subj",
    "/CN=localhost",
    "-addext",
    "subjectAltName=IP:127.0.0.1,DNS:localhost",
  );
  // A client CA and a client certificate it signed.
  openssl(
    "req",
    "-x509",
    ...EC,
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=test client CA",
  );
  openssl("req", ...EC, "-keyout", "client.key", "-out", "client.csr", "-subj", "/CN=scraper");
  openssl(
    "x509",
    "-req",
    "-in",
    "client.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "client.pem",
    "-days",
    "2",
  );
  // A client certificate nobody trusts (self-signed).
  openssl(
    "req",
    "-x509",
    ...EC,
    "-keyout",
    "rogue.key",
    "-out",
    "rogue.pem",
    "-days",
    "2",
    "-subj",
    "/CN=rogue",
  );
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let server: RunningHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

let n = 0;
function webFile(text: string): string {
  const file = p(`web-${n++}.yml`);
  writeFileSync(file, text);
  return file;
}

async function start(webConfigFile: string): Promise<string> {
  const { exposition } = makeExposition();
  server = await startHttpServer({
    listenAddress: "127.0.0.1:0",
    telemetryPath: "/metrics",
    webConfigFile,
    exposition,
    readiness: () => ({ ready: true }),
    landing: () => ({ version: "1", sitesDiscovered: 0, telemetryPath: "/metrics", collectors: [] }),
    logger: silentLogger,
  });
  return server.url;
}

async function problems(promise: Promise<unknown>): Promise<string[]> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  return (err as ConfigError).problems;
}

const basic = (user: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`,
});

describe("TLS", () => {
  const tlsConfig = () =>
    `tls_server_config:\n  cert_file: ${p("server.pem")}\n  key_file: ${p("server.key")}\n`;

  it("serves https; the certificate verifies against itself as CA; plain http fails", async () => {
    const url = await start(webFile(tlsConfig()));
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const trusted = await send(`${url}/metrics`, { tls: { ca: readFileSync(p("server.pem")) } });
    expect(trusted.status).toBe(200);
    expect(trusted.body.toString()).toContain('sitehost_test_sites{kind="live"} 7');
    const unverified = await send(`${url}/-/healthy`, { tls: { rejectUnauthorized: false } });
    expect(unverified.status).toBe(200);
    // Without the CA the default trust store rejects the self-signed certificate.
    await expect(send(`${url}/-/healthy`)).rejects.toThrow();
    // Plain HTTP to the TLS port gets no HTTP 200.
    const plain = await send(url.replace("https:", "http:") + "/-/healthy").then(
      (r) => r.status,
      () => "failed",
    );
    expect(plain).not.toBe(200);
  });

  it("relative cert_file/key_file are relative to the web config file's directory (exporter-toolkit)", async () => {
    // The test process's cwd is the repository root, not `dir`: only resolution against the file's dir finds them.
    expect(process.cwd()).not.toBe(dir);
    const url = await start(webFile("tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"));
    expect((await send(`${url}/-/healthy`, { tls: { ca: readFileSync(p("server.pem")) } })).status).toBe(200);
  });

  it("a missing certificate file is an error naming the key and the file", async () => {
    const file = webFile(
      `tls_server_config:\n  cert_file: ${p("absent.pem")}\n  key_file: ${p("server.key")}\n`,
    );
    expect(await problems(loadWebConfig(file))).toEqual([
      `tls_server_config.cert_file: cannot read ${p("absent.pem")} (ENOENT)`,
    ]);
  });

  it("RequireAndVerifyClientCert without client_ca_file is rejected", async () => {
    const file = webFile(tlsConfig() + "  client_auth_type: RequireAndVerifyClientCert\n");
    expect(await problems(loadWebConfig(file))).toEqual([
      `${file}: tls_server_config.client_ca_file: required for client_auth_type RequireAndVerifyClientCert`,
    ]);
  });

  const client = (name: "client" | "rogue") => ({
    ca: readFileSync(p("server.pem")),
    cert: readFileSync(p(`${name}.pem`)),
    key: readFileSync(p(`${name}.key`)),
  });
  const outcome = (url: string, tls: Record<string, unknown>) =>
    send(`${url}/-/healthy`, { tls }).then(
      (r) => r.status,
      () => "refused",
    );

  it("RequireAndVerifyClientCert: only a certificate signed by client_ca_file gets in", async () => {
    const url = await start(
      webFile(
        tlsConfig() + `  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ${p("ca.pem")}\n`,
      ),
    );
    expect(await outcome(url, { ca: readFileSync(p("server.pem")) })).toBe("refused");
    expect(await outcome(url, client("rogue"))).toBe("refused");
    expect(await outcome(url, client("client"))).toBe(200);
  });

  it("VerifyClientCertIfGiven: no certificate is fine, an untrusted one is refused", async () => {
    const url = await start(
      webFile(
        tlsConfig() + `  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ${p("ca.pem")}\n`,
      ),
    );
    expect(await outcome(url, { ca: readFileSync(p("server.pem")) })).toBe(200);
    expect(await outcome(url, client("rogue"))).toBe("refused");
    expect(await outcome(url, client("client"))).toBe(200);
  });

  it("RequireAnyClientCert: some certificate is required, none is verified", async () => {
    const url = await start(webFile(tlsConfig() + "  client_auth_type: RequireAnyClientCert\n"));
    expect(await outcome(url, { ca: readFileSync(p("server.pem")) })).toBe("refused");
    expect(await outcome(url, client("rogue"))).toBe(200);
  });
});

describe("basic auth", () => {
  const PASSWORD = "correct horse battery staple";
  // Cost 4 keeps the test fast; the server accepts any bcrypt cost.
  const hash = bcrypt.hashSync(PASSWORD, 4);

  it("right password 200; wrong password and unknown user 401 with WWW-Authenticate", async () => {
    const url = await start(webFile(`basic_auth_users:\n  alice: '${hash}'\n`));
    expect((await send(`${url}/metrics`, { headers: basic("alice", PASSWORD) })).status).toBe(200);
    // A second request with the same credentials (served from the verification cache) still passes.
    expect((await send(`${url}/metrics`, { headers: basic("alice", PASSWORD) })).status).toBe(200);

    for (const headers of [
      basic("alice", "wrong"),
      basic("mallory", PASSWORD),
      {},
      { authorization: "Bearer x" },
    ]) {
      const r = await send(`${url}/metrics`, { headers });
      expect(r.status).toBe(401);
      expect(r.headers["www-authenticate"]).toMatch(/^Basic realm=/);
      expect(r.body.toString()).not.toContain("sitehost_test_sites");
    }
  });

  it("accepts htpasswd's $2y$ form of the hash", async () => {
    // htpasswd -B writes $2y$; it is the same algorithm as bcryptjs's $2b$, only the prefix differs.
    const y = hash.replace(/^\$2b\$/, "$2y$");
    expect(y.startsWith("$2y$04$")).toBe(true);
    const url = await start(webFile(`basic_auth_users:\n  alice: '${y}'\n`));
    expect((await send(`${url}/metrics`, { headers: basic("alice", PASSWORD) })).status).toBe(200);
    expect((await send(`${url}/metrics`, { headers: basic("alice", "nope") })).status).toBe(401);
  });

  it("protects the health endpoints and the landing page too (as exporter-toolkit does)", async () => {
    const url = await start(webFile(`basic_auth_users:\n  alice: '${hash}'\n`));
    for (const path of ["/-/healthy", "/-/ready", "/"]) {
      expect((await send(`${url}${path}`)).status).toBe(401);
      expect((await send(`${url}${path}`, { headers: basic("alice", PASSWORD) })).status).toBe(200);
    }
  });

  it("TLS and basic auth together", async () => {
    const url = await start(
      webFile(
        `tls_server_config:\n  cert_file: ${p("server.pem")}\n  key_file: ${p("server.key")}\nbasic_auth_users:\n  alice: '${hash}'\n`,
      ),
    );
    const tls = { ca: readFileSync(p("server.pem")) };
    expect((await send(`${url}/metrics`, { tls })).status).toBe(401);
    expect((await send(`${url}/metrics`, { tls, headers: basic("alice", PASSWORD) })).status).toBe(200);
  });

  it("a plaintext password instead of a hash is rejected without echoing it", async () => {
    const file = webFile("basic_auth_users:\n  alice: hunter2-plaintext\n  bob: 12345678\n");
    const lines = await problems(loadWebConfig(file));
    expect(lines).toContain(`${file}: basic_auth_users.alice: must be a bcrypt hash`);
    expect(lines.some((l) => l.startsWith(`${file}: basic_auth_users.bob:`))).toBe(true);
    expect(lines.join("\n")).not.toContain("hunter2-plaintext");
    expect(lines.join("\n")).not.toContain("12345678");
  });
});

describe("file format", () => {
  it("an unknown key is rejected naming the key, with a suggestion from the web config's own keys", async () => {
    const file = webFile("tls_server_confg:\n  cert_file: x\n");
    expect(await problems(loadWebConfig(file))).toEqual([
      `${file}: tls_server_confg: unknown key; did you mean tls_server_config?`,
    ]);
  });

  it("an unknown nested key is rejected naming its path", async () => {
    const file = webFile(`tls_server_config:\n  cert_file: a\n  key_file: b\n  certfile: c\n`);
    expect(await problems(loadWebConfig(file))).toEqual([
      `${file}: tls_server_config.certfile: unknown key; did you mean cert_file?`,
    ]);
  });

  it("an empty basic_auth_users mapping means no authentication", async () => {
    const url = await start(webFile("basic_auth_users: {}\n"));
    expect((await send(`${url}/metrics`)).status).toBe(200);
  });

  it("an empty file means plain HTTP without auth", async () => {
    const url = await start(webFile(""));
    expect(url).toMatch(/^http:/);
    expect((await send(`${url}/metrics`)).status).toBe(200);
  });

  it("http_server_config.headers are added to every response", async () => {
    const url = await start(webFile("http_server_config:\n  headers:\n    X-Frame-Options: deny\n"));
    const r = await send(`${url}/`);
    expect(r.headers["x-frame-options"]).toBe("deny");
  });
});

describe("docs/web-config.md", () => {
  it("its full example validates against the web config schema, and its hash matches the documented password", async () => {
    const doc = readFileSync(join(import.meta.dirname, "../../../docs/web-config.md"), "utf8");
    const block = /## Format\s+```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(block).toBeDefined();
    const parsed = WebConfigSchema.safeParse(parse(block as string));
    expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
    const hash = parsed.data?.basic_auth_users?.prometheus as string;
    expect(await bcrypt.compare("the password", hash)).toBe(true);
  });
});

import { execFileSync } from "node:child_process";
import { connect as connectHttp2 } from "node:http2";
import { connect as connectTls, type ConnectionOptions } from "node:tls";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { beforeAll, describe, expect, it } from "vitest";
import { loadWebConfig, WebConfigSchema } from "../../../src/server/webConfig.js";
import { parse } from "yaml";
import { clientCa, selfSignedServerCert, signedClientCert } from "../../helpers/tls.js";
import { healthOutcome, send, webConfigTestbed } from "./helpers.js";
import { configProblems } from "../../helpers/config.js";

const dir = mkdtempSync(join(tmpdir(), "sitehost-webcfg-"));
const p = (name: string) => join(dir, name);
const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

beforeAll(() => {
  // Server certificate, self-signed, valid for 127.0.0.1 and localhost.
  selfSignedServerCert(dir, "IP:127.0.0.1,DNS:localhost");
  // A client CA and a client certificate it signed.
  clientCa(dir);
  signedClientCert(dir, "client", "scraper");
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
  // The server certificate in DER, and files that are no PEM at all.
  openssl("x509", "-in", "server.pem", "-outform", "DER", "-out", "server.der");
  writeFileSync(p("notes.txt"), "this is not a certificate\n");
}, 60_000);
const { webFile, start, client } = webConfigTestbed(dir);

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
    expect(await configProblems(loadWebConfig(file))).toEqual([
      `${file}: tls_server_config.cert_file: cannot read ${p("absent.pem")} (ENOENT)`,
    ]);
  });

  it("RequireAndVerifyClientCert without client_ca_file is rejected", async () => {
    const file = webFile(tlsConfig() + "  client_auth_type: RequireAndVerifyClientCert\n");
    expect(await configProblems(loadWebConfig(file))).toEqual([
      `${file}: tls_server_config.client_ca_file: required for client_auth_type RequireAndVerifyClientCert (or client_ca, inline PEM)`,
    ]);
  });

  const outcome = healthOutcome;

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
    for (const path of ["/-/healthy", "/-/ready", "/-/status", "/"]) {
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
    const lines = await configProblems(loadWebConfig(file));
    expect(lines).toContain(`${file}: basic_auth_users.alice: must be a bcrypt hash`);
    expect(lines.some((l) => l.startsWith(`${file}: basic_auth_users.bob:`))).toBe(true);
    expect(lines.join("\n")).not.toContain("hunter2-plaintext");
    expect(lines.join("\n")).not.toContain("12345678");
  });
});

describe("file format", () => {
  it("an unknown key is rejected naming the key, with a suggestion from the web config's own keys", async () => {
    const file = webFile("tls_server_confg:\n  cert_file: x\n");
    expect(await configProblems(loadWebConfig(file))).toEqual([
      `${file}: tls_server_confg: unknown key; did you mean tls_server_config?`,
    ]);
  });

  it("an unknown nested key is rejected naming its path", async () => {
    const file = webFile(`tls_server_config:\n  cert_file: a\n  key_file: b\n  certfile: c\n`);
    expect(await configProblems(loadWebConfig(file))).toEqual([
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

describe("TLS material is checked when the file is loaded", () => {
  const tls = (cert: string, key: string, extra = "") =>
    webFile(`tls_server_config:\n  cert_file: ${p(cert)}\n  key_file: ${p(key)}\n${extra}`);

  it.each([
    [
      "a text file as cert_file",
      "notes.txt",
      "server.key",
      /tls_server_config\.cert_file: .*notes\.txt holds no PEM certificate/,
    ],
    [
      "a DER certificate as cert_file",
      "server.der",
      "server.key",
      /tls_server_config\.cert_file: .*server\.der holds no PEM certificate/,
    ],
    [
      "a key as cert_file",
      "server.key",
      "server.key",
      /tls_server_config\.cert_file: .*holds no PEM certificate/,
    ],
    [
      "a certificate as key_file",
      "server.pem",
      "server.pem",
      /tls_server_config\.key_file: .*server\.pem holds no PEM private key/,
    ],
    [
      "a key that does not belong to the certificate",
      "server.pem",
      "rogue.key",
      /tls_server_config\.key_file: the key in .*rogue\.key does not belong to the certificate in .*server\.pem/,
    ],
  ])("%s is rejected, naming the key", async (_what, cert, key, expected) => {
    const file = tls(cert, key);
    const lines = await configProblems(loadWebConfig(file));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: `));
    expect(lines[0]).toMatch(expected);
  });

  it("a client CA file without a PEM certificate is rejected", async () => {
    const file = tls(
      "server.pem",
      "server.key",
      `  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ${p("notes.txt")}\n`,
    );
    expect((await configProblems(loadWebConfig(file)))[0]).toMatch(
      /tls_server_config\.client_ca_file: .*holds no PEM certificate/,
    );
  });

  it("a client CA file with client_auth_type NoClientCert is rejected (it would be ignored)", async () => {
    const file = tls("server.pem", "server.key", `  client_ca_file: ${p("ca.pem")}\n`);
    expect((await configProblems(loadWebConfig(file)))[0]).toMatch(
      /tls_server_config\.client_ca_file: .*NoClientCert/,
    );
  });

  it("unknown cipher suites and curves are named, with the closest known name", async () => {
    const file = tls(
      "server.pem",
      "server.key",
      "  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA265]\n  curve_preferences: [CurveP265]\n",
    );
    const lines = await configProblems(loadWebConfig(file));
    expect(lines).toContain(
      `${file}: tls_server_config.cipher_suites.0: unknown cipher suite "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA265"; did you mean TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256?`,
    );
    expect(lines).toContain(
      `${file}: tls_server_config.curve_preferences.0: unknown curve "CurveP265"; did you mean CurveP256?`,
    );
  });
});

describe("TLS options of exporter-toolkit are applied", () => {
  const base = `tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n`;
  const handshake = (port: number, options: ConnectionOptions) =>
    new Promise<string>((resolve) => {
      const socket = connectTls(
        { port, host: "127.0.0.1", ca: readFileSync(p("server.pem")), ...options },
        () => {
          const cipher = socket.getCipher().name;
          socket.end();
          resolve(cipher);
        },
      );
      socket.on("error", () => resolve("refused"));
    });
  const portOf = (url: string) => Number(new URL(url).port);

  it("cipher_suites limits TLS 1.2 to the listed suites", async () => {
    const port = portOf(
      await start(
        webFile(`${base}  max_version: TLS12\n  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]\n`),
      ),
    );
    expect(await handshake(port, { maxVersion: "TLSv1.2", ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256" })).toBe(
      "refused",
    );
    expect(await handshake(port, { maxVersion: "TLSv1.2" })).toBe("ECDHE-ECDSA-AES256-GCM-SHA384");
  });

  it("listing only TLS 1.2 suites leaves TLS 1.3 working, as in exporter-toolkit", async () => {
    const port = portOf(
      await start(webFile(`${base}  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]\n`)),
    );
    expect(await handshake(port, { minVersion: "TLSv1.3" })).toMatch(/^TLS_/);
  });

  it("prefer_server_cipher_suites: the server's order wins over the client's", async () => {
    const suites = "[TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]";
    const clientOrder = {
      maxVersion: "TLSv1.2",
      ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384",
    } as const;
    const server = portOf(await start(webFile(`${base}  max_version: TLS12\n  cipher_suites: ${suites}\n`)));
    expect(await handshake(server, clientOrder)).toBe("ECDHE-ECDSA-AES256-GCM-SHA384");
  });

  it("curve_preferences limits the key exchange groups", async () => {
    const port = portOf(await start(webFile(`${base}  curve_preferences: [CurveP384]\n`)));
    expect(await handshake(port, { ecdhCurve: "P-256" })).toBe("refused");
    expect(await handshake(port, { ecdhCurve: "P-384" })).not.toBe("refused");
  });

  const h2get = (url: string) =>
    new Promise<{ status: number; nosniff: unknown }>((resolve, reject) => {
      const session = connectHttp2(url, { ca: readFileSync(p("server.pem")) });
      session.on("error", reject);
      const req = session.request({ ":path": "/metrics" });
      req.on("response", (headers) => {
        req.resume();
        req.on("end", () => {
          resolve({ status: Number(headers[":status"]), nosniff: headers["x-content-type-options"] });
          session.close();
        });
      });
      req.on("error", reject);
      req.end();
    });

  it("HTTP/2 is served with TLS by default, beside HTTP/1.1", async () => {
    const url = await start(webFile(base));
    expect(await h2get(url)).toEqual({ status: 200, nosniff: "nosniff" });
    expect((await send(`${url}/metrics`, { tls: { ca: readFileSync(p("server.pem")) } })).status).toBe(200);
  });

  it("http2: false serves HTTP/1.1 only", async () => {
    const url = await start(webFile(`${base}http_server_config:\n  http2: false\n`));
    await expect(h2get(url)).rejects.toThrow();
    expect((await send(`${url}/metrics`, { tls: { ca: readFileSync(p("server.pem")) } })).status).toBe(200);
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

/**
 * A web config written for another exporter-toolkit exporter (node_exporter, say) works here too:
 * the certificate and key inline, the client certificate's allowed names (client_allowed_sans), and
 * the request rate limit (rate_limit), each with its own checks, and the mistakes named by key.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { sanValues } from "../../../src/server/webConfig.js";
import { loadWebConfig } from "../../../src/server/webConfig.js";
import { RequestRateLimit } from "../../../src/server/rateLimit.js";
import { configProblems } from "../../helpers/config.js";
import { clientCa, selfSignedServerCert, signedClientCert } from "../../helpers/tls.js";
import { healthOutcome, send, webConfigTestbed } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "sitehost-webcfg-toolkit-"));
const p = (name: string) => join(dir, name);

beforeAll(() => {
  selfSignedServerCert(dir, "IP:127.0.0.1,DNS:localhost");
  clientCa(dir);
  const sans = "DNS:prometheus.monitoring.svc,URI:spiffe://cluster/ns/monitoring/sa/prometheus";
  signedClientCert(dir, "prometheus", "prometheus", sans);
  signedClientCert(dir, "intruder", "intruder", "DNS:intruder.example");
  signedClientCert(dir, "nameless");
}, 60_000);
const { webFile, start, client } = webConfigTestbed(dir);

/** The certificate and key inline, as YAML block scalars. */
const inline = (name: string) =>
  readFileSync(p(name), "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => `    ${l}`)
    .join("\n");

const outcome = healthOutcome;

describe("a node_exporter web config", () => {
  it("inline cert and key, client_allowed_sans: only a verified client naming an allowed SAN gets in", async () => {
    const url = await start(
      webFile(
        [
          "tls_server_config:",
          "  cert: |",
          inline("server.pem"),
          "  key: |",
          inline("server.key"),
          "  client_auth_type: RequireAndVerifyClientCert",
          `  client_ca_file: ${p("ca.pem")}`,
          "  client_allowed_sans:",
          "    - spiffe://cluster/ns/monitoring/sa/prometheus",
          "    - grafana.monitoring.svc",
          "",
        ].join("\n"),
      ),
    );
    expect(await outcome(url, client("prometheus"))).toBe(200);
    expect(await outcome(url, client("intruder"))).toBe("refused");
    expect(await outcome(url, client("nameless"))).toBe("refused");
    expect(await outcome(url, { ca: readFileSync(p("server.pem")) })).toBe("refused");
  });

  it("rate_limit: a burst, then 429 with Retry-After until the interval gives a request back", async () => {
    const url = await start(webFile("rate_limit:\n  interval: 1h\n  burst: 2\n"));
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await send(`${url}/-/healthy`)).status);
    expect(statuses).toEqual([200, 200, 429]);
    const refused = await send(`${url}/metrics`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(3000);
  });

  it("rate_limit with interval 0 is off, as in exporter-toolkit", async () => {
    const url = await start(webFile("rate_limit:\n  interval: 0\n  burst: 0\n"));
    for (let i = 0; i < 5; i++) expect((await send(`${url}/-/healthy`)).status).toBe(200);
  });

  it.each([
    [
      "the certificate inline and as a file",
      `tls_server_config:\n  cert: "x"\n  cert_file: ${p("server.pem")}\n  key_file: ${p("server.key")}\n`,
      "tls_server_config.cert: set beside cert_file; give the certificate inline or as a file, not both",
    ],
    [
      "no certificate at all",
      `tls_server_config:\n  key_file: ${p("server.key")}\n`,
      "tls_server_config.cert_file: required (or cert, inline PEM)",
    ],
    [
      "an inline key that is no key",
      `tls_server_config:\n  cert_file: ${p("server.pem")}\n  key: "not a key"\n`,
      "tls_server_config.key: the inline value holds no PEM private key",
    ],
    [
      "client_allowed_sans where a client may bring no certificate",
      `tls_server_config:\n  cert_file: ${p("server.pem")}\n  key_file: ${p("server.key")}\n  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ${p("ca.pem")}\n  client_allowed_sans: [prometheus.monitoring.svc]\n`,
      "tls_server_config.client_allowed_sans: needs client_auth_type RequireAndVerifyClientCert (or RequireAnyClientCert), not VerifyClientCertIfGiven: under it a client may connect without a certificate, leaving no name to check",
    ],
    [
      "a burst of 0 with an interval",
      "rate_limit:\n  interval: 1s\n  burst: 0\n",
      "rate_limit.burst: 0 with an interval refuses every request; set 1 or more (or interval: 0 to turn the limit off)",
    ],
  ])("%s is refused, naming the key", async (_what, text, problem) => {
    const file = webFile(text);
    expect(await configProblems(loadWebConfig(file))).toEqual([`${file}: ${problem}`]);
  });

  it("an interval that is no duration is refused, naming the key", async () => {
    const file = webFile("rate_limit:\n  interval: often\n  burst: 5\n");
    const problems = await configProblems(loadWebConfig(file));
    expect(problems.join("\n")).toContain("rate_limit.interval");
    expect(problems.join("\n")).toContain("must be a duration");
  });
});

describe("the parts", () => {
  it("reads every kind of subject alternative name Node.js writes, quoted ones too", () => {
    expect(
      sanValues(
        'DNS:a.example, IP Address:127.0.0.1, email:ops@example.com, URI:spiffe://c/ns/m, DNS:"odd,name.example"',
      ),
    ).toEqual(["a.example", "127.0.0.1", "ops@example.com", "spiffe://c/ns/m", "odd,name.example"]);
    expect(sanValues(undefined)).toEqual([]);
  });

  it("the token bucket: a burst, then one request per interval", () => {
    let now = 0;
    const limit = new RequestRateLimit(1000, 2, () => now);
    expect([limit.take(), limit.take(), limit.take()]).toEqual([true, true, false]);
    expect(limit.retryAfterSeconds()).toBe(1);
    now = 999;
    expect(limit.take()).toBe(false);
    now = 1000;
    expect(limit.take()).toBe(true);
    now = 60_000;
    // Idle time fills the bucket to its burst, no further.
    expect([limit.take(), limit.take(), limit.take()]).toEqual([true, true, false]);
  });
});

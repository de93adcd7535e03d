/**
 * Test helpers: certificates made with the real openssl (EC P-256, two days): a self-signed server
 * certificate (`server.key`, `server.pem`), a client CA and client certificates it signed.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export function selfSignedServerCert(dir: string, subjectAltName = "IP:127.0.0.1"): void {
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      "server.key",
      "-out",
      "server.pem",
      "-days",
      "2",
      "-subj",
      "/CN=localhost",
      "-addext",
      `subjectAltName=${subjectAltName}`,
    ],
    { cwd: dir, stdio: "pipe" },
  );
}

const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/** A client CA (`ca.key`, `ca.pem`) in `dir`, self-signed, two days. */
export function clientCa(dir: string, subject = "/CN=test client CA"): void {
  const args = [
    "req",
    "-x509",
    ...EC_KEY,
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    subject,
  ];
  execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
}

/**
 * A client certificate `<name>.key`, `<name>.pem` in `dir`, signed by its `ca.pem` (see clientCa),
 * with this common name and these subjectAltNames (none: no extension).
 */
export function signedClientCert(dir: string, name: string, commonName = name, san?: string): void {
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  openssl("req", ...EC_KEY, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${commonName}`);
  if (san) writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${san}\n`);
  const ext = san ? ["-extfile", `${name}.ext`] : [];
  openssl(
    ...["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial"],
    ...["-out", `${name}.pem`, "-days", "2", ...ext],
  );
}

/**
 * A server certificate for `host` (`<name>.key`, `<name>.pem`), signed by the CA in `dir` (see
 * clientCa), that expired in 2020: `openssl ca`, unlike `x509 -req`, takes dates in the past.
 */
export function expiredServerCert(dir: string, name: string, host: string): void {
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  openssl("req", ...EC_KEY, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${host}`);
  writeFileSync(join(dir, `${name}.index`), "");
  writeFileSync(
    join(dir, `${name}.cnf`),
    [
      "[ca]",
      "default_ca = expired",
      "[expired]",
      `database = ${name}.index`,
      "new_certs_dir = .",
      `serial = ${name}.serial`,
      "default_md = sha256",
      "policy = any",
      "x509_extensions = server",
      "[any]",
      "commonName = supplied",
      "[server]",
      `subjectAltName = DNS:${host}`,
      "",
    ].join("\n"),
  );
  writeFileSync(join(dir, `${name}.serial`), "1000\n");
  openssl(
    ...["ca", "-batch", "-notext", "-config", `${name}.cnf`, "-cert", "ca.pem", "-keyfile", "ca.key"],
    ...[
      "-in",
      `${name}.csr`,
      "-out",
      `${name}.pem`,
      "-startdate",
      "20200101000000Z",
      "-enddate",
      "20200201000000Z",
    ],
  );
}

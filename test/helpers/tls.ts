/**
 * Test helper: a self-signed server certificate (EC P-256, two days) made with the real openssl, as
 * `server.key` and `server.pem` in `dir`, valid for the given subjectAltName.
 */
import { execFileSync } from "node:child_process";

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

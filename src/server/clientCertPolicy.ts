/**
 * The client certificate policy of the web config's TLS settings, enforced on each new connection
 * where the TLS handshake cannot: a certificate required but not verified (RequireAnyClientCert), one
 * verified only when given (VerifyClientCertIfGiven), and the names it must carry
 * (client_allowed_sans).
 */
import type { TLSSocket } from "node:tls";
import type { Logger } from "pino";
import type { ClientAuth, TlsSettings } from "./webConfigTls.js";

/**
 * The names a certificate's subject alternative name extension gives (DNS, IP, e-mail, URI), from
 * Node.js's `subjectaltname` text: `DNS:a.example, IP Address:127.0.0.1, email:x@y, URI:spiffe://z`
 * (a value with a comma or quote comes JSON-quoted).
 */
export function sanValues(subjectAltName: string | undefined): string[] {
  if (!subjectAltName) return [];
  const out: string[] = [];
  const entry = /\s*([A-Za-z ]+):("(?:[^"\\]|\\.)*"|[^,]*)(?:,|$)/gy;
  let m: RegExpExecArray | null;
  while ((m = entry.exec(subjectAltName)) !== null && m[0] !== "") {
    const raw = (m[2] as string).trim();
    try {
      out.push(raw.startsWith('"') ? (JSON.parse(raw) as string) : raw);
    } catch {
      out.push(raw);
    }
  }
  return out;
}

/**
 * Why a TLS connection must be refused under the configured client_auth_type, or undefined.
 * `hasCert`: the client presented a certificate; `authorized`: it verified against the client CA;
 * `sans`: the names it carries, checked against client_allowed_sans (exact match, as exporter-toolkit).
 */
export function clientCertProblem(
  clientAuth: ClientAuth,
  hasCert: boolean,
  authorized: boolean,
  sans?: { allowed: readonly string[]; presented: readonly string[] },
): string | undefined {
  if ((clientAuth === "RequireAnyClientCert" || clientAuth === "RequireAndVerifyClientCert") && !hasCert)
    return "client certificate required";
  if (
    (clientAuth === "VerifyClientCertIfGiven" || clientAuth === "RequireAndVerifyClientCert") &&
    hasCert &&
    !authorized
  )
    return "client certificate not trusted";
  if (sans && !sans.presented.some((name) => sans.allowed.includes(name)))
    return `client certificate names none of client_allowed_sans (it names: ${sans.presented.join(", ") || "nothing"})`;
  return undefined;
}

/**
 * Ends each new TLS connection the client certificate policy refuses (what the handshake itself
 * cannot: a certificate required but not verified, one verified only when given, and the allowed
 * names), with a warning naming the client's address and why.
 */
export function refuseClientsOutsidePolicy(
  server: { on(event: "secureConnection", listener: (socket: TLSSocket) => void): unknown },
  /** The settings in use (client_allowed_sans may change on a reload; client_auth_type may not). */
  current: () => TlsSettings,
  log: Pick<Logger, "warn">,
): void {
  const { clientAuth } = current();
  if (clientAuth === "NoClientCert" || clientAuth === "RequestClientCert") return;
  server.on("secureConnection", (socket: TLSSocket) => {
    const tls = current();
    const cert = socket.getPeerCertificate();
    const hasCert = cert !== null && Object.keys(cert).length > 0;
    const allowed = tls.allowedSans;
    const problem = clientCertProblem(
      tls.clientAuth,
      hasCert,
      socket.authorized,
      allowed && hasCert
        ? { allowed, presented: sanValues(socket.getPeerX509Certificate()?.subjectAltName) }
        : undefined,
    );
    if (problem) {
      log.warn({ remote: socket.remoteAddress, reason: problem }, "TLS connection refused");
      socket.destroy();
    }
  });
}

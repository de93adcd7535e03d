/**
 * exporter-toolkit names TLS cipher suites and curves the way Go's crypto/tls does; Node.js
 * (OpenSSL) has its own names. Only the suites Go lists as secure (tls.CipherSuites()) are
 * accepted, as in exporter-toolkit.
 */
export const CIPHER_SUITES: Readonly<Record<string, string>> = {
  TLS_RSA_WITH_AES_128_CBC_SHA: "AES128-SHA",
  TLS_RSA_WITH_AES_256_CBC_SHA: "AES256-SHA",
  TLS_RSA_WITH_AES_128_GCM_SHA256: "AES128-GCM-SHA256",
  TLS_RSA_WITH_AES_256_GCM_SHA384: "AES256-GCM-SHA384",
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: "ECDHE-ECDSA-AES128-SHA",
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: "ECDHE-ECDSA-AES256-SHA",
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: "ECDHE-RSA-AES128-SHA",
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: "ECDHE-RSA-AES256-SHA",
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: "ECDHE-ECDSA-AES128-GCM-SHA256",
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: "ECDHE-ECDSA-AES256-GCM-SHA384",
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: "ECDHE-RSA-AES128-GCM-SHA256",
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: "ECDHE-RSA-AES256-GCM-SHA384",
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-RSA-CHACHA20-POLY1305",
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-ECDSA-CHACHA20-POLY1305",
  // TLS 1.3 suites have the same name in both.
  TLS_AES_128_GCM_SHA256: "TLS_AES_128_GCM_SHA256",
  TLS_AES_256_GCM_SHA384: "TLS_AES_256_GCM_SHA384",
  TLS_CHACHA20_POLY1305_SHA256: "TLS_CHACHA20_POLY1305_SHA256",
};

export const CURVES: Readonly<Record<string, string>> = {
  CurveP256: "P-256",
  CurveP384: "P-384",
  CurveP521: "P-521",
  X25519: "X25519",
};

const TLS13_DEFAULT = ["TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256"];

/**
 * The OpenSSL cipher string for a list of Go suite names, in the given order. Listing only
 * TLS 1.2 suites restricts TLS 1.2 and leaves TLS 1.3 at its defaults (as Go does, where TLS 1.3
 * suites cannot be configured); listing TLS 1.3 suites too restricts those as well (Node.js can).
 */
export function opensslCiphers(goNames: readonly string[]): string {
  const names = goNames.map((n) => CIPHER_SUITES[n] as string);
  const has13 = names.some((n) => n.startsWith("TLS_"));
  return [...names, ...(has13 ? [] : TLS13_DEFAULT)].join(":");
}

export function opensslCurves(goNames: readonly string[]): string {
  return goNames.map((n) => CURVES[n] as string).join(":");
}

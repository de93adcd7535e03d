/**
 * What the request handler takes from the web config (basic auth, the rate limit, the response
 * headers) and what the TLS context takes from it, built afresh whenever the file is reloaded.
 */
import type { SecureContextOptions } from "node:tls";
import { BasicAuth, type BasicAuthLimits } from "./basicAuth.js";
import { BcryptPool, type PasswordVerifier } from "./bcryptPool.js";
import { LANDING_CSP, mergeHeaders, SECURITY_HEADERS } from "./headers.js";
import { RequestRateLimit } from "./rateLimit.js";
import type { WebConfig } from "./webConfig.js";
import type { TlsSettings } from "./webConfigTls.js";

export interface WebSettings {
  /** Absent: no authentication (no users, or an empty basic_auth_users, as in exporter-toolkit). */
  auth?: BasicAuth;
  limit?: RequestRateLimit;
  everyResponse: ReturnType<typeof mergeHeaders>;
  landingResponse: ReturnType<typeof mergeHeaders>;
}

/** Builds the settings of each version of the web config; one bcrypt pool serves them all. */
export class WebSettingsFactory {
  private pool: BcryptPool | undefined;

  constructor(
    private readonly limits: BasicAuthLimits,
    /** Replaces the bcrypt worker pool (tests). */
    private readonly verifyPassword?: PasswordVerifier,
  ) {}

  build(web: WebConfig): WebSettings {
    const users = web.users && web.users.size > 0 ? web.users : undefined;
    const verify = users && (this.verifyPassword ?? this.poolVerify());
    return {
      ...(users && verify ? { auth: new BasicAuth(users, verify, this.limits) } : {}),
      ...(web.rateLimit
        ? { limit: new RequestRateLimit(web.rateLimit.intervalMs, web.rateLimit.burst) }
        : {}),
      everyResponse: mergeHeaders(SECURITY_HEADERS, web.headers),
      landingResponse: mergeHeaders(
        { ...SECURITY_HEADERS, "Content-Security-Policy": LANDING_CSP },
        web.headers,
      ),
    };
  }

  private poolVerify(): PasswordVerifier {
    this.pool ??= new BcryptPool(this.limits.maxConcurrent);
    return this.pool.verify;
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }
}

/** The parts of the TLS settings a running server's secure context takes (new connections get them). */
export function secureContextOf(tls: TlsSettings): SecureContextOptions {
  return {
    cert: tls.cert,
    key: tls.key,
    ca: tls.ca,
    minVersion: tls.minVersion,
    maxVersion: tls.maxVersion,
    ciphers: tls.ciphers,
    ecdhCurve: tls.ecdhCurve,
    honorCipherOrder: tls.honorCipherOrder,
  };
}

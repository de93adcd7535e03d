/** Access tokens of the client-credentials flow: issued, revoked, expired by the simulator's clock. */
import { randomBytes } from "node:crypto";

export type TokenCheck = "ok" | "missing" | "invalid" | "expired";

export class TokenStore {
  private readonly tokens = new Map<string, { expiresAt: number; revoked: boolean }>();

  issue(nowMs: number, lifetimeSeconds: number): string {
    const token = randomBytes(24).toString("base64url");
    this.tokens.set(token, { expiresAt: nowMs + lifetimeSeconds * 1000, revoked: false });
    return token;
  }

  /** True when the token existed and was live or expired (revoking twice counts once). */
  revoke(token: string): boolean {
    const t = this.tokens.get(token);
    if (!t || t.revoked) return false;
    t.revoked = true;
    return true;
  }

  /** The state of an `Authorization` header's bearer token. */
  check(header: string | undefined, nowMs: number): TokenCheck {
    const m = /^Bearer\s+(.+)$/i.exec(header ?? "");
    if (!m) return "missing";
    const token = this.tokens.get(m[1] as string);
    if (!token || token.revoked) return "invalid";
    return nowMs >= token.expiresAt ? "expired" : "ok";
  }
}

import { ApiAuthError } from "./errors.js";
import { TokenResponseSchema } from "./schemas.js";

export interface TokenFetchResult {
  status: number;
  body: unknown;
}

interface Token {
  value: string;
  /** Epoch ms after which it must not be sent (expiry minus the refresh margin). */
  usableUntil: number;
  expiresAt: number;
}

/**
 * Client-credentials token: cached, refreshed before expiry (refresh margin, or
 * half-life for short-lived tokens), one request in flight shared by every caller.
 */
export class TokenManager {
  private token: Token | undefined;
  private inFlight: Promise<Token> | undefined;

  constructor(
    private readonly fetchToken: () => Promise<TokenFetchResult>,
    private readonly refreshMarginMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A token usable now; never one past its usable window. */
  async get(): Promise<string> {
    const current = this.token;
    if (current && this.now() < current.usableUntil) return current.value;
    return (await this.refresh()).value;
  }

  /** Whether `value` is still the cached token and usable now (checked right before sending). */
  isUsable(value: string): boolean {
    return this.token?.value === value && this.now() < this.token.usableUntil;
  }

  /** Forget `value` after a 401, unless a newer token already replaced it. */
  invalidate(value: string): void {
    if (this.token?.value === value) this.token = undefined;
  }

  current(): string | undefined {
    return this.token?.value;
  }

  private refresh(): Promise<Token> {
    if (!this.inFlight) {
      this.inFlight = this.request().finally(() => {
        this.inFlight = undefined;
      });
    }
    return this.inFlight;
  }

  private async request(): Promise<Token> {
    const startedAt = this.now();
    const { status, body } = await this.fetchToken();
    if (status === 400 || status === 401 || status === 403) {
      throw new ApiAuthError(
        `/auth/token: the platform rejected the client credentials (HTTP ${status})`,
        "/auth/token",
      );
    }
    if (status < 200 || status >= 300) {
      throw new ApiAuthError(`/auth/token: token request failed (HTTP ${status})`, "/auth/token");
    }
    const parsed = TokenResponseSchema.safeParse(body);
    if (!parsed.success) {
      throw new ApiAuthError(
        "/auth/token: the token response has no access_token or expires_in",
        "/auth/token",
      );
    }
    const lifetimeMs = parsed.data.expires_in * 1000;
    // Short-lived tokens: refresh at half-life so the margin never eats the whole lifetime.
    const margin = Math.min(this.refreshMarginMs, lifetimeMs / 2);
    // Counted from before the request was sent, so network time only makes us more careful.
    const expiresAt = startedAt + lifetimeMs;
    this.token = { value: parsed.data.access_token, expiresAt, usableUntil: expiresAt - margin };
    return this.token;
  }
}

/**
 * The client-credentials token: cached, refreshed before it expires (the refresh margin, or half its
 * lifetime for short-lived tokens), one request in flight shared by every caller.
 *
 * A short-lived token (one whose lifetime is less than twice the refresh margin, `expires_in: 6` say) is
 * used: it is refreshed at half its lifetime, never sooner than MIN_REFRESH_INTERVAL_MS after the
 * previous token request (callers wait for that rather than drive a request loop), and the first one is
 * reported once so the user can ask why tokens are that short.
 *
 * A token answer that cannot be used (not JSON, no access_token, an expires_in that is missing,
 * unreadable, zero, negative, or under a second) is a failure, like refused credentials. After a
 * failure, callers get that failure without a new request until a cool-down passes (growing with
 * consecutive failures), so a platform that keeps answering nonsense cannot drive a request loop.
 */
import { backoffMs, type Clock, systemClock } from "../util/time.js";
import { ApiAuthError, SitehostApiError } from "./errors.js";
import { ROUTES } from "../routes.js";
import { TokenResponseSchema } from "./schemas.js";

const TOKEN = ROUTES.token.template;

/** A token that lasts less than this expires before it can be sent: such an answer is a failure. */
export const MIN_TOKEN_LIFETIME_S = 1;
/** Token requests are at least this far apart, however short the tokens (no refresh loop). */
export const MIN_REFRESH_INTERVAL_MS = 2_000;
/** Cool-down after a failed token request: doubling from this ... */
const FAILURE_COOLDOWN_BASE_MS = 5_000;
/** ... up to this. */
const FAILURE_COOLDOWN_CAP_MS = 300_000;

export interface TokenAnswer {
  status: number;
  /** The body as text. */
  body: string;
}

interface Token {
  value: string;
  /** Epoch ms after which it must not be sent (expiry minus the refresh margin). */
  usableUntil: number;
  expiresAt: number;
}

export interface TokenEvents {
  /** The token request as messages name it (`POST https://…/auth/token`); default its route. */
  where?: string;
  onResult?(result: "success" | "failure"): void;
  /** The first short-lived token: its lifetime and how often tokens will be requested (once per process). */
  onShortLived?(lifetimeS: number, refreshEveryS: number): void;
}

export class TokenManager {
  private token: Token | undefined;
  private inFlight: Promise<Token> | undefined;
  private failure: { error: Error; until: number; at: number } | undefined;
  private consecutiveFailures = 0;
  /** When the last token request started (epoch ms), for the refresh interval's floor. */
  private lastRequestAt: number | undefined;
  private shortLivedReported = false;
  /** A token was issued once: a token forgotten after a 401 is no "no token yet". */
  private issued = false;
  /**
   * The API refused a freshly issued token (a 401 again after re-authenticating: the application was
   * revoked or lost access), since when and the last refusal; cleared by an API call that goes through.
   */
  private refused: { message: string; sinceMs: number } | undefined;

  constructor(
    /** One token request (with the client's retries); throws a SitehostApiError when there is no answer. */
    private readonly fetchToken: () => Promise<TokenAnswer>,
    private readonly refreshMarginMs: number,
    private readonly events: TokenEvents = {},
    private readonly clock: Pick<Clock, "now" | "sleep"> = systemClock,
  ) {}

  /** A token usable now; never one past its usable window. */
  async get(): Promise<string> {
    const current = this.token;
    if (current && this.clock.now() < current.usableUntil) return current.value;
    return (await this.refresh()).value;
  }

  /** Whether `value` is still the cached token and usable now (checked right before sending). */
  isUsable(value: string): boolean {
    return this.token?.value === value && this.clock.now() < this.token.usableUntil;
  }

  /** Forget `value` after a 401, unless a newer token already replaced it. */
  invalidate(value: string): void {
    if (this.token?.value === value) this.token = undefined;
  }

  current(): string | undefined {
    return this.token?.value;
  }

  /** Whether the last token request worked and the API takes its tokens; when not, why and since when (the status page). */
  status(): { ok: boolean; lastError?: string; at?: number } {
    if (this.failure) return { ok: false, lastError: this.failure.error.message, at: this.failure.at };
    if (this.refused) return { ok: false, lastError: this.refused.message, at: this.refused.sinceMs };
    return { ok: this.token !== undefined || this.issued };
  }

  /** The API refused a new token as well as the one before it (see `refused`). */
  refusedByApi(message: string): void {
    this.refused = { message, sinceMs: this.refused?.sinceMs ?? this.clock.now() };
  }

  /** An API call went through with a token. */
  acceptedByApi(): void {
    this.refused = undefined;
  }

  private refresh(): Promise<Token> {
    if (this.inFlight) return this.inFlight;
    if (this.failure && this.clock.now() < this.failure.until) return Promise.reject(this.failure.error);
    this.inFlight = this.request().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async request(): Promise<Token> {
    // However short the tokens, token requests stay MIN_REFRESH_INTERVAL_MS apart.
    const wait =
      this.lastRequestAt === undefined ? 0 : this.lastRequestAt + MIN_REFRESH_INTERVAL_MS - this.clock.now();
    if (wait > 0) await this.clock.sleep(wait);
    const startedAt = this.clock.now();
    this.lastRequestAt = startedAt;
    try {
      const token = this.parse(await this.fetchToken(), startedAt);
      this.token = token;
      this.issued = true;
      this.failure = undefined;
      this.consecutiveFailures = 0;
      this.events.onResult?.("success");
      return token;
    } catch (err) {
      this.events.onResult?.("failure");
      const error = err instanceof Error ? err : new Error(String(err));
      const cooldown = backoffMs(this.consecutiveFailures++, {
        baseMs: FAILURE_COOLDOWN_BASE_MS,
        capMs: FAILURE_COOLDOWN_CAP_MS,
      });
      this.failure = { error, until: this.clock.now() + cooldown, at: this.clock.now() };
      throw error;
    }
  }

  private parse(answer: TokenAnswer, startedAt: number): Token {
    const { status } = answer;
    const where = this.events.where ?? TOKEN;
    if (status === 400 || status === 401 || status === 403) {
      throw new ApiAuthError(
        `${where}: the platform rejected the client credentials (HTTP ${status}); check api.clientId and the client secret (SITEHOST_CLIENT_ID, SITEHOST_CLIENT_SECRET or SITEHOST_CLIENT_SECRET_FILE)`,
        TOKEN,
      );
    }
    if (status < 200 || status >= 300) {
      const hint =
        status === 404
          ? "; check api.authUrl (SITEHOST_AUTH_URL): the host root the token endpoint is under, without /v1"
          : "";
      throw new SitehostApiError(`${where}: token request failed (HTTP ${status})${hint}`, TOKEN);
    }
    const notToken = `the answer is not a token: check api.authUrl (SITEHOST_AUTH_URL), the host root of the token endpoint`;
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      throw new ApiAuthError(`${where}: the token answer is not JSON; ${notToken}`, TOKEN);
    }
    const parsed = TokenResponseSchema.safeParse(body);
    if (!parsed.success) {
      throw new ApiAuthError(
        `${where}: the token answer has no usable access_token and expires_in (a number of seconds above zero); ${notToken}`,
        TOKEN,
      );
    }
    const lifetimeS = parsed.data.expires_in;
    if (lifetimeS < MIN_TOKEN_LIFETIME_S) {
      throw new ApiAuthError(
        `${where}: the token answer's expires_in (${lifetimeS} s) is shorter than the ${MIN_TOKEN_LIFETIME_S} s a token must last to be sent`,
        TOKEN,
      );
    }
    const lifetimeMs = lifetimeS * 1000;
    // Short-lived tokens: refresh at half-life so the margin never eats the whole lifetime.
    const margin = Math.min(this.refreshMarginMs, lifetimeMs / 2);
    if (margin < this.refreshMarginMs && !this.shortLivedReported) {
      this.shortLivedReported = true;
      this.events.onShortLived?.(lifetimeS, Math.max(lifetimeMs - margin, MIN_REFRESH_INTERVAL_MS) / 1000);
    }
    // Counted from before the request was sent, so network time only makes us more careful.
    const expiresAt = startedAt + lifetimeMs;
    return { value: parsed.data.access_token, expiresAt, usableUntil: expiresAt - margin };
  }
}

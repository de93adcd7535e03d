/**
 * HTTP basic auth against bcrypt hashes (the exporter-toolkit `basic_auth_users`).
 *
 * bcrypt makes every uncached check expensive, so an attacker guessing passwords could starve
 * real scrapes. Hence: successful checks are cached (keyed by an HMAC of the credentials under
 * a per-process random key, so the cache never holds a password), cached checks never wait,
 * and uncached ones share a small number of verification slots and a short queue; beyond that
 * the answer is "busy" (HTTP 429) at once instead of a growing backlog.
 */
import { createHmac, randomBytes } from "node:crypto";
import { Semaphore } from "../util/semaphore.js";
import type { PasswordVerifier } from "./bcryptPool.js";

export type AuthResult = "ok" | "denied" | "busy";

export interface BasicAuthLimits {
  /** bcrypt comparisons running at once. */
  maxConcurrent: number;
  /** Comparisons waiting for a slot; more than this are answered "busy". */
  maxQueued: number;
  /** Successful credentials remembered (least recently used dropped first). */
  cacheSize: number;
}

// One comparison at a time, as exporter-toolkit does: it leaves the other cores to serving requests.
export const DEFAULT_AUTH_LIMITS: BasicAuthLimits = { maxConcurrent: 1, maxQueued: 8, cacheSize: 256 };

const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The user and password of an `Authorization: Basic <base64>` header, or undefined. The base64
 * must be strict RFC 4648 (standard alphabet, correct padding, nothing after it, canonical
 * final bits) and decode to UTF-8 `user:password`.
 */
export function decodeBasicAuth(header: string | undefined): { user: string; password: string } | undefined {
  const m = /^Basic +(\S+)$/i.exec(header ?? "");
  const encoded = m?.[1];
  if (encoded === undefined || !STRICT_BASE64.test(encoded)) return undefined;
  const bytes = Buffer.from(encoded, "base64");
  // Non-zero bits after the last full byte: not the canonical encoding of any byte string.
  if (bytes.toString("base64") !== encoded) return undefined;
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return undefined;
  }
  const colon = text.indexOf(":");
  if (colon < 0) return undefined;
  return { user: text.slice(0, colon), password: text.slice(colon + 1) };
}

export class BasicAuth {
  private readonly cacheKey = randomBytes(32);
  /** HMAC of a verified credential → true, in least-recently-used order. */
  private readonly verified = new Map<string, true>();
  /** Verifications under way, so concurrent requests with the same credentials share one. */
  private readonly pending = new Map<string, Promise<boolean>>();
  /** Verification slots; waiting for one is bounded by limits.maxQueued. */
  private readonly slots: Semaphore;
  private readonly decoy: string;

  constructor(
    private readonly users: ReadonlyMap<string, string>,
    private readonly verify: PasswordVerifier,
    private readonly limits: BasicAuthLimits = DEFAULT_AUTH_LIMITS,
  ) {
    this.decoy = users.values().next().value ?? "";
    this.slots = new Semaphore(limits.maxConcurrent);
  }

  /** Comparisons running and waiting (for tests and metrics). */
  get load(): { running: number; queued: number } {
    return { running: this.slots.inUse, queued: this.slots.queued };
  }

  async check(header: string | undefined): Promise<AuthResult> {
    const credentials = decodeBasicAuth(header);
    if (!credentials) return "denied";
    const { user, password } = credentials;
    const hash = this.users.get(user);
    const key = createHmac("sha256", this.cacheKey)
      .update(`${user.length}:${user}\u0000${password}\u0000${hash ?? ""}`)
      .digest("base64");
    if (hash !== undefined && this.verified.has(key)) {
      this.verified.delete(key);
      this.verified.set(key, true);
      return "ok";
    }
    let verification = this.pending.get(key);
    if (!verification) {
      // Unknown users cost a full comparison too (against a configured hash, so the cost factor
      // matches): the time taken does not tell which users exist.
      const started = this.slot(() => this.verify(password, hash ?? this.decoy));
      if (!started) return "busy";
      verification = started.finally(() => this.pending.delete(key));
      this.pending.set(key, verification);
    }
    let ok: boolean;
    try {
      ok = await verification;
    } catch {
      ok = false;
    }
    if (!ok || hash === undefined) return "denied";
    this.remember(key);
    return "ok";
  }

  private remember(key: string): void {
    this.verified.set(key, true);
    while (this.verified.size > this.limits.cacheSize) {
      const oldest = this.verified.keys().next().value as string;
      this.verified.delete(oldest);
    }
  }

  /** Runs `task` in a verification slot; undefined when every slot is taken and the queue is full. */
  private slot<T>(task: () => Promise<T>): Promise<T> | undefined {
    if (this.slots.inUse >= this.limits.maxConcurrent && this.slots.queued >= this.limits.maxQueued)
      return undefined;
    return this.slots.acquire().then(async (release) => {
      try {
        return await task();
      } finally {
        release();
      }
    });
  }
}

/**
 * The shared webhook token. The platform can only be given a URL (it sends no headers of ours and
 * signs nothing), so the token travels as `?token=`; other senders may use `Authorization: Bearer`.
 * Both sides are hashed before the constant-time comparison, so neither the token's content nor its
 * length shows in the time an answer takes.
 */
import { createHash, timingSafeEqual } from "node:crypto";

export type AuthVerdict = "ok" | "missing" | "wrong";

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** The token a request presents: a Bearer header first, else the `token` query parameter. */
export function presentedToken(authorization: string | undefined, query: string): string | undefined {
  const bearer = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? "");
  if (bearer) return bearer[1];
  const fromQuery = new URLSearchParams(query).get("token");
  return fromQuery === null || fromQuery === "" ? undefined : fromQuery;
}

/** The query string of a request target (`/webhook?token=…` → `token=…`). */
export function queryOf(url: string | undefined): string {
  const at = url?.indexOf("?") ?? -1;
  return at < 0 ? "" : (url as string).slice(at + 1);
}

export class WebhookAuth {
  private readonly expected: Buffer;

  constructor(token: string) {
    this.expected = digest(token);
  }

  check(authorization: string | undefined, url: string | undefined): AuthVerdict {
    const token = presentedToken(authorization, queryOf(url));
    if (token === undefined) return "missing";
    return timingSafeEqual(digest(token), this.expected) ? "ok" : "wrong";
  }
}

/**
 * Secrets the API client knows (the client secret, recent access tokens), removed from any text the
 * platform sent back before it reaches an error or a log line: error envelopes and offending record
 * values may echo the Authorization header or the credentials (debug proxies do).
 */

/** How many recent access tokens are remembered (one per refresh, an hour each). */
const REMEMBERED_TOKENS = 16;

/** A secret as it may appear in echoed text: raw, and JSON-escaped (inside a JSON string). */
function forms(value: string): string[] {
  if (!value) return [];
  const escaped = JSON.stringify(value).slice(1, -1);
  return escaped === value ? [value] : [value, escaped];
}

export type Redact = (text: string) => string;

export class SecretRedactor {
  private readonly secrets: string[] = [];
  private readonly tokens: string[] = [];

  /** A long-lived secret (client secret): remembered for the life of the process. */
  addSecret(value: string): void {
    for (const form of forms(value)) if (!this.secrets.includes(form)) this.secrets.push(form);
  }

  /** An access token: the most recent ones are remembered. */
  addToken(value: string): void {
    for (const form of forms(value)) if (!this.tokens.includes(form)) this.tokens.push(form);
    if (this.tokens.length > 2 * REMEMBERED_TOKENS)
      this.tokens.splice(0, this.tokens.length - 2 * REMEMBERED_TOKENS);
  }

  readonly redact: Redact = (text) => {
    let out = text;
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join("<redacted>");
    for (const token of this.tokens) if (out.includes(token)) out = out.split(token).join("<redacted>");
    return out;
  };
}

/**
 * A URL as errors and logs show it: without its userinfo (`user:password@`) and with the value of any
 * token-like query parameter replaced, so it names what to fix and nothing secret.
 */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    for (const key of [...u.searchParams.keys()]) {
      if (/token|secret|password|key/i.test(key)) u.searchParams.set(key, "redacted");
    }
    return u.toString();
  } catch {
    return url.replace(/\/\/[^/@\s]*@/, "//");
  }
}

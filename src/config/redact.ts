/** Passwords in URLs (`http://user:password@host`) replaced before a URL is printed or logged. */
export const REDACTED = "<redacted>";

/** The text with the password of any `scheme://user:password@` userinfo replaced; the user name is kept. */
export function redactUrl(text: string): string {
  try {
    const u = new URL(text);
    if (u.password === "") return text;
    // Rebuilt by hand: assigning "<redacted>" to u.password would percent-encode it.
    const user = u.username === "" ? "" : u.username;
    return `${u.protocol}//${user}:${REDACTED}@${u.host}${u.pathname}${u.search}${u.hash}`;
  } catch {
    // Not a URL (an error message quoting one, a malformed value): redact up to the last `@`
    // of the authority, which is where a URL parser would end the userinfo.
    return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]*):[^\s/]*@/gi, `$1:${REDACTED}@`);
  }
}

/** The text with the value of every `token` query parameter replaced (a webhook URL in a log line). */
export function redactQueryToken(text: string): string {
  return text.replace(/([?&](?:access_)?token=)[^&#\s]*/gi, `$1${REDACTED}`);
}

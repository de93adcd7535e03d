/**
 * `api.authUrl`, the host root of the token endpoints: when not given, the scheme, host and port of
 * `api.url` (https://api.example.com/v1 → https://api.example.com), so a user who sets only the API's
 * URL sends token requests to the same host. `api.authUrl` and SITEHOST_AUTH_URL still override it.
 */

/** The scheme, host and port of an http(s) URL, without user info, path, query or fragment. */
export function hostRootOf(apiUrl: string): string {
  const u = new URL(apiUrl);
  return `${u.protocol}//${u.host}`;
}

/** The host (and port, when given) of a URL; undefined when it is no URL. */
function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}

/**
 * A warning when `api.authUrl` points at another host than `api.url` (a token endpoint on another
 * host is legitimate, but more often a leftover of an example or an older setup); undefined when they
 * agree. Derived values always agree.
 */
export function authHostWarning(api: { url: string; authUrl: string }): string | undefined {
  const apiHost = hostOf(api.url);
  const authHost = hostOf(api.authUrl);
  if (apiHost === undefined || authHost === undefined || apiHost === authHost) return undefined;
  return `api.authUrl (SITEHOST_AUTH_URL) points at ${authHost} but api.url (SITEHOST_API_URL) at ${apiHost}: token requests go to ${authHost}; if the token endpoint is on the API's host, remove api.authUrl (it defaults to the scheme, host and port of api.url)`;
}

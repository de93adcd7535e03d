/**
 * The one reader of `host:port` listen addresses, shared by the config schema (so check-config
 * rejects what the server could not bind) and the HTTP server.
 */
import { isIPv6 } from "node:net";

export interface ListenAddress {
  /** undefined: every interface. */
  host: string | undefined;
  port: number;
}

const EXAMPLES = ":10987, 127.0.0.1:10987 or [::1]:10987";

/** `:10987`, `0.0.0.0:10987`, `localhost:0`, `[::1]:10987`; throws an Error saying what is expected. */
export function parseListenAddress(address: string): ListenAddress {
  const m = /^(?:\[([^\]]*)\]|([^:[\]\s]*)):(\d{1,5})$/.exec(address);
  const port = Number(m?.[3]);
  const v6 = m?.[1];
  if (!m || port > 65535 || (v6 !== undefined && !isIPv6(v6))) {
    throw new Error(`${JSON.stringify(address)} is not host:port such as ${EXAMPLES}`);
  }
  const host = v6 ?? (m[2] === "" ? undefined : m[2]);
  return { host, port };
}

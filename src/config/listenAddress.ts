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

/** How to choose another listen address, every way it can be given. */
const CHOOSE = "choose another with --web.listen-address (web.listenAddress, SITEHOST_LISTEN_ADDRESS)";

/**
 * Why the HTTP server could not listen on `address`, naming the address and the settings that choose
 * another; errors other than the known ones keep their message, with the address.
 */
export function listenFailure(err: NodeJS.ErrnoException, address: string): Error {
  let parsed: ListenAddress | undefined;
  try {
    parsed = parseListenAddress(address);
  } catch {
    // the server parsed it before it listened; keep the text as given
  }
  const shown =
    parsed?.host === undefined && parsed ? `port ${parsed.port} (${address}, every interface)` : address;
  switch (err.code) {
    case "EADDRINUSE":
      return new Error(`${shown} is already in use by another process: ${CHOOSE}`, { cause: err });
    case "EACCES":
      return new Error(
        `${shown}: permission denied (ports below 1024 need privileges, or a security policy forbids it): ${CHOOSE}`,
        { cause: err },
      );
    case "EADDRNOTAVAIL":
      return new Error(
        `${shown}: ${parsed?.host ?? "the host"} is not an address of this machine: ${CHOOSE}`,
        {
          cause: err,
        },
      );
    default:
      return new Error(`cannot listen on ${shown}: ${err.message}`, { cause: err });
  }
}

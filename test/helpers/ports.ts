/**
 * Test helper: loopback ports. `freePort` for a child process that will listen (the binaries cannot
 * report a port-0 listener back); `refusedPort` for a test that needs "nothing listens here".
 *
 * A port opened and closed again is not a refused port: the kernel hands the same ephemeral port to the
 * next `listen(0)`, and with test files running in parallel another test's server may be on it a moment
 * later (a webhook test once got 404s from somebody else's server). `refusedPort` picks a port below the
 * kernel's ephemeral range, where no `listen(0)` of this suite can land, and checks that it refuses.
 */
import { readFileSync } from "node:fs";
import { connect, createServer } from "node:net";

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** The first port the kernel hands out to `listen(0)` (32768 on Linux by default). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 2048 ? low : 32768;
  } catch {
    return 32768;
  }
}

function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port });
    s.once("connect", () => (s.destroy(), resolve(false)));
    s.once("error", (e: NodeJS.ErrnoException) => resolve(e.code === "ECONNREFUSED"));
  });
}

/** A port on 127.0.0.1 that refuses connections and that no other test's `listen(0)` can take. */
export async function refusedPort(): Promise<number> {
  const low = 1024;
  const high = ephemeralLow() - 1;
  for (let tries = 0; tries < 50; tries++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (await refuses(port)) return port;
  }
  throw new Error(`no refusing port found on 127.0.0.1 between ${low} and ${high}`);
}

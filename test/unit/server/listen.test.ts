/**
 * A listen address the server cannot take names the address and every way to choose another: the
 * flag, the config key and the environment variable.
 */
import { createServer, type AddressInfo, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { listenFailure } from "../../../src/config/listenAddress.js";
import { startHttpServer } from "../../../src/server/http.js";
import { makeExposition, silentLogger, statusOf } from "./helpers.js";

const CHOOSE = "choose another with --web.listen-address (web.listenAddress, SITEHOST_LISTEN_ADDRESS)";

let occupier: Server | undefined;
afterEach(async () => {
  await new Promise((r) => (occupier ? occupier.close(r) : r(undefined)));
  occupier = undefined;
});

describe("a listen address in use", () => {
  it("the server's start fails naming the address and the settings, not `listen EADDRINUSE`", async () => {
    const taken = createServer();
    occupier = taken;
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
    const address = `127.0.0.1:${(taken.address() as AddressInfo).port}`;
    const err = await startHttpServer({
      listenAddress: address,
      telemetryPath: "/metrics",
      exposition: makeExposition().exposition,
      readiness: () => ({ ready: true }),
      status: () => statusOf(),
      logger: silentLogger,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe(`${address} is already in use by another process: ${CHOOSE}`);
    expect(((err as Error).cause as NodeJS.ErrnoException).code).toBe("EADDRINUSE");
  });

  it("every interface, a privileged port, an address not of this machine, and the rest", () => {
    const errno = (code: string, message = code) => Object.assign(new Error(message), { code });
    expect(listenFailure(errno("EADDRINUSE"), ":10987").message).toBe(
      `port 10987 (:10987, every interface) is already in use by another process: ${CHOOSE}`,
    );
    expect(listenFailure(errno("EACCES"), "0.0.0.0:80").message).toBe(
      `0.0.0.0:80: permission denied (ports below 1024 need privileges, or a security policy forbids it): ${CHOOSE}`,
    );
    expect(listenFailure(errno("EADDRNOTAVAIL"), "10.9.9.9:10987").message).toBe(
      `10.9.9.9:10987: 10.9.9.9 is not an address of this machine: ${CHOOSE}`,
    );
    expect(listenFailure(errno("EMFILE", "too many open files"), "[::1]:10987").message).toBe(
      "cannot listen on [::1]:10987: too many open files",
    );
  });
});

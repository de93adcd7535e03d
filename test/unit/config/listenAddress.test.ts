/** One reading of listen addresses: what the config accepts is what the server binds. */
import { describe, expect, it } from "vitest";
import { parseListenAddress } from "../../../src/config/listenAddress.js";
import { ConfigSchema } from "../../../src/config/schema.js";

const schemaAccepts = (address: string) =>
  ConfigSchema.safeParse({ web: { listenAddress: address } }).success;

describe("parseListenAddress", () => {
  it.each([
    [":10987", { host: undefined, port: 10987 }],
    ["127.0.0.1:0", { host: "127.0.0.1", port: 0 }],
    ["0.0.0.0:8080", { host: "0.0.0.0", port: 8080 }],
    ["[::1]:0", { host: "::1", port: 0 }],
    ["[::]:10987", { host: "::", port: 10987 }],
    ["localhost:65535", { host: "localhost", port: 65535 }],
  ])("%s", (text, expected) => {
    expect(parseListenAddress(text)).toEqual(expected);
    expect(schemaAccepts(text)).toBe(true);
  });

  // Each of these was accepted by one of the two readers the project used to have and refused
  // by the other (or by the server only when it started).
  it.each([
    "10987",
    "localhost",
    "::1:80",
    "127.0.0.1:",
    "127.0.0.1:65536",
    "host:-1",
    "garbage:abc",
    "",
    " :10987",
    ":10987 ",
    "[::1:80",
    "[not-an-ip]:80",
    "[[::1]]:80",
    "local host:80",
    ":0000010987",
  ])("%j is rejected by the parser and the schema alike", (text) => {
    expect(() => parseListenAddress(text)).toThrow(/is not host:port/);
    expect(schemaAccepts(text)).toBe(false);
  });
});

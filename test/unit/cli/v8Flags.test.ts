/** When the CLI re-executes itself with memory-lean V8 flags, and when it leaves the process alone. */
import { describe, expect, it } from "vitest";
import { LEAN_V8_FLAGS, leanReexecArgs } from "../../../src/cli/v8Flags.js";

const node = "/usr/bin/node";
const main = "/app/dist/src/cli/main.js";

describe("lean V8 flags", () => {
  it("re-executes the daemon with the flags first and the user's own node options after them", () => {
    expect(leanReexecArgs([node, main, "run", "--config", "c.yaml"], ["--enable-source-maps"], {})).toEqual([
      "--max-semi-space-size=2",
      "--optimize-for-size",
      "--enable-source-maps",
      main,
      "run",
      "--config",
      "c.yaml",
    ]);
    // `run` is the default command; demo runs the daemon too.
    expect(leanReexecArgs([node, main, "--config", "c.yaml"], [], {})?.slice(0, 2)).toEqual([
      ...LEAN_V8_FLAGS,
    ]);
    expect(leanReexecArgs([node, main, "demo"], [], {})).toBeDefined();
  });

  it("leaves short commands, a second pass and an explicit choice alone", () => {
    for (const cmd of ["once", "check-config", "simulate", "--version"])
      expect(leanReexecArgs([node, main, cmd], [], {}), cmd).toBeUndefined();
    expect(leanReexecArgs([node, main, "run"], [], { SITEHOST_NODE_FLAGS_APPLIED: "1" })).toBeUndefined();
    expect(leanReexecArgs([node, main, "run"], [], { SITEHOST_NODE_FLAGS: "off" })).toBeUndefined();
    expect(
      leanReexecArgs([node, main, "run"], [], { NODE_OPTIONS: "--max-semi-space-size=16" }),
    ).toBeUndefined();
    expect(leanReexecArgs([node, main, "run"], ["--optimize_for_size"], {})).toBeUndefined();
  });
});

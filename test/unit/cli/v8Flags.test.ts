/** When the CLI re-executes itself with Node.js flags, and when it leaves the process alone. */
import { describe, expect, it } from "vitest";
import { LEAN_V8_FLAGS, leanReexecArgs, NO_SIGUSR1_INSPECTOR } from "../../../src/cli/v8Flags.js";

const node = "/usr/bin/node";
const main = "/app/dist/src/cli/main.js";

describe("Node.js flags of the long-running commands", () => {
  it("re-executes the daemon with the flags first and the user's own node options after them", () => {
    expect(leanReexecArgs([node, main, "run", "--config", "c.yaml"], ["--enable-source-maps"], {})).toEqual([
      "--max-semi-space-size=2",
      "--optimize-for-size",
      "--disable-sigusr1",
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
    expect(leanReexecArgs([node, main, "demo"], [], {})).toContain(NO_SIGUSR1_INSPECTOR);
  });

  it("keeps the inspector off SIGUSR1 even when the memory flags are opted out of", () => {
    expect(leanReexecArgs([node, main, "run"], [], { SITEHOST_NODE_FLAGS: "off" })).toEqual([
      NO_SIGUSR1_INSPECTOR,
      main,
      "run",
    ]);
    expect(
      leanReexecArgs([node, main, "demo"], [], { NODE_OPTIONS: "--max-semi-space-size=16" })?.slice(0, 1),
    ).toEqual([NO_SIGUSR1_INSPECTOR]);
    // The simulator runs until stopped too; it gets no memory flags.
    expect(leanReexecArgs([node, main, "simulate"], [], {})).toEqual([
      NO_SIGUSR1_INSPECTOR,
      main,
      "simulate",
    ]);
  });

  it("leaves short commands, a second pass and flags already given alone", () => {
    for (const cmd of ["once", "check-config", "--version"])
      expect(leanReexecArgs([node, main, cmd], [], {}), cmd).toBeUndefined();
    expect(leanReexecArgs([node, main, "run"], [], { SITEHOST_NODE_FLAGS_APPLIED: "1" })).toBeUndefined();
    expect(
      leanReexecArgs([node, main, "run"], [], {
        SITEHOST_NODE_FLAGS: "off",
        NODE_OPTIONS: "--disable-sigusr1",
      }),
    ).toBeUndefined();
    expect(
      leanReexecArgs([node, main, "run"], ["--optimize_for_size", "--disable-sigusr1"], {}),
    ).toBeUndefined();
  });
});

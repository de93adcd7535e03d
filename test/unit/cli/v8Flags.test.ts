/** When the CLI re-executes itself with Node.js flags, which ones, and when it leaves the process alone. */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  exporterHeapFlagsApplied,
  LEAN_MALLOC_ENV,
  leanReexecArgs,
  NO_SIGUSR1_INSPECTOR,
  PRESET,
  V8_FLAGS,
  workloadOf,
  type Workload,
} from "../../../src/cli/v8Flags.js";

const node = "/usr/bin/node";
const main = "/app/dist/src/cli/main.js";
const logs = () => "logs" as const;

describe("Node.js flags of the long-running commands", () => {
  it("re-executes the daemon with the flags first and the user's own node options after them", () => {
    expect(
      leanReexecArgs(
        [node, main, "run", "--config", "c.yaml"],
        ["--enable-source-maps"],
        {},
        () => "metrics",
      ),
    ).toEqual([
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
    expect(
      leanReexecArgs([node, main, "--config", "c.yaml"], [], {}, logs)?.slice(0, V8_FLAGS.logs.length),
    ).toEqual([...V8_FLAGS.logs]);
    expect(leanReexecArgs([node, main, "demo"], [], {}, logs)).toContain(NO_SIGUSR1_INSPECTOR);
  });

  it("favours memory when only metrics are collected and CPU per record when logs are shipped", () => {
    const files: Record<string, string> = {
      "off.yaml": "logs:\n  enabled: false\n",
      "on.yaml": "logs:\n  enabled: true\n",
      "silent.yaml": "api:\n  clientId: x\n",
      "broken.yaml": "logs: [\n",
    };
    const read = (file: string) => {
      const text = files[file];
      if (text === undefined) throw new Error(`ENOENT ${file}`);
      return text;
    };
    const workload = (...args: string[]) => workloadOf([node, main, ...args], read);
    expect(workload("run", "--config", "off.yaml")).toBe("metrics");
    expect(workload("--config=off.yaml")).toBe("metrics");
    expect(workload("run", "--config", "on.yaml")).toBe("logs");
    // Logs are on by default; a file that cannot be read or parsed is left to the real load to report.
    expect(workload("run", "--config", "silent.yaml")).toBe("logs");
    expect(workload("run")).toBe("logs");
    expect(workload("run", "--config", "broken.yaml")).toBe("logs");
    expect(workload("run", "--config", "missing.yaml")).toBe("logs");
    // The demo always ships logs.
    expect(workload("demo", "--config", "off.yaml")).toBe("logs");
    expect(V8_FLAGS.metrics).toContain("--optimize-for-size");
    expect(V8_FLAGS.logs).not.toContain("--optimize-for-size");
  });

  it("uses the operator's own heap flags from SITEHOST_NODE_FLAGS instead of the chosen ones", () => {
    expect(
      leanReexecArgs(
        [node, main, "run"],
        [],
        { SITEHOST_NODE_FLAGS: " --max-old-space-size=512  --expose-gc " },
        logs,
      ),
    ).toEqual(["--max-old-space-size=512", "--expose-gc", NO_SIGUSR1_INSPECTOR, main, "run"]);
  });

  it("keeps the inspector off SIGUSR1 even when the heap flags are opted out of", () => {
    expect(leanReexecArgs([node, main, "run"], [], { SITEHOST_NODE_FLAGS: "off" }, logs)).toEqual([
      NO_SIGUSR1_INSPECTOR,
      main,
      "run",
    ]);
    expect(
      leanReexecArgs([node, main, "demo"], [], { NODE_OPTIONS: "--max-semi-space-size=16" }, logs)?.slice(
        0,
        1,
      ),
    ).toEqual([NO_SIGUSR1_INSPECTOR]);
    // The simulator runs until stopped too; it gets no heap flags.
    expect(leanReexecArgs([node, main, "simulate"], [], {}, logs)).toEqual([
      NO_SIGUSR1_INSPECTOR,
      main,
      "simulate",
    ]);
  });

  it("leaves short commands, a second pass and flags already given alone", () => {
    for (const cmd of ["once", "check-config", "--version"])
      expect(leanReexecArgs([node, main, cmd], [], {}, logs), cmd).toBeUndefined();
    expect(
      leanReexecArgs([node, main, "run"], [], { SITEHOST_NODE_FLAGS_APPLIED: "1" }, logs),
    ).toBeUndefined();
    expect(
      leanReexecArgs(
        [node, main, "run"],
        [],
        { SITEHOST_NODE_FLAGS: "off", NODE_OPTIONS: "--disable-sigusr1" },
        logs,
      ),
    ).toBeUndefined();
    expect(
      leanReexecArgs([node, main, "run"], ["--optimize_for_size", "--disable-sigusr1"], {}, () => "metrics"),
    ).toBeUndefined();
    expect(
      leanReexecArgs([node, main, "run"], ["--heap-growing-percent=10", "--disable-sigusr1"], {}, logs),
    ).toBeUndefined();
  });
});

describe("the memory saver mode is switched by the log load only under the exporter's own heap flags", () => {
  const applied = { SITEHOST_NODE_FLAGS_APPLIED: "1" };
  const ours = [...V8_FLAGS.logs, NO_SIGUSR1_INSPECTOR];
  it.each([
    ["re-executed with the logging flags", ours, applied, true],
    ["not re-executed (the flags were never applied)", ours, {}, false],
    ["metrics-only flags", [...V8_FLAGS.metrics, NO_SIGUSR1_INSPECTOR], applied, false],
    ["SITEHOST_NODE_FLAGS given", ours, { ...applied, SITEHOST_NODE_FLAGS: V8_FLAGS.logs.join(" ") }, false],
    [
      "the user's own heap flag instead of ours",
      ["--heap-growing-percent=10", NO_SIGUSR1_INSPECTOR],
      applied,
      false,
    ],
    ["the user's own --no-memory-saver-mode", [...ours, "--no-memory-saver-mode"], applied, false],
    [
      "the user's own memory saver in NODE_OPTIONS",
      ours,
      { ...applied, NODE_OPTIONS: "--memory_saver_mode" },
      false,
    ],
  ])("%s: %s", (_what, execArgv, env, want) => {
    expect(exporterHeapFlagsApplied(execArgv, env)).toBe(want);
  });
});

describe("the container image's entry point gives the flags itself", () => {
  const image = [NO_SIGUSR1_INSPECTOR, ...V8_FLAGS.logs];
  const preset = { [PRESET]: "logs" };
  const run = [node, main, "run", "--config", "c.yaml"];
  const metricsOnly = (): Workload => "metrics";

  it.each([
    ["logs shipped: runs on as started, no re-execution", image, {}, logs, undefined],
    [
      "a flag of the user's added to the entry point: still none",
      [...image, "--enable-source-maps"],
      {},
      logs,
      undefined,
    ],
    [
      "logs.enabled: false: the metrics flags instead of the image's",
      image,
      {},
      metricsOnly,
      [...V8_FLAGS.metrics, NO_SIGUSR1_INSPECTOR, main, "run", "--config", "c.yaml"],
    ],
    [
      "SITEHOST_NODE_FLAGS: those instead of the image's",
      image,
      { SITEHOST_NODE_FLAGS: "--max-old-space-size=512" },
      logs,
      ["--max-old-space-size=512", NO_SIGUSR1_INSPECTOR, main, "run", "--config", "c.yaml"],
    ],
    [
      "SITEHOST_NODE_FLAGS=off: V8's defaults, the inspector still off SIGUSR1",
      image,
      { SITEHOST_NODE_FLAGS: "off" },
      logs,
      [NO_SIGUSR1_INSPECTOR, main, "run", "--config", "c.yaml"],
    ],
    [
      "a heap flag in NODE_OPTIONS: the image's dropped, so the user's wins",
      image,
      { NODE_OPTIONS: "--max-semi-space-size=16" },
      logs,
      [NO_SIGUSR1_INSPECTOR, main, "run", "--config", "c.yaml"],
    ],
  ] as const)("%s", (_what, execArgv, env, workload, want) => {
    expect(leanReexecArgs(run, execArgv, { ...preset, ...env }, workload)).toEqual(want);
  });

  it("switches the memory saver mode under the image's flags as under its own re-execution", () => {
    expect(exporterHeapFlagsApplied(image, preset)).toBe(true);
    expect(
      exporterHeapFlagsApplied(image, { ...preset, SITEHOST_NODE_FLAGS: "--max-old-space-size=512" }),
    ).toBe(false);
    // Without the image's word for it, the same flags are the user's own.
    expect(exporterHeapFlagsApplied(image, {})).toBe(false);
  });

  it("is what the Dockerfile starts: these flags, PRESET and the allocator settings in its ENV", () => {
    const dockerfile = readFileSync(resolve(import.meta.dirname, "../../../Dockerfile"), "utf8");
    const entry = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
    expect(JSON.parse(entry ?? "null")).toEqual(["node", ...image, "dist/src/cli/main.js"]);
    const runtime = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
    const env = Object.fromEntries(
      [...runtime.matchAll(/^\s*(?:ENV )?([A-Z_]+)=(\S+?)(?: \\)?$/gm)].map((m) => [m[1], m[2]]),
    );
    expect(env).toMatchObject({ [PRESET]: "logs", ...LEAN_MALLOC_ENV.logs });
  });
});

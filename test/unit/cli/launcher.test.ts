/**
 * The package's `sitehost-exporter` command (bin/sitehost-exporter, linked into node_modules/.bin by
 * npm): a signal at any moment of start-up, Node.js's own included, is a graceful exit 0; Node.js runs
 * once with the exporter's V8 flags; other commands pass their output and exit code through.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { NO_SIGUSR1_INSPECTOR, V8_FLAGS } from "../../../src/cli/v8Flags.js";
import { builtCli } from "../../helpers/builtCli.js";
import {
  catches,
  exitWithin,
  hasLine,
  launcher,
  signalledDaemon,
  termSweep,
  until,
  type Daemon,
  type Via,
} from "../../helpers/signalledDaemon.js";

const { dir } = builtCli("launcher");
const SIGTERM = 15;

const daemon = (env: Record<string, string> = {}, args: string[] = ["run"], via: Via = "launcher"): Daemon =>
  signalledDaemon(dir, env, args, via);

/** The launcher's child (Node.js), once started. */
function childOf(d: Daemon): number | undefined {
  const pid = d.child.pid as number;
  try {
    const first = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/)[0];
    return first ? Number(first) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A preload that holds Node.js before any of the exporter's code runs (in the first process, or in
 * the one the program restarts into with other V8 flags) and says so on stderr: a signal then finds
 * only Node.js's default actions.
 */
function holdingStartHook(image: "first" | "restarted"): string {
  const hook = join(dir, `hold-start-${image}.mjs`);
  writeFileSync(
    hook,
    [
      'import { writeSync } from "node:fs";',
      `if (${image === "first" ? "!" : ""}process.env.SITEHOST_NODE_FLAGS_APPLIED) {`,
      '  writeSync(2, "hook: holding Node.js\'s start-up\\n");',
      "  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5000);",
      "}",
      "",
    ].join("\n"),
  );
  return hook;
}

describe("SIGTERM while Node.js itself still starts", () => {
  it.each([
    ["the sitehost-exporter command: a graceful exit 0", "launcher", { code: 0, signal: null }],
    ["node dist/src/cli/main.js: the signal's default action", "node", { code: null, signal: "SIGTERM" }],
  ] as const)("%s", async (_what, via, want) => {
    const d = daemon({ NODE_OPTIONS: `--import=${holdingStartHook("first")}` }, ["run"], via);
    await until(hasLine(d, "hook: holding Node.js's start-up"), "the held start-up", d);
    d.child.kill("SIGTERM");
    expect(await exitWithin(d, 20_000)).toEqual(want);
  });

  it("in the process the program restarts into (logs off: other V8 flags), exit 0 too", async () => {
    const config = join(dir, "metrics-only.yaml");
    writeFileSync(config, "logs:\n  enabled: false\n");
    const d = daemon({ NODE_OPTIONS: `--import=${holdingStartHook("restarted")}` }, [
      "run",
      "--config",
      config,
    ]);
    await until(hasLine(d, "hook: holding Node.js's start-up"), "the held start-up of the restart", d);
    d.child.kill("SIGTERM");
    expect(await exitWithin(d, 20_000)).toEqual({ code: 0, signal: null });
  });
});

describe("SIGTERM at any moment of start-up", () => {
  it("is a graceful exit 0, from the launcher's first line through the daemon's start", async () => {
    const delays = Array.from({ length: 13 }, (_, i) => i * 50);
    // From the moment the shell runs its first line: before that, no program can act (any program's case).
    const outcomes = await termSweep(daemon, delays, (d) => catches(d.child.pid as number, SIGTERM));
    expect(outcomes).toEqual(delays.map((delay) => `${delay}: 0`));
  }, 60_000);

  it("Node.js runs once, with the exporter's flags: the program does not restart itself", async () => {
    const d = daemon();
    await until(hasLine(d, "sitehost-exporter started"), "start", d);
    const node = childOf(d);
    expect(node).toBeDefined();
    const argv = readFileSync(`/proc/${node}/cmdline`, "utf8").split("\0");
    expect(argv.slice(1, 1 + 1 + V8_FLAGS.logs.length)).toEqual([NO_SIGUSR1_INSPECTOR, ...V8_FLAGS.logs]);
    expect(readFileSync(`/proc/${node}/environ`, "utf8")).not.toContain("SITEHOST_NODE_FLAGS_APPLIED");
    d.child.kill("SIGTERM");
    expect(await exitWithin(d, 20_000)).toEqual({ code: 0, signal: null });
  });
});

describe("other ends are passed on", () => {
  // A second SIGTERM: test/unit/cli/signals.test.ts, through the launcher too.
  it("Node.js killed from outside (SIGKILL): the command ends by SIGKILL", async () => {
    const d = daemon();
    await until(hasLine(d, "sitehost-exporter started"), "start", d);
    process.kill(childOf(d) as number, "SIGKILL");
    expect(await exitWithin(d, 20_000)).toEqual({ code: null, signal: "SIGKILL" });
  });

  it("through npm's link in node_modules/.bin: output, arguments and exit codes as the program's", () => {
    const bin = join(dir, "node_modules/.bin");
    mkdirSync(bin, { recursive: true });
    symlinkSync(launcher, join(bin, "sitehost-exporter"));
    const env = { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}` };
    const version = execFileSync(join(bin, "sitehost-exporter"), ["--version"], {
      cwd: dir,
      env,
      encoding: "utf8",
    });
    const pkg = JSON.parse(readFileSync(join(dirname(launcher), "../package.json"), "utf8")) as {
      version: string;
    };
    expect(version.trim()).toBe(pkg.version);
    const spaced = join(dir, "a config with spaces.yaml");
    writeFileSync(spaced, "api:\n  maxRequestsPerSecond: -3\n");
    const bad = spawnSync(join(bin, "sitehost-exporter"), ["check-config", "--config", spaced], {
      cwd: dir,
      env,
      encoding: "utf8",
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("api.maxRequestsPerSecond");
  });
});

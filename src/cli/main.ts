#!/usr/bin/env node
/**
 * sitehost-exporter command line. Exit codes: 0 ok; 1 runtime failure (auth,
 * API unreachable, crash); 2 invalid configuration or usage.
 *
 * This entry module stays small: it may re-execute the process with Node.js flags, then
 * installs the daemon's signal handlers, and only then loads the program (commander, the
 * configuration, the daemon), which takes a noticeable part of a second.
 */
import "./leanV8.js";
import { ShutdownSignals } from "./signals.js";
import { commandOf } from "./v8Flags.js";

const signals = commandOf(process.argv) === "run" ? new ShutdownSignals().install() : undefined;
if (!process.execArgv.includes("--disable-sigusr1") && commandOf(process.argv) !== "help") {
  // Where the re-execution with --disable-sigusr1 was not possible: a listener of our own
  // also keeps SIGUSR1 from opening the inspector.
  process.on("SIGUSR1", () => undefined);
}
const { runProgram } = await import("./program.js");
await runProgram(signals);

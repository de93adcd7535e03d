#!/usr/bin/env node
/**
 * sitehost-exporter command line. Exit codes: 0 ok; 1 runtime failure (auth,
 * API unreachable, crash); 2 invalid configuration or usage.
 *
 * This entry module stays small and loads in this order: the Node.js version guard; the daemon's
 * signal handling (so a SIGTERM at any moment from here on is a graceful exit 0); then, imported
 * dynamically so that none of it is loaded before the handlers are in place, the re-execution with
 * Node.js flags and the program itself (commander, the configuration, the daemon), which take a
 * noticeable part of a second. Static imports are all loaded before any code runs: keep them to these.
 */
import "./nodeVersion.js";
import { commandOf } from "./command.js";
import { ShutdownSignals } from "./signals.js";

const command = commandOf(process.argv);
const signals = command === "run" ? new ShutdownSignals().install() : undefined;
const { applyLeanV8Flags } = await import("./v8Flags.js");
// A turn of the event loop first: a signal that arrived while the modules loaded is handled (the
// process ends, exit 0) rather than lost in the re-execution.
await new Promise((resolve) => setImmediate(resolve));
// May re-execute the process with memory-lean V8 flags.
applyLeanV8Flags();
if (!process.execArgv.includes("--disable-sigusr1") && command !== "help") {
  // Where the re-execution with --disable-sigusr1 was not possible: a listener of our own
  // also keeps SIGUSR1 from opening the inspector.
  process.on("SIGUSR1", () => undefined);
}
const { runProgram } = await import("./program.js");
await runProgram(signals);

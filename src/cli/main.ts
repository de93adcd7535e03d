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
const { leanReexec } = await import("./v8Flags.js");
// May re-execute the process with memory-lean V8 flags: prepared first (the config file read), then
// a turn of the event loop, so a signal that arrived until then is handled (the process ends, exit
// 0), then at once re-executed. The handlers go first: a signal in that last instant ends the process
// by its default action instead of being taken by a handler of an image about to be replaced.
const reexec = leanReexec();
await new Promise((resolve) => setImmediate(resolve));
if (reexec) {
  signals?.uninstall();
  reexec();
  signals?.install();
}
if (!process.execArgv.includes("--disable-sigusr1") && command !== "help") {
  // Where the re-execution with --disable-sigusr1 was not possible: a listener of our own
  // also keeps SIGUSR1 from opening the inspector.
  process.on("SIGUSR1", () => undefined);
}
const { runProgram } = await import("./program.js");
await runProgram(signals);

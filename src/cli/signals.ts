/**
 * How the daemon ends on SIGTERM, SIGINT and SIGHUP. Installed by the entry point before
 * anything slow loads, so a signal at any moment after start-up is a graceful stop (exit 0):
 * before the daemon starts there is nothing to stop; while it starts, it is stopped as soon as
 * it is up.
 *
 * A second signal ends the process at once, by the signal itself; a copy of the first one that comes
 * within DUPLICATE_SIGNAL_MS is the same one, not a second: npm (`npx`, `npm start`) forwards the
 * terminal's Ctrl-C to its child, which the terminal sent it to already. The default disposition is
 * restored once the daemon has stopped (before it says so) and before any exit, so that even when
 * an exit handler blocks the main thread (a log transport flushing, a file-system call that never
 * returns) a further signal still ends it: a signal the JavaScript handler takes while the main
 * thread is about to block would never be acted on.
 *
 * No dependencies: this module is loaded before the rest of the program.
 */
import { writeSync } from "node:fs";

export const SHUTDOWN_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
type ShutdownSignal = (typeof SHUTDOWN_SIGNALS)[number];

/** How soon after the first signal the same signal again is a copy of it (npm's forwarding takes milliseconds). */
export const DUPLICATE_SIGNAL_MS = 300;

export interface ShutdownLog {
  info(signal: string, message: string): void;
  warn(signal: string, message: string): void;
  error(err: unknown, message: string): void;
}

export class ShutdownSignals {
  private state: "idle" | "starting" | "running" | "stopping" = "idle";
  private received: ShutdownSignal | undefined;
  private receivedAt = 0;
  private stop: (() => Promise<void>) | undefined;
  private log: ShutdownLog | undefined;
  private readonly handler = (signal: ShutdownSignal) => this.onSignal(signal);

  install(): this {
    for (const signal of SHUTDOWN_SIGNALS) process.on(signal, this.handler);
    return this;
  }

  /** The default dispositions back (before the process image is replaced). */
  uninstall(): void {
    this.restoreDefaults();
  }

  /** The daemon is being started: a signal now stops it once it is up. */
  starting(): void {
    this.state = "starting";
  }

  /** The daemon is up; a signal received while it started stops it now. */
  running(stop: () => Promise<void>, log: ShutdownLog): void {
    this.stop = stop;
    this.log = log;
    this.state = "running";
    if (this.received) this.beginStop(this.received);
  }

  /** Everything has stopped: from now on a signal ends the process by its default action. */
  stopped(): void {
    this.restoreDefaults();
  }

  /** process.exit(code), with the default signal dispositions back first. */
  exit(code: number): never {
    this.restoreDefaults();
    process.exit(code);
  }

  private onSignal(signal: ShutdownSignal): void {
    if (this.received !== undefined) {
      if (signal === this.received && performance.now() - this.receivedAt < DUPLICATE_SIGNAL_MS) return;
      return this.exitNow(signal);
    }
    this.received = signal;
    this.receivedAt = performance.now();
    if (this.state === "idle") this.exit(0);
    if (this.state === "running") this.beginStop(signal);
  }

  private beginStop(signal: ShutdownSignal): void {
    const stop = this.stop as () => Promise<void>;
    this.state = "stopping";
    this.log?.info(signal, "received signal; shutting down");
    stop().then(
      () => this.exit(0),
      (err: unknown) => {
        this.log?.error(err, "shutdown failed");
        this.exit(1);
      },
    );
  }

  /** The second signal: ends the process by that signal, whatever else is still running. */
  private exitNow(signal: ShutdownSignal): never {
    this.restoreDefaults();
    try {
      if (this.log) this.log.warn(signal, "second signal: exiting now");
      else writeSync(2, `sitehost-exporter: second ${signal}: exiting now\n`);
    } catch {
      // Saying so is a courtesy; ending is not.
    }
    process.kill(process.pid, signal);
    // Not reached: the default action of these signals ends the process.
    process.exit(1);
  }

  private restoreDefaults(): void {
    for (const signal of SHUTDOWN_SIGNALS) process.removeListener(signal, this.handler);
  }
}

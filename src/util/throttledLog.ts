/**
 * Warnings and errors that repeat (the same problem in every response, every poll or every webhook
 * delivery) are logged once, then at most once per interval per key with how many were left out
 * meanwhile.
 */
import type { Logger } from "pino";
import type { Clock } from "./time.js";

export class ThrottledWarnings {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs: number,
    private readonly clock: Pick<Clock, "now">,
    /** Keys remembered at most (the oldest are forgotten). */
    private readonly maxKeys = 1000,
  ) {}

  warn(key: string, fields: Record<string, unknown>, message: string): void {
    this.emit("warn", key, fields, message);
  }

  error(key: string, fields: Record<string, unknown>, message: string): void {
    this.emit("error", key, fields, message);
  }

  private emit(level: "warn" | "error", key: string, fields: Record<string, unknown>, message: string): void {
    const now = this.clock.now();
    const seen = this.last.get(key);
    if (seen && now - seen.at < this.intervalMs) {
      seen.suppressed += 1;
      return;
    }
    const suppressed = seen?.suppressed ?? 0;
    this.last.delete(key);
    this.last.set(key, { at: now, suppressed: 0 });
    if (this.last.size > this.maxKeys) this.last.delete(this.last.keys().next().value as string);
    this.logger[level](suppressed > 0 ? { ...fields, suppressedSinceLast: suppressed } : fields, message);
  }
}

/**
 * What a collector that keeps failing says: one line per cause, not one per run (or per site per
 * run). A cause is the collector with the reason of the failure (`network`, `auth`, `http_503`, …);
 * the first failure of a cause is logged with the error (its message names the URL and what to check),
 * the same cause on later runs only at debug level, and the first clean run after a failure is one
 * info line. Per-site failures of a run are summarised: how many sites, and the first one's error.
 */
import type { Logger } from "pino";
import { errorReason } from "../api/errors.js";

export interface SiteFailures {
  /** Sites that failed with this reason in one run. */
  count: number;
  site: { id: number; name: string };
  err: unknown;
}

export class FailureLog {
  /** Causes said, by collector. */
  private readonly said = new Map<string, Set<string>>();

  constructor(private readonly log: Logger) {}

  private firstTime(collector: string, cause: string): boolean {
    let causes = this.said.get(collector);
    if (!causes) this.said.set(collector, (causes = new Set()));
    if (causes.has(cause)) return false;
    causes.add(cause);
    return true;
  }

  /** A whole run failed. */
  runFailed(collector: string, err: unknown): void {
    const reason = errorReason(err);
    if (this.firstTime(collector, `run ${reason}`)) {
      this.log.error(
        { collector, reason, err },
        "collector run failed; said once for this cause, again when it changes or after a recovery",
      );
    } else this.log.debug({ collector, reason, err }, "collector run failed (same cause as before)");
  }

  /** Sites of a run failed, by reason (they keep their last samples). */
  sitesFailed(collector: string, failures: ReadonlyMap<string, SiteFailures>, sites: number): void {
    for (const [reason, f] of failures) {
      const fields = {
        collector,
        reason,
        failedSites: f.count,
        sites,
        site: f.site.name,
        siteId: f.site.id,
        err: f.err,
      };
      if (this.firstTime(collector, `sites ${reason}`)) {
        this.log.warn(
          fields,
          "site collection failed; keeping their last samples (said once for this cause)",
        );
      } else this.log.debug(fields, "site collection failed (same cause as before)");
    }
  }

  /** A run without failures: a collector that had failed says it works again. */
  succeeded(collector: string): void {
    const causes = this.said.get(collector);
    if (!causes || causes.size === 0) return;
    this.log.info({ collector, causes: [...causes] }, "collector works again");
    causes.clear();
  }
}

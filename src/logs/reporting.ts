/**
 * How the log pipeline reports what each stream's tailer and shipper do: the per-stream self-metrics,
 * and log lines for what needs a person (a gap, a corrupt checkpoint, a collector that refuses
 * records or is down), repeats summarised.
 */
import type { Logger } from "pino";
import type { LogStream } from "../api/schemas.js";
import type { ThrottledWarnings } from "../util/throttledLog.js";
import type { Checkpoint } from "./checkpoint.js";
import type { LogMetrics } from "./metrics.js";
import type { ShipperHooks } from "./shipper.js";
import { streamLabels } from "./streams.js";
import type { SiteIdentity, TailerEvents } from "./tailer.js";

export interface Reporting {
  metrics: LogMetrics;
  log: Logger;
  warnings: ThrottledWarnings;
}

export function tailerEvents(r: Reporting, site: SiteIdentity, stream: LogStream): TailerEvents {
  const m = r.metrics;
  return {
    deduplicated: (n) => m.deduplicated.inc({ stream }, n),
    malformed: (n) => m.malformed.inc({ stream }, n),
    future: (n) => {
      m.future.inc({ stream }, n);
      r.warnings.warn(
        `future ${stream}`,
        { stream, siteId: site.id, site: site.name, entries: n },
        "log entries stamped more than a minute in the future (clock skew?): shipped, without moving the checkpoint past now",
      );
    },
    late: (n) => m.late.inc({ stream }, n),
    gap: (fromMs, toMs) => {
      m.gaps.inc({ stream });
      r.log.warn(
        {
          site: site.name,
          siteId: site.id,
          stream,
          from: new Date(fromMs).toISOString(),
          to: new Date(toMs).toISOString(),
        },
        "log gap: the platform's retention removed entries after the checkpoint",
      );
    },
    checkpointError: (err) => {
      m.checkpointErrors.inc({ stream });
      r.log.error({ site: site.name, siteId: site.id, stream, file: err.file, err }, err.message);
    },
    readToEnd: (atMs) => m.lastRead.set(streamLabels(site, stream), atMs / 1000),
    startedFresh: (fromMs) => {
      m.startedFresh.inc({ stream });
      r.warnings.warn(
        `fresh ${stream}`,
        { stream, siteId: site.id, site: site.name, from: new Date(fromMs).toISOString() },
        "log streams without a checkpoint start at logs.startFrom: entries written before it are not shipped (a new site, a site new to this shard, or a checkpoint directory that was not kept)",
      );
    },
  };
}

/** `delivered`: what else to do after a commit (the log-derived counters, the lag). */
export function shipperHooks(
  r: Reporting,
  site: SiteIdentity,
  stream: LogStream,
  delivered: (checkpoint: Checkpoint) => void,
): ShipperHooks {
  return {
    delivered: (count, cp) => {
      r.metrics.shipped.inc({ stream }, count);
      delivered(cp);
    },
    rejected: (count, reason) => {
      r.metrics.rejected.inc({ stream }, count);
      r.warnings.warn(
        `rejected ${stream} ${reason}`,
        { stream, siteId: site.id, site: site.name, records: count, reason },
        "the OTLP collector refused log records for good; they were dropped (sitehost_exporter_log_records_rejected_total)",
      );
    },
    retrying: (outcome, attempt, waitMs) => {
      r.metrics.exportFailures.inc({ stream });
      if (attempt === 0 || attempt % 10 === 0) {
        r.log.warn(
          { stream, reason: outcome.reason, attempt, retryInMs: Math.round(waitMs) },
          outcome.kind === "misconfigured"
            ? "the OTLP collector refuses every export (check OTEL_EXPORTER_OTLP_ENDPOINT and _HEADERS); retrying, not fetching meanwhile"
            : "OTLP export failed; retrying (not fetching meanwhile)",
        );
      }
    },
  };
}

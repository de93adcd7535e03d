/**
 * What the API client does with the records validation skipped and the fields it found missing:
 * counted by route template and field, and one warning per problem (repeats summarised).
 */
import type { ThrottledWarnings } from "../util/throttledLog.js";
import type { DecodeContext } from "./decode.js";
import type { ApiSelfMetrics } from "./selfMetrics.js";

export function recordReporter(
  metrics: Pick<ApiSelfMetrics, "invalidRecords" | "fieldDrift">,
  warnings: ThrottledWarnings,
): (endpoint: string) => DecodeContext["reportRejected"] {
  return (endpoint) =>
    ({ rejected, firstRejected, rejectedFields, drift }) => {
      for (const [field, n] of Object.entries(rejectedFields ?? {})) {
        metrics.invalidRecords.inc({ endpoint, field }, n);
      }
      if (rejected > 0) {
        // One line per response, and repeats of the same problem summarised.
        warnings.warn(
          `${endpoint} ${firstRejected?.field.replace(/\[\d+\]/g, "[]") ?? ""}`,
          { endpoint, rejected, field: firstRejected?.field, problem: firstRejected?.problem },
          "skipped API records that do not fit the expected schema",
        );
      }
      for (const [field, n] of Object.entries(drift ?? {})) {
        metrics.fieldDrift.inc({ endpoint, field }, n);
        warnings.warn(
          `${endpoint} drift ${field}`,
          { endpoint, field, records: n },
          "API records lack this field or hold it in an unreadable form; kept without it (the platform's format may have changed)",
        );
      }
    };
}

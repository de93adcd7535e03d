/** A new entry on its way to the collector. */
import type { ActivityEntry, LogEntry } from "../api/schemas.js";

export type StreamEntry = LogEntry | ActivityEntry;

export interface PendingRecord {
  entry: StreamEntry;
  /** The entry's own time, ms. */
  timeMs: number;
  fingerprint: string;
  /** Index of this occurrence among identical entries (identical lines in one second are all real). */
  occurrence: number;
}

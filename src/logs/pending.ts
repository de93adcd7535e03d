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

/** An activity log entry (what only the activity streams read): it has an id and an action name. */
export function isActivityEntry(entry: StreamEntry): entry is ActivityEntry {
  const { id, name } = entry as { id?: unknown; name?: unknown };
  return typeof name === "string" && (typeof id === "number" || typeof id === "string");
}

/** A record's `log.record.uid`: unique per site and stream (the same line in two sites is two records). */
import type { LogStream } from "../api/schemas.js";

export function recordUid(
  siteId: number,
  stream: LogStream,
  fingerprint: string,
  occurrence: number,
): string {
  return `${recordUidPrefix(siteId, stream)}${fingerprint}-${occurrence}`;
}

/** What a record's uid begins with: its site (the account's log: `account`) and stream. */
export function recordUidPrefix(siteId: number, stream: LogStream): string {
  return `${siteId === 0 ? "account" : siteId}-${stream}-`;
}

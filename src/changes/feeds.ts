/**
 * The book's feeds: what the activity logs, the webhook receiver and the site collectors hand over,
 * turned into reports. Of the collectors' reads only the previous cms administrators of each site are
 * kept (a new login is a change); the deploy and restore lists carry their own times.
 */
import { createHash } from "node:crypto";
import type { ActivityEntry } from "../api/logSchemas.js";
import type { Sample } from "../metrics/sample.js";
import type { WebhookPayload } from "../webhooks/payload.js";
import type { ChangeBook } from "./book.js";
import { changeOfActivity, changeOfEvent } from "./kinds.js";
import { changesOfCollected, type PolledRead } from "./polled.js";
import { pointReport } from "./report.js";

/** An activity log entry of site `siteId` that took effect at `atMs` (this process's clock). */
export function reportActivity(book: ChangeBook, siteId: number, entry: ActivityEntry, atMs: number): void {
  const kind = changeOfActivity(entry);
  if (kind) book.report(pointReport({ siteId, kind, source: "activity", key: String(entry.id), atMs }));
}

/** A webhook event received at `receivedMs`; a delivery of the same body again is a repeat. */
export function reportEvent(book: ChangeBook, payload: WebhookPayload, receivedMs: number): void {
  const change = changeOfEvent(payload);
  if (!change) return;
  const key = createHash("sha256").update(JSON.stringify(payload)).digest("hex").slice(0, 32);
  book.report(
    pointReport({
      siteId: change.siteId,
      kind: change.kind,
      source: "webhook",
      key,
      atMs: change.atMs ?? receivedMs,
    }),
  );
}

/** Collectors whose previous read is compared with the next. */
const COMPARED = new Set(["access"]);

/** What the site collectors read, as reports (the listener of each site's samples). */
export function collectedChanges(
  book: ChangeBook,
  now: () => number = Date.now,
): (collector: string, site: { id: number }, samples: readonly Sample[]) => void {
  const previous = new Map<string, PolledRead>();
  return (collector, site, samples) => {
    const read: PolledRead = { samples, atMs: now() };
    const key = `${collector}:${site.id}`;
    const before = previous.get(key);
    if (COMPARED.has(collector)) previous.set(key, read);
    for (const report of changesOfCollected(collector, site.id, before, read)) book.report(report);
  };
}

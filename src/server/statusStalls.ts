/**
 * The status report's part for log streams that cannot advance: how many by reason, and the longest
 * stalled by site, stream, reason, since when and what the last read met. At thousands of streams
 * (a revoked token fails every read) the part stays short: counts, and the first few by name.
 */
import { STALL_REASONS, type StallReason } from "../logs/stall.js";
import type { StatusInputs, StatusReport } from "./statusTypes.js";

/** What each reason means, for the summary. */
export const STALL_WORDS: Record<StallReason, string> = {
  too_large: "a log page over api.maxResponseSize",
  checkpoint_corrupt: "a corrupt checkpoint",
  malformed: "nothing but malformed entries",
  read_failures: "reads that keep failing",
};

export function logStreamsPart(i: StatusInputs): StatusReport["logStreams"] {
  const none = { stalled: 0, byReason: {}, first: [] };
  if (!i.logs.enabled)
    return { ...none, health: "off", summary: "logs are not tailed (logs.enabled: false)" };
  const stalls = i.active?.logStalls;
  if (!stalls) return { ...none, health: "pending", summary: "no log stream is read (standing by)" };
  if (stalls.total === 0) return { ...none, health: "ok", summary: "every log stream advances" };
  const byReason: Partial<Record<StallReason, number>> = {};
  for (const reason of STALL_REASONS)
    if (stalls.byReason[reason] > 0) byReason[reason] = stalls.byReason[reason];
  const counts = STALL_REASONS.filter((r) => byReason[r] !== undefined)
    .map((r) => `${byReason[r]} by ${STALL_WORDS[r]} (${r})`)
    .join(", ");
  const first = stalls.first.map((s) => ({
    siteId: s.siteId,
    site: s.siteId === 0 ? "account" : s.site,
    stream: s.stream,
    reason: s.reason,
    since: new Date(s.sinceMs).toISOString(),
    detail: s.detail,
  }));
  const oldest = first[0];
  const named = oldest ? `; the longest: ${oldest.site} ${oldest.stream} (${oldest.reason})` : "";
  return {
    stalled: stalls.total,
    byReason,
    first,
    // A corrupt checkpoint waits for a person; the other reasons may pass (or are skipped) by themselves.
    health: byReason.checkpoint_corrupt ? "critical" : "warning",
    summary: `${stalls.total} log stream${stalls.total === 1 ? "" : "s"} cannot advance: ${counts}${named}`,
    lastError: oldest?.detail,
    since: oldest?.since,
  };
}

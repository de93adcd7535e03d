/**
 * The checkpoint journal's format: one JSON object a line, `{"s":<seq>,"h":<high-water ms>,"a":[…],
 * "c":{…}}` for a delta appended before its export is sent, `{"k":<seq>}` for its commit marker.
 * Replaying applies, in order, the deltas that have a marker and ignores the rest (an export never
 * acknowledged, a torn last line).
 */
import { applyDelta, type Checkpoint, type CheckpointDelta, CorruptCheckpointError } from "./checkpoint.js";

export function deltaLine(delta: CheckpointDelta): string {
  return `${JSON.stringify({ s: delta.seq, h: delta.highWaterMs, a: delta.add, c: delta.counts })}\n`;
}

export function commitLine(seq: number): string {
  return `{"k":${seq}}\n`;
}

/** Apply the committed deltas of a journal's text, in order; stop at a torn tail. */
export function replayJournal(cp: Checkpoint, text: string, file: string): void {
  const pending = new Map<number, CheckpointDelta>();
  let at = 0;
  let lineNo = 0;
  while (at < text.length) {
    const end = text.indexOf("\n", at);
    if (end < 0) break; // a torn last line: its export was never committed
    const line = text.slice(at, end);
    at = end + 1;
    lineNo += 1;
    let record: { k?: unknown; s?: unknown; h?: unknown; a?: unknown; c?: unknown };
    try {
      record = JSON.parse(line) as typeof record;
    } catch {
      throw new CorruptCheckpointError(file, `line ${lineNo} is not valid JSON`);
    }
    if (typeof record.k === "number") {
      const delta = pending.get(record.k);
      // Commits older than the snapshot were folded into it already.
      if (record.k <= cp.seq) continue;
      if (!delta || record.k !== cp.seq + 1) {
        throw new CorruptCheckpointError(file, `line ${lineNo} commits record ${record.k} out of order`);
      }
      applyDelta(cp, delta);
      pending.delete(record.k);
    } else if (typeof record.s === "number" && typeof record.h === "number" && Array.isArray(record.a)) {
      pending.set(record.s, {
        seq: record.s,
        highWaterMs: record.h,
        add: record.a as CheckpointDelta["add"],
        counts: (record.c ?? {}) as Record<string, number>,
      });
    } else {
      throw new CorruptCheckpointError(file, `line ${lineNo} is neither a delta nor a commit`);
    }
  }
}

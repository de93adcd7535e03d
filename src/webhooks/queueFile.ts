/**
 * The webhook queue's file format: `{"q":<seq>,"r":<record>}` per queued record and `{"k":[<seq>,…]}`
 * per acknowledgement, one JSON object a line.
 */
import type { OutgoingRecord } from "../logs/otlp/encode.js";

export interface QueuedRecord {
  seq: number;
  record: OutgoingRecord;
  /** Bytes of its line in the file. */
  bytes: number;
}

export function queueLine(seq: number, record: OutgoingRecord): string {
  return `${JSON.stringify({ q: seq, r: record })}\n`;
}

export function ackLine(seqs: readonly number[]): string {
  return `${JSON.stringify({ k: seqs })}\n`;
}

/** The records of a queue file that have no acknowledgement, oldest first; torn or unreadable lines skipped. */
export function parseQueueFile(text: string): { records: QueuedRecord[]; skipped: number } {
  const pending = new Map<number, QueuedRecord>();
  let skipped = 0;
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf("\n", at);
    if (end < 0) {
      skipped += 1; // a torn last line: its delivery was never answered
      break;
    }
    const line = text.slice(at, end);
    at = end + 1;
    let parsed: { q?: unknown; r?: unknown; k?: unknown };
    try {
      parsed = JSON.parse(line) as typeof parsed;
    } catch {
      skipped += 1;
      continue;
    }
    if (typeof parsed.q === "number" && typeof parsed.r === "object" && parsed.r !== null) {
      pending.set(parsed.q, {
        seq: parsed.q,
        record: parsed.r as OutgoingRecord,
        bytes: Buffer.byteLength(line) + 1,
      });
    } else if (Array.isArray(parsed.k)) {
      for (const seq of parsed.k) pending.delete(seq as number);
    } else skipped += 1;
  }
  return { records: [...pending.values()].sort((a, b) => a.seq - b.seq), skipped };
}

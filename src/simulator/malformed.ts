/**
 * The malformedRate fault: records sent with one field the platform's documentation says is there
 * missing or of the wrong type, so any client that reads records by the documentation notices.
 */
import type { Rng } from "./random.js";

/** Fields each record kind cannot do without. */
export const CRITICAL_FIELDS = {
  site: ["id", "name", "state", "staging"],
  usage: ["billing_cycle"],
  domain: ["primary", "healthy", "domainName"],
  backup: ["timestamp", "databaseBackupId"],
  extension: ["name", "version"],
  php: ["message", "timestamp"],
  server: ["status", "timestamp"],
  activity: ["id", "timestamp", "name", "source"],
  zone: ["id", "name", "created"],
  record: ["id", "type", "value"],
  ssl: ["certificate_expiration_date", "broken_record"],
  deploy: ["id", "created", "state"],
  ondemand: ["status", "type", "requested"],
  restore: ["id", "status", "created"],
} as const;
export type RecordKind = keyof typeof CRITICAL_FIELDS;

/** Corrupt one record in a way a reader must catch: drop a critical field or give it the wrong type. */
export function corrupt(record: unknown, kind: RecordKind, rng: Rng): unknown {
  if (typeof record !== "object" || record === null) return record;
  const copy = { ...(record as Record<string, unknown>) };
  const keys: readonly string[] = CRITICAL_FIELDS[kind];
  const key = keys[Math.floor(rng() * keys.length)] as string;
  if (rng() < 0.5) delete copy[key];
  else {
    const value = copy[key];
    copy[key] =
      typeof value === "boolean"
        ? "not-a-boolean"
        : typeof value === "object" && value !== null
          ? "not-an-object"
          : true; // a boolean where the documentation has a string or a number
  }
  return copy;
}

/** Applies the fault at the current rate (read on each call, so run-time changes take effect). */
export class Corruptor {
  constructor(
    private readonly rate: () => number,
    private readonly rng: Rng,
  ) {}

  list<T>(records: readonly T[], kind: RecordKind): unknown[] {
    const rate = this.rate();
    if (rate <= 0) return records as T[];
    return records.map((r) => (this.rng() < rate ? corrupt(r, kind, this.rng) : r));
  }

  one(record: unknown, kind: RecordKind): unknown {
    const rate = this.rate();
    return rate > 0 && this.rng() < rate ? corrupt(record, kind, this.rng) : record;
  }
}

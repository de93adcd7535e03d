/**
 * Certificates of A records: a record's full domain name, and its SSL details as samples. Pure; the
 * walk over zones and records that fetches them is in certificateScan.ts.
 */
import type { DnsRecord, Flag, SslDetails } from "../api/schemas.js";
import { parseApiTime } from "../api/times.js";
import type { Sample } from "../metrics/sample.js";
import { sampleFor, type SiteRef } from "../metrics/siteSample.js";

export const EXPIRY = "sitehost_certificate_expiry_timestamp_seconds";
export const BROKEN = "sitehost_certificate_broken";

/** Only A records have SSL details; the platform answers 400 for any other type. */
export function isARecord(record: Pick<DnsRecord, "type">): boolean {
  return record.type.trim().toUpperCase() === "A";
}

/**
 * The domain a record names: `@` or an empty name is the zone apex; a name that already ends in the
 * zone's name is taken as fully qualified; any other name is relative to the zone. A trailing dot
 * (absolute DNS notation) is dropped.
 */
export function certificateDomain(recordName: string, zoneName: string): string {
  const zone = zoneName.trim().replace(/\.$/, "");
  const name = recordName.trim().replace(/\.$/, "");
  if (name === "" || name === "@") return zone;
  const lower = name.toLowerCase();
  const lowerZone = zone.toLowerCase();
  if (lower === lowerZone || lower.endsWith(`.${lowerZone}`)) return name;
  return `${name}.${zone}`;
}

function flag(value: Flag | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  return value === true || value === 1 || value === "true" || value === "1" ? 1 : 0;
}

/** What a record's SSL details say: its expiry (epoch seconds) and broken flag, each when given. */
export interface CertificateState {
  expiry: number | undefined;
  broken: number | undefined;
}

/**
 * One A record's certificate: its expiry (when the platform gives one in a form it uses) and whether
 * the platform flags the record as broken (no longer pointing at the platform).
 */
export function readCertificate(ssl: SslDetails): CertificateState {
  return { expiry: parseApiTime(ssl.certificate_expiration_date), broken: flag(ssl.broken_record) };
}

/** A record's certificate as samples of `site`. */
export function certificateSamples(
  site: SiteRef,
  zone: string,
  domain: string,
  state: CertificateState,
): Sample[] {
  const labels = { zone, domain };
  const out: Sample[] = [];
  if (state.expiry !== undefined) out.push(sampleFor(site, EXPIRY, labels, state.expiry));
  if (state.broken !== undefined) out.push(sampleFor(site, BROKEN, labels, state.broken));
  return out;
}

/**
 * Several A records of one name (one per address) give one series: the earliest expiry, and broken
 * when any of them is.
 */
export function mergeCertificates(samples: readonly Sample[]): Sample[] {
  const merged = new Map<string, Sample>();
  for (const s of samples) {
    const key = `${s.name}\u0000${s.labels.zone}\u0000${s.labels.domain}`;
    const prev = merged.get(key);
    if (!prev) merged.set(key, s);
    else if (s.name === EXPIRY ? s.value < prev.value : s.value > prev.value) merged.set(key, s);
  }
  return [...merged.values()];
}

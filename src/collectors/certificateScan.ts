/**
 * The `certificates` collector: DNS zones → each zone's records → SSL details of the A records that
 * belong to a selected site. An account-level walk: its requests follow the zones and records, not
 * the site list. A part that fails (a zone's records, one record's details) keeps its last samples.
 */
import { ApiHttpError, errorReason } from "../api/errors.js";
import type { Site } from "../api/schemas.js";
import type { SourcedApi } from "../api/sourced.js";
import type { Sample } from "../metrics/sample.js";
import { forEachLimited } from "../util/pool.js";
import { ChangeBackoff, type ChangeBackoffSettings } from "./changeBackoff.js";
import {
  certificateDomain,
  certificateSamples,
  isARecord,
  mergeCertificates,
  readCertificate,
  type CertificateState,
} from "./certificates.js";
import type { AccountCollector, AccountRun, CollectorEnv, Wakeable } from "./types.js";

export const CERTIFICATE_RECORDS = "sitehost_exporter_certificate_records";

/** What became of each A record in a run (the `result` label of CERTIFICATE_RECORDS). */
export const RECORD_RESULTS = ["read", "kept", "no_data", "failed", "skipped"] as const;
type RecordResult = (typeof RECORD_RESULTS)[number];

interface Target {
  key: string;
  zoneId: number;
  recordId: number;
  zone: string;
  domain: string;
  site: Site;
}

/** An A record as last read: what its samples are built from at the end of each run. */
interface Known extends CertificateState {
  siteId: number;
  zone: string;
  domain: string;
  /** What its last read came to: a record kept since counts as that (`kept` for details read). */
  result: Extract<RecordResult, "read" | "no_data" | "skipped">;
}

/** A zone's A records as listed: what its targets are built from while its listing is not due. */
interface ZoneListing {
  zone: string;
  records: Array<{ id: number; name: string; siteId: number | undefined }>;
}

const NO_DATA: CertificateState = { expiry: undefined, broken: undefined };

const keyOf = (zoneId: number, recordId: number) => `${zoneId}/${recordId}`;
const zoneOf = (key: string) => Number(key.slice(0, key.indexOf("/")));

function status(err: unknown): number | undefined {
  return err instanceof ApiHttpError ? err.status : undefined;
}

/** A 400 "Only A records are supported": the record is not an A record after all. */
function notARecord(err: unknown): boolean {
  if (!(err instanceof ApiHttpError)) return false;
  return [err.apiMessage ?? "", ...err.apiErrors].some((t) => /only a records/i.test(t));
}

export class CertificateCollector implements AccountCollector, Wakeable {
  readonly scope = "account";
  readonly name = "certificates";
  private ranOnce = false;
  /** Each A record as last known, by `zoneId/recordId`. */
  private known = new Map<string, Known>();
  /** Each zone's A records as last listed, by zone id. */
  private listings = new Map<number, ZoneListing>();
  /** A zone whose listing stays the same, a record whose details stay the same, are read less often. */
  private readonly zones: ChangeBackoff;
  private readonly details: ChangeBackoff;

  constructor(
    private readonly env: CollectorEnv,
    backoff: ChangeBackoffSettings,
  ) {
    this.zones = new ChangeBackoff(backoff);
    this.details = new ChangeBackoff(backoff);
  }

  /** The zone list, the listings and details due; before a first run, one zone and one A record per site. */
  requestsPerRun(sites: readonly Site[]): number {
    if (!this.ranOnce) return 1 + 2 * sites.length;
    const now = this.env.now();
    let due = 1;
    for (const id of this.listings.keys()) if (this.zones.dueNext(id, now)) due += 1;
    for (const key of this.known.keys()) if (this.details.dueNext(key, now)) due += 1;
    return due;
  }

  /** At steady state: the zone list at every run, each listing and each record's details at its share. */
  plannedRequestsPerRun(sites: readonly Site[]): number {
    if (!this.ranOnce) return this.requestsPerRun(sites);
    let planned = 1;
    for (const id of this.listings.keys()) planned += this.zones.share(id);
    for (const key of this.known.keys()) planned += this.details.share(key);
    return planned;
  }

  /**
   * Read the site's records' details and listings at the next run (undefined: every one); a site with
   * no record known yet may have one in any zone.
   */
  wake(siteId: number | undefined): void {
    let found = false;
    for (const [key, record] of this.known) {
      if (siteId !== undefined && record.siteId !== siteId) continue;
      found = true;
      this.details.wake(key);
      this.zones.wake(zoneOf(key));
    }
    if (!found || siteId === undefined) this.zones.wakeAll();
  }

  async run(api: SourcedApi, sites: readonly Site[], signal: AbortSignal): Promise<AccountRun> {
    const opts = { signal };
    const startedAt = this.env.now();
    const selected = new Map(sites.map((s) => [s.id, s]));
    const zones = await api.zones(undefined, opts);
    let requests = 1;
    const failures: string[] = [];
    const counts: Record<RecordResult, number> = { read: 0, kept: 0, no_data: 0, failed: 0, skipped: 0 };
    /** Zones whose records were not all read: their known records are kept. */
    const unsure = new Set<number>();
    const targets: Target[] = [];

    await forEachLimited(
      zones.items,
      this.env.concurrency,
      async (zone) => {
        let listing = this.listings.get(zone.id);
        if (!listing || this.zones.due(zone.id, startedAt)) {
          requests += 1;
          let answer;
          try {
            answer = await api.zoneRecords({ zoneId: zone.id }, opts);
          } catch (err) {
            if (signal.aborted) throw err;
            if (status(err) === 404) return; // deleted since the zone list
            failures.push(errorReason(err));
            unsure.add(zone.id);
            return;
          }
          listing = {
            zone: answer.zone.name,
            records: answer.items
              .filter(isARecord)
              .map((r) => ({ id: r.id, name: r.name, siteId: r.siteId ?? undefined })),
          };
          this.listings.set(zone.id, listing);
          if (answer.rejected > 0) {
            failures.push("schema");
            unsure.add(zone.id);
          } else this.zones.answered(zone.id, listing, this.env.now());
        }
        for (const record of listing.records) {
          const site = record.siteId === undefined ? undefined : selected.get(record.siteId);
          // No site, or one this exporter does not watch (filters, another shard): not asked.
          if (!site) {
            counts.skipped += 1;
            continue;
          }
          targets.push({
            key: keyOf(zone.id, record.id),
            zoneId: zone.id,
            recordId: record.id,
            zone: listing.zone,
            domain: certificateDomain(record.name, listing.zone),
            site,
          });
        }
      },
      signal,
    );

    const fresh = new Map<string, Known>();
    const asked: Target[] = [];
    for (const t of targets) {
      const last = this.known.get(t.key);
      // Not due: the details last read stand (the record is still listed, for the same site).
      if (last && last.siteId === t.site.id && !this.details.due(t.key, startedAt)) {
        fresh.set(t.key, last);
        counts[last.result === "read" ? "kept" : last.result] += 1;
      } else asked.push(t);
    }
    await forEachLimited(
      asked,
      this.env.concurrency,
      async (t) => {
        requests += 1;
        try {
          const ssl = await api.recordSsl({ zoneId: t.zoneId, recordId: t.recordId }, opts);
          counts.read += 1;
          const state = readCertificate(ssl);
          this.details.answered(t.key, state, this.env.now());
          fresh.set(t.key, { siteId: t.site.id, zone: t.zone, domain: t.domain, ...state, result: "read" });
        } catch (err) {
          if (signal.aborted) throw err;
          const code = status(err);
          if (code === 400 || code === 404) {
            // 400: no certificate information yet (the documented answer); 404: record deleted meanwhile.
            const result = notARecord(err) ? "skipped" : "no_data";
            counts[result] += 1;
            this.details.answered(t.key, NO_DATA, this.env.now());
            fresh.set(t.key, { siteId: t.site.id, zone: t.zone, domain: t.domain, ...NO_DATA, result });
            return;
          }
          counts.failed += 1;
          failures.push(errorReason(err));
          const last = this.known.get(t.key);
          if (last) fresh.set(t.key, last);
        }
      },
      signal,
    );
    if (signal.aborted) throw signal.reason;

    // Records not seen again are gone, unless their zone (or the zone list) was not read whole.
    const listed = new Set(zones.items.map((z) => z.id));
    if (zones.rejected > 0) failures.push("schema");
    for (const [key, last] of this.known) {
      if (fresh.has(key)) continue;
      const zoneId = zoneOf(key);
      if (unsure.has(zoneId) || (!listed.has(zoneId) && zones.rejected > 0)) fresh.set(key, last);
    }
    this.known = fresh;
    this.ranOnce = true;
    this.details.retain((key) => fresh.has(key as string));
    if (zones.rejected === 0) {
      for (const id of this.listings.keys()) if (!listed.has(id)) this.listings.delete(id);
      this.zones.retain((id) => listed.has(id as number));
    }

    const grouped = new Map<number, Sample[]>();
    for (const record of fresh.values()) {
      const site = selected.get(record.siteId);
      if (!site) continue;
      const samples = certificateSamples(site, record.zone, record.domain, record);
      if (samples.length === 0) continue;
      const list = grouped.get(record.siteId);
      if (list) list.push(...samples);
      else grouped.set(record.siteId, samples);
    }
    const bySite = new Map<number, Sample[]>();
    for (const [siteId, samples] of grouped) bySite.set(siteId, mergeCertificates(samples));
    const global = RECORD_RESULTS.map((result): Sample => ({
      name: CERTIFICATE_RECORDS,
      labels: { result },
      value: counts[result],
    }));
    return { bySite, global, requests, parts: zones.items.length + asked.length, failures };
  }
}

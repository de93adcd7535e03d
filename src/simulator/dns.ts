/**
 * DNS zones, their records and the SSL certificates of A records. One zone per registered domain of
 * the fleet's live sites (its A record carries the site's id), plus an account zone with records of
 * other types and an A record that belongs to no site. Built on first use.
 */
import type { SimSiteData } from "./fleet.js";
import type { CertificateTimeForm } from "./options.js";
import { unit } from "./random.js";

export interface SimRecord {
  id: number;
  zoneId: number;
  primary: boolean;
  type: string;
  name: string;
  value: string;
  priority: number | null;
  weight: number | null;
  port: number | null;
  ttl: number;
  siteId: number | null;
  created: string;
}

export interface SimZone {
  id: number;
  name: string;
  created: string;
  updated: string;
  records: SimRecord[];
}

/** What the platform knows of an A record's certificate. Times are epoch ms in whole seconds. */
export interface SimCertificate {
  acmeCertificateId: number;
  expiresAt: number;
  validationExpiresAt: number | null;
  authzUri: string;
  forceSsl: boolean;
  options: string[];
  /** The record no longer points at the platform. */
  broken: boolean;
  /** When the check that found it broken ran; null while it is not broken. */
  brokenCheckedAt: number | null;
}

export type CertificatePatch = Partial<Pick<SimCertificate, "expiresAt" | "broken" | "forceSsl">>;

const DAY = 86_400_000;
export const ACCOUNT_ZONE_ID = 1;

const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;

function record(
  zone: SimZone,
  r: number,
  fields: Pick<SimRecord, "type" | "name" | "value"> & Partial<SimRecord>,
): SimRecord {
  return {
    id: zone.id * 10 + r,
    zoneId: zone.id,
    primary: false,
    priority: null,
    weight: null,
    port: null,
    ttl: 3600,
    siteId: null,
    created: zone.created,
    ...fields,
  };
}

/** Mail records every zone carries: the mail-signing CNAME, MX and SPF TXT. */
function mailRecords(zone: SimZone, from: number): SimRecord[] {
  return [
    record(zone, from, { type: "CNAME", name: "k1._domainkey", value: "dkim1.mail.example" }),
    record(zone, from + 1, { type: "MX", name: "@", value: "mx1.mail.example", priority: 10 }),
    record(zone, from + 2, { type: "TXT", name: "@", value: "v=spf1 include:_spf.mail.example ~all" }),
  ];
}

/** The certificate of a site's A record, by fleet index (docs/simulator.md lists the special ones). */
function certificateFor(
  data: SimSiteData,
  d: number,
  recordId: number,
  startMs: number,
): SimCertificate | null {
  const state = data.site.state;
  if (state === "deploying" || state === "cloning") return null; // nothing provisioned yet
  const i = data.index;
  const days = i === 0 && d === 0 ? 5 : i === 0 && d === 1 ? 40 : 20 + Math.floor(unit(data.seed, d, 5) * 65);
  const expiresAt = wholeSecond(startMs + days * DAY + Math.floor(unit(data.seed, d, 6) * 24) * 3_600_000);
  const broken = i === 0 && d === 1;
  const acmeCertificateId = 700_000 + recordId;
  return {
    acmeCertificateId,
    expiresAt,
    validationExpiresAt: expiresAt - 83 * DAY,
    authzUri: `https://acme.example/acme/authz/${acmeCertificateId}`,
    forceSsl: i % 5 !== 3,
    options: ["http-01"],
    broken,
    brokenCheckedAt: broken ? wholeSecond(startMs - 2 * 3_600_000) : null,
  };
}

export class DnsStore {
  private readonly zones = new Map<number, SimZone>();
  private readonly certificates = new Map<number, SimCertificate>();
  private built = false;

  constructor(
    private readonly startMs: number,
    private readonly sites: () => Iterable<SimSiteData>,
  ) {}

  private ensure(): void {
    if (this.built) return;
    this.built = true;
    const created = new Date(this.startMs - 500 * DAY).toISOString();
    const zone: SimZone = {
      id: ACCOUNT_ZONE_ID,
      name: "agency.example",
      created,
      updated: created,
      records: [],
    };
    zone.records.push(
      record(zone, 0, { type: "A", name: "@", value: "198.51.100.200", primary: true }),
      record(zone, 1, { type: "CNAME", name: "www", value: "agency.example" }),
      record(zone, 2, {
        type: "SRV",
        name: "_sip._tcp",
        value: "sip.agency.example",
        priority: 10,
        weight: 5,
        port: 5060,
      }),
      ...mailRecords(zone, 3),
    );
    this.zones.set(zone.id, zone);
    for (const data of this.sites()) this.addSite(data);
  }

  /** Zones of a site's domains (a no-op until the store is first used: it then builds every site's). */
  addSite(data: SimSiteData): void {
    if (!this.built) return;
    data.domains.forEach((domain, d) => {
      const name = domain.name ? domain.domainName.slice(domain.name.length + 1) : domain.domainName;
      const zone: SimZone = {
        id: domain.zoneId,
        name,
        created: domain.created,
        updated: domain.created,
        records: [],
      };
      const a = record(zone, 0, {
        type: "A",
        name: domain.name ?? "@",
        value: domain.ipAddresses[0] ?? data.site.ipAddress,
        primary: domain.primary,
        siteId: data.site.id,
      });
      zone.records.push(a, ...mailRecords(zone, 1));
      this.zones.set(zone.id, zone);
      const cert = certificateFor(data, d, a.id, this.startMs);
      if (cert) this.certificates.set(a.id, cert);
    });
  }

  /** Remove the A records attached to a site (its deletion or conversion away from live). */
  removeSiteRecords(siteId: number, nowMs: number): void {
    this.ensure(); // the zones outlive the site's records, so they must exist first
    for (const zone of this.zones.values()) {
      const kept = zone.records.filter((r) => r.siteId !== siteId);
      if (kept.length === zone.records.length) continue;
      for (const r of zone.records) if (r.siteId === siteId) this.certificates.delete(r.id);
      zone.records = kept;
      zone.updated = new Date(nowMs).toISOString();
    }
  }

  list(): SimZone[] {
    this.ensure();
    return [...this.zones.values()];
  }

  zone(id: number): SimZone | undefined {
    this.ensure();
    return this.zones.get(id);
  }

  certificate(recordId: number): SimCertificate | undefined {
    this.ensure();
    return this.certificates.get(recordId);
  }

  /** Change (or create) a record's certificate; null removes it (the API then has no information). */
  setCertificate(
    recordId: number,
    patch: CertificatePatch | null,
    nowMs: number,
  ): SimCertificate | undefined {
    this.ensure();
    if (patch === null) {
      this.certificates.delete(recordId);
      return undefined;
    }
    const current = this.certificates.get(recordId) ?? {
      acmeCertificateId: 700_000 + recordId,
      expiresAt: wholeSecond(nowMs + 90 * DAY),
      validationExpiresAt: wholeSecond(nowMs + 7 * DAY),
      authzUri: `https://acme.example/acme/authz/${700_000 + recordId}`,
      forceSsl: true,
      options: ["http-01"],
      broken: false,
      brokenCheckedAt: null,
    };
    const next: SimCertificate = { ...current, ...patch };
    if (patch.expiresAt !== undefined) next.expiresAt = wholeSecond(patch.expiresAt);
    if (patch.broken !== undefined)
      next.brokenCheckedAt = patch.broken ? (current.brokenCheckedAt ?? wholeSecond(nowMs)) : null;
    this.certificates.set(recordId, next);
    return next;
  }
}

/** A time in one of the forms the platform uses: ISO 8601 with ms, epoch seconds, 'YYYY-MM-DD HH:MM:SS'. */
export function timeIn(ms: number, form: CertificateTimeForm): string | number {
  if (form === "epoch-seconds") return Math.floor(ms / 1000);
  const iso = new Date(ms).toISOString();
  return form === "datetime" ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}` : iso;
}

/** SSL details of an A record as the API returns them. */
export function sslDetails(cert: SimCertificate, form: CertificateTimeForm) {
  return {
    force_ssl: cert.forceSsl,
    acme_certificate_id: cert.acmeCertificateId,
    validation_expiration:
      cert.validationExpiresAt === null ? null : new Date(cert.validationExpiresAt).toISOString(),
    authz_uri: cert.authzUri,
    options: [...cert.options],
    certificate_expiration_date: timeIn(cert.expiresAt, form),
    broken_record: cert.broken,
    broken_check: cert.brokenCheckedAt === null ? null : new Date(cert.brokenCheckedAt).toISOString(),
  };
}

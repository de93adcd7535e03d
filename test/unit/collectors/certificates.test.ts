import { describe, expect, it } from "vitest";
import { DnsRecordSchema, type SslDetails } from "../../../src/api/schemas.js";
import {
  certificateDomain,
  certificateSamples,
  isARecord,
  mergeCertificates,
  readCertificate,
} from "../../../src/collectors/certificates.js";
import type { SiteRef } from "../../../src/metrics/siteSample.js";
import { makeSite, one, values } from "./fixtures.js";

/** A record's SSL details as the collector reads them, then as samples. */
const collectCertificate = (s: SiteRef, zone: string, domain: string, details: SslDetails) =>
  certificateSamples(s, zone, domain, readCertificate(details));

const site = makeSite(4);
const EXPIRY = "sitehost_certificate_expiry_timestamp_seconds";
const BROKEN = "sitehost_certificate_broken";
// 2026-04-02T08:15:30Z, worked out independently.
const APRIL = 1775117730;

const ssl = (over: Partial<SslDetails>): SslDetails => ({
  force_ssl: true,
  acme_certificate_id: 700040,
  validation_expiration: "2026-01-09T08:15:30.000Z",
  authz_uri: "https://acme.example/acme/authz/700040",
  options: ["http-01"],
  certificate_expiration_date: "2026-04-02T08:15:30.000Z",
  broken_record: false,
  broken_check: null,
  ...over,
});

describe("certificateDomain", () => {
  it.each([
    ["@", "acme.example", "acme.example"],
    ["", "acme.example", "acme.example"],
    ["www", "acme.example", "www.acme.example"],
    ["shop.eu", "acme.example", "shop.eu.acme.example"],
    ["www.acme.example", "acme.example", "www.acme.example"],
    ["www.acme.example.", "acme.example", "www.acme.example"],
    ["acme.example", "acme.example", "acme.example"],
    ["www", "acme.example.", "www.acme.example"],
    ["*", "acme.example", "*.acme.example"],
    // a name that merely ends with the zone's letters is still relative
    ["xacme.example", "acme.example", "xacme.example.acme.example"],
  ])("record %j in zone %j is %s", (name, zone, expected) => {
    expect(certificateDomain(name, zone)).toBe(expected);
  });
});

describe("DNS record shape", () => {
  it("reads a missing or null name as the apex and a site id given as digits", () => {
    const base = { id: 5, zoneId: 1, type: "A", ttl: 3600, value: "198.51.100.1" };
    expect(DnsRecordSchema.parse({ ...base, name: null, siteId: "42" })).toMatchObject({
      name: "",
      siteId: 42,
    });
    expect(DnsRecordSchema.parse({ ...base, siteId: null })).toMatchObject({ name: "", siteId: null });
    expect(DnsRecordSchema.safeParse({ ...base, name: "www", siteId: "4x" }).success).toBe(false);
  });
});

describe("isARecord", () => {
  it.each([
    ["A", true],
    ["a", true],
    [" A ", true],
    ["AAAA", false],
    ["CNAME", false],
    ["TXT", false],
    ["MX", false],
  ])("%j → %s", (type, expected) => {
    expect(isARecord({ type })).toBe(expected);
  });
});

describe("collectCertificate", () => {
  it.each([
    ["ISO with ms", "2026-04-02T08:15:30.000Z"],
    ["ISO without zone", "2026-04-02T08:15:30"],
    ["date and time with a space", "2026-04-02 08:15:30"],
    ["epoch seconds", APRIL],
    ["epoch milliseconds", APRIL * 1000],
    ["epoch seconds as text", String(APRIL)],
  ])("reads the expiry given as %s", (_form, value) => {
    const s = collectCertificate(
      site,
      "acme.example",
      "www.acme.example",
      ssl({ certificate_expiration_date: value }),
    );
    expect(
      one(s, EXPIRY, { zone: "acme.example", domain: "www.acme.example", site_id: "4", site: "site-4" }),
    ).toBe(APRIL);
  });

  it.each([
    [true, 1],
    [false, 0],
    [1, 1],
    [0, 0],
    ["true", 1],
    ["false", 0],
    ["1", 1],
  ] as const)("broken_record %j → %d", (flag, expected) => {
    const s = collectCertificate(site, "acme.example", "acme.example", ssl({ broken_record: flag }));
    expect(one(s, BROKEN, { domain: "acme.example" })).toBe(expected);
  });

  it("publishes no expiry when the date is missing or unreadable, and no broken flag when it is null", () => {
    const none = collectCertificate(
      site,
      "acme.example",
      "acme.example",
      ssl({ certificate_expiration_date: null, broken_record: null }),
    );
    expect(none).toEqual([]);
    const garbled = collectCertificate(
      site,
      "acme.example",
      "acme.example",
      ssl({ certificate_expiration_date: "soon" }),
    );
    expect(values(garbled, EXPIRY)).toEqual([]);
    expect(values(garbled, BROKEN)).toEqual([0]);
  });
});

describe("mergeCertificates", () => {
  it("one series per name: the earliest expiry, broken when any record is", () => {
    const a = collectCertificate(
      site,
      "acme.example",
      "acme.example",
      ssl({ certificate_expiration_date: APRIL }),
    );
    const b = collectCertificate(
      site,
      "acme.example",
      "acme.example",
      ssl({ certificate_expiration_date: APRIL - 86400, broken_record: true }),
    );
    const other = collectCertificate(site, "acme.example", "www.acme.example", ssl({}));
    const merged = mergeCertificates([...a, ...b, ...other]);
    expect(values(merged, EXPIRY, { domain: "acme.example" })).toEqual([APRIL - 86400]);
    expect(values(merged, BROKEN, { domain: "acme.example" })).toEqual([1]);
    expect(values(merged, EXPIRY, { domain: "www.acme.example" })).toEqual([APRIL]);
    expect(merged).toHaveLength(4);
  });
});

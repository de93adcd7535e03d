/**
 * The simulated account's fleet: sites with the variety a real account has, deterministic from a
 * seed. Records use the platform's field names and casing.
 */
import { between, mulberry32, pick, type Rng } from "./random.js";
import type { PerfNumbers, SimDomain, SimExtension, SimSite, SimSiteData, SimTag } from "./siteTypes.js";

export type { PerfNumbers, SimDomain, SimExtension, SimSite, SimSiteData, SimTag } from "./siteTypes.js";
export { accountFor, type SimAccount } from "./account.js";

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

const DATACENTERS = [
  ["AMS", "Amsterdam"],
  ["BUR", "Burbank"],
  ["DCA", "Washington DC"],
  ["DFW", "Dallas"],
] as const;
/** The PHP versions the platform supports at start (GET /sites/php-versions); sites run one of them. */
export const PHP_VERSIONS = ["8.3", "8.4", "8.5"] as const;
const WORDS = [
  "acme",
  "bakery",
  "studio",
  "shop",
  "journal",
  "clinic",
  "garden",
  "travel",
  "press",
  "labs",
  "cafe",
];
const TAGS: SimTag[] = [
  { id: 1, name: "client-a" },
  { id: 2, name: "client-b" },
  { id: 3, name: "ecommerce" },
  { id: 4, name: "priority" },
];
const PLUGINS = [
  "contact-form",
  "seo-toolkit",
  "cache-helper",
  "gallery-pro",
  "shop-engine",
  "backup-buddy",
  "slider-max",
  "forms-lite",
  "analytics-bridge",
];
const THEMES = ["twentyfive", "storefront", "astral", "minimalist"];
const SEVERITIES: Array<string | null> = ["low", "medium", "high", null, "critical"];

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function perf(rng: Rng, mobile: boolean): PerfNumbers {
  const slow = mobile ? 1.8 : 1;
  return {
    performance: Math.round(between(rng, mobile ? 0.35 : 0.55, 0.99) * 100) / 100,
    accessibility: Math.round(between(rng, 0.7, 1) * 100) / 100,
    bestPractices: Math.round(between(rng, 0.6, 1) * 100) / 100,
    seo: Math.round(between(rng, 0.75, 1) * 100) / 100,
    fcpMs: Math.round(between(rng, 600, 2200) * slow * 10) / 10,
    lcpMs: Math.round(between(rng, 1200, 3800) * slow * 10) / 10,
    speedIndexMs: Math.round(between(rng, 900, 4000) * slow * 10) / 10,
    interactiveMs: Math.round(between(rng, 1500, 6000) * slow * 10) / 10,
    tbtMs: Math.round(between(rng, 10, 600) * slow * 10) / 10,
    serverResponseMs: Math.round(between(rng, 80, 900) * 10) / 10,
    cls: Math.round(between(rng, 0, 0.3) * 1000) / 1000,
  };
}

function extensions(
  rng: Rng,
  names: readonly string[],
  count: number,
  groups: readonly string[],
  vulnerable: number,
  siteIndex: number,
): SimExtension[] {
  const chosen = [...names].sort(() => rng() - 0.5).slice(0, count);
  return chosen.map((name, i) => {
    const major = 1 + Math.floor(rng() * 5);
    const minor = Math.floor(rng() * 10);
    const version = `${major}.${minor}.0`;
    const hasUpdate = rng() < 0.35 || i < vulnerable;
    const group = i === 0 ? "active" : pick(rng, groups);
    const alerts =
      i < vulnerable
        ? [
            {
              title: `${name} ${version} cross-site scripting`,
              description: `Versions of ${name} before ${major}.${minor + 1}.0 allow stored XSS.`,
              // By index, so every fleet of a few sites mixes low, medium, high, critical and null.
              severity: SEVERITIES[(siteIndex + i) % SEVERITIES.length] ?? null,
              fixed_in: `${major}.${minor + 1}.0`,
            },
          ]
        : [];
    return {
      name,
      title: name.replace(/-/g, " ").replace(/\b\w/g, (c) => c.toUpperCase()),
      version,
      status:
        group === "active" || group === "active-network"
          ? "active"
          : group === "drop-ins"
            ? "dropin"
            : "inactive",
      group,
      updateVersion: hasUpdate ? `${major}.${minor + 1}.0` : null,
      alerts,
    };
  });
}

/** Build the fleet. Index-based variety guarantees every kind and state shows up in small fleets. */
export function buildFleet(count: number, seed: number, now: number): SimSiteData[] {
  const fleet: SimSiteData[] = [];
  for (let i = 0; i < count; i++) fleet.push(buildSite(i, seed, now));
  return fleet;
}

/**
 * The site at position `i` of the fleet of `seed`. Fixed by index (the ground truth tests rely on):
 * 0 has an unhealthy second domain and is a favorite (as is every 13th); 1 has its newest backup 50 h old;
 * 2 sits at 96% of its file-system limit; 3 is disabled; 4 is in edge-cache defensive mode (until now + 1 h);
 * 5 is deploying (phpVersion null); 6 has the edge cache off; 11 is cloning; index % 10 = 7, 8, 9 are
 * staging, sandbox and kit; index % 3 = 2 have storage limits; index % 4 = 1, 2 have vulnerable plugins.
 */
export function buildSite(i: number, seed: number, now: number): SimSiteData {
  const rng = mulberry32(seed * 100_003 + i);
  const id = 10_000 + i * 7 + Math.floor(rng() * 5);
  const word = WORDS[i % WORDS.length] as string;
  const name = `${word}-${i}`;
  const kindSlot = i % 10;
  const staging = kindSlot === 7;
  const sandbox = kindSlot === 8;
  const kit = kindSlot === 9 && i > 0;
  const state = i === 3 ? "disabled" : i === 5 ? "deploying" : i === 11 ? "cloning" : "live";
  const [dcCode, dcName] = DATACENTERS[i % DATACENTERS.length] as readonly [string, string];
  const fs = Math.round(between(rng, 0.2, 20) * GIB);
  const db = Math.round(between(rng, 10, 2048) * MIB);
  const limited = i % 3 === 2;
  // Site 2 sits at 96% of its file-system limit (storage alert material).
  const fsLimit = limited ? (i === 2 ? Math.round(fs / 0.96) : Math.round(fs * between(rng, 1.3, 3))) : null;
  const dbLimit = limited ? Math.round(db * between(rng, 1.5, 4)) : null;
  const edgeRoll = rng() < 0.7;
  const edge = i === 4 ? true : i === 6 ? false : edgeRoll;
  const defensive = edge && i === 4;
  // Every fifth site is untagged; the others carry one or two tags.
  const tags = i % 5 === 4 ? [] : TAGS.filter((_, t) => (i + t) % 3 === 0).slice(0, 2);
  const env = staging ? "staging" : sandbox ? "development" : kit ? "local" : "production";
  const live = !staging && !sandbox && !kit;
  const ip = `192.0.2.${(i % 250) + 1}`;
  const site: SimSite = {
    id,
    created: iso(now - (400 - (i % 365)) * 86_400_000),
    accountId: 4242,
    clonedFromId: i === 11 ? 10_000 : null,
    collaboratorsCount: Math.floor(rng() * 6),
    datacenterCode: dcCode,
    datacenterName: dcName,
    displayName: `${word[0]?.toUpperCase()}${word.slice(1)} ${i}`,
    domainsCount: 0,
    ecommerce: rng() < 0.3,
    edgeCache: edge ? "enabled" : "disabled",
    edgeCacheDefensiveMode: defensive,
    edgeCacheDefensiveModeUntil: defensive ? Math.floor(now / 1000) + 3600 : null,
    favorite: i % 13 === 0,
    fileSystemUsageBytes: fs,
    databaseUsageBytes: db,
    maxFileSystemUsageBytes: fsLimit,
    warningHeadroomFileSystemUsageBytes: fsLimit === null ? null : Math.round(fsLimit * 0.1),
    maxDatabaseUsageBytes: dbLimit,
    warningHeadroomDatabaseUsageBytes: dbLimit === null ? null : Math.round(dbLimit * 0.1),
    ipAddress: ip,
    ipAddressOne: ip,
    ipAddressTwo: `198.51.100.${(i % 250) + 1}`,
    name,
    state,
    url: `https://${name}.sites.example`,
    staging,
    sandbox,
    kit,
    sftpDomain: `sftp.${name}.sites.example`,
    phpVersion: state === "deploying" ? null : (PHP_VERSIONS[i % PHP_VERSIONS.length] as string),
    cmsVersion: "Latest stable release",
    tags,
    cmsEnvironmentType: env,
    lightWeight404: rng() < 0.5,
    multisiteSupport: false,
  };
  const domains: SimDomain[] = [];
  if (live) {
    // Site 0 has two domains (its second one unhealthy); the others one to three.
    const n = i === 0 ? 2 : 1 + (i % 3);
    for (let d = 0; d < n; d++) {
      const host = d === 0 ? `www.${name}.example` : `${name}-${d}.example`;
      // Site 0's second domain is unhealthy.
      const healthy = !(i === 0 && d === 1);
      domains.push({
        id: id * 10 + d,
        created: iso(now - 100 * 86_400_000),
        primary: d === 0,
        name: d === 0 ? "www" : null,
        healthy,
        dnsConfirmed: healthy || rng() < 0.5,
        provisioned: healthy,
        type: "ARecord",
        displayType: "A",
        domainName: host,
        ipAddresses: [ip],
        // One DNS zone per registered domain (see dns.ts).
        zoneId: id * 3 + d,
      });
    }
    site.domainsCount = domains.length;
  }
  const vulnerable = i % 4 === 1 ? 2 : i % 4 === 2 ? 1 : 0;
  return {
    site,
    index: i,
    peakRps: between(rng, 0.5, 40),
    cacheHitRatio: edge ? between(rng, 0.5, 0.95) : between(rng, 0, 0.2),
    bytesPerRequest: between(rng, 8_000, 120_000),
    plugins: extensions(
      rng,
      PLUGINS,
      3 + (i % 4),
      ["active", "inactive", "drop-ins", "must-use"],
      vulnerable,
      i,
    ),
    themes: extensions(rng, THEMES, 2 + (i % 2), ["inactive", "parent"], i % 7 === 3 ? 1 : 0, i),
    domains,
    // Site 1's newest backup is two days old; the rest back up daily.
    lastBackupAgeHours: i === 1 ? 50 : between(rng, 1, 23),
    builtAt: now,
    performance: { desktop: perf(rng, false), mobile: perf(rng, true) },
    seed: seed * 7919 + i,
  };
}

export const GIB_BYTES = GIB;

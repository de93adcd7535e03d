/** Records of the simulated fleet, with the field names and casing of the platform's tables. */

export interface SimTag {
  id: number;
  name: string;
}

/** A site record as the API returns it (Site resource, list view). */
export interface SimSite {
  id: number;
  created: string;
  accountId: number;
  clonedFromId: number | null;
  collaboratorsCount: number;
  datacenterCode: string;
  datacenterName: string;
  displayName: string;
  domainsCount: number;
  ecommerce: boolean;
  edgeCache: "enabled" | "disabled";
  edgeCacheDefensiveMode: boolean;
  edgeCacheDefensiveModeUntil: number | null;
  favorite: boolean;
  fileSystemUsageBytes: number;
  databaseUsageBytes: number;
  maxFileSystemUsageBytes: number | null;
  warningHeadroomFileSystemUsageBytes: number | null;
  maxDatabaseUsageBytes: number | null;
  warningHeadroomDatabaseUsageBytes: number | null;
  ipAddress: string;
  ipAddressOne: string;
  ipAddressTwo: string;
  name: string;
  state: string;
  url: string;
  staging: boolean;
  sandbox: boolean;
  kit: boolean;
  sftpDomain: string;
  phpVersion: string | null;
  cmsVersion: string;
  tags: SimTag[];
  cmsEnvironmentType: string;
  lightWeight404: boolean;
  multisiteSupport: boolean;
}

export interface SimExtension {
  name: string;
  title: string;
  version: string;
  status: string;
  group: string;
  updateVersion: string | null;
  alerts: Array<{ title: string; description: string; severity: string | null; fixed_in: string | null }>;
}

export interface SimDomain {
  id: number;
  created: string;
  primary: boolean;
  name: string | null;
  healthy: boolean;
  dnsConfirmed: boolean;
  provisioned: boolean;
  type: string;
  displayType: string;
  domainName: string;
  ipAddresses: string[];
  zoneId: number;
}

/** Everything the simulator knows about one site beyond its record. */
export interface SimSiteData {
  site: SimSite;
  /** Position in the fleet: the ground truth of docs/simulator.md is by index. */
  index: number;
  /** Requests per second at the daily peak. */
  peakRps: number;
  cacheHitRatio: number;
  bytesPerRequest: number;
  plugins: SimExtension[];
  themes: SimExtension[];
  domains: SimDomain[];
  /** Age of the newest backup in hours when the fleet was built (a day or more: the backups stopped). */
  lastBackupAgeHours: number;
  /** When the fleet was built (ms): backups are daily from then on, at the time of day of the newest. */
  builtAt: number;
  performance: { desktop: PerfNumbers; mobile: PerfNumbers };
  seed: number;
}

export interface PerfNumbers {
  performance: number;
  accessibility: number;
  bestPractices: number;
  seo: number;
  fcpMs: number;
  lcpMs: number;
  speedIndexMs: number;
  interactiveMs: number;
  tbtMs: number;
  serverResponseMs: number;
  cls: number;
}

/**
 * Record shapes transcribed from the platform's documentation (its field tables, with the exact
 * spellings), independent of the simulator's and the client's code: the simulator is checked
 * against these, never against the exporter's own schemas. Where the documentation names a field
 * without a type, the type is the simulator's documented choice or `any`.
 */

export type Kind =
  | "string"
  | "integer"
  | "number"
  | "boolean"
  | "array"
  | "object"
  | "null"
  | "any"
  /** ISO 8601 UTC, milliseconds optional. */
  | "timestamp"
  /** Integer epoch seconds (a plausible range, not milliseconds). */
  | "epoch";
export interface Shape {
  [field: string]: Kind | readonly Kind[] | Shape;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

function is(value: unknown, kind: Kind): boolean {
  switch (kind) {
    case "any":
      return true;
    case "null":
      return value === null;
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "timestamp":
      return typeof value === "string" && ISO.test(value);
    case "epoch":
      return Number.isInteger(value) && (value as number) > 1e9 && (value as number) < 1e10;
    default:
      return typeof value === kind;
  }
}

/** What is wrong with `value` against `shape`: missing, extra or mistyped fields (empty: nothing). */
export function shapeProblems(value: unknown, shape: Shape, path = ""): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return [`${path || "record"}: not an object`];
  const record = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(record)) if (!(key in shape)) problems.push(`${path}${key}: not documented`);
  for (const [key, kind] of Object.entries(shape)) {
    const where = `${path}${key}`;
    if (!(key in record)) {
      problems.push(`${where}: missing`);
      continue;
    }
    const v = record[key];
    if (typeof kind === "string" || Array.isArray(kind)) {
      const kinds = (typeof kind === "string" ? [kind] : kind) as readonly Kind[];
      if (!kinds.some((k) => is(v, k)))
        problems.push(`${where}: ${JSON.stringify(v)} is not ${kinds.join("|")}`);
    } else problems.push(...shapeProblems(v, kind as Shape, `${where}.`));
  }
  return problems;
}

const nullable = (k: Kind): readonly Kind[] => [k, "null"];
const pageViews = { people: "integer", views: "integer" } as const;

export const SHAPES = {
  token: {
    access_token: "string",
    token_type: "string",
    expires_in: "integer",
    scope: "string",
    created_at: "epoch",
    id: "integer",
    name: "string",
    email: "string",
    gravatar: "string",
    scopes: "array",
  },
  page: {
    currentPage: "integer",
    nextPage: nullable("integer"),
    lastPage: "integer",
    perPage: "integer",
    totalItems: "integer",
  },
  account: {
    affiliate: "boolean",
    collaboratorCount: "integer",
    email: "string",
    gravatar: "string",
    name: "string",
    organization: "string",
    pageViews: {
      allTime: pageViews,
      lastTwoYearsIsAllTime: pageViews,
      currentMonth: pageViews,
      lastMonth: pageViews,
      today: pageViews,
      twoMonthsAgo: pageViews,
      yesterday: pageViews,
    },
    phoneNumber: "string",
    preview: "boolean",
    productName: "string",
    defaultPhpVersion: "string",
    defaultDatacenter: nullable("string"),
    maxSites: "integer",
    sitesCount: "integer",
    capacity: {
      sites: {
        maxBillable: "integer",
        maxStaging: "integer",
        billable: "integer",
        staging: "integer",
        total: "integer",
      },
    },
    recent_activity: "array",
  },
  site: {
    id: "integer",
    created: "timestamp",
    accountId: "integer",
    clonedFromId: nullable("integer"),
    collaboratorsCount: "integer",
    datacenterCode: "string",
    datacenterName: "string",
    displayName: "string",
    domainsCount: "integer",
    ecommerce: "boolean",
    edgeCache: "string",
    edgeCacheDefensiveMode: "boolean",
    edgeCacheDefensiveModeUntil: nullable("epoch"),
    favorite: "boolean",
    fileSystemUsageBytes: "integer",
    databaseUsageBytes: "integer",
    maxFileSystemUsageBytes: nullable("integer"),
    warningHeadroomFileSystemUsageBytes: nullable("integer"),
    maxDatabaseUsageBytes: nullable("integer"),
    warningHeadroomDatabaseUsageBytes: nullable("integer"),
    ipAddress: "string",
    ipAddressOne: "string",
    ipAddressTwo: "string",
    name: "string",
    state: "string",
    url: "string",
    staging: "boolean",
    sandbox: "boolean",
    kit: "boolean",
    sftpDomain: "string",
    phpVersion: nullable("string"),
    cmsVersion: "string",
    tags: "array",
    cmsEnvironmentType: "string",
    lightWeight404: "boolean",
    multisiteSupport: "boolean",
  },
  statistics: {
    id: "integer",
    databaseUsageBytes: "integer",
    fileSystemUsageBytes: "integer",
    pageViews: {
      today: pageViews,
      yesterday: pageViews,
      currentMonth: pageViews,
      lastMonth: pageViews,
      twoMonthsAgo: pageViews,
      lastOneYear: pageViews,
      lastTwoYears: pageViews,
    },
  },
  usage: {
    billing_cycle: {
      start_date: "string",
      end_date: "string",
      total_daily_average_storage_usage_in_gigabytes: "number",
      total_unique_visits: "integer",
      site: {
        id: "integer",
        name: "string",
        url: "string",
        daily_average_visits: "number",
        daily_average_storage_usage_in_gigabytes: "number",
      },
    },
  },
  metrics: {
    id: "integer",
    name: "string",
    displayName: "string",
    url: "string",
    search: {
      startAt: "epoch",
      endAt: "epoch",
      resolution: "integer",
      metrics: "array",
      dimensions: "array",
    },
    periods: "array",
  },
  extension: {
    id: "any",
    site_id: "integer",
    name: "string",
    version: "string",
    status: "string",
    active: "boolean",
    update_available: "boolean",
    update_version: nullable("string"),
    security_risk: "boolean",
    security_alerts: "array",
  },
  securityAlert: {
    title: "string",
    description: "string",
    severity: nullable("string"),
    fixed_in: nullable("string"),
    reference_urls: "array",
  },
  domain: {
    id: "integer",
    created: "timestamp",
    primary: "boolean",
    name: nullable("string"),
    healthy: "boolean",
    dnsConfirmed: "boolean",
    provisioned: "boolean",
    type: "string",
    displayType: "string",
    domainName: "string",
    ipAddresses: "array",
    zoneId: "integer",
  },
  backup: {
    timestamp: "string",
    siteId: "integer",
    databaseBackupId: "integer",
    filesystemBackupId: nullable("integer"),
  },
  php: {
    message: "string",
    severity: "string",
    kind: "string",
    name: "string",
    file: "string",
    line: "integer",
    timestamp: "timestamp",
    hosted_site_id: "integer",
  },
  server: {
    body_bytes_sent: "any",
    cached: "string",
    date: "any",
    http2: "any",
    http_host: "string",
    http_referer: "string",
    http_user_agent: "string",
    http_version: "string",
    http_x_forwarded_for: "string",
    renderer: "string",
    request_completion: "string",
    request_time: "number",
    request_type: "string",
    request_url: "string",
    scheme: "string",
    status: "integer",
    timestamp: "epoch",
    type: "string",
    user_ip: "string",
  },
  activity: {
    id: "integer",
    timestamp: "timestamp",
    accountEmail: "string",
    ipAddress: nullable("string"),
    userAgent: "string",
    name: "string",
    description: "string",
    source: "string",
    message: "string",
  },
  zone: { id: "integer", name: "string", created: "timestamp" },
  zoneWithRecords: {
    id: "integer",
    name: "string",
    created: "timestamp",
    updated: "timestamp",
    records: "array",
  },
  record: {
    id: "integer",
    zoneId: "integer",
    primary: "boolean",
    type: "string",
    name: "string",
    value: "string",
    priority: nullable("integer"),
    weight: nullable("integer"),
    port: nullable("integer"),
    ttl: "integer",
    siteId: nullable("integer"),
    created: "timestamp",
  },
  /** Types beyond `options` are not documented: the simulator's choices (docs/simulator.md). */
  ssl: {
    force_ssl: "boolean",
    acme_certificate_id: "any",
    validation_expiration: "any",
    authz_uri: "any",
    options: "array",
    certificate_expiration_date: ["string", "integer"],
    broken_record: "boolean",
    broken_check: "any",
  },
  deploy: {
    id: "integer",
    created: "timestamp",
    after: "string",
    before: "string",
    branch: "string",
    email: "string",
    message: "string",
    name: "string",
    repository: "string",
    state: "string",
  },
  ondemand: {
    id: nullable("string"),
    requestId: "integer",
    siteId: "integer",
    completed: nullable("epoch"),
    status: "string",
    type: "string",
    bytes: nullable("string"),
    requested: "epoch",
    backupTimestamp: nullable("string"),
    createdBy: "string",
    removedIn: "string",
    deleteAt: "epoch",
  },
  restore: {
    id: "integer",
    status: "string",
    logMessages: "array",
    filesystemId: "string",
    databaseId: "string",
    filesystemDate: "timestamp",
    databaseDate: "timestamp",
    filesystemComplete: "boolean",
    databaseComplete: "boolean",
    fromSiteId: nullable("integer"),
    error: nullable("string"),
    created: "timestamp",
    updated: "timestamp",
    completedAt: nullable("timestamp"),
    failedAt: nullable("timestamp"),
  },
} as const satisfies Record<string, Shape>;

const siteOf = { site: { id: "integer" } } as const;
const restoreBase = {
  restored_by: "string",
  database_id: "any",
  filesystem_id: "any",
  requested_at: "any",
  requested_at_timestamp: "epoch",
} as const;

/** The Events table: `event` plus the payload fields, by event. */
export const EVENT_SHAPES: Record<string, Shape> = {
  site_created: {
    event: "string",
    site: { id: "integer", state: "string" },
    cms_admin: { username: "string", email: "string" },
  },
  site_deleted: {
    event: "string",
    site: { id: "integer", staging: "boolean", sandbox: "boolean", url: "string" },
  },
  site_converted: {
    event: "string",
    site: { id: "integer", site_converted_to: "string", site_converted_from: "string" },
  },
  site_enabled: { event: "string", site: { id: "integer", state: "string" } },
  site_disabled: { event: "string", site: { id: "integer", state: "string" } },
  site_hacked: { event: "string", site: { id: "integer", state: "string", status: "string" } },
  site_restored: {
    event: "string",
    ...siteOf,
    restore: { ...restoreBase, completed_at: "any", completed_at_timestamp: "epoch" },
  },
  site_restore_failed: {
    event: "string",
    ...siteOf,
    restore: { ...restoreBase, failed_at: "any", failed_at_timestamp: "epoch", error: "string" },
  },
  sync_success: {
    event: "string",
    from_site_id: "integer",
    to_site_id: "integer",
    restore_sync_request: { message: "string", status: "string", requested_by: "string" },
  },
  sync_failed: {
    event: "string",
    from_site_id: "integer",
    to_site_id: "integer",
    restore_sync_request: {
      message: "string",
      status: "string",
      error: "string",
      failed_at: "epoch",
      requested_by: "string",
    },
  },
  ssh_command: { event: "string", site_id: "integer", result: { message: "string", command: "string" } },
  maintenance_mode: { event: "string", site_id: "integer", maintenance_mode: "string" },
  basic_authentication: { event: "string", site_id: "integer", maintenance_mode: "string" },
  plugin_installed: { event: "string", ...siteOf, plugin: { path: "string", version: "string" } },
  plugin_install_failed: {
    event: "string",
    ...siteOf,
    plugin: { path: "string", version: "string" },
    error: { message: "string" },
  },
  git_deploy_completed: { event: "string" },
  git_deploy_failed: { event: "string" },
};

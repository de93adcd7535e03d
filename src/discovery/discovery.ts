/**
 * Site discovery: lists every site of the account (and reads the account), keeps those the `sites`
 * filters and the shard select, publishes the inventory series, and tells its listeners whenever the
 * selection changes, including when a collector finds a site deleted between two discoveries.
 * Scheduled like a collector (the `inventory` collector).
 */
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { BudgetSource } from "../api/budget.js";
import { SITES_PER_PAGE } from "../api/endpoints.js";
import { ApiHttpError, ApiSchemaError, errorReason } from "../api/errors.js";
import type { Account, Site } from "../api/schemas.js";
import { ROUTES } from "../routes.js";
import type { RejectedRecord, SitehostApi } from "../api/types.js";
import type { CollectorName, Config } from "../config/schema.js";
import type { MetricStore } from "../metrics/store.js";
import { filterSites } from "./filter.js";
import { collectAccount, collectSite, phpMinor } from "./inventory.js";
import { discoveryMetrics, type DiscoveryMetrics } from "./metrics.js";

/** The error of a listing whose every record was rejected, naming the first one's field. */
function everySiteRejected(rejected: number, first: RejectedRecord | undefined): ApiSchemaError {
  return new ApiSchemaError(
    ROUTES.sites.template,
    first?.field ?? "data",
    `all ${rejected} site records were rejected (${first?.problem ?? "invalid"}); keeping the last good site list`,
  );
}

export type SitesListener = (sites: readonly Site[]) => void;

/** What a discovery that listed the sites came to; a listing that fails throws. */
export interface DiscoveryRun {
  /** `partial`: some site records were unreadable, or the account view was. */
  result: "success" | "partial";
  /** Why parts of the run failed (`errorReason`): the account view, when it could not be read. */
  failures: string[];
}

export interface DiscoveryDeps {
  /** The `sites` filters and the shard. */
  sites: Config["sites"];
  api: SitehostApi;
  store: MetricStore;
  registry: Registry;
  logger: Logger;
  now?: () => number;
}

export class SiteDiscovery {
  readonly scope = "discovery";
  readonly name: Extract<CollectorName, "inventory"> = "inventory";
  private current: Site[] = [];
  private byId = new Map<number, Site>();
  /** Orders listings and single-site refreshes: a refresh that settled after a listing began knows better. */
  private tick = 0;
  /** The tick at which a single-site refresh last settled each site. */
  private readonly refreshedAt = new Map<number, number>();
  /** The PHP versions the platform supports, as last read (undefined until read once). */
  private phpVersions: ReadonlySet<string> | undefined;
  /** Why they could not be read last time (said once per cause). */
  private phpVersionsFailure: string | undefined;
  /** Why the account could not be read last time (said once per cause). */
  private accountFailure: string | undefined;
  /** When the first discovery succeeded (ms, the injected clock). */
  private firstDiscoveredAt: number | undefined;
  private readonly listeners: SitesListener[] = [];
  private readonly metrics: DiscoveryMetrics;
  private readonly log: Logger;
  private readonly now: () => number;

  constructor(private readonly deps: DiscoveryDeps) {
    this.metrics = discoveryMetrics(deps.registry);
    this.log = deps.logger.child({ component: "discovery" });
    this.now = deps.now ?? Date.now;
    this.metrics.up.set(0);
  }

  /** The selected sites of the last discovery, less those found deleted since. */
  get sites(): readonly Site[] {
    return this.current;
  }

  /** Whether a discovery has succeeded yet. */
  get discovered(): boolean {
    return this.firstDiscoveredAt !== undefined;
  }

  /** When the first discovery succeeded (ms, the injected clock), if it has. */
  get discoveredAt(): number | undefined {
    return this.firstDiscoveredAt;
  }

  /** Called with the selected sites after every discovery and whenever a site is found gone. */
  onSites(listener: SitesListener): void {
    this.listeners.push(listener);
  }

  /** One GET /account, one GET /sites/php-versions and one GET /sites per page of sites. */
  static requestsPerListing(sites: number): number {
    return 2 + Math.max(1, Math.ceil(sites / SITES_PER_PAGE));
  }

  requestsPerRun(sites: readonly Site[]): number {
    return SiteDiscovery.requestsPerListing(sites.length);
  }

  async refresh(signal: AbortSignal): Promise<DiscoveryRun> {
    const opts = { signal, source: this.name };
    const listedFrom = ++this.tick;
    const failures: string[] = [];
    let listed;
    let account: Account | undefined;
    try {
      [listed, account] = await Promise.all([
        this.deps.api.allSites(opts),
        this.readPhpVersions(opts, failures),
        this.deps.api.account(undefined, opts).catch((err: unknown) => {
          // The account view is nice to have; discovery stands without it. Said once per cause.
          const reason = errorReason(err);
          failures.push(reason);
          if (reason !== this.accountFailure) this.log.warn({ err, reason }, "could not read the account");
          this.accountFailure = reason;
          return undefined;
        }),
      ]).then(([allSites, , accountView]) => [allSites, accountView] as const);
      // Not one usable site: the platform's format changed under us. Keep the last good list (and
      // every series and tailer built on it) rather than go blind, and fail the run naming the field.
      if (listed.items.length === 0 && listed.rejected > 0)
        throw everySiteRejected(listed.rejected, listed.firstRejected);
    } catch (err) {
      this.metrics.up.set(0);
      throw err;
    }
    this.metrics.up.set(1);
    if (account) this.accountFailure = undefined;
    const { selected, newer } = this.mergeRefreshed(filterSites(listed.items, this.deps.sites), listedFrom);
    const now = this.now();
    if (account) this.deps.store.replaceGlobal(this.name, collectAccount(account));
    const keep = new Set<string>();
    for (const site of selected) {
      keep.add(String(site.id));
      if (!newer.has(site.id))
        this.deps.store.replaceSite(this.name, String(site.id), collectSite(site, now, this.phpVersions));
    }
    // Sites gone (or filtered out) lose every series of every collector at once.
    this.deps.store.retainSites(keep);
    const before = new Set(this.current.map((s) => s.id));
    const added = selected.filter((s) => !before.has(s.id)).length;
    const removed = this.current.filter((s) => !keep.has(String(s.id))).length;
    this.setCurrent(selected);
    this.firstDiscoveredAt ??= this.now();
    if (added || removed) this.log.info({ sites: selected.length, added, removed }, "site discovery");
    this.notify();
    return { result: listed.rejected > 0 || !account ? "partial" : "success", failures };
  }

  /**
   * After a 404 from a per-site endpoint: the site was deleted only if the site itself is 404 too (the
   * platform also answers 404 for data a site does not have). A deleted site is forgotten at once:
   * all its series dropped and the listeners told. Any other answer keeps the site.
   */
  async confirmGone(site: Site, signal: AbortSignal): Promise<boolean> {
    try {
      await this.deps.api.site({ id: site.id }, { signal, source: this.name });
      return false;
    } catch (err) {
      if (!(err instanceof ApiHttpError && err.status === 404)) return false;
    }
    if (!this.byId.has(site.id)) return true;
    this.log.info({ site: site.name, siteId: site.id }, "site is gone (404); dropping its series");
    this.forget(site.id);
    return true;
  }

  /**
   * Read one site again at once (a webhook said it changed): its inventory series are replaced; a
   * site that is new and selected joins the selection, one that is gone (404) or no longer selected
   * (converted to a kind not watched) leaves it. A discovery whose listing started before this settles
   * keeps what this found.
   */
  async refreshSite(siteId: number, signal: AbortSignal, source: BudgetSource = this.name): Promise<void> {
    let site: Site | undefined;
    try {
      site = await this.deps.api.site({ id: siteId }, { signal, source });
    } catch (err) {
      if (!(err instanceof ApiHttpError && err.status === 404)) throw err;
    }
    this.refreshedAt.set(siteId, ++this.tick);
    const selected = site !== undefined && filterSites([site], this.deps.sites).length === 1;
    if (!site || !selected) {
      if (this.byId.has(siteId)) {
        this.log.info(
          { siteId, gone: !site },
          "site left the selection after a refresh; dropping its series",
        );
        this.forget(siteId);
      }
      return;
    }
    const known = this.byId.has(site.id);
    this.deps.store.replaceSite(this.name, String(site.id), collectSite(site, this.now(), this.phpVersions));
    this.setCurrent(known ? this.current.map((s) => (s.id === site.id ? site : s)) : [...this.current, site]);
    if (!known) {
      this.log.info({ site: site.name, siteId: site.id }, "new site found by a refresh");
      this.notify();
    }
  }

  /**
   * The supported PHP versions, nice to have like the account view: a failed read keeps the last list
   * (or none: no support series), said once per cause. An empty list is not believed (every site would
   * read as unsupported).
   */
  private async readPhpVersions(opts: { signal: AbortSignal; source: BudgetSource }, failures: string[]) {
    try {
      const versions = (await this.deps.api.phpVersions(undefined, opts)).items;
      if (versions.length > 0) this.phpVersions = new Set(versions.map(phpMinor));
      this.phpVersionsFailure = undefined;
    } catch (err) {
      const reason = errorReason(err);
      failures.push(reason);
      if (reason !== this.phpVersionsFailure)
        this.log.warn({ err, reason }, "could not read the supported PHP versions; keeping the last list");
      this.phpVersionsFailure = reason;
    }
  }

  /** Whether the site is still selected (a run may outlast a discovery that dropped it). */
  has(siteId: number): boolean {
    return this.byId.has(siteId);
  }

  /** A selected site by id. */
  site(siteId: number): Site | undefined {
    return this.byId.get(siteId);
  }

  /**
   * A listing that started at `listedFrom`, with what single-site refreshes settled since then put in
   * (they read later, so they know better); `newer` names the sites whose series they published.
   */
  private mergeRefreshed(listed: Site[], listedFrom: number): { selected: Site[]; newer: Set<number> } {
    const newer = new Set<number>();
    for (const [id, at] of this.refreshedAt) {
      if (at > listedFrom) newer.add(id);
      else this.refreshedAt.delete(id);
    }
    if (newer.size === 0) return { selected: listed, newer };
    const selected = listed.filter((s) => !newer.has(s.id) || this.byId.has(s.id));
    const present = new Set(selected.map((s) => s.id));
    for (const id of newer) {
      const site = this.byId.get(id);
      if (site && !present.has(id)) selected.push(site);
    }
    return { selected: selected.map((s) => (newer.has(s.id) ? (this.byId.get(s.id) ?? s) : s)), newer };
  }

  private setCurrent(sites: Site[]): void {
    this.current = sites;
    this.byId = new Map(sites.map((s) => [s.id, s]));
    this.metrics.sitesDiscovered.set(sites.length);
  }

  /** Drop a site from the selection and every series of it, and tell the listeners. */
  private forget(siteId: number): void {
    this.deps.store.removeSite(String(siteId));
    this.setCurrent(this.current.filter((s) => s.id !== siteId));
    this.notify();
  }

  private notify(): void {
    for (const listener of this.listeners) listener(this.current);
  }
}

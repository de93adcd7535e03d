/**
 * The simulated platform's state: the fleet, tokens, log scrolls, activity, DNS, git, on-demand
 * backups, restores, webhook deliveries, fault knobs, behaviour switches and the stats. No HTTP here:
 * route handlers read it, operations change it, the server and the control API sit in front of it.
 */
import { activityHistory, ActivityLog } from "./activity.js";
import { RequestBudget } from "./budget.js";
import { DnsStore } from "./dns.js";
import { CmsUserStore } from "./cmsUsers.js";
import { buildFleet, buildSite, PHP_VERSIONS, type SimSiteData } from "./fleet.js";
import { GitStore } from "./git.js";
import { SimLogs, type LogOrder, type LogSource, type ScrollMode } from "./logs.js";
import { ScrollStore } from "./scrolls.js";
import { Corruptor } from "./malformed.js";
import { OnDemandBackups } from "./ondemand.js";
import {
  behaviourOf,
  faultsOf,
  type SimulatorBehaviour,
  type SimulatorFaults,
  type SimulatorOptions,
} from "./options.js";
import { mulberry32, type Rng } from "./random.js";
import { RestoreStore } from "./restores.js";
import { emptyStats, recordWebhookAttempt, type SimulatorStats } from "./stats.js";
import { TokenStore } from "./tokens.js";
import { WebhookSender } from "./webhooks.js";

/** Ids of sites added after start-up start here. */
export const ADDED_SITE_ID_BASE = 900_000;

export class Platform {
  readonly now: () => number;
  /** The clock at start-up: generated history is relative to it. */
  readonly startMs: number;
  readonly faults: SimulatorFaults;
  readonly behaviour: SimulatorBehaviour;
  stats: SimulatorStats = emptyStats();
  readonly tokens = new TokenStore();
  readonly budget: RequestBudget;
  /** Drives errorRate and malformedRate (deterministic from the seed). */
  readonly faultRng: Rng;
  readonly corruptor: Corruptor;
  readonly logs: SimLogs;
  readonly scrolls: ScrollStore;
  logOrder: LogOrder;
  scrollMode: ScrollMode;
  readonly activity: ActivityLog;
  readonly dns: DnsStore;
  readonly git: GitStore;
  readonly cmsUsers = new CmsUserStore();
  readonly ondemand: OnDemandBackups;
  readonly restores: RestoreStore;
  readonly webhooks: WebhookSender;
  /** Sites in maintenance mode and with basic authentication (the site record has no field for them). */
  readonly maintenance = new Set<number>();
  readonly basicAuth = new Set<number>();
  /** What GET /sites/php-versions lists (a test may drop one the sites still run). */
  phpVersions: string[] = [...PHP_VERSIONS];

  private readonly byId: Map<number, SimSiteData>;
  private ordered: SimSiteData[] = [];
  private nextSiteIndex: number;

  constructor(readonly opts: SimulatorOptions) {
    this.now = opts.now;
    this.startMs = opts.now();
    this.faults = faultsOf(opts);
    this.behaviour = behaviourOf(opts);
    this.budget = new RequestBudget(this.startMs);
    this.faultRng = mulberry32(opts.seed ^ 0x5eed);
    this.corruptor = new Corruptor(() => this.faults.malformedRate, this.faultRng);

    const fleet = buildFleet(opts.sites, opts.seed, this.startMs);
    this.byId = new Map(fleet.map((s) => [s.site.id, s]));
    this.nextSiteIndex = opts.sites;
    this.reorder();

    this.logs = new SimLogs(
      opts.logRatePerSite,
      () => ({
        delaySeconds: this.faults.logIndexDelaySeconds,
        fraction: this.faults.lateLogFraction,
        maxSeconds: this.faults.lateLogMaxSeconds,
      }),
      () => this.faults.webFaults,
    );
    this.scrolls = new ScrollStore(this.logs, this.faults.scrollIdleSeconds * 1000);
    this.logOrder = opts.logOrder;
    this.scrollMode = opts.scrollMode;

    // History is of the fleet as it was at start-up, whatever happens before it is first read.
    this.activity = new ActivityLog(() => activityHistory(fleet, opts.seed, this.startMs));
    this.dns = new DnsStore(this.startMs, () => this.byId.values());
    this.git = new GitStore(this.startMs);
    this.ondemand = new OnDemandBackups(this.startMs);
    this.restores = new RestoreStore(this.startMs, (i) => fleet[i]?.site.id);
    this.webhooks = new WebhookSender(
      { url: opts.webhookUrl, attempts: opts.webhookAttempts, backoffMs: opts.webhookBackoffMs },
      this.now,
      (a) => recordWebhookAttempt(this.stats, a),
    );
  }

  /** Favorites first, as the documentation says for GET /sites; then by id. */
  private reorder(): void {
    this.ordered = [...this.byId.values()].sort(
      (a, b) => Number(b.site.favorite) - Number(a.site.favorite) || a.site.id - b.site.id,
    );
  }

  site(id: number): SimSiteData | undefined {
    return this.byId.get(id);
  }

  /** Every site, in fleet (index) order. */
  sites(): SimSiteData[] {
    return [...this.byId.values()];
  }

  /** Every site in the order GET /sites lists them. */
  listed(): readonly SimSiteData[] {
    return this.ordered;
  }

  /** A new site built like the fleet's next index, with an id from 900000 up. */
  addSite(): SimSiteData {
    const added = buildSite(this.nextSiteIndex, this.opts.seed, this.now());
    this.nextSiteIndex += 1;
    added.site.id = ADDED_SITE_ID_BASE + this.nextSiteIndex;
    added.domains.forEach((d, k) => {
      d.zoneId = added.site.id * 3 + k;
      d.id = added.site.id * 10 + k;
    });
    this.byId.set(added.site.id, added);
    this.reorder();
    this.dns.addSite(added);
    return added;
  }

  removeSite(id: number): SimSiteData | undefined {
    const data = this.byId.get(id);
    if (!data) return undefined;
    // Zones outlive the site (its A records go): they are built, if not yet, while it still exists.
    this.dns.removeSiteRecords(id, this.now());
    this.byId.delete(id);
    this.reorder();
    this.git.forget(id);
    this.cmsUsers.forget(id);
    this.ondemand.forget(id);
    this.restores.forget(id);
    this.maintenance.delete(id);
    this.basicAuth.delete(id);
    return data;
  }

  logSource(data: SimSiteData): LogSource {
    return {
      siteId: data.site.id,
      siteName: data.site.name,
      host: data.domains[0]?.domainName ?? `${data.site.name}.sites.example`,
      seed: data.seed,
    };
  }

  setFaults(f: Partial<SimulatorFaults>): void {
    if ("requestBudget" in f) this.budget.reset(this.now());
    Object.assign(this.faults, f);
    this.scrolls.idleTimeoutMs = this.faults.scrollIdleSeconds * 1000;
  }

  setBehaviour(b: Partial<SimulatorBehaviour>): void {
    Object.assign(this.behaviour, b);
  }

  resetStats(): void {
    // A new object: a reader holding the old one (structuredClone of stats()) is unaffected.
    this.stats = emptyStats();
  }
}

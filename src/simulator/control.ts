/**
 * `sim.control`: the hooks tests and the demo use to read the simulator's state and make things
 * happen. Each operation also writes activity and sends webhooks (operations.ts). Hooks that existed
 * before the richer platform kept their forgiving behaviour (an unknown site is ignored); the newer
 * ones throw on an unknown site or an impossible request, so a test learns of its mistake.
 */
import type { ActivityEntry, ActivityInput } from "./activity.js";
import type { CertificatePatch, SimCertificate, SimZone } from "./dns.js";
import { accountFor, type SimAccount, type SimSite, type SimSiteData } from "./fleet.js";
import type { DeployInput, GitDeploy } from "./git.js";
import type { LogOrder, ScrollMode, SimStream } from "./logs.js";
import type { BackupType, OnDemandBackup } from "./ondemand.js";
import * as op from "./operations.js";
import type { SimulatorBehaviour, SimulatorFaults } from "./options.js";
import type { Platform } from "./platform.js";
import type { Restore, RestoreInput } from "./restores.js";
import type { SimulatorStats } from "./stats.js";

export interface SimulatorControl {
  setFaults(faults: Partial<SimulatorFaults>): void;
  faults(): SimulatorFaults;
  setBehaviour(behaviour: Partial<SimulatorBehaviour>): void;
  behaviour(): SimulatorBehaviour;
  setLogRate(perSecond: number): void;
  /** The site's traffic at the daily peak, requests per second (0: a site nobody visits). */
  setPeakTraffic(id: number, requestsPerSecond: number): void;
  setLogPaging(order: LogOrder, mode: ScrollMode): void;
  disableSite(id: number): void;
  enableSite(id: number): void;
  deleteSite(id: number): void;
  addSite(): SimSite;
  /** Support marks the site hacked: disabled, event site_hacked. */
  hackSite(id: number): void;
  convertSite(id: number, to: op.SiteKind): SimSite;
  /** A restore that ends at once (site_restored, or site_restore_failed with `fail`), or stays in progress. */
  restoreSite(id: number, input?: RestoreInput): Restore;
  /** A data transfer between two sites: sync_success, or sync_failed with `fail`. */
  syncSites(fromId: number, toId: number, input?: op.SyncInput): void;
  installPlugin(id: number, input: op.PluginInstall): void;
  /** A plugin updated (activity entry, no event); with `breaks`, a new fatal error in the site's PHP log. */
  updatePlugin(id: number, input: op.PluginUpdate): void;
  /** A finished git deploy (git_deploy_completed, or git_deploy_failed with `fail`); throws when not enrolled. */
  recordDeploy(id: number, input?: DeployInput): GitDeploy;
  enrollGit(id: number): void;
  /** DELETE /sites/{id}/git as a user would: disconnected, its token cleared (the git config says so). */
  disconnectGit(id: number): void;
  /** A cms user with these roles (comma-separated, e.g. administrator) appears on the site. */
  addCmsUser(id: number, login: string, roles: string): void;
  /** Toggles, or sets when `enabled` is given; returns the new state. */
  setMaintenanceMode(id: number, enabled?: boolean): boolean;
  /** What GET /sites/php-versions lists from now on (sites keep the version they run). */
  setSupportedPhpVersions(versions: readonly string[]): void;
  toggleBasicAuthentication(id: number): boolean;
  runSshCommand(id: number, command: string): void;
  /** Throws when the type's 3 slots are in use. */
  createOnDemandBackup(id: number, type: BackupType, options?: { creating?: boolean }): OnDemandBackup;
  ondemandBackups(id: number): OnDemandBackup[];
  restores(id: number): Restore[];
  gitHistory(id: number): readonly GitDeploy[] | undefined;
  /** Write an activity entry (a site's with `siteId`) at `atMs` (default now). */
  appendActivity(input: ActivityInput, atMs?: number): ActivityEntry;
  /** The zones with their records (live data). */
  zones(): SimZone[];
  certificate(recordId: number): SimCertificate | undefined;
  /** Change or create an A record's certificate; null removes it. */
  setCertificate(recordId: number, patch: CertificatePatch | null): SimCertificate | undefined;
  setWebhookUrl(url: string | null): void;
  /** Resolves once every webhook sent so far is delivered or out of attempts. */
  webhooksIdle(): Promise<void>;
  /**
   * Append a log entry (merged over a generated one) to a site's stream at `atMs` (default now),
   * visible to readers from `visibleAtMs` (default: at once, or after the indexing delay knob).
   */
  appendLog(
    siteId: number,
    stream: SimStream,
    entry: Record<string, unknown>,
    atMs?: number,
    visibleAtMs?: number,
  ): void;
  sites(): SimSiteData[];
  site(id: number): SimSiteData | undefined;
  account(): SimAccount;
  stats(): SimulatorStats;
  resetStats(): void;
}

export function createControl(p: Platform): SimulatorControl {
  const must = (id: number): SimSiteData => {
    const s = p.site(id);
    if (!s) throw new Error(`no site ${id}`);
    return s;
  };
  const orThrow = <T>(o: op.Outcome<T>): T => {
    if ("problem" in o) throw new Error(o.problem);
    return o.ok;
  };
  const control: SimulatorControl = {
    setFaults: (f) => p.setFaults(f),
    faults: () => ({ ...p.faults }),
    setBehaviour: (b) => p.setBehaviour(b),
    behaviour: () => ({ ...p.behaviour }),
    setLogRate(perSecond) {
      p.logs.ratePerSecond = perSecond;
    },
    setPeakTraffic(id, requestsPerSecond) {
      must(id).peakRps = requestsPerSecond;
    },
    setLogPaging(order, mode) {
      p.logOrder = order;
      p.scrollMode = mode;
    },
    disableSite(id) {
      const s = p.site(id);
      if (s) op.disableSite(p, s);
    },
    enableSite(id) {
      const s = p.site(id);
      if (s) op.enableSite(p, s);
    },
    deleteSite(id) {
      const s = p.site(id);
      if (s) op.deleteSite(p, s);
    },
    addSite: () => op.addSite(p).site,
    hackSite: (id) => op.hackSite(p, must(id)),
    convertSite: (id, to) => orThrow(op.convertSite(p, must(id), to)).site,
    restoreSite: (id, input = {}) => op.restoreSite(p, must(id), input),
    syncSites: (fromId, toId, input = {}) => op.syncSites(p, must(fromId), must(toId), input),
    installPlugin: (id, input) => op.installPlugin(p, must(id), input),
    updatePlugin(id, input) {
      op.updatePlugin(p, must(id), input);
      if (input.breaks) control.appendLog(id, "php", op.brokenPluginError(input.path, 40 + (p.now() % 7)));
    },
    recordDeploy(id, input = {}) {
      const entry = op.recordDeploy(p, must(id), input);
      if (!entry) throw new Error(`site ${id} is not enrolled in the git integration`);
      return entry;
    },
    enrollGit: (id) => p.git.enroll(must(id)),
    addCmsUser: (id, login, roles) => void p.cmsUsers.add(must(id), login, roles),
    disconnectGit: (id) => {
      if (!p.git.disconnect(must(id))) throw new Error(`site ${id} is not enrolled in git`);
    },
    setMaintenanceMode: (id, enabled) => op.setMaintenanceMode(p, must(id), enabled),
    setSupportedPhpVersions: (versions) => {
      p.phpVersions = [...versions];
    },
    toggleBasicAuthentication: (id) => op.toggleBasicAuthentication(p, must(id)),
    runSshCommand: (id, command) => op.runSshCommand(p, must(id), command),
    createOnDemandBackup: (id, type, options = {}) =>
      orThrow(op.createOnDemandBackup(p, must(id), type, options.creating === true)),
    ondemandBackups: (id) => p.ondemand.list(must(id), p.now()),
    restores: (id) => p.restores.list(must(id), p.now()),
    gitHistory: (id) => p.git.history(must(id)),
    appendActivity: (input, atMs) => p.activity.append(input, atMs ?? p.now()),
    zones: () => p.dns.list(),
    certificate: (recordId) => p.dns.certificate(recordId),
    setCertificate: (recordId, patch) => p.dns.setCertificate(recordId, patch, p.now()),
    setWebhookUrl(url) {
      p.webhooks.settings.url = url;
    },
    webhooksIdle: () => p.webhooks.idle(),
    appendLog(siteId, stream, entry, atMs, visibleAtMs) {
      const s = must(siteId);
      const nowMs = p.now();
      const second = Math.floor((atMs ?? nowMs) / 1000);
      // A generated entry of another seed gives the fields the caller does not set.
      const template = p.logs.entriesAt({ ...p.logSource(s), seed: s.seed + 1 }, stream, second, 0)[0];
      const base: Record<string, unknown> =
        stream === "server"
          ? { ...template, timestamp: second, date: new Date(second * 1000).toISOString(), status: 200 }
          : {
              ...template,
              timestamp: new Date(second * 1000).toISOString(),
              severity: "Warning",
              hosted_site_id: siteId,
            };
      p.logs.append(siteId, stream, { ...base, ...entry }, second, nowMs, visibleAtMs);
    },
    sites: () => p.sites(),
    site: (id) => p.site(id),
    account: () => accountFor(p.sites()),
    stats: () => structuredClone(p.stats),
    resetStats: () => p.resetStats(),
  };
  return control;
}

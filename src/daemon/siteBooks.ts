/**
 * What the exporter learns of each site from webhook events, activity logs and polling, beside its
 * metrics: maintenance mode and hacked (src/siteState), changes (src/changes) and, with the PHP
 * stream, PHP error groups (src/logs/errorGroups.ts). Each keeps a file in the checkpoint directory
 * while this exporter holds its lock, loaded at start and written at stop.
 */
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { ActivityEntry } from "../api/logSchemas.js";
import type { Site } from "../api/schemas.js";
import { ChangeBook } from "../changes/book.js";
import { collectedChanges, reportActivity, reportEvent } from "../changes/feeds.js";
import { changesFile, UNKEPT_CHANGES } from "../changes/file.js";
import { durationMs } from "../config/duration.js";
import type { Config } from "../config/schema.js";
import { ErrorGroupBook } from "../logs/errorGroups.js";
import { errorGroupsFile, UNKEPT_ERROR_GROUPS } from "../logs/errorGroupsFile.js";
import type { MetricStore } from "../metrics/store.js";
import type { SiteCollectedListener } from "../scheduling/runs.js";
import { SiteStateBook } from "../siteState/book.js";
import { factsOfActivity, factsOfEvent } from "../siteState/facts.js";
import { siteStateFile, UNKEPT_SITE_STATE } from "../siteState/file.js";
import type { Component } from "../util/components.js";
import type { WebhookPayload } from "../webhooks/payload.js";

export interface SiteBooksDeps {
  store: MetricStore;
  registry: Registry;
  logger: Logger;
  /** The webhook receiver is on: a state only polling brought is a lost event. */
  webhooks: boolean;
  /** The platform's clock less this process's (ms): PHP entries are stamped by the platform. */
  platformOffsetMs: () => number;
}

export class SiteBooks {
  readonly states: SiteStateBook;
  readonly changes: ChangeBook;
  /** With the PHP stream on. */
  readonly errorGroups: ErrorGroupBook | undefined;
  /** What the site collectors read, for the changes it shows. */
  readonly collected: SiteCollectedListener;

  constructor(config: Config, deps: SiteBooksDeps, holdsLock: boolean) {
    const { store, registry, logger } = deps;
    const dir = holdsLock && config.logs.enabled ? config.logs.checkpointDir : undefined;
    this.states = new SiteStateBook({
      store,
      registry,
      file: dir ? siteStateFile(dir) : UNKEPT_SITE_STATE,
      logger,
      webhooks: deps.webhooks,
    });
    this.changes = new ChangeBook({
      store,
      registry,
      file: dir ? changesFile(dir) : UNKEPT_CHANGES,
      logger,
    });
    this.errorGroups =
      config.logs.enabled && config.logs.streams.includes("php")
        ? new ErrorGroupBook({
            store,
            registry,
            file: dir ? errorGroupsFile(dir) : UNKEPT_ERROR_GROUPS,
            logger,
            now: () => Date.now() + deps.platformOffsetMs(),
            learnForMs: durationMs(config.logs.errorGroupsLearnFor),
          })
        : undefined;
    this.collected = collectedChanges(this.changes);
  }

  /** An entry of a site's activity log, taking effect at `atMs` (this process's clock). */
  siteActivity(siteId: number, entry: ActivityEntry, atMs: number): void {
    this.states.observe(siteId, factsOfActivity(entry), atMs, "activity");
    reportActivity(this.changes, siteId, entry, atMs);
  }

  /** A webhook event about site `siteId`, received now. */
  event(siteId: number, payload: WebhookPayload): void {
    const now = Date.now();
    this.states.observe(siteId, factsOfEvent(payload), now, "webhook");
    reportEvent(this.changes, payload, now);
  }

  /** The sites watched, as listed now. */
  updateSites(sites: readonly Site[]): void {
    const now = Date.now();
    this.states.updateSites(sites, now);
    this.changes.updateSites(sites, now);
    this.errorGroups?.updateSites(sites);
  }

  /** Their files: loaded at start (before the logs and webhooks feed them), written at stop. */
  components(): Component[] {
    const books: Array<{ name: string; book: { load(): Promise<void>; flush(): Promise<void> } }> = [
      { name: "site states", book: this.states },
      { name: "site changes", book: this.changes },
      ...(this.errorGroups ? [{ name: "PHP error groups", book: this.errorGroups }] : []),
    ];
    return books.map(({ name, book }) => ({ name, start: () => book.load(), stop: () => book.flush() }));
  }
}

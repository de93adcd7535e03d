/**
 * Where the sites' maintenance and hacked states are kept across restarts:
 * `<checkpointDir>/site-state.json`, replaced whole and atomically. The activity log is not read
 * again from the start after a restart (its checkpoint resumes it), so a state learnt before the
 * restart would otherwise be lost until the site changes again. Without a directory (or while another
 * exporter holds its lock) the states live in memory.
 */
import { join } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../util/atomicFile.js";
import { readStateFile } from "../util/stateFile.js";
import type { SiteStateName } from "./facts.js";

export const SITE_STATE_FILE = "site-state.json";

/** Where a state was learnt. */
export const FACT_SOURCES = ["webhook", "activity", "sites"] as const;
export type FactSource = (typeof FACT_SOURCES)[number];

/** A site's state as last learnt: its value, when it took effect (ms) and from where. */
export interface KnownFact {
  on: boolean;
  atMs: number;
  source: FactSource;
}

export type SiteFacts = Partial<Record<SiteStateName, KnownFact>>;

export interface SiteStateStore {
  /** Where the states are kept, for messages; undefined when they are not kept. */
  readonly location: string | undefined;
  /** The saved states, or undefined when there are none. Throws when they cannot be read or trusted. */
  load(): Promise<Map<number, SiteFacts> | undefined>;
  save(sites: ReadonlyMap<number, SiteFacts>): Promise<void>;
}

const FactSchema = z.strictObject({
  on: z.boolean(),
  atMs: z.number().nonnegative(),
  source: z.enum(FACT_SOURCES),
});
const FileSchema = z.strictObject({
  version: z.literal(1),
  sites: z.record(
    z.string().regex(/^[1-9]\d{0,15}$/),
    z.strictObject({
      maintenance: FactSchema.optional(),
      hacked: FactSchema.optional(),
    } satisfies Record<SiteStateName, unknown>),
  ),
});

export function siteStateFile(dir: string): SiteStateStore {
  const file = join(dir, SITE_STATE_FILE);
  return {
    location: file,
    async load() {
      const data = await readStateFile(file, FileSchema, "a site state");
      if (!data) return undefined;
      const sites = new Map<number, SiteFacts>();
      for (const [id, facts] of Object.entries(data.sites)) sites.set(Number(id), facts);
      return sites;
    },
    async save(sites) {
      const body: z.infer<typeof FileSchema> = {
        version: 1,
        sites: Object.fromEntries([...sites].map(([id, facts]) => [String(id), facts])),
      };
      await writeFileAtomic(file, JSON.stringify(body));
    },
  };
}

/** No directory: the states live as long as the process. */
export const UNKEPT_SITE_STATE: SiteStateStore = {
  location: undefined,
  load: async () => undefined,
  save: async () => undefined,
};

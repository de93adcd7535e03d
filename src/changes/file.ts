/**
 * Where the sites' recent changes are kept across restarts: `<checkpointDir>/changes.json`, replaced
 * whole and atomically. With them go the keys of the reports already counted, so an activity entry
 * read again after a restart (the overlap window of its checkpoint) is not a second change. Without a
 * directory (or while another exporter holds its lock) they live in memory.
 */
import { join } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../util/atomicFile.js";
import { readStateFile } from "../util/stateFile.js";
import { CHANGE_KINDS, type ChangeKind } from "./kinds.js";
import { CHANGE_SOURCES, type ChangeSource } from "./report.js";

export const CHANGES_FILE = "changes.json";

/** One change of a site, as its reports agreed on it. */
export interface KnownChange {
  kind: ChangeKind;
  /** When it took effect, by its most precise report (ms). */
  atMs: number;
  /** The window its reports leave for it (ms). */
  fromMs: number;
  toMs: number;
  /** The sources that reported it, the most precise first. */
  sources: ChangeSource[];
  /** The keys of its reports (`source:key`). */
  keys: string[];
}

export interface ChangeStore {
  readonly location: string | undefined;
  /** The saved changes by site, or undefined when there are none. Throws when they cannot be read. */
  load(): Promise<Map<number, KnownChange[]> | undefined>;
  save(sites: ReadonlyMap<number, readonly KnownChange[]>): Promise<void>;
}

const ChangeSchema = z.strictObject({
  kind: z.enum(CHANGE_KINDS),
  atMs: z.number().nonnegative(),
  fromMs: z.number(),
  toMs: z.number(),
  sources: z.array(z.enum(CHANGE_SOURCES)).min(1),
  keys: z.array(z.string().max(200)).max(50),
});
const FileSchema = z.strictObject({
  version: z.literal(1),
  sites: z.record(z.string().regex(/^[1-9]\d{0,15}$/), z.array(ChangeSchema).max(10_000)),
});

export function changesFile(dir: string): ChangeStore {
  const file = join(dir, CHANGES_FILE);
  return {
    location: file,
    async load() {
      const data = await readStateFile(file, FileSchema, "a list of changes");
      if (!data) return undefined;
      return new Map(Object.entries(data.sites).map(([id, changes]) => [Number(id), changes]));
    },
    async save(sites) {
      const body: z.infer<typeof FileSchema> = {
        version: 1,
        sites: Object.fromEntries([...sites].map(([id, changes]) => [String(id), [...changes]])),
      };
      await writeFileAtomic(file, JSON.stringify(body));
    },
  };
}

/** No directory: the changes live as long as the process. */
export const UNKEPT_CHANGES: ChangeStore = {
  location: undefined,
  load: async () => undefined,
  save: async () => undefined,
};

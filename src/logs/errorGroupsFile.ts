/**
 * Where the sites' PHP error groups are kept across restarts: `<checkpointDir>/php-error-groups.json`,
 * replaced whole and atomically. Without it every error of a site's backlog would be learnt again at
 * each start (and an error that began while the exporter was stopped would not be new). Without a
 * directory (or while another exporter holds its lock) the groups live in memory.
 */
import { join } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../util/atomicFile.js";
import { readStateFile } from "../util/stateFile.js";
import { PHP_SEVERITY_LABELS, type PhpSeverityLabel } from "./mapper.js";

export const ERROR_GROUPS_FILE = "php-error-groups.json";

/** One group of a site. */
export interface KeptGroup {
  severity: PhpSeverityLabel;
  /** Entries of it met (encoded) while it was kept. */
  count: number;
  /** Time of its first and latest entries (the platform's stamps, ms). */
  firstMs: number;
  lastMs: number;
  /** The entry fingerprint and occurrence of its first record. */
  firstFp: string;
  firstOcc: number;
  /** First seen after the site's groups began to be kept. */
  isNew: boolean;
}

export interface KeptSite {
  /** When this site's groups began to be kept (ms): older entries are learnt, not new. */
  sinceMs: number;
  groups: Map<string, KeptGroup>;
  /** The first 32 bits of the groups evicted lately, oldest first. */
  evicted?: number[];
}

export interface ErrorGroupStore {
  readonly location: string | undefined;
  load(): Promise<Map<number, KeptSite> | undefined>;
  save(sites: ReadonlyMap<number, KeptSite>): Promise<void>;
}

const GroupSchema = z.strictObject({
  severity: z.enum(PHP_SEVERITY_LABELS),
  count: z.number().int().nonnegative(),
  firstMs: z.number(),
  lastMs: z.number(),
  firstFp: z.string().max(64),
  firstOcc: z.number().int().nonnegative(),
  isNew: z.boolean(),
});
const FileSchema = z.strictObject({
  version: z.literal(1),
  sites: z.record(
    z.string().regex(/^[1-9]\d{0,15}$/),
    z.strictObject({
      sinceMs: z.number(),
      groups: z.record(z.string().regex(/^[0-9a-f]{16}$/), GroupSchema),
      evicted: z.array(z.number().int().min(0).max(0xffffffff)).max(1000).optional(),
    }),
  ),
});

export function errorGroupsFile(dir: string): ErrorGroupStore {
  const file = join(dir, ERROR_GROUPS_FILE);
  return {
    location: file,
    async load() {
      const data = await readStateFile(file, FileSchema, "PHP error groups");
      if (!data) return undefined;
      return new Map(
        Object.entries(data.sites).map(([id, s]) => [
          Number(id),
          {
            sinceMs: s.sinceMs,
            groups: new Map(Object.entries(s.groups)),
            ...(s.evicted ? { evicted: s.evicted } : {}),
          },
        ]),
      );
    },
    async save(sites) {
      const body: z.infer<typeof FileSchema> = {
        version: 1,
        sites: Object.fromEntries(
          [...sites].map(([id, s]) => [
            String(id),
            {
              sinceMs: s.sinceMs,
              groups: Object.fromEntries(s.groups),
              ...(s.evicted ? { evicted: s.evicted } : {}),
            },
          ]),
        ),
      };
      await writeFileAtomic(file, JSON.stringify(body));
    },
  };
}

export const UNKEPT_ERROR_GROUPS: ErrorGroupStore = {
  location: undefined,
  load: async () => undefined,
  save: async () => undefined,
};

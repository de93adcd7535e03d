/**
 * Where the traffic counters are kept across restarts: `<checkpointDir>/traffic.json`, replaced whole
 * and atomically after each traffic run and before that run's samples are published, so a published
 * value is never ahead of what a restart resumes from (a counter that went back would be read by
 * Prometheus as a reset, and everything after it counted twice). Without a directory (or when another
 * exporter holds its lock) the counters live in memory: each start begins them at zero from the
 * newest settled period, so the periods while the exporter was down are not counted, and none twice.
 */
import { join } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../util/atomicFile.js";
import { readStateFile } from "../util/stateFile.js";
import type { SiteTrafficCounts } from "./trafficCounts.js";

export const TRAFFIC_STATE_FILE = "traffic.json";

export interface TrafficState {
  sites: Map<number, SiteTrafficCounts>;
  /** Periods that left the window before they could be counted, since counting began. */
  missedPeriods: number;
}

export interface TrafficStateStore {
  /** Where the state is kept, for messages; undefined when it is not kept. */
  readonly location: string | undefined;
  /** The saved state, or undefined when there is none. Throws when it cannot be read or trusted. */
  load(): Promise<TrafficState | undefined>;
  save(state: TrafficState): Promise<void>;
}

const Totals = z.strictObject({ true: z.number().nonnegative(), false: z.number().nonnegative() });
const FileSchema = z.strictObject({
  version: z.literal(1),
  missedPeriods: z.number().int().nonnegative(),
  sites: z.record(
    z.string().regex(/^\d+$/),
    z.strictObject({ through: z.number().positive(), requests: Totals, bytes: Totals }),
  ),
});

/** The state in `<dir>/traffic.json`. */
export function trafficStateFile(dir: string): TrafficStateStore {
  const file = join(dir, TRAFFIC_STATE_FILE);
  return {
    location: file,
    async load() {
      const data = await readStateFile(file, FileSchema, "a traffic state");
      if (!data) return undefined;
      const sites = new Map<number, SiteTrafficCounts>();
      for (const [id, counts] of Object.entries(data.sites)) sites.set(Number(id), counts);
      return { sites, missedPeriods: data.missedPeriods };
    },
    async save(state) {
      const body: z.infer<typeof FileSchema> = {
        version: 1,
        missedPeriods: state.missedPeriods,
        sites: Object.fromEntries([...state.sites].map(([id, counts]) => [String(id), counts])),
      };
      await writeFileAtomic(file, JSON.stringify(body));
    },
  };
}

/** No directory: the state lives as long as the process. */
export const UNKEPT_TRAFFIC_STATE: TrafficStateStore = {
  location: undefined,
  load: async () => undefined,
  save: async () => undefined,
};

/**
 * Log-derived counter keys (`5xx|false`, `d|true|0.25`, `fatal`, …) as small integers, one table for
 * the process. A page of records holds an id per counter slot in a Uint16Array instead of a string
 * array (the log path writes four per web-server record): nothing for the collector to trace, and
 * adding up, spooling and exemplar lookups index arrays instead of hashing strings.
 *
 * Every key comes from a fixed table (status class × cache state, duration buckets, PHP severities),
 * so the table stays small; a key it has not seen (a spool frame written with another release's
 * buckets) is added once. Id 0 is the empty key: an unused slot.
 */

const keys: string[] = [""];
const ids = new Map<string, number>([["", 0]]);

/** The most keys the table takes: ids must fit a Uint16Array. */
export const MAX_COUNTER_KEYS = 65_536;

/** The id of `key`, added to the table when new. */
export function counterKeyId(key: string): number {
  let id = ids.get(key);
  if (id === undefined) {
    if (keys.length >= MAX_COUNTER_KEYS) throw new Error(`more than ${MAX_COUNTER_KEYS} log counter keys`);
    id = keys.length;
    keys.push(key);
    ids.set(key, id);
  }
  return id;
}

/** The key of an id from `counterKeyId`. */
export function counterKeyOf(id: number): string {
  const key = keys[id];
  if (key === undefined) throw new Error(`unknown log counter key id ${id}`);
  return key;
}

/** How many keys the table holds (ids are below this). */
export function counterKeyCount(): number {
  return keys.length;
}

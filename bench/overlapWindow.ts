/**
 * What the checkpoints' overlap windows cost: memory per fingerprint held, and CPU per record on the
 * delivery path (two lookups, the delta applied, the window pruned), through the checkpoint's own
 * functions only, so the same file runs against an earlier build.
 *
 *   npx tsc -p tsconfig.json && node --expose-gc dist/bench/overlapWindow.js memory [windows=15000] [perWindow=17]
 *     heap and array buffers after a full collection with `windows` checkpoints holding `perWindow`
 *     fingerprints each, less the same checkpoints empty, per fingerprint (the fleet holds 17 a stream)
 *   node dist/bench/overlapWindow.js cpu [held=5000] [records=2000000]
 *     ns per record for one stream whose window holds about `held` fingerprints
 */
import { applyDelta, type Checkpoint, deliveredCount, newCheckpoint, prune } from "../src/logs/checkpoint.js";
import { fingerprint } from "../src/logs/entry.js";

const [mode = "memory", a, b] = process.argv.slice(2);
const T0 = 1_764_000_000_000;

/** Fingerprints as the pipeline makes them (flat strings of sha256 hex). */
function fingerprints(n: number, salt: number): string[] {
  return Array.from({ length: n }, (_, i) =>
    fingerprint({ timestamp: T0 / 1000 + i, salt, line: `request ${i}` }),
  );
}

/** Deliver `fps` to `cp` in deltas of 200 records, one a second's 10 ms apart; prune as the journal does. */
function deliver(cp: Checkpoint, fps: readonly string[], from: number, overlapMs: number): void {
  for (let i = 0; i < fps.length; i += 200) {
    const add: Array<[string, number, number]> = [];
    let hw = cp.highWaterMs;
    for (let j = i; j < Math.min(i + 200, fps.length); j++) {
      const fp = fps[j] as string;
      const t = T0 + (from + j) * 10;
      // the page reader's lookup, then the delta's
      if (deliveredCount(cp, fp) === 0 && deliveredCount(cp, fp) === 0) add.push([fp, 1, t]);
      if (t > hw) hw = t;
    }
    applyDelta(cp, { seq: cp.seq + 1, highWaterMs: hw, add, counts: {} });
    prune(cp, overlapMs);
  }
}

const gc = (globalThis as { gc?: () => void }).gc;

function used(): number {
  for (let i = 0; i < 3; i++) gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

if (mode === "memory") {
  if (!gc) throw new Error("run with node --expose-gc");
  const windows = Number(a ?? 15_000);
  const perWindow = Number(b ?? 17);
  const cps = Array.from({ length: windows }, (_, w) => newCheckpoint(w + 1, "server", T0));
  const empty = used();
  // Only the window keeps a fingerprint, as in the pipeline (the record it came from is gone).
  cps.forEach((cp, w) => deliver(cp, fingerprints(perWindow, w), 0, 3_600_000));
  const full = used();
  const held = cps.reduce((n, cp) => n + cp.recent.size, 0);
  console.log(
    JSON.stringify({
      phase: "overlap window memory",
      windows,
      held,
      bytesPerFingerprint: Math.round((full - empty) / held),
    }),
  );
} else {
  const held = Number(a ?? 5000);
  const records = Number(b ?? 2_000_000);
  const cp = newCheckpoint(1, "server", T0);
  // A window of `held` entries at 10 ms apart: overlap = held × 10 ms.
  const fps = fingerprints(records, 0);
  deliver(cp, fingerprints(held, 1), 0, held * 10); // warm up, fill
  const started = process.cpuUsage();
  deliver(cp, fps, held, held * 10);
  const cpu = process.cpuUsage(started);
  console.log(
    JSON.stringify({
      phase: "overlap window cpu",
      held: cp.recent.size,
      records,
      nsPerRecord: Math.round(((cpu.user + cpu.system) * 1000) / records),
    }),
  );
}

/**
 * The checkpoint journal under a real SIGKILL: a process killed after appending a delta but before
 * its commit marker leaves a checkpoint without that delta; one killed right after the marker keeps
 * it. (The process is the built exporter's own journal code, killed by the kernel, not a simulation.)
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, expect, it } from "vitest";
import { CheckpointStore } from "../../src/logs/journal.js";

const JOURNAL = resolve(import.meta.dirname, "../../dist/src/logs/journal.js");
const CHECKPOINT = resolve(import.meta.dirname, "../../dist/src/logs/checkpoint.js");

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Run a child that delivers `batches` batches of 50 records, commits `committed` of them, then kills itself. */
function runAndKill(
  checkpointDir: string,
  batches: number,
  committed: number,
): Promise<NodeJS.Signals | null> {
  const script = `
    const { CheckpointStore } = await import(${JSON.stringify(JOURNAL)});
    const { deltaFor } = await import(${JSON.stringify(CHECKPOINT)});
    const store = new CheckpointStore(${JSON.stringify(checkpointDir)});
    await store.init();
    const cp = await store.open(7, "server", () => 1_700_000_000_000, 600_000);
    const prepared = [];
    for (let b = 0; b < ${batches}; b++) {
      const recs = Array.from({ length: 50 }, (_, i) => ({
        fingerprint: String(b * 50 + i).padStart(32, "0"), occurrence: 0, timeMs: 1_700_000_000_000 + (b * 50 + i) * 1000,
      }));
      prepared.push(await cp.prepare((seq) => deltaFor(cp.state, seq, recs, Infinity), null));
    }
    for (let b = 0; b < ${committed}; b++) prepared[b].commit();
    process.kill(process.pid, "SIGKILL");
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "inherit" });
  return new Promise((res) => child.once("exit", (_code, signal) => res(signal)));
}

it("a delta appended but never committed is not in force after a SIGKILL; committed ones are", async () => {
  dir = await mkdtemp(join(tmpdir(), "journal-kill-"));
  expect(await runAndKill(dir, 3, 2)).toBe("SIGKILL");
  const cp = await new CheckpointStore(dir).open(7, "server", () => 0, 600_000);
  expect(cp.state.recent.size).toBe(100);
  expect(cp.state.highWaterMs).toBe(1_700_000_000_000 + 99 * 1000);
  // And it goes on from there: a second killed run, all committed, adds its records.
  await cp.close();
  expect(await runAndKill(dir, 1, 1)).toBe("SIGKILL");
  const again = await new CheckpointStore(dir).open(7, "server", () => 0, 600_000);
  // The second run wrote the same fingerprints 0..49 again (already there) with seq after the first run's.
  expect(again.state.recent.size).toBe(100);
  expect(again.state.seq).toBe(cp.state.seq + 1);
});

/**
 * The checkpoint directory's volume: a refused write is counted by reason, logged once per cause
 * (not once per write), pauses shipping, and a probe write resumes it by itself once the volume
 * takes writes again.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { CheckpointVolume, CheckpointWriteError } from "../../../src/ha/volume.js";
import { waitFor } from "../../helpers/wait.js";
import { mountTmpfs, TMPFS_UNAVAILABLE, type TestVolume } from "../../helpers/volume.js";
import { captureLogs } from "../../helpers/logCapture.js";

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function volumeOn(dir: string, probeIntervalMs: number) {
  const registry = new Registry();
  const { logger, lines } = captureLogs();
  const volume = new CheckpointVolume({ dir, logger, registry, probeIntervalMs });
  cleanups.push(() => volume.close());
  const metric = async (text: string) =>
    (await registry.metrics()).split("\n").find((l) => l.startsWith(text));
  return { volume, lines, metric };
}

const enospc = (path: string) =>
  new CheckpointWriteError("journal", path, Object.assign(new Error("write ENOSPC"), { code: "ENOSPC" }));

describe("checkpoint volume", () => {
  it("counts refused writes by reason, says so in one line per cause, and pauses until a probe write succeeds", async () => {
    const dir = await mkdtemp(join(tmpdir(), "volume-test-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const { volume, lines, metric } = volumeOn(dir, 3_600_000);
    expect(volume.status()).toEqual({ writable: true });
    for (let i = 0; i < 194; i++) volume.report(enospc(join(dir, "site-1-server.journal")));
    volume.report(
      new CheckpointWriteError("webhook_queue", join(dir, "webhook-queue.jsonl"), { code: "ENOSPC" }),
    );
    expect(
      await metric('sitehost_exporter_checkpoint_write_errors_total{reason="no_space",file="journal"}'),
    ).toMatch(/ 194$/);
    expect(await metric("sitehost_exporter_log_shipping_paused")).toMatch(/ 1$/);
    const errors = lines.filter((l) => l.level === 50);
    expect(errors.map((l) => l.file)).toEqual(["journal", "webhook_queue"]);
    expect(errors[0]?.msg).toMatch(
      /^cannot write the checkpoint journal .*site-1-server\.journal under logs\.checkpointDir \(no space left on the device, ENOSPC\)/,
    );
    const status = volume.status();
    expect(status).toMatchObject({ writable: false, reason: "no_space", code: "ENOSPC", failures: 195 });
    expect(!status.writable && status.message).toContain("logs.checkpointDir");
    expect(volume.paused).toBe(true);

    // The directory takes writes: a probe finds out and shipping resumes.
    expect(await volume.probe()).toBe(true);
    expect(volume.paused).toBe(false);
    expect(await metric("sitehost_exporter_log_shipping_paused")).toMatch(/ 0$/);
    expect(lines.some((l) => /takes writes again/.test(String(l.msg)))).toBe(true);
  });

  it.skipIf(TMPFS_UNAVAILABLE)(
    "stays paused while the volume is full and resumes by itself once space returns",
    async () => {
      const tmpfs: TestVolume = await mountTmpfs(512);
      cleanups.push(() => tmpfs.close());
      const { volume, metric } = volumeOn(tmpfs.dir, 50);
      await tmpfs.fill();
      volume.report(enospc(join(tmpfs.dir, "site-1-server.journal")));
      expect(await volume.probe()).toBe(false);
      expect(
        await metric('sitehost_exporter_checkpoint_write_errors_total{reason="no_space",file="probe"}'),
      ).toMatch(/ [1-9]\d*$/);
      expect(volume.paused).toBe(true);
      await tmpfs.free();
      // Nobody calls probe(): the volume's own timer does.
      await waitFor("shipping to resume", () => !volume.paused);
    },
  );
});

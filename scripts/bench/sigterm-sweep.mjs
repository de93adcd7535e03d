#!/usr/bin/env node
/* global process, console, setTimeout */
// SIGTERM at start-up outside a container: the package's `sitehost-exporter` command (bin/, the
// launcher) beside `node dist/src/cli/main.js`, interleaved run by run. Each run: start `run` against a
// closed API port, wait DELAY ms after spawn() returned, send SIGTERM, wait up to 10 s for the end.
// Prints, per way of starting, the delays at which the process ended by the signal (exit 143) instead
// of the daemon's graceful exit 0.
//
//   npm run build && node scripts/bench/sigterm-sweep.mjs [runs per way, 40] [last delay in ms, 600]
//
// Loopback only; the `node` first on PATH runs both (npm run puts the project's pinned one first).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "../..");
const runs = Number(process.argv[2] ?? 40);
const lastDelay = Number(process.argv[3] ?? 600);
const dir = mkdtempSync(join(tmpdir(), "sitehost-sigterm-sweep-"));
const ways = {
  "sitehost-exporter (launcher)": [join(root, "bin/sitehost-exporter")],
  "node dist/src/cli/main.js": [process.execPath, join(root, "dist/src/cli/main.js")],
};
const env = {
  PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
  SITEHOST_CLIENT_ID: "sweep",
  SITEHOST_CLIENT_SECRET: "sweep-secret",
  SITEHOST_API_URL: "http://127.0.0.1:9/v1",
  SITEHOST_CHECKPOINT_DIR: join(dir, "checkpoints"),
};

async function once([file, ...args], delay) {
  const child = spawn(file, [...args, "run", "--web.listen-address", "127.0.0.1:0"], {
    cwd: dir,
    env,
    stdio: "ignore",
  });
  const ended = new Promise((res) => child.once("exit", (code, signal) => res(String(code ?? signal))));
  await new Promise((res) => setTimeout(res, delay));
  child.kill("SIGTERM");
  const end = await Promise.race([
    ended,
    new Promise((res) => setTimeout(() => res("still running"), 10_000)),
  ]);
  if (end === "still running") child.kill("SIGKILL");
  return end;
}

const results = Object.fromEntries(Object.keys(ways).map((w) => [w, {}]));
for (let i = 0; i < runs; i++) {
  const delay = Math.round((i / Math.max(1, runs - 1)) * lastDelay);
  for (const [way, command] of Object.entries(ways))
    (results[way][await once(command, delay)] ??= []).push(delay);
}
rmSync(dir, { recursive: true, force: true });
console.log(`node ${process.version}, ${runs} runs per way, SIGTERM 0-${lastDelay} ms after spawn`);
for (const [way, ends] of Object.entries(results)) {
  const text = Object.entries(ends).map(([end, delays]) =>
    end === "0" ? `exit 0: ${delays.length}` : `${end}: ${delays.length} (at ${delays.join(", ")} ms)`,
  );
  console.log(`${way}: ${text.join("; ")}`);
}

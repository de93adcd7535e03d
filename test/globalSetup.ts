/**
 * Before any test file runs: `dist/` emitted from the TypeScript sources, when it is missing or older
 * than one of them. Once per run, so no test rewrites `dist/` while another spawns the daemon from it
 * (a file emitted while a daemon loads it was read half written). `npm test` builds first, and then
 * nothing is emitted here.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const main = join(root, "dist/src/cli/main.js");
/** The folders tsconfig.json includes. */
const SOURCES = ["src", "bench", "scripts", "dashboards/src", "config/alerts/src"];

function newestSourceMs(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSourceMs(path));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

export default function setup(): void {
  const builtMs = existsSync(main) ? statSync(main).mtimeMs : 0;
  const sourcesMs = Math.max(...SOURCES.map((d) => newestSourceMs(join(root, d))));
  if (builtMs >= sourcesMs) return;
  // Type errors elsewhere in the tree do not stop the emit; `npm run typecheck` reports them.
  spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], {
    cwd: root,
    stdio: "ignore",
  });
}

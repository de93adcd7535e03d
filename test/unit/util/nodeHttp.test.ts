/**
 * The daemon's modules leave Node.js's own bundled undici unloaded: 1.3 MB of heap a daemon would
 * hold for nothing. Needs the build (`npm test` builds first).
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../../..");
const BUNDLED_UNDICI = "NativeModule internal/deps/undici/undici";

/** Whether a fresh Node.js process that imports `modules` (in order) has loaded the bundled undici. */
function loadsBundledUndici(modules: string[]): boolean {
  const imports = modules.map((m) => `await import(${JSON.stringify(m)});`).join(" ");
  const out = execFileSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `${imports} console.log(process.moduleLoadList.includes(${JSON.stringify(BUNDLED_UNDICI)}));`,
    ],
    { cwd: root, encoding: "utf8" },
  );
  return out.trim() === "true";
}

describe("node:http without Node.js's bundled undici", () => {
  it("an ESM import of node:http loads it (what the server avoids)", () => {
    expect(loadsBundledUndici(["node:http"])).toBe(true);
  });

  it("the daemon's modules, the HTTP server and the CLI included, do not", () => {
    const built = ["dist/src/cli/program.js", "dist/src/daemon.js", "dist/src/server/http.js"].map((f) =>
      resolve(root, f),
    );
    for (const file of built) expect(existsSync(file), `${file}: run npm run build`).toBe(true);
    expect(loadsBundledUndici(built.map((f) => pathToFileURL(f).href))).toBe(false);
  });
});

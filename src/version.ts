import { readFileSync } from "node:fs";

/** Package version, read from package.json next to dist/ or src/ (two levels up from this module). */
function readVersion(): string {
  for (const rel of ["../../package.json", "../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "sitehost-exporter" && pkg.version) return pkg.version;
    } catch {
      // try the next candidate
    }
  }
  return "0.0.0";
}

export const VERSION = readVersion();
export const REVISION = process.env.SITEHOST_REVISION ?? "unknown";

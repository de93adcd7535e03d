/**
 * Writes dashboards/*.json from the TypeScript sources, and the Helm chart's copies of them
 * (helm/sitehost-exporter/files/dashboards: a chart cannot read files outside its directory).
 * Build first: `npx tsc -p tsconfig.json && npx node dist/dashboards/src/generate.js`
 * (or `--check` to fail when the committed files are out of date).
 */
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { renderDashboards } from "./index.js";

function repoDir(): string {
  // dist/dashboards/src/generate.js or dashboards/src/generate.ts → <repo>/dashboards
  const here = dirname(fileURLToPath(import.meta.url));
  const parts = here.split(/[\\/]/);
  const distAt = parts.lastIndexOf("dist");
  const repo = distAt >= 0 ? parts.slice(0, distAt).join("/") || "/" : resolve(here, "..", "..");
  return repo;
}

async function main(): Promise<void> {
  const check = process.argv.includes("--check");
  const repo = repoDir();
  const dirs = [
    join(repo, "dashboards"),
    join(repo, "helm", "sitehost-exporter", "files", "dashboards"),
    join(repo, "mixin", "dashboards"),
  ];
  let stale = 0;
  for (const [file, text] of renderDashboards())
    for (const path of dirs.map((dir) => join(dir, file))) {
      if (check) {
        const current = await readFile(path, "utf8").catch(() => "");
        if (current !== text) {
          console.error(`${path} is out of date; run npm run dashboards`);
          stale++;
        }
      } else {
        await writeFile(path, text);
        console.log(`wrote ${path}`);
      }
    }
  if (stale > 0) process.exitCode = 1;
}

await main();

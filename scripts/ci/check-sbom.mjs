/* global process, console */
// Checks a CycloneDX SBOM (`npm sbom --sbom-format=cyclonedx`) lists the named packages; prints
// "CycloneDX <version>, <n> components", or what it lacks on stderr with exit 1.
//
//   node scripts/ci/check-sbom.mjs sbom.cdx.json prom-client undici ...
import { readFileSync } from "node:fs";

const [file, ...want] = process.argv.slice(2);
const bom = JSON.parse(readFileSync(file, "utf8"));
const names = new Set((bom.components ?? []).map((c) => c.name));
const missing = want.filter((n) => !names.has(n));
if (bom.bomFormat !== "CycloneDX" || missing.length > 0) {
  console.error(
    `${file}: ${bom.bomFormat !== "CycloneDX" ? "not CycloneDX" : `lacks ${missing.join(", ")}`}`,
  );
  process.exit(1);
}
console.log(`CycloneDX ${bom.specVersion}, ${names.size} components`);

/* global process, console */
// Runs the Dockerfile's HEALTHCHECK command exactly as written, with this node and
// SITEHOST_LISTEN_ADDRESS=127.0.0.1:PORT (the image sets that variable), so the smoke test
// proves it without a Docker engine.
//
//   node scripts/ci/healthcheck.mjs Dockerfile PORT   exit code = the health check's
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

const [dockerfile, port] = process.argv.slice(2);
if (!dockerfile || !port) {
  console.error("usage: healthcheck.mjs Dockerfile PORT");
  process.exit(2);
}
// Join continuation lines, then take the JSON array after HEALTHCHECK ... CMD.
const text = readFileSync(dockerfile, "utf8").replace(/\\\r?\n/g, " ");
const m = /^HEALTHCHECK\s.*?\bCMD\s+(\[.*\])\s*$/m.exec(text);
if (!m) {
  console.error(`${dockerfile}: no exec-form HEALTHCHECK ... CMD [...] line`);
  process.exit(2);
}
const argv = JSON.parse(m[1]);
if (argv[0] !== "node") {
  console.error(`HEALTHCHECK must run node directly (no shell tools in the image), got ${argv[0]}`);
  process.exit(2);
}
try {
  execFileSync(process.execPath, argv.slice(1), {
    stdio: "inherit",
    timeout: 10_000,
    env: { ...process.env, SITEHOST_LISTEN_ADDRESS: `127.0.0.1:${port}` },
  });
  process.exit(0);
} catch (err) {
  const status = typeof err === "object" && err !== null && "status" in err ? err.status : null;
  process.exit(typeof status === "number" ? status : 1);
}

/**
 * The Node.js version guard: the first module the entry point evaluates. On a Node.js older than the
 * supported range the program would fail somewhere inside a dependency (`Cannot read properties of
 * undefined (reading 'bind')` under Node.js 20); this stops it first, with one line saying what is
 * needed. No imports and no recent syntax, so an old Node.js can load it.
 */

/** The oldest Node.js major the package supports (package.json `engines.node`; a test keeps them equal). */
export const MIN_NODE_MAJOR = 24;

/** The line to print when `version` (as process.version gives it) is too old, else undefined. */
export function nodeVersionProblem(version: string): string | undefined {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  if (!Number.isFinite(major) || major >= MIN_NODE_MAJOR) return undefined;
  return `sitehost-exporter needs Node.js ${MIN_NODE_MAJOR} or newer; this is Node.js ${version} (${process.execPath}). In the project's directory \`npm start\`, \`npm run demo\` and \`npx sitehost-exporter ...\` already run it on the pinned Node.js ${MIN_NODE_MAJOR} (the \`node\` dev dependency); elsewhere install Node.js ${MIN_NODE_MAJOR}, or run the container image.`;
}

const problem = nodeVersionProblem(process.version);
if (problem !== undefined) {
  // `doctor --output json` answers in JSON whatever stops it (as src/cli/doctorJson.ts, unimported here).
  const args = process.argv.slice(2);
  const json =
    args.includes("doctor") &&
    args.some((a, i) => a === "--output=json" || (a === "--output" && args[i + 1] === "json"));
  const error = { kind: "failure", message: problem, problems: [] };
  if (json) {
    const report = { node: process.version, findings: [], apiRequests: 0, exitCode: 1, error };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else process.stderr.write(`${problem}\n`);
  process.exit(1);
}

/** The Node.js version guard: one line saying what is needed, before anything that would break loads. */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { MIN_NODE_MAJOR, nodeVersionProblem } from "../../../src/cli/nodeVersion.js";

const root = resolve(import.meta.dirname, "../../..");

describe("the Node.js version guard", () => {
  it("its minimum is the lowest major package.json's engines allows", () => {
    const engines = (
      JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { engines: { node: string } }
    ).engines.node;
    const majors = [...engines.matchAll(/(?:>=|\^|~|(?:^|\s|\|)\s*)v?(\d+)/g)].map((m) => Number(m[1]));
    expect(Math.min(...majors)).toBe(MIN_NODE_MAJOR);
  });

  it("older majors get one line naming the version needed and the one found; supported ones none", () => {
    expect(nodeVersionProblem("v20.20.2")).toMatch(
      new RegExp(
        `^sitehost-exporter needs Node\\.js ${MIN_NODE_MAJOR} or newer; this is Node\\.js v20\\.20\\.2 `,
      ),
    );
    // It names what already works with the machine's old Node.js: the npm commands use the pinned one.
    for (const works of ["`npm start`", "`npm run demo`", "`npx sitehost-exporter ...`"]) {
      expect(nodeVersionProblem("v20.20.2")).toContain(works);
    }
    expect(nodeVersionProblem("v18.0.0")).toBeDefined();
    expect(nodeVersionProblem(`v${MIN_NODE_MAJOR}.0.0`)).toBeUndefined();
    expect(nodeVersionProblem(`v${MIN_NODE_MAJOR + 2}.1.0`)).toBeUndefined();
  });

  // The machine's own Node.js, where it is older than the supported range (Debian's is 20).
  const systemNode = "/usr/bin/node";
  const systemMajor = existsSync(systemNode)
    ? Number(/^v(\d+)/.exec(spawnSync(systemNode, ["--version"], { encoding: "utf8" }).stdout)?.[1])
    : NaN;
  it.skipIf(!(systemMajor < MIN_NODE_MAJOR))(
    "the built command under an older Node.js stops with that line and exit 1, for every command",
    () => {
      const main = join(root, "dist/src/cli/main.js");
      expect(existsSync(main)).toBe(true);
      for (const args of [["run"], ["check-config"], ["doctor"], ["--version"]]) {
        const r = spawnSync(systemNode, [main, ...args], {
          encoding: "utf8",
          env: { PATH: process.env.PATH },
        });
        expect(r.status).toBe(1);
        expect(r.stdout).toBe("");
        expect(r.stderr.trim().split("\n")).toEqual([
          expect.stringMatching(new RegExp(`^sitehost-exporter needs Node\\.js ${MIN_NODE_MAJOR} or newer`)),
        ]);
      }
      // doctor --output json: the same line as its JSON report on stdout, exit 1.
      const r = spawnSync(systemNode, [main, "doctor", "--output", "json"], {
        encoding: "utf8",
        env: { PATH: process.env.PATH },
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toBe("");
      const report = JSON.parse(r.stdout) as { exitCode: number; error: { kind: string; message: string } };
      expect(report.exitCode).toBe(1);
      expect(report.error.kind).toBe("failure");
      expect(report.error.message).toMatch(/^sitehost-exporter needs Node\.js/);
    },
  );

  it.skipIf(!(systemMajor < MIN_NODE_MAJOR))(
    "the package's sitehost-exporter command with that Node.js first on PATH: the same line, exit 1",
    () => {
      const r = spawnSync(join(root, "bin/sitehost-exporter"), ["run"], {
        encoding: "utf8",
        env: { PATH: `${dirname(systemNode)}:${process.env.PATH ?? ""}` },
      });
      expect(r.stderr.trim().split("\n")).toEqual([
        expect.stringMatching(new RegExp(`^sitehost-exporter needs Node\\.js ${MIN_NODE_MAJOR} or newer`)),
      ]);
      expect(r.status).toBe(1);
    },
  );
});

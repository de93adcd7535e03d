/**
 * The built CLI (`dist/src/cli/main.js`) run as a child process, as a user runs it (emitted by
 * test/globalSetup.ts before any test file), each run in a scratch directory with only the environment given (nothing
 * from the developer's shell leaks in).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";

export const root = resolve(import.meta.dirname, "../..");
export const main = join(root, "dist/src/cli/main.js");

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface BuiltCli {
  /** The scratch directory the CLI runs in. */
  dir: string;
  run(args: string[], env?: Record<string, string>): CliRun;
  /** Writes a file into the scratch directory; returns its path. */
  file(name: string, text: string): string;
}

/** Registers the check that the build is there (beforeAll) and the scratch directory's removal (afterAll). */
export function builtCli(name: string): BuiltCli {
  const dir = mkdtempSync(join(tmpdir(), `sitehost-${name}-`));
  beforeAll(() => {
    // Emitted by test/globalSetup.ts before any file runs.
    expect(existsSync(main), `${main} missing: run npm run build`).toBe(true);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir,
    run(args, env = {}) {
      const r = spawnSync(process.execPath, [main, ...args], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", ...env },
        encoding: "utf8",
        timeout: 20_000,
      });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    },
    file(fileName, text) {
      const p = join(dir, fileName);
      writeFileSync(p, text);
      return p;
    },
  };
}

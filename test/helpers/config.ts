/** Test helpers for configuration errors and files. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { ConfigError } from "../../src/config/errors.js";

/** The problems of the ConfigError `p` rejects with (fails the test when it resolves or fails otherwise). */
export async function configProblems(p: Promise<unknown>): Promise<string[]> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  return (err as ConfigError).problems;
}

/** Writes each text given to a new YAML file in `dir` and returns its path. */
export function yamlFiles(dir: string): (text: string) => string {
  let n = 0;
  return (text) => {
    const file = join(dir, `config-${n++}.yaml`);
    writeFileSync(file, text);
    return file;
  };
}

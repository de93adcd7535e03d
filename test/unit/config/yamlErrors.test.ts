/**
 * A YAML syntax error names the file, the line and column to fix (not the line the parser noticed
 * the fault on), says what is wrong without a dangling colon, and shows the line with a caret.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { configProblems, yamlFiles } from "../../helpers/config.js";

const dir = mkdtempSync(join(tmpdir(), "sitehost-yaml-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const yamlFile = yamlFiles(dir);

async function problemsOf(text: string): Promise<{ file: string; problems: string[] }> {
  const file = yamlFile(text);
  return { file, problems: await configProblems(loadConfig({ configFile: file, env: {} })) };
}

describe("YAML syntax errors", () => {
  it("a key indented deeper than the one above it: that line (not the line before), with the snippet", async () => {
    const { file, problems } = await problemsOf(
      "logs:\n  enabled: true\n  checkpointDir: ./checkpoints\n    startFrom: 1h\nweb: {}\n",
    );
    expect(problems).toEqual([
      [
        `${file}:4:5: YAML syntax error: this line is indented deeper than the line above it; indent it as far as the keys beside it, or end the line above with a key and ":"`,
        "    3 |   checkpointDir: ./checkpoints",
        "    4 |     startFrom: 1h",
        "      |     ^",
      ].join("\n"),
    ]);
  });

  it("the example config broken on a line past 100: that line is the one named", async () => {
    const example = readFileSync(join(import.meta.dirname, "../../../config/example.yaml"), "utf8");
    const lines = example.split("\n");
    // Indent a schedule two spaces deeper than the enabled: true above it, past line 100.
    const at = lines.findIndex((l, i) => i >= 100 && /^ +schedule:/.test(l));
    expect(at).toBeGreaterThanOrEqual(100);
    lines[at] = `  ${lines[at] as string}`;
    const { file, problems } = await problemsOf(lines.join("\n"));
    expect(problems[0]?.startsWith(`${file}:${at + 1}:`)).toBe(true);
    expect(problems[0]).toContain(`${at + 1} | ${lines[at] as string}`);
  });

  it("a key indented deeper after a comment: the key's line, not the comment's", async () => {
    const { file, problems } = await problemsOf(
      "logs:\n  startFrom: now\n  # Durable checkpoints.\n    checkpointDir: ./checkpoints\n",
    );
    expect(problems).toEqual([
      [
        `${file}:4:5: YAML syntax error: All mapping items must start at the same column: indent this line as far as the keys beside it`,
        "    2 |   startFrom: now",
        "    4 |     checkpointDir: ./checkpoints",
        "      |     ^",
      ].join("\n"),
    ]);
  });

  it("a tab as indentation: the tab's line and column, shown as → under the caret", async () => {
    const { file, problems } = await problemsOf("web:\n  telemetryPath: /m\n\tlistenAddress: :1\n");
    expect(problems).toEqual([
      [
        `${file}:3:1: YAML syntax error: Tabs are not allowed as indentation`,
        "    2 |   telemetryPath: /m",
        "    3 | →listenAddress: :1",
        "      | ^",
      ].join("\n"),
    ]);
  });

  it("an unclosed quote: the line where the quote opens, not the end of the file", async () => {
    const { file, problems } = await problemsOf(
      'api:\n  clientId: "abc\n  url: https://api.example.com\nsites:\n  include: ["*"]\n',
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toBe(
      [
        `${file}:2:13: YAML syntax error: Missing closing "quote: the quoted value that opens here is never closed`,
        "    1 | api:",
        '    2 |   clientId: "abc',
        "      |             ^",
      ].join("\n"),
    );
  });

  it("a duplicate key: the second one", async () => {
    const { file, problems } = await problemsOf("api:\n  clientId: a\n\n  clientId: b\n");
    expect(problems).toEqual([
      [
        `${file}:4:3: YAML syntax error: Map keys must be unique: this key is already set above in the same mapping`,
        "    2 |   clientId: a",
        "    4 |   clientId: b",
        "      |   ^",
      ].join("\n"),
    ]);
  });

  it("a key without its colon: that line", async () => {
    const { file, problems } = await problemsOf("api:\n  clientId x\n  url: https://api.example.com\n");
    expect(problems[0]?.split("\n")).toEqual([
      `${file}:2:3: YAML syntax error: Implicit keys need to be on a single line: a key needs ": " (a colon and a space) after it`,
      "    1 | api:",
      "    2 |   clientId x",
      "      |   ^",
    ]);
  });

  it("no message ends on a dangling colon", async () => {
    for (const text of ["a: [1, 2\nb: 1\n", "a: b: c\n", "a:\n  - 1\n - 2\n"]) {
      const { problems } = await problemsOf(text);
      for (const p of problems) expect(p.split("\n")[0]).not.toMatch(/:\s*$/);
    }
  });
});

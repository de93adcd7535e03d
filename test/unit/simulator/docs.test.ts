/** docs/simulator.md names every option, flag and control hook the simulator has. */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { simulateCommand } from "../../../src/simulator/command.js";
import { DEFAULT_SIMULATOR_OPTIONS } from "../../../src/simulator/index.js";
import { startTestSim } from "./helpers.js";

const doc = await readFile(resolve(import.meta.dirname, "../../../docs/simulator.md"), "utf8");

describe("docs/simulator.md", () => {
  it("names every option and every simulate flag", () => {
    for (const key of Object.keys(DEFAULT_SIMULATOR_OPTIONS)) expect(doc, key).toContain(`\`${key}\``);
    for (const option of simulateCommand().options) expect(doc, option.long).toContain(`\`${option.long}`);
  });

  it("names every control hook", async () => {
    const t = await startTestSim({ sites: 1 });
    try {
      for (const hook of Object.keys(t.sim.control)) expect(doc, hook).toContain(`\`${hook}`);
    } finally {
      await t.close();
    }
  });
});

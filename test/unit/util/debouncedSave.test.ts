import { describe, expect, it } from "vitest";
import { DebouncedSave } from "../../../src/util/debouncedSave.js";

describe("a state file written a little after it changed", () => {
  it("a burst of changes is one write, of the state when it is written; flush writes what is pending", async () => {
    let state = 0;
    const written: number[] = [];
    const saves = new DebouncedSave({
      delayMs: 60_000,
      snapshot: () => state,
      write: async (s) => void written.push(s),
      failed: () => undefined,
    });
    for (state = 1; state <= 3; state++) saves.schedule();
    expect(written).toEqual([]);
    await saves.flush();
    expect(written).toEqual([4]);
    await saves.flush();
    expect(written).toEqual([4]);
  });

  it("a failed write is reported, and the next change is written", async () => {
    const failures: unknown[] = [];
    let fail = true;
    const written: string[] = [];
    const saves = new DebouncedSave({
      delayMs: 60_000,
      snapshot: () => "state",
      write: async (s) => {
        if (fail) throw new Error("disk full");
        written.push(s);
      },
      failed: (err) => void failures.push(err),
    });
    saves.schedule();
    await saves.flush();
    expect(String(failures[0])).toContain("disk full");
    fail = false;
    saves.schedule();
    await saves.flush();
    expect(written).toEqual(["state"]);
  });
});

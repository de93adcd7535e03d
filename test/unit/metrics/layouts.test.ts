import { describe, expect, it } from "vitest";
import { Layouts, RECENT_LAYOUTS } from "../../../src/metrics/layouts.js";

describe("Layouts", () => {
  it("gives entries of a collector with the same families and shapes one object", () => {
    const layouts = new Layouts();
    const a = layouts.of("usage", undefined, [3, 7], ['store="fs"} \n', "} \n"]);
    // Equal content in new arrays (and strings built anew) finds the same layout.
    const b = layouts.of("usage", undefined, [3, 7], [`store="${"fs"}"} \n`, "} \n"]);
    expect(b).toBe(a);
    expect(layouts.of("usage", a, [3, 7], ['store="db"} \n', "} \n"])).not.toBe(a);
    // Another collector keeps its own.
    expect(layouts.of("traffic", undefined, [3, 7], ['store="fs"} \n', "} \n"])).not.toBe(a);
  });

  it("keeps an entry's own layout however many others were made since", () => {
    const layouts = new Layouts();
    const own = layouts.of("domains", undefined, [1], ['domain="a.example"} \n']);
    for (let i = 0; i < RECENT_LAYOUTS * 3; i++) layouts.of("domains", undefined, [1], [`domain="${i}"} \n`]);
    expect(layouts.of("domains", own, [1], ['domain="a.example"} \n'])).toBe(own);
    // Without it, a layout that many others followed is made anew (the recent list is bounded).
    const again = layouts.of("domains", undefined, [1], ['domain="a.example"} \n']);
    expect(again).not.toBe(own);
    expect(again).toEqual(own);
  });
});

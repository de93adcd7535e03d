/** The daemon's parts: started in the order given, stopped in reverse, a failed start undone. */
import { describe, expect, it } from "vitest";
import { ComponentGroup, type Component } from "../../../src/util/components.js";

function recorder() {
  const events: string[] = [];
  const part = (name: string, failStart = false, failStop = false): Component => ({
    name,
    start: async () => {
      await Promise.resolve();
      if (failStart) throw new Error(`${name} would not start`);
      events.push(`start ${name}`);
    },
    stop: async () => {
      await Promise.resolve();
      events.push(`stop ${name}`);
      if (failStop) throw new Error(`${name} would not stop`);
    },
  });
  return { events, part };
}

describe("ComponentGroup", () => {
  it("starts in order, skips absent parts, and stops in reverse, once", async () => {
    const { events, part } = recorder();
    const group = new ComponentGroup();
    await group.start([part("api"), undefined, part("server"), false, part("active")]);
    await Promise.all([group.stop(), group.stop()]);
    expect(events).toEqual([
      "start api",
      "start server",
      "start active",
      "stop active",
      "stop server",
      "stop api",
    ]);
  });

  it("a start that fails stops what started before it, in reverse, and fails with its error", async () => {
    const { events, part } = recorder();
    const group = new ComponentGroup();
    await expect(
      group.start([part("api"), part("server"), part("lock", true), part("active")]),
    ).rejects.toThrow("lock would not start");
    expect(events).toEqual(["start api", "start server", "stop server", "stop api"]);
    await group.stop();
    expect(events).toHaveLength(4);
  });

  it("stops every part even when one stop fails, then throws the first failure", async () => {
    const { events, part } = recorder();
    const group = new ComponentGroup();
    await group.start([part("api"), part("server", false, true), part("active", false, true)]);
    await expect(group.stop()).rejects.toThrow("active would not stop");
    expect(events.slice(3)).toEqual(["stop active", "stop server", "stop api"]);
  });

  it("a stop asked for during the start waits for it, starts nothing more, and stops what started", async () => {
    const { events, part } = recorder();
    const group = new ComponentGroup();
    let release = () => {};
    const slow: Component = {
      name: "slow",
      start: () => new Promise<void>((r) => (release = r)),
      stop: () => void events.push("stop slow"),
    };
    const starting = group.start([part("api"), slow, part("never")]);
    await new Promise((r) => setImmediate(r));
    const stopping = group.stop();
    release();
    await starting;
    await stopping;
    expect(events).toEqual(["start api", "stop slow", "stop api"]);
  });
});

/**
 * /sd/probes of the built daemon against the simulator: every selected site that is not disabled,
 * its provisioned domains as https:// targets (the unprovisioned one left out), labelled like the
 * site's series; a site disabled later leaves the list at the next discovery.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TargetGroup } from "../../src/probes/targets.js";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";
import { startDaemonProcess, waitReady, type DaemonProcess } from "../helpers/daemon.js";
import { waitFor } from "../helpers/wait.js";

let sim: RunningSimulator;
let daemon: DaemonProcess | undefined;

beforeAll(async () => {
  sim = await startSimulator({ sites: 4, seed: 11 });
}, 60_000);

afterAll(async () => {
  if (daemon) expect(await daemon.stop()).toBe(0);
  await sim?.close();
});

async function targets(d: DaemonProcess): Promise<TargetGroup[]> {
  const res = await fetch(`${d.url}/sd/probes`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/json");
  return (await res.json()) as TargetGroup[];
}

describe("/sd/probes", () => {
  it("lists the simulator's sites and their provisioned domains; follows discovery", async () => {
    const [first, second] = sim.control.sites();
    if (!first || !second) throw new Error("the simulator has fewer than 2 sites");
    sim.control.disableSite(second.site.id);
    daemon = await startDaemonProcess({
      sim,
      config: {
        logs: { enabled: false },
        probes: { domains: "all" },
        collectors: { inventory: { schedule: "*/2 * * * * *" } },
      },
    });
    await waitReady(daemon.url);
    const expected = sim.control
      .sites()
      .filter((s) => s.site.state !== "disabled")
      .flatMap((s) => {
        const own = s.domains.filter((d) => d.provisioned).map((d) => `https://${d.domainName}/`);
        return own.length > 0 || s.domains.length > 0 ? own : [`${s.site.url}/`];
      });
    const groups = await targets(daemon);
    expect(groups.flatMap((g) => g.targets).sort()).toEqual(expected.sort());
    // Site 0's second domain is unprovisioned in the simulator.
    expect(first.domains.some((d) => !d.provisioned)).toBe(true);
    expect(groups.some((g) => g.labels.site_id === String(second.site.id))).toBe(false);
    const own = groups.find((g) => g.labels.site_id === String(first.site.id));
    expect(own?.labels).toMatchObject({ site: first.site.name, module: "http_2xx", primary: "true" });

    // Disabled after start: gone from the list once discovery has seen it.
    sim.control.disableSite(first.site.id);
    await waitFor(
      "the disabled site to leave /sd/probes",
      async () =>
        !(await targets(daemon as DaemonProcess)).some((g) => g.labels.site_id === String(first.site.id)),
      { timeoutMs: 20_000 },
    );
  }, 90_000);
});

import { describe, expect, it } from "vitest";
import type { ActivityEntry } from "../../../src/api/logSchemas.js";
import { factsOfActivity, factsOfEvent } from "../../../src/siteState/facts.js";

function entry(name: string, message: string, description = ""): ActivityEntry {
  return { id: 1, name, message, description, timestamp: "2026-11-29T10:00:00.000Z" } as ActivityEntry;
}

describe("what an activity entry says of a site's states", () => {
  it.each([
    // The simulator's wording: a toggle's name, its direction in the message.
    ["maintenance_mode", "Maintenance mode enabled", "Maintenance mode toggled", { maintenance: true }],
    ["maintenance_mode", "Maintenance mode disabled", "Maintenance mode toggled", { maintenance: false }],
    // Other wordings a platform may use.
    ["maintenance_mode_enabled", "", "", { maintenance: true }],
    ["maintenance_mode_disabled", "Disabled on www.example.com", "", { maintenance: false }],
    ["site_maintenance", "Maintenance mode turned on", "", { maintenance: true }],
    ["site_maintenance", "Maintenance mode: off", "", { maintenance: false }],
    ["toggle_setting", "Maintenance mode activated", "Maintenance mode", { maintenance: true }],
    // A host in the message is not a direction.
    ["maintenance_mode", "Maintenance mode enabled on www.example.com", "", { maintenance: true }],
    [
      "site_hacked",
      "Site shop marked as hacked by support and disabled",
      "Site marked as hacked",
      { hacked: true },
    ],
    ["site_compromised", "", "", { hacked: true }],
    ["site_enabled", "Site shop enabled", "Site enabled", { hacked: false }],
  ])("%s / %j", (name, message, description, expected) => {
    const reading = factsOfActivity(entry(name, message, description));
    expect(reading.unclear).toBe(false);
    expect(Object.fromEntries(reading.facts.map((f) => [f.state, f.on]))).toEqual(expected);
  });

  it.each([
    // Basic authentication's event reuses the maintenance_mode field: never maintenance.
    ["basic_authentication", "Basic authentication activated", "Basic authentication toggled"],
    ["plugin_updated", "Plugin x updated to 2.0", "Plugin updated"],
    ["site_disabled", "Site shop disabled", "Site disabled"],
    ["ssh_command", "Command executed: wp maintenance-mode status", ""],
  ])("%s says nothing of the states", (name, message, description) => {
    expect(factsOfActivity(entry(name, message, description))).toEqual({ facts: [], unclear: false });
  });

  it("a toggle whose words give no direction (or both) is unclear, not applied", () => {
    expect(factsOfActivity(entry("maintenance_mode", "Maintenance mode toggled"))).toEqual({
      facts: [],
      unclear: true,
    });
    expect(factsOfActivity(entry("maintenance_mode", "Maintenance mode enabled, then disabled"))).toEqual({
      facts: [],
      unclear: true,
    });
  });
});

describe("what a webhook event says of its site's states", () => {
  it.each([
    [{ event: "maintenance_mode", site_id: 3, maintenance_mode: "enabled" }, { maintenance: true }],
    [{ event: "maintenance_mode", site_id: 3, maintenance_mode: "disabled" }, { maintenance: false }],
    [{ event: "site_hacked", site: { id: 3, state: "disabled", status: "hacked" } }, { hacked: true }],
    [{ event: "site_enabled", site: { id: 3, state: "live" } }, { hacked: false }],
    [
      {
        event: "site_converted",
        site: { id: 3, site_converted_to: "sandbox", site_converted_from: "staging" },
      },
      { maintenance: true },
    ],
    [{ event: "site_converted", site: { id: 3, site_converted_to: "live" } }, {}],
    // The same field name, another meaning.
    [{ event: "basic_authentication", site_id: 3, maintenance_mode: "activated" }, {}],
    [{ event: "ssh_command", site_id: 3 }, {}],
  ])("%j", (payload, expected) => {
    const reading = factsOfEvent(payload);
    expect(Object.fromEntries(reading.facts.map((f) => [f.state, f.on]))).toEqual(expected);
  });

  it("a maintenance_mode event without a readable value is unclear", () => {
    expect(factsOfEvent({ event: "maintenance_mode", site_id: 3, maintenance_mode: 7 }).unclear).toBe(true);
  });
});

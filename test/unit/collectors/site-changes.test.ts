/** The site list as a hint: which collectors a change of a listed site's fields asks again. */
import { describe, expect, it } from "vitest";
import { SiteChanges } from "../../../src/collectors/siteChanges.js";
import { makeSite } from "./fixtures.js";

describe("site list changes", () => {
  it("wakes the collectors whose answers follow the changed field, for that site only", () => {
    const changes = new SiteChanges();
    const a = makeSite(1, { domainsCount: 1, cmsVersion: "6.8" });
    const b = makeSite(2, { domainsCount: 2, cmsVersion: "6.8" });
    expect(changes.listed([a, b])).toEqual([]); // the first listing: nothing to compare with
    expect(changes.listed([a, b])).toEqual([]); // the same again
    expect(changes.listed([{ ...a, domainsCount: 2 }, b])).toEqual([[1, ["domains", "certificates"]]]);
    expect(
      changes.listed([
        { ...a, domainsCount: 2 },
        { ...b, cmsVersion: "6.9" },
      ]),
    ).toEqual([[2, ["security"]]]);
    expect(
      changes.listed([
        { ...a, domainsCount: 2, state: "disabled" },
        { ...b, cmsVersion: "6.9" },
      ]),
    ).toEqual([[1, ["domains", "certificates", "backups"]]]);
  });

  it("a site that leaves and comes back is new again; a field that does not matter wakes nothing", () => {
    const changes = new SiteChanges();
    const a = makeSite(1);
    changes.listed([a]);
    expect(changes.listed([{ ...a, fileSystemUsageBytes: 123_456 }])).toEqual([]);
    changes.listed([]);
    expect(changes.listed([{ ...a, state: "disabled" }])).toEqual([]);
  });
});

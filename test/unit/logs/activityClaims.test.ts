/** One activity entry listed by two streams (the account's log and its site's) is shipped by one. */
import { describe, expect, it } from "vitest";
import { ActivityClaims, CLAIM_TTL_MS } from "../../../src/logs/activityClaims.js";

describe("ActivityClaims", () => {
  it("the first stream to keep an entry ships it; another stream does not", () => {
    const claims = new ActivityClaims();
    expect(claims.claim("fp1", "0/activity", 1000)).toBe(true);
    expect(claims.claim("fp1", "7/activity", 2000)).toBe(false);
    expect(claims.claim("fp2", "7/activity", 2000)).toBe(true);
    expect(claims.claim("fp2", "0/activity", 2500)).toBe(false);
  });

  it("a stream keeps its own claim when it reads the entry again (a repeated read still ships it)", () => {
    const claims = new ActivityClaims();
    expect(claims.claim("fp", "7/activity", 1000)).toBe(true);
    expect(claims.claim("fp", "7/activity", 5000)).toBe(true);
    expect(claims.claim("fp", "0/activity", 6000)).toBe(false);
  });

  it("claims lapse after an hour and are swept", () => {
    const claims = new ActivityClaims();
    claims.claim("old", "0/activity", 0);
    expect(claims.claim("old", "7/activity", CLAIM_TTL_MS)).toBe(true);
    for (let i = 0; i < 2048; i++) claims.claim(`fp${i}`, "0/activity", 3 * CLAIM_TTL_MS);
    expect(claims.size).toBe(2048);
  });
});

/**
 * Decoding log pages as the platform may send them: the continuation under either spelling, and fields
 * the exporter does not use (total_results, the envelope's message, page counts) of any type.
 */
import { describe, expect, it } from "vitest";
import { logPage, pagedList, type DecodeContext } from "../../../src/api/decode.js";
import { ActivityEntrySchema, PhpLogEntrySchema } from "../../../src/api/schemas.js";

const ctx: DecodeContext = {
  endpoint: "/sites/{id}/logs/php",
  redact: (t) => t,
  reportRejected: () => undefined,
};
const entry = { message: "PHP Warning: x", timestamp: "2026-11-24T10:00:00Z" };
const decodePhp = logPage(PhpLogEntrySchema);

describe("log pages", () => {
  it.each([
    { name: "scroll_id, as documented", body: { scroll_id: "s-1" }, want: "s-1" },
    { name: "scrollId, as most of the API spells fields", body: { scrollId: "s-1" }, want: "s-1" },
    { name: "both: the documented one", body: { scroll_id: "s-1", scrollId: "s-2" }, want: "s-1" },
    { name: "none", body: {}, want: null },
    { name: "null", body: { scroll_id: null }, want: null },
    { name: "an empty one is none", body: { scroll_id: "" }, want: null },
  ])("continuation: $name", async ({ body, want }) => {
    const page = await decodePhp({ total_results: 1, logs: [entry], ...body }, ctx);
    expect(page.scrollId).toBe(want);
    expect(page.items).toHaveLength(1);
  });

  it.each([
    { name: "a number", value: 1234, want: 1234 },
    { name: "a string of digits", value: "1234", want: 1234 },
    { name: "a word", value: "many", want: null },
    {
      name: "an object (a search engine's {value, relation})",
      value: { value: 10000, relation: "gte" },
      want: null,
    },
    { name: "absent", value: undefined, want: null },
  ])("total_results as $name is read or ignored, never an error", async ({ value, want }) => {
    const page = await decodePhp({ total_results: value, logs: [entry], scroll_id: "s" }, ctx);
    expect(page.totalResults).toBe(want);
    expect(page.items).toHaveLength(1);
  });

  it("an activity page whose unused envelope fields have odd types still decodes", async () => {
    const decode = pagedList(ActivityEntrySchema);
    const result = await decode(
      {
        message: 42,
        errors: "none",
        data: [{ id: 1, name: "site.disable", timestamp: "2026-11-24T10:00:00Z" }],
        page: { currentPage: "1", nextPage: 2, lastPage: 3, perPage: "50", totalItems: null },
      },
      { ...ctx, endpoint: "/account/logs/activity" },
    );
    expect(result.items).toHaveLength(1);
    expect(result.page).toMatchObject({ nextPage: 2, lastPage: 3 });
  });
});

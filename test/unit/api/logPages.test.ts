/**
 * Decoding log pages as the platform may send them: the continuation under either spelling, and fields
 * the exporter does not use (total_results, the envelope's message, page counts) of any type.
 */
import { describe, expect, it } from "vitest";
import {
  logPage,
  pagedList,
  parseJsonBody,
  type DecodeContext,
  type LogPage,
} from "../../../src/api/decode.js";
import type { PageBytes } from "../../../src/api/logRecords.js";
import type { Validated } from "../../../src/api/validate.js";
import { ActivityEntrySchema, PhpLogEntrySchema, type PhpLogEntry } from "../../../src/api/schemas.js";

const ctx: DecodeContext = {
  endpoint: "/sites/{id}/logs/php",
  redact: (t) => t,
  reportRejected: () => undefined,
};
const entry = { message: "PHP Warning: x", timestamp: "2026-11-24T10:00:00Z" };
const decodePhp = logPage(PhpLogEntrySchema);
const fromBytes = decodePhp.fromBytes as NonNullable<typeof decodePhp.fromBytes>;

/** A page's bytes as the transport lends them, counting how often they are handed back. */
function lent(text: string): PageBytes & { released: number } {
  const page = {
    bytes: Buffer.from(text),
    released: 0,
    release: () => void (page.released += 1),
  };
  return page;
}
const fromText = (text: string, context: DecodeContext = ctx) => fromBytes(lent(text), context);

/** The page decoded both ways: from its parsed body (doctor, a backlog) and from its bytes (the client). */
async function bothWays(body: object): Promise<Array<LogPage<PhpLogEntry>>> {
  return [await decodePhp(body, ctx), await fromText(JSON.stringify(body))];
}

const recordsOf = <T>(page: LogPage<T>) =>
  Array.from({ length: page.records.length }, (_, i) => page.records.record(i));

describe("log pages", () => {
  it.each([
    { name: "scroll_id, as documented", body: { scroll_id: "s-1" }, want: "s-1" },
    { name: "scrollId, as most of the API spells fields", body: { scrollId: "s-1" }, want: "s-1" },
    { name: "both: the documented one", body: { scroll_id: "s-1", scrollId: "s-2" }, want: "s-1" },
    { name: "none", body: {}, want: null },
    { name: "null", body: { scroll_id: null }, want: null },
    { name: "an empty one is none", body: { scroll_id: "" }, want: null },
    { name: "a number, read as its text", body: { scroll_id: 90817 }, want: "90817" },
  ])("continuation: $name", async ({ body, want }) => {
    for (const page of await bothWays({ total_results: 1, logs: [entry], ...body })) {
      expect(page.scrollId).toBe(want);
      expect(recordsOf(page)).toEqual([entry]);
    }
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
    for (const page of await bothWays({ total_results: value, logs: [entry], scroll_id: "s" })) {
      expect(page.totalResults).toBe(want);
      expect(recordsOf(page)).toEqual([entry]);
    }
  });

  it("from its bytes, builds and checks a record only when it is asked for, and reports one that does not fit once", async () => {
    const reports: Validated<unknown>[] = [];
    const bytes = lent(
      JSON.stringify({
        logs: [entry, { timestamp: 1_795_000_000, line: 3 }, { ...entry, message: "second ✓" }],
        scroll_id: "s",
      }),
    );
    const page = await fromBytes(bytes, { ...ctx, reportRejected: (r) => void reports.push(r) });
    expect(page.rawCount).toBe(3);
    expect(page.rejected).toBe(0);
    expect(page.records.timestamp(1)).toBe(1_795_000_000);
    expect(page.records.timestamp(0)).toBe(entry.timestamp);
    expect(reports).toEqual([]);
    expect(page.records.record(1)).toBeUndefined();
    expect(page.records.record(1)).toBeUndefined();
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ rejected: 1, rejectedFields: { message: 1 } });
    expect(reports[0]?.firstRejected?.field).toBe("logs[1].message");
    expect(page.records.record(2)).toEqual({ ...entry, message: "second ✓" });
    expect(reports).toHaveLength(1);
    // Handed back once the read is done with them, once; the page is unreadable from then on.
    expect(bytes.released).toBe(0);
    page.records.release?.();
    page.records.release?.();
    expect(bytes.released).toBe(1);
    expect(() => page.records.record(0)).toThrow(/after its bytes were handed back/);
  });

  it("reads a timestamp of epoch seconds, fractions, exponents and signs as JSON.parse does", async () => {
    const times = [
      0, 1_795_000_000, 999_999_999_999_999, 1_000_000_000_000_000, 1_795_000_000.25, -5, 1e21, 1.5e3,
    ];
    const text = `{"logs":[${times.map((t) => `{"timestamp":${JSON.stringify(t)},"message":"m"}`).join(",")},{"timestamp":1.5E3,"message":"m"}]}`;
    const page = await fromText(text);
    expect(Array.from({ length: page.records.length }, (_, i) => page.records.timestamp(i))).toEqual([
      ...times,
      1500,
    ]);
  });

  it("reads a timestamp written with escapes, and a record whose keys are escaped", async () => {
    const text = '{"logs":[{"time\\u0073tamp":"2026-11-24T10:00:00\\u005a","message":"a\\"b"}]}';
    const page = await fromText(text, ctx);
    expect(page.records.timestamp(0)).toBe("2026-11-24T10:00:00Z");
    expect(page.records.record(0)).toEqual({ message: 'a"b', timestamp: "2026-11-24T10:00:00Z" });
  });

  it.each([
    { name: "an empty body", text: "" },
    { name: "text that is not JSON", text: "<html>busy</html>" },
    { name: "a truncated page", text: '{"logs":[{"timestamp":1,"message":"a"},{"timest' },
    { name: "a list", text: "[]" },
    { name: "logs that are no list", text: '{"logs":5}' },
    { name: "no logs", text: '{"logs":null,"scroll_id":"s"}' },
    { name: "a continuation of the wrong type", text: '{"logs":[],"scroll_id":true}' },
  ])("$name: the same page or the same error from its bytes as from its parsed body", async ({ text }) => {
    const outcome = (p: Promise<LogPage<PhpLogEntry>>) =>
      p.then(
        (page) => ({ records: recordsOf(page), scrollId: page.scrollId, rawCount: page.rawCount }),
        (err: Error) => ({ error: `${err.constructor.name}: ${err.message}` }),
      );
    const parsed = await outcome(
      Promise.resolve()
        .then(() => parseJsonBody(text, ctx.endpoint))
        .then((body) => decodePhp(body, ctx)),
    );
    const bytes = lent(text);
    expect(await outcome(fromBytes(bytes, ctx))).toEqual(parsed);
    // A page that is read whole has its bytes handed back at once.
    if ("error" in parsed || parsed.rawCount === 0) expect(bytes.released).toBe(1);
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

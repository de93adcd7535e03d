/**
 * A page is known by its first and last entries and every entry's time: the same page read again is
 * a repeat; a page that differs in any time, or in its first or last entry, is not; a page whose
 * entries share one time is never taken for a repeat (identical lines in one second are real).
 */
import { describe, expect, it } from "vitest";
import { logPage, type DecodeContext } from "../../../../src/api/decode.js";
import { checkedRecords } from "../../../../src/api/logRecords.js";
import { PhpLogEntrySchema } from "../../../../src/api/schemas.js";
import { fingerprint } from "../../../../src/logs/entry.js";
import { RecordEntries } from "../../../../src/logs/read/pageEntries.js";
import { PagesSeen, pageSignature } from "../../../../src/logs/read/repeats.js";

const T0 = 1_795_000_000;
const entries = (list: Array<{ timestamp: number | string; message: string }>) =>
  new RecordEntries(checkedRecords(list));
const page = (times: Array<number | string>, tag = "a") =>
  entries(times.map((timestamp, i) => ({ timestamp, message: `${tag} ${i}` })));

describe("page signatures", () => {
  it("are equal for the same entries and times, and differ in any time or in the first or last entry", () => {
    const times = Array.from({ length: 200 }, (_, i) => T0 + i);
    const base = pageSignature(page(times), fingerprint);
    expect(base).toBeDefined();
    expect(pageSignature(page([...times]), fingerprint)).toBe(base);
    const moved = [...times];
    moved[100] = T0 + 1000;
    expect(pageSignature(page(moved), fingerprint)).not.toBe(base);
    const unreadable: Array<number | string> = [...times];
    unreadable[50] = "not a time";
    expect(pageSignature(page(unreadable), fingerprint)).not.toBe(base);
    expect(pageSignature(page(times, "b"), fingerprint)).not.toBe(base);
    // A middle entry's own content is not part of it (its time is).
    const middle = times.map((timestamp, i) => ({ timestamp, message: `a ${i}` }));
    (middle[100] as { message: string }).message = "other";
    expect(pageSignature(entries(middle), fingerprint)).toBe(base);
  });

  it("are undefined for a page whose entries share one time, and work for pages of any size", () => {
    expect(pageSignature(page([T0, T0, T0]), fingerprint)).toBeUndefined();
    expect(pageSignature(entries([]), fingerprint)).toBeUndefined();
    const big = Array.from({ length: 10_000 }, (_, i) => T0 + i);
    const a = pageSignature(page(big), fingerprint);
    big[9_999] = T0 - 1;
    expect(pageSignature(page(big), fingerprint)).not.toBe(a);
    // After a large page, a small one is signed by its own times only.
    expect(pageSignature(page([T0, T0 + 1]), fingerprint)).toBe(
      pageSignature(page([T0, T0 + 1]), fingerprint),
    );
    expect(pageSignature(page([T0, T0 + 1]), fingerprint)).not.toBe(
      pageSignature(page([T0, T0 + 2]), fingerprint),
    );
  });

  it("tell a page read again in a pass, right after itself or later", () => {
    const seen = new PagesSeen();
    const times = [T0, T0 + 1, T0 + 2];
    expect(seen.repeats(page(times), fingerprint)).toBeUndefined();
    expect(seen.repeats(page(times), fingerprint)).toBe("previous");
    expect(seen.repeats(page([T0 + 3, T0 + 4]), fingerprint)).toBeUndefined();
    expect(seen.repeats(page(times), fingerprint)).toBe("earlier");
  });

  it("are the same whether the page was read from its bytes or parsed whole, and report no record", async () => {
    const reports: unknown[] = [];
    const ctx: DecodeContext = {
      endpoint: "GET /sites/{id}/logs/php",
      redact: (t) => t,
      reportRejected: (r) => void reports.push(r),
    };
    const decoder = logPage(PhpLogEntrySchema);
    const fromBytes = decoder.fromBytes;
    if (!fromBytes) throw new Error("log pages decode from their bytes");
    // The oldest record does not fit the schema (its message is a number).
    const body = (first: string) => ({
      logs: [
        { timestamp: "2026-11-24T10:00:02Z", message: first },
        { timestamp: "2026-11-24T10:00:01Z", message: "b" },
        { timestamp: "2026-11-24T10:00:00Z", message: 5 },
      ],
      scroll_id: "s",
    });
    const fromTheBytes = async (first: string) => {
      const bytes = Buffer.from(JSON.stringify(body(first)));
      const p = await fromBytes({ bytes, release: () => undefined }, ctx);
      return pageSignature(new RecordEntries(p.records), fingerprint);
    };
    const a = await fromTheBytes("a");
    expect(a).toBeDefined();
    expect(await fromTheBytes("a")).toBe(a);
    expect(await fromTheBytes("c")).not.toBe(a);
    expect(reports).toEqual([]);
    // A backlog's page is parsed whole: a scroll that loops back to a page read from its bytes is
    // still seen to repeat (else its entries would count as second occurrences and ship twice).
    const valid = { ...body("a"), logs: body("a").logs.slice(0, 2) };
    const lazily = await fromBytes(
      { bytes: Buffer.from(JSON.stringify(valid)), release: () => undefined },
      ctx,
    );
    const whole = await decoder(valid, ctx);
    const signature = pageSignature(new RecordEntries(lazily.records), fingerprint);
    expect(signature).toBeDefined();
    expect(pageSignature(new RecordEntries(whole.records), fingerprint)).toBe(signature);
  });
});

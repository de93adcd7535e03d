import { SeverityNumber } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { parsePayload } from "../../../src/webhooks/body.js";
import { severityOf, siteIdOf, type WebhookPayload } from "../../../src/webhooks/payload.js";
import {
  buildRecord,
  flattenPayload,
  MAX_FIELDS,
  MAX_JSON_DEPTH,
  MAX_STRING,
} from "../../../src/webhooks/record.js";

const names = new Map([[42, "shop-1"]]);
const ctx = {
  receivedMs: Date.UTC(2026, 0, 31, 12),
  uid: "webhook-test-1",
  siteName: (id: number) => names.get(id),
};

function payload(text: string): WebhookPayload {
  const p = parsePayload(Buffer.from(text));
  if ("problem" in p) throw new Error(p.problem);
  return p.ok;
}

describe("severity", () => {
  it.each([
    ["site_hacked", "ERROR"],
    ["site_restore_failed", "ERROR"],
    ["sync_failed", "ERROR"],
    ["plugin_install_failed", "ERROR"],
    ["git_deploy_failed", "ERROR"],
    ["some_future_thing_failed", "ERROR"],
    ["site_disabled", "INFO"],
    ["site_restored", "INFO"],
    ["sync_success", "INFO"],
    ["git_deploy_completed", "INFO"],
    ["failed_login", "INFO"],
  ])("%s is %s", (event, text) => {
    const s = severityOf(event);
    expect(s.text).toBe(text);
    expect(s.number).toBe(text === "ERROR" ? SeverityNumber.ERROR : SeverityNumber.INFO);
  });
});

describe("the site an event names", () => {
  it("site.id, site_id or the destination of a data transfer; ids as numbers or digit strings", () => {
    expect(siteIdOf(payload('{"event":"site_disabled","site":{"id":42,"state":"disabled"}}'))).toBe(42);
    expect(siteIdOf(payload('{"event":"maintenance_mode","site_id":"7","maintenance_mode":"enabled"}'))).toBe(
      7,
    );
    expect(siteIdOf(payload('{"event":"sync_failed","from_site_id":3,"to_site_id":9}'))).toBe(9);
    expect(siteIdOf(payload('{"event":"git_deploy_failed"}'))).toBeUndefined();
    expect(siteIdOf(payload('{"event":"x","site":{"id":-1}}'))).toBeUndefined();
    expect(siteIdOf(payload('{"event":"x","site_id":"12abc"}'))).toBeUndefined();
  });
});

describe("flattening the payload", () => {
  it("nested objects as dotted keys, arrays JSON-encoded, nulls left out, event left out", () => {
    const { attributes, dropped } = flattenPayload(
      payload(
        JSON.stringify({
          event: "plugin_install_failed",
          site: { id: 42 },
          plugin: { path: "https://example.test/p.zip", version: "latest" },
          error: { message: "download failed", detail: null },
          tags: ["a", 1],
          ok: false,
          ratio: 0.5,
        }),
      ),
    );
    expect(dropped).toBe(0);
    expect(attributes).toEqual({
      "sitehost.event.site.id": 42,
      "sitehost.event.plugin.path": "https://example.test/p.zip",
      "sitehost.event.plugin.version": "latest",
      "sitehost.event.error.message": "download failed",
      "sitehost.event.tags": '["a",1]',
      "sitehost.event.ok": false,
      "sitehost.event.ratio": 0.5,
    });
  });

  it("objects deeper than four levels become one JSON string", () => {
    const { attributes } = flattenPayload(payload('{"event":"x","a":{"b":{"c":{"d":{"e":1}}}}}'));
    expect(attributes).toEqual({ "sitehost.event.a.b.c.d": '{"e":1}' });
  });

  it("a payload nested 100,000 levels deep: four levels flattened, the rest one bounded JSON string", () => {
    const depth = 100_000;
    const text = `{"event":"site_disabled","site":{"id":42},"deep":${'{"a":'.repeat(depth)}1${"}".repeat(depth)}}`;
    const flat = flattenPayload(payload(text));
    expect(flat.attributes["sitehost.event.site.id"]).toBe(42);
    const kept = flat.attributes["sitehost.event.deep.a.a.a"] as string;
    // Valid JSON, MAX_JSON_DEPTH levels of it, the rest marked as cut.
    expect(kept).toBe(`${'{"a":'.repeat(MAX_JSON_DEPTH)}"…"${"}".repeat(MAX_JSON_DEPTH)}`);
    expect(JSON.parse(kept)).toBeTypeOf("object");
    expect([...flat.truncated]).toEqual(["depth"]);
    const r = buildRecord(payload(text), ctx);
    expect(r.record.attributes["sitehost.webhook.truncated"]).toBe("depth");
    expect(r.record.body).toBe("site_disabled: site shop-1 (id 42)");
  });

  it("a huge list is cut after MAX_STRING characters without writing the rest", () => {
    const flat = flattenPayload(
      payload(JSON.stringify({ event: "x", list: Array.from({ length: 100_000 }, (_, i) => i) })),
    );
    const kept = flat.attributes["sitehost.event.list"] as string;
    expect(kept.length).toBeLessThanOrEqual(MAX_STRING);
    expect(kept.startsWith("[0,1,2,")).toBe(true);
    expect([...flat.truncated]).toEqual(["length"]);
  });

  it("at most MAX_FIELDS attributes; long strings are cut", () => {
    const many = Object.fromEntries(Array.from({ length: MAX_FIELDS + 10 }, (_, i) => [`f${i}`, i]));
    const { attributes, dropped } = flattenPayload(payload(JSON.stringify({ event: "x", ...many })));
    expect(Object.keys(attributes)).toHaveLength(MAX_FIELDS);
    expect(dropped).toBe(10);
    const long = flattenPayload(payload(JSON.stringify({ event: "x", s: "y".repeat(10_000) })));
    expect((long.attributes["sitehost.event.s"] as string).length).toBeLessThan(5000);
  });
});

describe("the log record of an event", () => {
  it("event.name, the site's id and inventory name, the payload, severity, body, uid", () => {
    const r = buildRecord(
      payload(
        JSON.stringify({
          event: "site_restore_failed",
          site: { id: 42 },
          restore: {
            restored_by: "ops@agency.example",
            error: "database import failed",
            failed_at_timestamp: 1769860800,
          },
        }),
      ),
      ctx,
    ).record;
    expect(r.eventName).toBe("site_restore_failed");
    expect(r.severityNumber).toBe(SeverityNumber.ERROR);
    expect(r.severityText).toBe("ERROR");
    expect(r.timeMs).toBe(ctx.receivedMs);
    expect(r.body).toBe("site_restore_failed: site shop-1 (id 42): database import failed");
    // The event is the EventName field only: the deprecated event.name attribute is not written.
    expect(r.attributes["event.name"]).toBeUndefined();
    expect(r.attributes).toMatchObject({
      "sitehost.site.id": "42",
      "sitehost.site.name": "shop-1",
      "sitehost.log.stream": "webhook",
      "log.record.uid": "webhook-test-1",
      "sitehost.event.site.id": 42,
      "sitehost.event.restore.error": "database import failed",
      "sitehost.event.restore.failed_at_timestamp": 1769860800,
    });
  });

  it("a site the inventory does not know keeps its id only; an event without a site has neither", () => {
    const unknown = buildRecord(
      payload('{"event":"site_created","site":{"id":77,"state":"deploying"}}'),
      ctx,
    ).record;
    expect(unknown.attributes["sitehost.site.id"]).toBe("77");
    expect(unknown.attributes).not.toHaveProperty("sitehost.site.name");
    expect(unknown.body).toBe("site_created: site id 77");
    expect(unknown.severityText).toBe("INFO");
    const bare = buildRecord(payload('{"event":"git_deploy_failed"}'), ctx).record;
    expect(bare.attributes).not.toHaveProperty("sitehost.site.id");
    expect(bare.body).toBe("git_deploy_failed");
    expect(bare.severityText).toBe("ERROR");
  });
});

describe("parsing a body", () => {
  it.each([
    ["not JSON", "{nope"],
    ["an array", '[{"event":"x"}]'],
    ["no event", '{"site":{"id":1}}'],
    ["an empty event", '{"event":""}'],
    ["a non-string event", '{"event":5}'],
    ["null", "null"],
  ])("refuses %s", (_what, text) => {
    expect("problem" in parsePayload(Buffer.from(text))).toBe(true);
  });

  it("keeps every field of an event it does not know", () => {
    const p = payload('{"event":"backup_created","backup":{"id":"b1","type":"fs"}}');
    expect(p).toEqual({ event: "backup_created", backup: { id: "b1", type: "fs" } });
  });
});

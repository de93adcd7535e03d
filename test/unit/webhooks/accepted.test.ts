/** What the webhook receiver does with an accepted event: the record, the count, the refresh, the wait for the queue. */
import { BACKING_OFF_COLLECTORS } from "../../../src/config/schema.js";
import { collectorsWokenBy } from "../../../src/webhooks/collectorWakes.js";
import { afterEach, describe, expect, it } from "vitest";
import { CheckpointWriteError } from "../../../src/ha/volume.js";
import { QueueFullError } from "../../../src/webhooks/queue.js";
import { waitFor } from "../../helpers/wait.js";
import { ControlledQueue, disabled, post, start, stopServer, TOKEN } from "./bench.js";

afterEach(stopServer);

describe("accepted events", () => {
  it("an event the platform does not document is accepted and counted under its own name", async () => {
    const s = await start();
    const r = await post(s.withToken, { body: '{"event":"backup_created","backup":{"id":"b1"}}' });
    expect(r.status).toBe(200);
    expect((await s.counted()).events.backup_created).toBe(1);
    expect(s.queue?.records[0]?.attributes["sitehost.event.backup.id"]).toBe("b1");
    expect(s.refreshed).toEqual([]);
  });

  it("a name outside the safe pattern is counted as other, its record keeps the name", async () => {
    const s = await start();
    const odd = 'Site Hacked!{x="1"}';
    expect((await post(s.withToken, { body: JSON.stringify({ event: odd }) })).status).toBe(200);
    const c = await s.counted();
    expect(c.events.other).toBe(1);
    expect(Object.keys(c.events).some((k) => k.includes("Hacked"))).toBe(false);
    expect(s.queue?.records[0]?.eventName).toBe(odd);
  });

  it("the record: severity, the site's inventory name, the flattened payload", async () => {
    const s = await start();
    await post(s.withToken, {
      body: JSON.stringify({ event: "site_hacked", site: { id: 42, state: "disabled", status: "hacked" } }),
    });
    await post(s.withToken, {
      body: JSON.stringify({
        event: "plugin_installed",
        site: { id: 43 },
        plugin: { path: "seo", version: "latest" },
      }),
    });
    const [hacked, installed] = s.queue?.records ?? [];
    expect(hacked?.severityText).toBe("ERROR");
    expect(hacked?.eventName).toBe("site_hacked");
    expect(hacked?.attributes).toMatchObject({
      "sitehost.site.id": "42",
      "sitehost.site.name": "shop-1",
      "sitehost.event.site.status": "hacked",
    });
    expect(installed?.severityText).toBe("INFO");
    expect(installed?.attributes).toMatchObject({
      "sitehost.site.id": "43",
      "sitehost.event.plugin.path": "seo",
    });
    expect(installed?.attributes).not.toHaveProperty("sitehost.site.name");
    expect(hacked?.attributes["log.record.uid"]).not.toBe(installed?.attributes["log.record.uid"]);
  });

  it("a payload nested 100,000 levels deep (600 KB) is 200, queued with its depth cut, and counted", async () => {
    const s = await start();
    const depth = 100_000;
    const body = `{"event":"site_disabled","site":{"id":42},"x":${'{"y":'.repeat(depth)}1${"}".repeat(depth)}}`;
    expect(body.length).toBeGreaterThan(600_000);
    const r = await post(s.withToken, { body });
    expect(r.status).toBe(200);
    const c = await s.counted();
    expect(c.events.site_disabled).toBe(1);
    expect(c.truncated).toEqual({ depth: 1, length: 0, fields: 0 });
    expect(s.queue?.records[0]?.attributes["sitehost.webhook.truncated"]).toBe("depth");
    expect(s.refreshed).toEqual([42]);
    // A second delivery of the same is accepted the same way (nothing left broken).
    expect((await post(s.withToken, { body })).status).toBe(200);
  });

  it("a body of nothing but nesting up to the size limit is parsed without overflowing the stack", async () => {
    const s = await start();
    const depth = 500_000;
    const body = `{"event":"x","d":${"[".repeat(depth)}${"]".repeat(depth)}}`;
    const r = await post(s.withToken, { body });
    expect(r.status).toBe(200);
    expect(s.queue?.records[0]?.attributes["sitehost.event.d"]).toMatch(/^\[\[\[.*"…".*\]\]\]$/);
  });

  it("site events ask for that site's refresh; other events do not", async () => {
    const s = await start();
    await post(s.withToken, { body: disabled });
    await post(s.withToken, {
      body: '{"event":"maintenance_mode","site_id":42,"maintenance_mode":"enabled"}',
    });
    await post(s.withToken, {
      body: '{"event":"site_converted","site":{"id":"43","site_converted_to":"live"}}',
    });
    expect(s.refreshed).toEqual([42, 43]);
  });

  it("every accepted event is told with its site and name, which decide the collectors it wakes", async () => {
    const s = await start();
    await post(s.withToken, { body: '{"event":"plugin_installed","site":{"id":7},"plugin":{"path":"x"}}' });
    await post(s.withToken, { body: '{"event":"git_deploy_failed"}' });
    await post(s.withToken, { body: '{"event":"ssh_command","site_id":7,"result":{}}' });
    await post(s.withToken, { body: '{"event":"something_new","site_id":8}' });
    expect(s.happened).toEqual([
      [7, "plugin_installed"],
      [undefined, "git_deploy_failed"],
      [7, "ssh_command"],
      [8, "something_new"],
    ]);
    const woken = s.happened.map(([site, event]) => collectorsWokenBy(event, site));
    // A plugin install: the site's security; a deploy naming no site: git for every site; a command
    // run: nothing the collectors read; an event this version does not know: every collector that backs off.
    expect(woken).toEqual([["security"], ["git"], [], BACKING_OFF_COLLECTORS]);
  });

  it("the answer waits until the queue confirms the record is durable; only then is it counted", async () => {
    const queue = new ControlledQueue();
    queue.auto = "hold";
    const s = await start({ queue });
    let answered = false;
    const reply = post(s.withToken, { body: disabled }).then((r) => {
      answered = true;
      return r;
    });
    await waitFor("the queue to be asked", () => queue.waiting === 1, { intervalMs: 5 });
    // An answer sent without waiting would have gone out with the queue's call; a whole request
    // answered since (the exposition's) proves it did not.
    expect((await s.counted()).events.site_disabled).toBe(0);
    expect(answered).toBe(false);
    queue.confirm();
    expect((await reply).status).toBe(200);
    expect((await s.counted()).events.site_disabled).toBe(1);
  });

  it("a failing or full queue is 503 so the platform retries; nothing is counted", async () => {
    const queue = new ControlledQueue();
    queue.auto = Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
    const s = await start({ queue });
    const failed = await post(s.withToken, { body: disabled });
    queue.auto = new QueueFullError(10_000);
    const full = await post(s.withToken, { body: disabled });
    for (const r of [failed, full]) {
      expect(r.status).toBe(503);
      expect(Number(r.headers["retry-after"])).toBeGreaterThan(0);
    }
    const c = await s.counted();
    expect(s.total(c.events)).toBe(0);
    expect(c.rejected.unavailable).toBe(2);
    expect(s.refreshed).toEqual([]);
    expect(s.lines.some((l) => l.includes("ENOSPC"))).toBe(true);
  });

  it("194 deliveries on a full disk make one error line, not one stack trace each", async () => {
    const queue = new ControlledQueue();
    queue.auto = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    const s = await start({ queue });
    for (let i = 0; i < 194; i++) expect((await post(s.withToken, { body: disabled })).status).toBe(503);
    const lines = s.lines.map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(lines.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([
      "could not queue a webhook event on disk",
    ]);
    expect(lines.filter((l) => /webhook delivery rejected/.test(l.msg))).toHaveLength(1);
    // A write the volume refused is its to report (with the path and logs.checkpointDir): none here.
    const before = s.lines.length;
    queue.auto = new CheckpointWriteError("webhook_queue", "/data/webhook-queue.jsonl", { code: "ENOSPC" });
    expect((await post(s.withToken, { body: disabled })).status).toBe(503);
    expect(s.lines.slice(before).some((l) => l.includes('"level":50'))).toBe(false);
    expect((await s.counted()).rejected.unavailable).toBe(195);
  });

  it("without log shipping the event is counted and answered at once", async () => {
    const s = await start({ queue: null });
    expect((await post(s.withToken, { body: disabled })).status).toBe(200);
    expect((await s.counted()).events.site_disabled).toBe(1);
  });
});

describe("secrets", () => {
  it("the token never reaches a log line, not even the URL of a request that failed", async () => {
    const s = await start();
    await post(s.withToken, { body: disabled });
    await post(`${s.url}?token=wrong-guess`, { body: disabled });
    s.state.throwOnTarget = true;
    expect((await post(`${s.withToken}&x=1`, { body: disabled })).status).toBe(500);
    const text = s.lines.join("");
    expect(text).toContain("request failed");
    expect(text).toContain("token=<redacted>");
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(encodeURIComponent(TOKEN));
  });
});

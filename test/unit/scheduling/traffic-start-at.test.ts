/**
 * The traffic request's start_at fails safe: a platform that refuses the phrase but takes another form
 * gets that form from then on; a refusal every form gets is the site's and moves nothing.
 */
import { describe, expect, it } from "vitest";
import { ApiHttpError } from "../../../src/api/errors.js";
import type { Account, MetricsResult } from "../../../src/api/schemas.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { ROUTES } from "../../../src/routes.js";
import { collectionFor } from "../../helpers/collection.js";
import { fakeApi, list } from "../../helpers/fakeApi.js";
import { makeSite } from "../collectors/fixtures.js";

const account: Account = {
  maxSites: 10,
  capacity: { sites: { maxBillable: 8, maxStaging: 2, billable: 2, staging: 0, total: 2 } },
};

function answer(endAt: number): MetricsResult {
  const periods = [];
  for (let ts = endAt - 3600; ts < endAt; ts += 60)
    periods.push({ timestamp: ts, page_is_cached: { requests_persec: { true: 1, false: 1 } } });
  return { search: { startAt: endAt - 3600, endAt, resolution: 60 }, periods };
}

const refusal = () =>
  new ApiHttpError(ROUTES.trafficMetrics.template, 400, "There was a problem processing your request.", [
    "start_at is invalid",
  ]);

function setup(takes: (startAt: string, siteId: number) => boolean) {
  const clock = { ms: Date.UTC(2026, 10, 22, 12, 0, 30) };
  const sent: Array<[number, string]> = [];
  const api = fakeApi({
    account: async () => account,
    allSites: async () => list([makeSite(1), makeSite(2)]),
    trafficMetrics: async ({ id, query }) => {
      sent.push([id, query.startAt]);
      if (!takes(query.startAt, id)) throw refusal();
      return answer(Math.floor(clock.ms / 1000));
    },
  });
  const config = ConfigSchema.parse({ collectors: { traffic: { schedule: "0 * * * * *" } } });
  const { runner, store } = collectionFor(config, api, { now: () => clock.ms });
  const form = () =>
    store
      .render()
      .split("\n")
      .filter((l) => l.startsWith("sitehost_exporter_traffic_start_at_form{") && l.endsWith(" 1"));
  const run = async () => {
    clock.ms += 60_000;
    sent.length = 0;
    return (await runner.run("traffic")).result;
  };
  return { runner, sent, form, run };
}

describe("traffic start_at", () => {
  it("sends the phrase while the platform takes it", async () => {
    const { runner, sent, form, run } = setup(() => true);
    await runner.run("inventory");
    expect(await run()).toBe("success");
    expect(sent.map(([, s]) => s)).toEqual(["1 hour ago", "1 hour ago"]);
    expect(form()).toEqual(['sitehost_exporter_traffic_start_at_form{form="phrase"} 1']);
  });

  it("moves to the first form the platform takes where it refused the phrase, and stays there", async () => {
    // This platform takes only an ISO 8601 time.
    const { runner, sent, form, run } = setup((startAt) => /^\d{4}-\d\d-\d\dT/.test(startAt));
    await runner.run("inventory");
    expect(await run()).toBe("success");
    // Each site of the first run was asked in the forms in turn until one was taken (both in flight at once).
    expect(sent.filter(([id]) => id === 1).map(([, s]) => s.slice(0, 4))).toEqual(["1 ho", "-1h", "2026"]);
    expect(form()).toEqual(['sitehost_exporter_traffic_start_at_form{form="timestamp"} 1']);
    expect(await run()).toBe("success");
    expect(sent).toHaveLength(2); // one request a site: the timestamp at once
    expect(sent.every(([, s]) => s === "2026-11-22T11:02:30.000Z")).toBe(true); // an hour before the run
  });

  it("a refusal every form gets is the site's: that site fails, the phrase stays", async () => {
    const { runner, form, run } = setup((_startAt, siteId) => siteId !== 2);
    await runner.run("inventory");
    expect(await run()).toBe("partial");
    expect(form()).toEqual(['sitehost_exporter_traffic_start_at_form{form="phrase"} 1']);
  });
});

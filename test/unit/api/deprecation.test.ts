/**
 * The platform's word that an endpoint is going away: the Deprecation and Sunset headers in every
 * form the RFCs and their drafts allow, the Link that explains, and through the real client: the
 * notice per route template, its metrics, and the status page's warning.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import {
  deprecationOf,
  DeprecationNotices,
  describeNotice,
  noticeLinkOf,
  sunsetOf,
} from "../../../src/api/deprecation.js";
import { deprecationFinding } from "../../../src/doctor/platform.js";
import { buildStatus } from "../../../src/server/status.js";
import { makeClient, startServer } from "./helpers.js";

/** 2027-01-01T00:00:00Z */
const NEW_YEAR = Date.UTC(2027, 0, 1);

describe("the headers", () => {
  it.each([
    ["@1798761600", NEW_YEAR],
    ["Fri, 01 Jan 2027 00:00:00 GMT", NEW_YEAR],
    ["true", null],
    ["soon", null],
    ["false", undefined],
    ["", undefined],
  ])("Deprecation: %j is %s", (value, want) => {
    expect(deprecationOf({ deprecation: value })).toBe(want);
  });

  it("Sunset is an HTTP-date; anything else or nothing is no date", () => {
    expect(sunsetOf({ sunset: "Fri, 01 Jan 2027 00:00:00 GMT" })).toBe(NEW_YEAR);
    expect(sunsetOf({ sunset: "next year" })).toBeUndefined();
    expect(sunsetOf({})).toBeUndefined();
  });

  it("the Link that explains is the one with rel deprecation or sunset, shown without credentials", () => {
    expect(
      noticeLinkOf({
        link: '<https://api.example/v1/sites?page=2>; rel="next", <https://docs.example/changes#v2>; rel="sunset"',
      }),
    ).toBe("https://docs.example/changes#v2");
    expect(noticeLinkOf({ link: "<https://user:pw@docs.example/d>; rel=deprecation" })).toBe(
      "https://docs.example/d",
    );
    expect(noticeLinkOf({ link: '<https://api.example/v1/sites?page=2>; rel="next"' })).toBeUndefined();
  });

  it("an answer without either header is no notice, and says nothing", () => {
    const seen: unknown[] = [];
    const notices = new DeprecationNotices((n) => seen.push(n));
    expect(notices.observe("/sites", { link: '<https://x.example/d>; rel="sunset"' }, 1)).toBe(false);
    expect(notices.list()).toEqual([]);
    expect(seen).toEqual([]);
  });

  it("lists the soonest sunset first, and says each in words", () => {
    const notices = new DeprecationNotices();
    notices.observe("/sites/{id}/backups", { deprecation: "true" }, 5);
    notices.observe("/sites/{id}/git/history", { sunset: "Fri, 01 Jan 2027 00:00:00 GMT" }, 6);
    notices.observe("/sites", { sunset: "Sat, 01 Jan 2028 00:00:00 GMT", deprecation: "@1798761600" }, 7);
    expect(notices.list().map(describeNotice)).toEqual([
      "/sites/{id}/git/history (sunset 2027-01-01)",
      "/sites (sunset 2028-01-01; deprecated from 2027-01-01)",
      "/sites/{id}/backups",
    ]);
  });
});

describe("doctor", () => {
  it("passes when no answer of its checks said so, and warns naming the endpoint and its sunset", () => {
    expect(deprecationFinding([]).verdict).toBe("pass");
    const notices = new DeprecationNotices();
    notices.observe("/sites/{id}/domains", { sunset: "Fri, 01 Jan 2027 00:00:00 GMT" }, 1);
    const finding = deprecationFinding(notices.list());
    expect(finding.verdict).toBe("warn");
    expect(finding.summary).toBe("deprecated or sunset: /sites/{id}/domains (sunset 2027-01-01)");
  });
});

describe("the API client", () => {
  it("remembers an endpoint whose answers say it goes away, counts them, and the status page warns", async () => {
    const server = await startServer(() => ({
      status: 200,
      body: { account: { id: 1 } },
      headers: {
        deprecation: "@1798761600",
        sunset: "Sat, 01 Jan 2028 00:00:00 GMT",
        link: '<https://docs.example/api/changes>; rel="deprecation"',
      },
    }));
    const { client: c, registry } = makeClient(server);
    onTestFinished(async () => {
      await c.close();
      await server.close();
    });
    // The answer's shape does not matter: every answer's headers are read.
    for (let i = 0; i < 2; i++) await c.account().catch(() => undefined);
    const [notice, ...more] = c.deprecations();
    expect(more).toEqual([]);
    expect(notice).toMatchObject({
      deprecatedAtMs: NEW_YEAR,
      sunsetAtMs: Date.UTC(2028, 0, 1),
      link: "https://docs.example/api/changes",
    });
    const text = await registry.metrics();
    const line = (name: string) => text.split("\n").find((l) => l.startsWith(`${name}{`));
    expect(line("sitehost_exporter_api_deprecated_responses_total")).toBe(
      `sitehost_exporter_api_deprecated_responses_total{endpoint="${notice?.endpoint}"} 2`,
    );
    expect(line("sitehost_exporter_api_endpoint_sunset_timestamp_seconds")).toBe(
      `sitehost_exporter_api_endpoint_sunset_timestamp_seconds{endpoint="${notice?.endpoint}"} 1830297600`,
    );

    const status = buildStatus({
      version: "test",
      telemetryPath: "/metrics",
      apiUrl: server.apiUrl,
      ready: { ready: true },
      auth: { ok: true },
      deprecations: c.deprecations(),
      logs: { enabled: false, shipping: false, streams: [] },
      shard: { index: 0, count: 1 },
      now: Date.now(),
    });
    expect(status.health).toBe("warning");
    expect(status.apiEndpoints.deprecated).toEqual([
      {
        endpoint: notice?.endpoint,
        sunset: "2028-01-01T00:00:00.000Z",
        deprecatedFrom: "2027-01-01T00:00:00.000Z",
        link: "https://docs.example/api/changes",
      },
    ]);
    expect(status.problems.map((p) => [p.subject, p.health])).toContainEqual([
      "API endpoints going away",
      "warning",
    ]);
    expect(status.apiEndpoints.summary).toContain(`${notice?.endpoint} (sunset 2028-01-01`);
  });
});

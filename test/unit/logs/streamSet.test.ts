/**
 * Keeping the running streams in step with the wanted ones: which streams a set of sites calls for
 * (each configured stream per site, the account's activity log on shard 0 alone), and what reconciling
 * opens, renames and closes.
 */
import { describe, expect, it } from "vitest";
import { STREAM_KINDS, wantedStreams, type StreamSpec } from "../../../src/logs/streams.js";
import { StreamSet, type ManagedStream } from "../../../src/logs/streamSet.js";
import type { SiteIdentity } from "../../../src/logs/read/types.js";

class Recorded implements ManagedStream {
  names: string[] = [];
  closed = false;
  constructor(public spec: StreamSpec) {
    this.names.push(spec.site.name);
  }
  get site(): SiteIdentity {
    return this.spec.site;
  }
  rename(spec: StreamSpec): void {
    this.spec = spec;
    this.names.push(spec.site.name);
  }
  close(): void {
    this.closed = true;
  }
}

const shop = { id: 7, name: "shop" };
const blog = { id: 9, name: "blog" };

describe("wantedStreams", () => {
  it.each([
    {
      shard: 0,
      streams: ["php", "server", "activity"] as const,
      keys: ["7/php", "7/server", "7/activity", "0/activity"],
    },
    { shard: 1, streams: ["php", "server", "activity"] as const, keys: ["7/php", "7/server", "7/activity"] },
    { shard: 0, streams: ["server"] as const, keys: ["7/server"] },
  ])("shard $shard, streams $streams → $keys", ({ shard, streams, keys }) => {
    expect(wantedStreams([shop], streams, shard).map((s) => s.key)).toEqual(keys);
  });

  it("only the activity kind has an account stream, is claimed and is not counted", () => {
    expect(
      Object.values(STREAM_KINDS)
        .filter((k) => k.account)
        .map((k) => k.stream),
    ).toEqual(["activity"]);
    expect(
      Object.values(STREAM_KINDS)
        .filter((k) => k.claimed)
        .map((k) => k.stream),
    ).toEqual(["activity"]);
    expect(
      Object.values(STREAM_KINDS)
        .filter((k) => k.counted)
        .map((k) => k.stream),
    ).toEqual(["php", "server"]);
  });
});

describe("StreamSet", () => {
  function set() {
    const opened: Recorded[] = [];
    const streams = new StreamSet((spec: StreamSpec) => {
      const s = new Recorded(spec);
      opened.push(s);
      return s;
    });
    return { streams, opened };
  }

  it("opens what is wanted, once", () => {
    const { streams, opened } = set();
    expect(streams.reconcile(wantedStreams([shop, blog], ["php", "server"], 1))).toEqual({
      opened: 4,
      renamed: 0,
      closed: 0,
    });
    expect(streams.reconcile(wantedStreams([shop, blog], ["php", "server"], 1))).toEqual({
      opened: 0,
      renamed: 0,
      closed: 0,
    });
    expect(opened).toHaveLength(4);
  });

  it("renames a renamed site's streams by a call, without reopening them", () => {
    const { streams, opened } = set();
    streams.reconcile(wantedStreams([shop], ["php", "server"], 1));
    const changes = streams.reconcile(wantedStreams([{ id: 7, name: "boutique" }], ["php", "server"], 1));
    expect(changes).toEqual({ opened: 0, renamed: 2, closed: 0 });
    expect(opened.map((s) => s.names)).toEqual([
      ["shop", "boutique"],
      ["shop", "boutique"],
    ]);
  });

  it("a site that moved datacenter gets a rename too (its resource changes), one that did not, none", () => {
    const { streams, opened } = set();
    const site = { ...shop, datacenterCode: "eu-1", accountId: 12 };
    streams.reconcile(wantedStreams([site], ["server"], 1));
    expect(streams.reconcile(wantedStreams([{ ...site }], ["server"], 1)).renamed).toBe(0);
    expect(
      streams.reconcile(wantedStreams([{ ...site, datacenterCode: "us-2" }], ["server"], 1)).renamed,
    ).toBe(1);
    expect(opened[0]?.spec.resource).toEqual({
      siteId: 7,
      siteName: "shop",
      kind: "live",
      datacenter: "us-2",
      accountId: 12,
    });
  });

  it("the identity a stream was opened with is not the caller's object", () => {
    const { streams, opened } = set();
    const site = { id: 7, name: "shop" };
    streams.reconcile(wantedStreams([site], ["server"], 1));
    site.name = "changed under it";
    expect(opened[0]?.site.name).toBe("shop");
  });

  it("closes the streams of sites that are gone", () => {
    const { streams, opened } = set();
    streams.reconcile(wantedStreams([shop, blog], ["server"], 1));
    expect(streams.reconcile(wantedStreams([blog], ["server"], 1))).toEqual({
      opened: 0,
      renamed: 0,
      closed: 1,
    });
    expect(opened.map((s) => [s.site.name, s.closed])).toEqual([
      ["shop", true],
      ["blog", false],
    ]);
    expect(streams.size).toBe(1);
  });
});

/**
 * The series per site the docs quote are the ones measured: docs/sizing.md holds the figures
 * (test/integration/series-per-site.test.ts measures them and writes it), and the README, the
 * deployment guide and the Helm chart's values, README and install notes quote them.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { quoted, readSizing, renderSizing, SIZING_DOC } from "../../helpers/sizing.js";

const root = join(import.meta.dirname, "../../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");
const figures = readSizing();
const perSite = quoted(figures.defaults);
const inAll = quoted(figures.namingASite);
const unsited = figures.unsitedAtMost.toLocaleString("en-US");

/** The docs that quote the figures, and the phrases each must hold. */
const QUOTING: Record<string, { sited: boolean; inAll: boolean }> = {
  "README.md": { sited: true, inAll: true },
  "docs/deployment.md": { sited: true, inAll: true },
  "helm/sitehost-exporter/values.yaml": { sited: true, inAll: true },
  "helm/sitehost-exporter/README.md": { sited: false, inAll: true },
};

/** Every "<n> series per site" of a text, by what it counts (YAML comments read as one text). */
function quotes(source: string): { sited: number[]; inAll: number[]; other: number[]; unsited: string[] } {
  const text = source.replace(/\n[ \t]*#[ \t]*/g, " ");
  const out = {
    sited: [] as number[],
    inAll: [] as number[],
    other: [] as number[],
    unsited: [] as string[],
  };
  for (const m of text.matchAll(/(\d[\d,]*) (`?sitehost_site_\*`? )?series\s+per\s+site(\s+in\s+all)?/g)) {
    const n = Number((m[1] as string).replace(/,/g, ""));
    (m[2] ? out.sited : m[3] ? out.inAll : out.other).push(n);
  }
  for (const m of text.matchAll(/at most ([\d,]+) (?:series )?naming no\s+site/g))
    out.unsited.push(m[1] as string);
  return out;
}

describe("docs/sizing.md", () => {
  it("is what its figures render to (written by the measuring test, not by hand)", async () => {
    expect(readFileSync(SIZING_DOC, "utf8")).toBe(await renderSizing(figures));
  });

  it("says the defaults publish at most 90 sitehost_site_* series per site, fewer than every switch on", () => {
    expect(figures.defaults).toBeLessThanOrEqual(90);
    expect(figures.everything).toBeGreaterThan(figures.defaults);
    expect(figures.namingASite).toBeGreaterThanOrEqual(figures.defaults);
  });
});

describe.each(Object.entries(QUOTING))("%s", (path, must) => {
  const found = quotes(read(path));

  it(`quotes ${perSite} sitehost_site_* and ${inAll} series per site in all, as measured, and no other figure`, () => {
    expect(
      found.sited.every((n) => n === perSite),
      `sitehost_site_* series per site: ${found.sited}`,
    ).toBe(true);
    expect(
      found.inAll.every((n) => n === inAll),
      `series per site in all: ${found.inAll}`,
    ).toBe(true);
    expect(found.other, "a series-per-site figure that is neither").toEqual([]);
    expect(
      found.unsited.every((n) => n === unsited),
      `naming no site: ${found.unsited}`,
    ).toBe(true);
    if (must.sited) expect(found.sited.length).toBeGreaterThan(0);
    if (must.inAll) expect(found.inAll.length).toBeGreaterThan(0);
  });
});

describe("the chart's install notes", () => {
  it("reckon the sites a sample limit covers from the measured figures", () => {
    const notes = read("helm/sitehost-exporter/templates/NOTES.txt");
    expect(notes).toContain(`{{- $sited := ${Math.round(figures.defaults)} }}`);
    expect(notes).toContain(`{{- $perSite := ${inAll} }}`);
    expect(notes).toContain(`{{- $unsited := ${figures.unsitedAtMost} }}`);
    expect(quotes(notes).other).toEqual([]);
  });
});

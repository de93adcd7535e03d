/** The access collector run by the runner: administrators by login, paging, a site too large to read. */
import { describe, expect, it } from "vitest";
import type { Account, CmsUser, Site } from "../../../src/api/schemas.js";
import { isAdministrator } from "../../../src/collectors/access.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { collectionFor, EVERY_RUN, linesOf } from "../../helpers/collection.js";
import { fakeApi, list } from "../../helpers/fakeApi.js";
import { makeSite } from "../collectors/fixtures.js";

const account: Account = {
  maxSites: 10,
  capacity: { sites: { maxBillable: 8, maxStaging: 2, billable: 3, staging: 0, total: 3 } },
};
const user = (login: string, roles: string): CmsUser => ({
  user_login: login,
  roles,
  user_email: `${login}@example.com`,
});

class Platform {
  sites: Site[] = [makeSite(1), makeSite(2), makeSite(3)];
  users = new Map<number, CmsUser[]>([
    [1, [user("owner", "administrator"), user("ed", "editor"), user("both", "editor, Administrator")]],
    // 250 users: three pages of 100.
    [2, [user("boss", "administrator"), ...Array.from({ length: 249 }, (_, k) => user(`c${k}`, "customer"))]],
    // More than 1,000: not read to the end.
    [3, Array.from({ length: 1500 }, (_, k) => user(`s${k}`, k === 1400 ? "administrator" : "subscriber"))],
  ]);
  pages: Array<[number, number]> = [];
  readonly api = fakeApi({
    account: async () => account,
    allSites: async () => list([...this.sites]),
    phpVersions: async () => list(["8.3"]),
    cmsUsers: async ({ id, page, perPage }, opts) => {
      expect(opts?.source).toBe("access");
      this.pages.push([id, page]);
      const all = this.users.get(id) ?? [];
      return { users: all.slice((page - 1) * perPage, page * perPage), total_user_count: all.length };
    },
  });
}

function setup() {
  const platform = new Platform();
  const { store, runner } = collectionFor(ConfigSchema.parse({ collectors: EVERY_RUN }), platform.api, {
    now: () => Date.UTC(2026, 10, 29, 12),
  });
  const lines = (prefix: string) => linesOf(store, prefix);
  return { platform, runner, lines, store };
}

describe("access collector", () => {
  it("publishes each site's users and administrators by login, reading every page up to 1,000 users", async () => {
    const { platform, runner, lines, store } = setup();
    await runner.run("inventory");
    expect((await runner.run("access")).result).toBe("success");
    expect(lines("sitehost_site_cms_administrator_info")).toEqual([
      'sitehost_site_cms_administrator_info{site_id="1",site="site-1",login="both"} 1',
      'sitehost_site_cms_administrator_info{site_id="1",site="site-1",login="owner"} 1',
      'sitehost_site_cms_administrator_info{site_id="2",site="site-2",login="boss"} 1',
    ]);
    // The site with 1,500 users: its count, but no administrators published short.
    expect(lines("sitehost_site_cms_users")).toEqual([
      'sitehost_site_cms_users{site_id="1",site="site-1"} 3',
      'sitehost_site_cms_users{site_id="2",site="site-2"} 250',
      'sitehost_site_cms_users{site_id="3",site="site-3"} 1500',
    ]);
    expect(platform.pages.filter(([id]) => id === 2).map(([, p]) => p)).toEqual([1, 2, 3]);
    expect(platform.pages.filter(([id]) => id === 3)).toHaveLength(10);
    // E-mails never reach the exposition.
    expect(store.render()).not.toContain("@example.com");
  });

  it("a new administrator shows as a new login at the next run", async () => {
    const { platform, runner, lines } = setup();
    await runner.run("inventory");
    await runner.run("access");
    platform.users.get(1)?.push(user("intruder", "administrator"));
    await runner.run("access");
    expect(lines('sitehost_site_cms_administrator_info{site_id="1"')).toContain(
      'sitehost_site_cms_administrator_info{site_id="1",site="site-1",login="intruder"} 1',
    );
  });

  it.each([
    ["administrator", true],
    ["editor,administrator", true],
    [" Administrator ", true],
    ["shop_manager", false],
    ["", false],
  ])("roles %j: administrator %s", (roles, admin) => {
    expect(isAdministrator(user("x", roles))).toBe(admin);
  });
});

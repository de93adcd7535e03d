/**
 * Each site's cms users (GET /sites/{id}/cms/users): built per site on first use from its seed and
 * fleet index, then changed by control hooks (an administrator added, as an intruder would).
 * Every site has one or two administrators and a few editors and authors; index % 10 = 4 sites are
 * shops whose customers are users too (1,200 of them: more than the exporter reads to the end).
 */
import type { SimSiteData } from "./fleet.js";
import { mulberry32 } from "./random.js";

/** A user as the API lists it. */
export interface CmsUserRecord {
  id: number;
  user_login: string;
  display_name: string;
  user_email: string;
  roles: string;
}

export const SHOP_CUSTOMERS = 1200;

export class CmsUserStore {
  private readonly sites = new Map<number, CmsUserRecord[]>();

  private build(data: SimSiteData): CmsUserRecord[] {
    const rng = mulberry32(data.seed ^ 0xc35);
    const name = data.site.name;
    const users: CmsUserRecord[] = [];
    const add = (login: string, roles: string) =>
      users.push({
        id: users.length + 1,
        user_login: login,
        display_name: login,
        user_email: `${login}@${name}.example`,
        roles,
      });
    add(`${name}-admin`, "administrator");
    if (rng() < 0.5) add("agency-admin", "administrator");
    const editors = 1 + Math.floor(rng() * 3);
    for (let k = 1; k <= editors; k++) add(`editor${k}`, "editor");
    add("author1", "author,contributor");
    return users;
  }

  /** Shops' customers are made when a page shows them, not kept (thousands per shop at a large fleet). */
  private customers(data: SimSiteData): number {
    return data.index % 10 === 4 ? SHOP_CUSTOMERS : 0;
  }

  /** Every user in all, customers included. */
  total(data: SimSiteData): number {
    return this.list(data).length + this.customers(data);
  }

  /** One page of users: the staff (and users added since), then the customers. */
  page(data: SimSiteData, page: number, perPage: number): CmsUserRecord[] {
    const staff = this.list(data);
    const out: CmsUserRecord[] = [];
    const end = Math.min(page * perPage, this.total(data));
    for (let i = (page - 1) * perPage; i < end; i++) {
      if (i < staff.length) out.push(staff[i] as CmsUserRecord);
      else {
        const k = i - staff.length + 1;
        out.push({
          id: 100_000 + k,
          user_login: `customer${k}`,
          display_name: `Customer ${k}`,
          user_email: `customer${k}@shop.example`,
          roles: "customer",
        });
      }
    }
    return out;
  }

  /** The site's staff users, oldest first (live: changing one changes what the API answers). */
  list(data: SimSiteData): CmsUserRecord[] {
    let users = this.sites.get(data.site.id);
    if (!users) this.sites.set(data.site.id, (users = this.build(data)));
    return users;
  }

  /** A new user with these roles (comma-separated), as POST /sites/{id}/cms/users and a role change make one. */
  add(data: SimSiteData, login: string, roles: string): CmsUserRecord {
    const users = this.list(data);
    const user = {
      id: (users.at(-1)?.id ?? 0) + 1,
      user_login: login,
      display_name: login,
      user_email: `${login}@${data.site.name}.example`,
      roles,
    };
    users.push(user);
    return user;
  }

  forget(siteId: number): void {
    this.sites.delete(siteId);
  }
}

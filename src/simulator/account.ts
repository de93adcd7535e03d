/** The account record (GET /account), whose counts follow the fleet. */
import type { SimSiteData } from "./siteTypes.js";

export interface SimAccount {
  affiliate: boolean;
  collaboratorCount: number;
  email: string;
  gravatar: string;
  name: string;
  organization: string;
  pageViews: Record<string, { people: number; views: number }>;
  phoneNumber: string;
  preview: boolean;
  productName: string;
  defaultPhpVersion: string;
  defaultDatacenter: string | null;
  recent_activity: unknown[];
  maxSites: number;
  sitesCount: number;
  capacity: {
    sites: { maxBillable: number; maxStaging: number; billable: number; staging: number; total: number };
  };
}

export function accountFor(fleet: readonly SimSiteData[]): SimAccount {
  const staging = fleet.filter((s) => s.site.staging).length;
  const billable = fleet.filter((s) => !s.site.staging && !s.site.sandbox && !s.site.kit).length;
  const views = (n: number) => ({ people: Math.round(n * 0.31), views: n });
  return {
    affiliate: false,
    collaboratorCount: 3,
    email: "ops@agency.example",
    gravatar: "https://gravatar.example/avatar/0",
    name: "Demo Agency",
    organization: "Demo Agency Ltd",
    pageViews: {
      allTime: views(fleet.length * 900_000),
      lastTwoYearsIsAllTime: { people: 0, views: 0 },
      currentMonth: views(fleet.length * 30_000),
      lastMonth: views(fleet.length * 38_000),
      today: views(fleet.length * 1_200),
      twoMonthsAgo: views(fleet.length * 36_000),
      yesterday: views(fleet.length * 1_300),
    },
    phoneNumber: "+1 555 0100",
    preview: false,
    productName: "Agency",
    defaultPhpVersion: "8.4",
    defaultDatacenter: "AMS",
    recent_activity: [],
    maxSites: fleet.length + 10,
    sitesCount: fleet.length,
    capacity: {
      sites: {
        maxBillable: billable + 5,
        maxStaging: staging + 3,
        billable,
        staging,
        total: fleet.length,
      },
    },
  };
}

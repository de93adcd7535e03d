/** The dashboards that ship with sitehost-exporter, and their rendering to JSON files. */
import type { Dashboard } from "@grafana/grafana-foundation-sdk/dashboard";
import { exporterDashboard } from "./exporter.js";
import { fleetDashboard } from "./fleet.js";
import { siteDashboard } from "./site.js";

export interface DashboardDef {
  /** File name under dashboards/. */
  file: string;
  build(): Dashboard;
}

export const DASHBOARDS: readonly DashboardDef[] = [
  { file: "sitehost-fleet-overview.json", build: fleetDashboard },
  { file: "sitehost-site-detail.json", build: siteDashboard },
  { file: "sitehost-exporter-health.json", build: exporterDashboard },
];

/** File name → file content, exactly as committed under dashboards/. */
export function renderDashboards(): Map<string, string> {
  return new Map(DASHBOARDS.map((d) => [d.file, JSON.stringify(d.build(), null, 2) + "\n"]));
}

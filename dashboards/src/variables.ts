/**
 * The dashboards' template variables, as grafana/dashboard-linter wants them: a `datasource` variable;
 * `job` and `instance` multi-select with All (`.+`) matched with `=~`; every query variable refreshed on
 * time range change. `cluster` is for Prometheus servers that hold several Kubernetes clusters (a
 * `cluster` label added by relabelling or external labels): hidden unless shown on purpose, its All
 * value `.*` also matches series without the label, so single-cluster setups never see it.
 */
import {
  DatasourceVariableBuilder,
  QueryVariableBuilder,
  VariableHide,
  VariableRefresh,
  VariableSort,
} from "@grafana/grafana-foundation-sdk/dashboard";
import type { DataSourceRef } from "@grafana/grafana-foundation-sdk/common";

/** Every panel and query points at the `datasource` template variable, never at a fixed uid. */
export const DS: DataSourceRef = { type: "prometheus", uid: "${datasource}" };

/** The matchers every query carries, in this order. */
export const SCOPE = 'cluster=~"$cluster", job=~"$job", instance=~"$instance"';

/** `{cluster=~..., job=~..., instance=~..., <extra>}` */
export function sel(extra?: string): string {
  return extra ? `{${SCOPE}, ${extra}}` : `{${SCOPE}}`;
}

export function datasourceVariable(): DatasourceVariableBuilder {
  return new DatasourceVariableBuilder("datasource").label("Data source").type("prometheus").regex("");
}

function queryVariable(
  name: string,
  label: string,
  description: string,
  query: string,
): QueryVariableBuilder {
  return new QueryVariableBuilder(name)
    .label(label)
    .description(description)
    .datasource(DS)
    .query(query)
    .definition(query)
    .refresh(VariableRefresh.OnTimeRangeChanged)
    .sort(VariableSort.AlphabeticalAsc);
}

/** Several values, All by default. */
function multi(v: QueryVariableBuilder, allValue: string): QueryVariableBuilder {
  return v.multi(true).includeAll(true).allValue(allValue).current({ text: "All", value: "$__all" });
}

export function clusterVariable(): QueryVariableBuilder {
  return multi(
    queryVariable(
      "cluster",
      "Cluster",
      "Kubernetes cluster of the exporter (the cluster label), when one Prometheus holds several.",
      "label_values(sitehost_up, cluster)",
    ),
    ".*",
  ).hide(VariableHide.HideVariable);
}

export function jobVariable(): QueryVariableBuilder {
  return multi(
    queryVariable(
      "job",
      "Job",
      "Prometheus job(s) that scrape sitehost-exporter.",
      'label_values(sitehost_up{cluster=~"$cluster"}, job)',
    ),
    ".+",
  );
}

export function instanceVariable(): QueryVariableBuilder {
  return multi(
    queryVariable(
      "instance",
      "Instance",
      "Exporter instance(s); several when replicas shard one account.",
      'label_values(sitehost_up{cluster=~"$cluster", job=~"$job"}, instance)',
    ),
    ".+",
  );
}

/** One site at a time (site detail). */
export function siteVariable(): QueryVariableBuilder {
  return queryVariable(
    "site",
    "Site",
    "The site's unique name.",
    `label_values(sitehost_site_info${sel()}, site)`,
  ).sort(VariableSort.AlphabeticalCaseInsensitiveAsc);
}
